package upstream

import (
	"bytes"

	"github.com/contractgateway/gateway/validators/extract"
)

// BytesPerToken is the estimate of text per token where Ollama reports no
// counter: ceil(bytes/4), the usual rule of thumb for English with the
// tokenizers of the models Ollama serves. It is used only when nothing
// better exists — a stream the client or the guard cut before its final
// chunk (whose counters are then missing), an OpenAI stream asked without
// stream_options.include_usage, an embedding endpoint that reports no
// prompt_eval_count — so that tokens_per_minute charges what the model did.
const BytesPerToken = 4

// EstimateTokens is the token estimate of n bytes of text: ceil(n/4).
func EstimateTokens(n int64) int {
	if n <= 0 {
		return 0
	}
	return int((n + BytesPerToken - 1) / BytesPerToken)
}

// skippedMembers are the request members whose strings are no prompt
// text: the model's name, images and other binary data (base64, data:
// URLs), the output format, which constrains the grammar and is not read
// by the model, and the lifetime of the model in memory.
var skippedMembers = map[string]bool{
	"model": true, "images": true, "image_url": true, "source": true,
	"format": true, "response_format": true, "keep_alive": true,
}

// maxMeterDepth bounds the nesting a PromptMeter tracks: deeper values are
// counted as array members, whatever they are.
const maxMeterDepth = 256

// PromptMeter measures the prompt text of a request body as it goes by:
// the bytes of its string values (as written, escapes included), except
// those of skippedMembers, at any depth. It reads any bytes (JSON or not)
// in pieces of any size without holding them, so that a body the proxy
// streams to Ollama is measured on the way. Its zero value is ready.
type PromptMeter struct {
	n int64
	// stack holds '{' or '[' for each open container (up to
	// maxMeterDepth); depth counts them all.
	stack []byte
	depth int
	// skipAt is the depth of the skipped container being read, 0 if none.
	skipAt int
	// expectKey is set in an object where the next string is a key.
	expectKey bool
	// inString, str, isKey and skipString describe the string being read.
	inString, isKey, skipString bool
	str                         extract.StringScan
	// key is the last key read (up to 32 bytes), long that it was longer.
	key  []byte
	long bool
	// skipNext is set when the value about to begin is a skipped member's.
	skipNext bool
}

// Write measures p; it never fails.
func (m *PromptMeter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if m.inString && !m.str.Escaped() && !m.isKey {
			// The run of a string value up to its next quote or escape,
			// at once: most of a body is the text of its prompt.
			run := bytes.IndexByte(p, '"')
			if run < 0 {
				run = len(p)
			}
			if i := bytes.IndexByte(p[:run], '\\'); i >= 0 {
				run = i
			}
			if !m.skipString && m.skipAt == 0 {
				m.n += int64(run)
			}
			if p = p[run:]; len(p) == 0 {
				break
			}
		}
		m.byte(p[0])
		p = p[1:]
	}
	return n, nil
}

// Bytes is the prompt text measured so far, in bytes.
func (m *PromptMeter) Bytes() int64 { return m.n }

// Tokens is the token estimate of the prompt text measured so far.
func (m *PromptMeter) Tokens() int { return EstimateTokens(m.n) }

func (m *PromptMeter) byte(c byte) {
	if m.inString {
		if m.str.End(c) {
			m.inString = false
			return
		}
		switch {
		case m.isKey:
			if len(m.key) < 32 {
				m.key = append(m.key, c)
			} else {
				m.long = true
			}
		case !m.skipString && m.skipAt == 0:
			m.n++
		}
		return
	}
	switch c {
	case '"':
		m.inString = true
		m.isKey = m.expectKey && m.top() == '{'
		if m.isKey {
			m.key, m.long = m.key[:0], false
		} else {
			m.skipString = m.skipNext
			m.skipNext = false
		}
	case ':':
		m.expectKey = false
		m.skipNext = !m.long && skippedMembers[string(m.key)]
	case ',':
		m.expectKey = m.top() == '{'
		m.skipNext = false
	case '{', '[':
		m.depth++
		if m.depth <= maxMeterDepth {
			m.stack = append(m.stack, c)
		}
		if m.skipNext && m.skipAt == 0 {
			m.skipAt = m.depth
		}
		m.skipNext = false
		m.expectKey = c == '{'
	case '}', ']':
		if m.depth == 0 {
			return
		}
		if m.skipAt == m.depth {
			m.skipAt = 0
		}
		if m.depth <= maxMeterDepth {
			m.stack = m.stack[:len(m.stack)-1]
		}
		m.depth--
		m.expectKey = false
		m.skipNext = false
	}
}

// top is the innermost open container tracked, '[' beyond the depth
// tracked, 0 at the top level.
func (m *PromptMeter) top() byte {
	switch {
	case m.depth == 0:
		return 0
	case m.depth > maxMeterDepth:
		return '['
	}
	return m.stack[len(m.stack)-1]
}

// FrameCounter counts the frames of an answer as it goes by: the lines
// that hold a JSON object, NDJSON's chunks and SSE's data events ("data:
// [DONE]" and the event, id and comment lines are none). Ollama writes a
// token or so per frame, so that a stream cut before its final counters
// is charged one token per frame read. Its zero value is ready.
type FrameCounter struct {
	n int
	// head holds the start of the current line, up to what decides it.
	head    []byte
	decided bool
}

// frameHead is as much of a line as decides whether it is a frame.
const frameHead = 16

// Write counts the frames p completes or decides; it never fails.
func (f *FrameCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		line := p
		if i >= 0 {
			line = p[:i]
		}
		if !f.decided {
			take := min(len(line), frameHead-len(f.head))
			f.head = append(f.head, line[:take]...)
			if len(f.head) >= frameHead || i >= 0 {
				f.decide()
			}
		}
		if i < 0 {
			break
		}
		p = p[i+1:]
		f.head, f.decided = f.head[:0], false
	}
	return n, nil
}

func (f *FrameCounter) decide() {
	f.decided = true
	h := bytes.TrimLeft(f.head, " \t\r")
	if rest, ok := bytes.CutPrefix(h, []byte("data:")); ok {
		h = bytes.TrimLeft(rest, " \t")
	}
	if len(h) > 0 && h[0] == '{' {
		f.n++
	}
}

// Frames is the number of frames counted, a line cut short included once
// its start shows it is one.
func (f *FrameCounter) Frames() int { return f.n }
