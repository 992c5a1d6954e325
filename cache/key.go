// Package cache keeps validated outputs of guarded requests: the key of a
// request (the SHA-256 of its canonical form), a memory store bounded by
// bytes and by time, a Redis store that several replicas share, a tiered
// store that falls back to memory when Redis fails, and the coalescing of
// identical requests in flight. It knows nothing of contracts or HTTP.
package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// Key identifies a request's answer: the SHA-256 of the canonical request.
type Key [32]byte

// String returns the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Request is what identifies an answer.
type Request struct {
	// Endpoint is the API path ("/api/chat"): the same body means another
	// answer shape on another endpoint.
	Endpoint string
	// Contract is the contract's name@version.
	Contract string
	// Params are the contract's bound parameters.
	Params map[string]string
	// Output is how the answer's document is written ("bare", "fenced"):
	// two routes over one model and contract that render differently are
	// two answers, not one.
	Output string
	// Report names what the answer's summary reports beyond the default
	// ("corrections"), "" for nothing: the stored answer carries it, so a
	// request that asks for it is not answered by one that did not.
	Report string
	// Body is the request as sent upstream, model already the upstream
	// model.
	Body *strictjson.Value
	// Partition is whose answers these are: the name of the caller's key
	// when answers are kept per key, "" when they are shared by every
	// caller. Two keys asking the same prompt get two entries, so that one
	// tenant cannot learn from a hit what another asked.
	Partition string
}

// ignoredTop are the body members that do not change the answer: whether
// it streams (the guard answers both shapes from one answer) and how long
// the model stays loaded.
var ignoredTop = []string{"stream", "stream_options", "keep_alive"}

// ignoredOptions are the options that change how the model runs, not what
// it writes: Ollama's api.Runner fields (num_ctx aside, which bounds the
// context the model sees, and so the answer) and the runtime switches of
// older versions.
var ignoredOptions = []string{"num_batch", "num_gpu", "main_gpu", "use_mmap", "num_thread",
	"use_mlock", "numa", "low_vram", "f16_kv", "vocab_only", "logits_all"}

// NewKey returns the key of r. Key order, whitespace and the spelling of
// numbers (0.3, 0.30, 3e-1) never change it; any other difference does,
// including members the key knows nothing of: an unknown member is taken
// to change the answer.
func NewKey(r Request) Key {
	w := keyWriter{b: make([]byte, 0, 4096)}
	// v2: the output mode and the report are part of the key; v3: the
	// partition.
	w.str("contract-gateway/cache/v3")
	w.str(r.Partition)
	w.str(r.Endpoint)
	w.str(r.Contract)
	keys := make([]string, 0, len(r.Params))
	for k := range r.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.count(len(keys))
	for _, k := range keys {
		w.str(k)
		w.str(r.Params[k])
	}
	w.str(r.Output)
	w.str(r.Report)
	w.value(r.Body, 0)
	return sha256.Sum256(w.b)
}

// keyWriter writes values unambiguously: every value starts with its
// kind, every string and list with its length, so that no two different
// requests write the same bytes.
// The encoding is built in one buffer and hashed once: a body is a few
// kilobytes, and writing piece by piece to the hash would copy every
// string.
type keyWriter struct {
	b []byte
}

func (w *keyWriter) count(n int) { w.b = binary.AppendUvarint(w.b, uint64(n)) }

func (w *keyWriter) str(s string) {
	w.count(len(s))
	w.b = append(w.b, s...)
}

func (w *keyWriter) kind(b byte) { w.b = append(w.b, b) }

// value writes v; depth 0 is the body, 1 its members.
func (w *keyWriter) value(v *strictjson.Value, depth int) {
	if v == nil {
		w.kind('-')
		return
	}
	switch v.Kind {
	case strictjson.KindNull:
		w.kind('n')
	case strictjson.KindBool:
		if v.Bool {
			w.kind('t')
		} else {
			w.kind('f')
		}
	case strictjson.KindNumber:
		w.kind('d')
		w.str(CanonicalNumber(v.Num))
	case strictjson.KindString:
		w.kind('s')
		w.str(v.Str)
	case strictjson.KindArray:
		w.kind('a')
		w.count(len(v.Items))
		for _, it := range v.Items {
			w.value(it, depth+1)
		}
	case strictjson.KindObject:
		w.object(v, depth)
	default:
		w.kind('?')
	}
}

func (w *keyWriter) object(v *strictjson.Value, depth int) {
	ms := make([]strictjson.Member, 0, len(v.Members))
	for _, m := range v.Members {
		if depth == 0 && slices.Contains(ignoredTop, m.Key) {
			continue
		}
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b strictjson.Member) int { return strings.Compare(a.Key, b.Key) })
	w.kind('o')
	w.count(len(ms))
	for _, m := range ms {
		w.str(m.Key)
		if depth == 0 && m.Key == "options" && m.Value != nil && m.Value.Kind == strictjson.KindObject {
			w.options(m.Value)
			continue
		}
		w.value(m.Value, depth+1)
	}
}

func (w *keyWriter) options(v *strictjson.Value) {
	kept := &strictjson.Value{Kind: strictjson.KindObject}
	for _, m := range v.Members {
		if !slices.Contains(ignoredOptions, m.Key) {
			kept.Members = append(kept.Members, m)
		}
	}
	w.object(kept, 1)
}

// CanonicalNumber spells a JSON number literal one way per value: an
// integral value as an integer ("1.0", "1e0" → "1"; exact at any size),
// any other as the shortest float64 form ("0.30", "3e-1" → "0.3"), which
// is the value Ollama reads. A literal whose exponent is too large to
// expand cheaply is kept as written (a client's spelling of such a number
// only costs it a cache miss).
func CanonicalNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		// RFC 8259 integers have one spelling already (no leading zeros,
		// no plus), but for the sign of zero.
		if lit == "-0" {
			return "0"
		}
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err == nil && f != math.Trunc(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if err == nil && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		if e, err := strconv.Atoi(lit[i+1:]); err != nil || e > maxExpand || e < -maxExpand {
			return lit
		}
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return lit
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.String()
}

// maxExpand bounds the exponents CanonicalNumber expands exactly.
const maxExpand = 400
