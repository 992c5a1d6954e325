package access

import (
	"bytes"
)

// TailSize is how much of the end of an answer [Tail] keeps: enough for
// the last object of an answer or a stream, where every API puts its
// token counters.
const TailSize = 4096

// Tail keeps the last TailSize bytes written to it, so that the tokens of
// an answer passed through can be read from its end without holding the
// answer.
type Tail struct {
	buf []byte
}

// Write keeps the end of p.
func (t *Tail) Write(p []byte) {
	if len(p) >= TailSize {
		t.buf = append(t.buf[:0], p[len(p)-TailSize:]...)
		return
	}
	if over := len(t.buf) + len(p) - TailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
}

// Tokens reads the token counters at the end of an answer: Ollama's
// prompt_eval_count and eval_count (generate, chat, embed; the last line
// of a stream), OpenAI's usage (prompt_tokens, completion_tokens) and
// Anthropic's (input_tokens, output_tokens). It sums the last occurrence
// of each; a counter inside a string (model text, written \"eval_count\")
// is not one.
func (t *Tail) Tokens() int { return TokensIn(t.buf) }

// usageCounters are the members that count prompt and output tokens.
var usageCounters = [][]byte{
	[]byte(`"prompt_eval_count"`), []byte(`"eval_count"`),
	[]byte(`"prompt_tokens"`), []byte(`"completion_tokens"`),
	[]byte(`"input_tokens"`), []byte(`"output_tokens"`),
}

// TokensIn is Tail.Tokens over b.
func TokensIn(b []byte) int {
	total := 0
	for _, name := range usageCounters {
		end := len(b)
		for end > 0 {
			i := bytes.LastIndex(b[:end], name)
			if i < 0 {
				break
			}
			end = i
			if i > 0 && b[i-1] == '\\' {
				continue
			}
			if n, ok := counterValue(b[i+len(name):]); ok {
				total += n
				break
			}
		}
	}
	return total
}

// counterValue reads `: 123` at the start of b.
func counterValue(b []byte) (int, bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	i++
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	n, digits := 0, 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		if n > 1<<40 {
			return 0, false
		}
		n = n*10 + int(b[i]-'0')
		digits++
	}
	return n, digits > 0
}
