#!/usr/bin/env bash
# Build a pinned Ollama from its Go module into a per-version cache directory
# outside the repository, so integration tests can start a real server.
#
# Usage:
#   scripts/install-ollama.sh            # install (or reuse) the cached binary
#   OLLAMA_CACHE_DIR=/some/dir scripts/install-ollama.sh
#
# The binary ends up at
#   ${OLLAMA_CACHE_DIR:-$HOME/.cache/contract-gateway}/ollama-<version>/bin/ollama
# and its path is printed on the last line of output. Re-running the script is
# cheap: the build is skipped when the binary already exists and runs.
#
# internal/ollamatest looks for the binary at the same default location (or in
# $OLLAMA_BIN), so after running this script `go test ./...` uses it.
set -euo pipefail

OLLAMA_VERSION="0.17.4"
CACHE_ROOT="${OLLAMA_CACHE_DIR:-$HOME/.cache/contract-gateway}"
PREFIX="${CACHE_ROOT}/ollama-${OLLAMA_VERSION}"
BIN_DIR="${PREFIX}/bin"
BIN="${BIN_DIR}/ollama"
STUB_DIR="${PREFIX}/include"

log() { printf '[install-ollama] %s\n' "$*" >&2; }

binary_ok() {
	[[ -x "$BIN" ]] || return 1
	# --version prints a warning when no server is running but still exits 0.
	"$BIN" --version >/dev/null 2>&1
}

if binary_ok; then
	log "ollama ${OLLAMA_VERSION} already built"
	echo "$BIN"
	exit 0
fi

# --- system packages -------------------------------------------------------

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo)
	else
		log "not root and sudo is unavailable; apt packages must already be installed"
	fi
fi

needed=(nlohmann-json3-dev libstb-dev)
if ! command -v g++ >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
	needed+=(g++ gcc)
fi
missing=()
for pkg in "${needed[@]}"; do
	if ! dpkg -s "$pkg" >/dev/null 2>&1; then
		missing+=("$pkg")
	fi
done
if ((${#missing[@]} > 0)); then
	log "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${SUDO[@]}" apt-get update
	"${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
else
	log "Debian packages already installed: ${needed[*]}"
fi

command -v go >/dev/null 2>&1 || {
	log "go is not on PATH"
	exit 1
}

# --- miniaudio stub ----------------------------------------------------------
#
# The Go module zip of ollama does not include llama.cpp's vendor/ directory.
# nlohmann/json and stb_image come from the Debian packages above; miniaudio is
# only used by mtmd-helper.cpp to decode audio input, which no model we run
# needs, so a stub whose decoder always fails is enough.

mkdir -p "${STUB_DIR}/miniaudio" "$BIN_DIR"
cat >"${STUB_DIR}/miniaudio/miniaudio.h" <<'EOF'
/*
 * Minimal stand-in for miniaudio.h. It provides only the declarations used by
 * llama.cpp's tools/mtmd/mtmd-helper.cpp. Every decoder entry point fails, so
 * audio input is reported as undecodable; image and text input are unaffected.
 */
#ifndef CG_MINIAUDIO_STUB_H
#define CG_MINIAUDIO_STUB_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t ma_uint32;
typedef uint64_t ma_uint64;
typedef int ma_result;

#define MA_SUCCESS 0
#define MA_ERROR (-1)
#define MA_NOT_IMPLEMENTED (-29)

typedef enum {
	ma_format_unknown = 0,
	ma_format_u8 = 1,
	ma_format_s16 = 2,
	ma_format_s24 = 3,
	ma_format_s32 = 4,
	ma_format_f32 = 5
} ma_format;

typedef enum {
	ma_encoding_format_unknown = 0,
	ma_encoding_format_wav
} ma_encoding_format;

typedef struct {
	ma_format format;
	ma_uint32 channels;
	ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
	ma_decoder_config config;
} ma_decoder;

static inline ma_decoder_config ma_decoder_config_init(ma_format outputFormat, ma_uint32 outputChannels, ma_uint32 outputSampleRate)
{
	ma_decoder_config config;
	config.format = outputFormat;
	config.channels = outputChannels;
	config.sampleRate = outputSampleRate;
	return config;
}

static inline ma_result ma_decoder_init_memory(const void *pData, size_t dataSize, const ma_decoder_config *pConfig, ma_decoder *pDecoder)
{
	(void)pData;
	(void)dataSize;
	(void)pConfig;
	(void)pDecoder;
	return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *pDecoder, ma_uint64 *pLength)
{
	(void)pDecoder;
	if (pLength != NULL) {
		*pLength = 0;
	}
	return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *pDecoder, void *pFramesOut, ma_uint64 frameCount, ma_uint64 *pFramesRead)
{
	(void)pDecoder;
	(void)pFramesOut;
	(void)frameCount;
	if (pFramesRead != NULL) {
		*pFramesRead = 0;
	}
	return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_uninit(ma_decoder *pDecoder)
{
	(void)pDecoder;
	return MA_SUCCESS;
}

#endif /* CG_MINIAUDIO_STUB_H */
EOF

# --- build ---------------------------------------------------------------------

log "building ollama ${OLLAMA_VERSION} into ${BIN_DIR} (a cold build takes several minutes)"
start=$(date +%s)
# Run outside any module so the repository's go.mod does not interfere.
(
	cd "$PREFIX"
	export GOBIN="$BIN_DIR"
	export CGO_ENABLED=1
	export CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -I${STUB_DIR}"
	go install \
		-ldflags "-X github.com/ollama/ollama/version.Version=${OLLAMA_VERSION} -X github.com/ollama/ollama/server.mode=release" \
		"github.com/ollama/ollama@v${OLLAMA_VERSION}"
)
log "build finished in $(($(date +%s) - start))s"

if ! binary_ok; then
	log "built binary ${BIN} does not run"
	exit 1
fi
"$BIN" --version 2>&1 | sed 's/^/[install-ollama] /' >&2 || true
echo "$BIN"
