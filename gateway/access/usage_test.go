package access

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/middleware/codec/apis"
)

func TestTokensIn(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int
	}{
		{"generate", `{"model":"m","response":"hi","done":true,"prompt_eval_count":26,"eval_count":298}`, 324},
		{"chat stream, last line", "{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"prompt_eval_count\":10,\"eval_count\":5}\n", 15},
		{"openai", `{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`, 10},
		{"anthropic stream", "event: message_start\ndata: {\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\nevent: message_delta\ndata: {\"usage\":{\"output_tokens\":40}}\n\n", 52},
		{"counter in the text is not one", `{"response":"say \"eval_count\":999","done":true,"prompt_eval_count":1,"eval_count":2}`, 3},
		{"only in the text", `{"response":"\"eval_count\": 999"}`, 0},
		{"spaces", `{"prompt_eval_count" : 4 , "eval_count":	6}`, 10},
		{"none", `{"models":[]}`, 0},
		{"cache counters are not input", `{"usage":{"cache_read_input_tokens":100,"input_tokens":3,"output_tokens":4}}`, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tail Tail
			for _, chunk := range strings.SplitAfter(tt.body, ",") {
				tail.Write([]byte(chunk))
			}
			if got := tail.Tokens(); got != tt.want {
				t.Errorf("Tokens(%s) = %d, want %d", tt.body, got, tt.want)
			}
		})
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	var tail Tail
	tail.Write([]byte(`{"prompt_eval_count":1000,`))
	tail.Write([]byte(strings.Repeat("x", TailSize-10)))
	tail.Write([]byte(`"eval_count":7}`))
	if len(tail.buf) != TailSize || tail.Tokens() != 7 {
		t.Errorf("tail of %d bytes reads %d tokens, want %d bytes and 7", len(tail.buf), tail.Tokens(), TailSize)
	}
	tail.Write([]byte(strings.Repeat("y", 2*TailSize)))
	if len(tail.buf) != TailSize || tail.Tokens() != 0 {
		t.Errorf("after a large write: %d bytes, %d tokens", len(tail.buf), tail.Tokens())
	}
}

func FuzzTokensIn(f *testing.F) {
	for _, s := range []string{`{"eval_count":1}`, `"prompt_tokens": 99999999999999999999`, `\"eval_count\":1`, `"input_tokens":`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := TokensIn(b); n < 0 {
			t.Fatalf("TokensIn(%q) = %d", b, n)
		}
	})
}

func FuzzCharge(f *testing.F) {
	for _, s := range []string{`{"eval_count":1}`, `"usage":{"prompt_tokens": 99999999999999999999`, `\"input_tokens\":1`, `"output_tokens":0`, ``} {
		f.Add("/api/generate", []byte(s), 3, 2)
		f.Add("/v1/messages", []byte(s), 0, 0)
	}
	f.Fuzz(func(t *testing.T, path string, b []byte, estimate, frames int) {
		if estimate < 0 || frames < 0 {
			return
		}
		var tail Tail
		tail.Write(b)
		if n := tail.Charge(MeterOf(path), estimate, frames); n < 0 {
			t.Fatalf("Charge(MeterOf(%q), %q, %d, %d) = %d", path, b, estimate, frames, n)
		}
	})
}

func TestTailCharge(t *testing.T) {
	tests := []struct {
		name           string
		path           string
		answer         string
		estimate, fram int
		want           int
	}{
		{"counters", "/api/generate", `{"done":true,"prompt_eval_count":30,"eval_count":70}`, 5, 2, 100},
		{"counters, prompt cached", "/api/chat", `{"done":true,"eval_count":70}`, 5, 71, 70},
		{"stream cut before its counters", "/api/generate", "{\"response\":\"a\"}\n{\"response\":\"b\"}\n{\"response\":\"c\"}\n", 4, 3, 7},
		{"openai", "/v1/chat/completions", `{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`, 5, 1, 10},
		{"openai stream without usage", "/v1/chat/completions", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", 5, 1, 6},
		{"responses", "/v1/responses", "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":8,\"output_tokens\":2}}}\n\n", 5, 4, 10},
		{"anthropic stream cut after its start", "/v1/messages", "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":0}}}\n\n", 3, 9, 21},
		{"api/embed", "/api/embed", `{"embeddings":[[0.1]],"prompt_eval_count":7}`, 2, 1, 7},
		{"api/embeddings, no counters", "/api/embeddings", `{"embedding":[0.1,0.2]}`, 2, 1, 2},
		{"v1/embeddings", "/v1/embeddings", `{"data":[],"usage":{"prompt_tokens":3,"total_tokens":3}}`, 9, 1, 3},
		{"other path", "/api/pull", `{"status":"success"}`, 9, 1, 0},
		// A guarded API's answer is read for its own API's counters only:
		// another API's names in it count nothing.
		{"generate with another API's names", "/api/generate", `{"done":true,"usage":{"prompt_tokens":500,"completion_tokens":500}}`, 4, 3, 7},
		{"chat completion with Ollama's names", "/v1/chat/completions/", `{"choices":[],"prompt_eval_count":500,"eval_count":500}`, 4, 3, 7},
		{"message with OpenAI's names", "/v1/messages", `{"usage":{"prompt_tokens":500,"input_tokens":2,"output_tokens":3}}`, 4, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tail Tail
			tail.Write([]byte(tt.answer))
			if got := tail.Charge(MeterOf(tt.path), tt.estimate, tt.fram); got != tt.want {
				t.Errorf("Charge(MeterOf(%q), %q, %d, %d) = %d, want %d", tt.path, tt.answer, tt.estimate, tt.fram, got, tt.want)
			}
		})
	}
}

// TestMeterOfReadsTheCodecsCounters: the counters a guarded path's answer
// is charged by are those its codec names, so that a new API's counters
// are written in its codec alone.
func TestMeterOfReadsTheCodecsCounters(t *testing.T) {
	for _, cd := range apis.All() {
		cs := cd.Counters()
		answer := fmt.Sprintf(`{%q:3,%q:4}`, cs.Prompt, cs.Output)
		if cs.Usage {
			answer = `{"usage":` + answer + `}`
		}
		var tail Tail
		tail.Write([]byte(answer))
		m := MeterOf(cd.Path())
		if got := tail.Charge(m, 100, 100); m.Use != UseGenerate || got != 7 {
			t.Errorf("Charge(MeterOf(%q), %s) = %d (use %d), want 7 (use %d)", cd.Path(), answer, got, m.Use, UseGenerate)
		}
	}
}

func TestUseOf(t *testing.T) {
	tests := []struct {
		path string
		want Use
	}{
		{"/api/generate", UseGenerate}, {"/api/chat/", UseGenerate}, {"/v1/chat/completions", UseGenerate},
		{"/v1/completions", UseGenerate}, {"/v1/responses", UseGenerate}, {"/v1/messages", UseGenerate},
		{"/api/embed", UseEmbed}, {"/api/embeddings", UseEmbed}, {"/v1/embeddings", UseEmbed},
		{"/api/pull", UseCounters}, {"/api/show", UseCounters},
	}
	for _, tt := range tests {
		if got := UseOf(tt.path); got != tt.want {
			t.Errorf("UseOf(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
}
