package access

import (
	"bytes"
	"slices"
	"strings"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/apis"
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

// Tokens reads the token counters at the end of an answer, those of
// every guarded API (their codecs' Counters): Ollama's prompt_eval_count
// and eval_count (generate, chat, embed; the last line of a stream),
// OpenAI's usage (prompt_tokens, completion_tokens), and the Responses
// and Anthropic APIs' (input_tokens, output_tokens). It sums the last
// occurrence of each; a counter inside a string (model text, written
// \"eval_count\") is not one.
func (t *Tail) Tokens() int { return TokensIn(t.buf) }

// TokensIn is Tail.Tokens over b.
func TokensIn(b []byte) int {
	prompt, _ := lastCounters(b, everyCounter.prompt)
	output, _ := lastCounters(b, everyCounter.output)
	return prompt + output
}

// counters are the members, quoted, that count an answer's prompt and
// output tokens.
type counters struct{ prompt, output [][]byte }

// add adds the names of cs that c lacks.
func (c *counters) add(cs codec.Counters) {
	c.prompt = addName(c.prompt, cs.Prompt)
	c.output = addName(c.output, cs.Output)
}

// addName adds name, quoted, to names unless it is there.
func addName(names [][]byte, name string) [][]byte {
	q := []byte(`"` + name + `"`)
	if slices.ContainsFunc(names, func(b []byte) bool { return bytes.Equal(b, q) }) {
		return names
	}
	return append(names, q)
}

// everyCounter is every guarded API's counters, and apiCounters each
// API's by its path: what the codecs name.
var everyCounter, apiCounters = func() (counters, map[string]counters) {
	var every counters
	byPath := map[string]counters{}
	for _, cd := range apis.All() {
		var c counters
		c.add(cd.Counters())
		every.add(cd.Counters())
		byPath[cd.Path()] = c
	}
	return every, byPath
}()

// lastCounters sums the last occurrence in b of each of names, and says
// whether any was there.
func lastCounters(b []byte, names [][]byte) (total int, found bool) {
	for _, name := range names {
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
				found = true
				break
			}
		}
	}
	return total, found
}

// Use is what a path's answers cost: the tokens its model generates, the
// input it embeds, or whatever counters it reports.
type Use int

// The uses of a path.
const (
	// UseCounters is any other path: charged the counters it reports.
	UseCounters Use = iota
	// UseGenerate is text generation: prompt and output tokens.
	UseGenerate
	// UseEmbed is embedding: the input's tokens.
	UseEmbed
)

// UseOf says what a path's answers cost (canonical path, as the edge
// leaves it): the guarded APIs (a codec's path: Ollama's generate and
// chat, the OpenAI-compatible chat completions, completions and
// Responses, Anthropic's Messages) generate; /api/embed, /api/embeddings
// and /v1/embeddings embed.
func UseOf(p string) Use {
	p = strings.TrimSuffix(p, "/")
	if _, ok := apiCounters[p]; ok {
		return UseGenerate
	}
	switch p {
	case "/api/embed", "/api/embeddings", "/v1/embeddings":
		return UseEmbed
	}
	return UseCounters
}

// Meter is how the answers to one path passed through are charged: what
// they cost, and the members that count their tokens.
type Meter struct {
	Use      Use
	counters counters
}

// MeterOf is the meter of a path (canonical, as the edge leaves it): a
// guarded API's answers are read for the counters its codec names, those
// of any other path (the embeddings, answered in Ollama's or OpenAI's
// shape, and whatever else reports counters) for every API's.
func MeterOf(p string) Meter {
	c, ok := apiCounters[strings.TrimSuffix(p, "/")]
	if !ok {
		c = everyCounter
	}
	return Meter{Use: UseOf(p), counters: c}
}

// Charge is the tokens an answer passed through is charged, for what the
// upstream did: the counters at its end that m reads where it has them.
// Where it has none — a stream cut before its final chunk, an OpenAI
// stream asked without stream_options.include_usage, /api/embeddings,
// which reports none — promptEstimate stands for the prompt (or the
// embedded input) and the frames read for the output, a token each
// (Ollama streams a token or so per chunk). An output counter of zero
// with frames read (the start of an Anthropic stream cut short) is
// counted by its frames.
func (t *Tail) Charge(m Meter, promptEstimate, frames int) int {
	prompt, hasPrompt := lastCounters(t.buf, m.counters.prompt)
	output, hasOutput := lastCounters(t.buf, m.counters.output)
	switch m.Use {
	case UseGenerate:
		if !hasPrompt && !hasOutput {
			prompt = promptEstimate
		}
		if output == 0 {
			output = frames
		}
	case UseEmbed:
		if !hasPrompt {
			prompt = promptEstimate
		}
	}
	return prompt + output
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
