package access

import (
	"strings"
	"testing"
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
