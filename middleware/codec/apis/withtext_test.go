package apis

import (
	"testing"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/ollama"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestWithTextKeepsTheAnswer checks that replacing the text of a native
// answer keeps every other member, in its place, and leaves the original
// object as it was (it may be shared by coalesced requests).
func TestWithTextKeepsTheAnswer(t *testing.T) {
	tests := []struct {
		name  string
		codec codec.Codec
		in    string
		want  string
	}{
		{"generate", ollama.Generate{}, `{"model":"m","response":"old","done":true,"eval_count":3}`,
			`{"model":"m","response":"new","done":true,"eval_count":3}`},
		{"chat", ollama.Chat{}, `{"model":"m","message":{"role":"assistant","content":"old","thinking":"t"},"done":true}`,
			`{"model":"m","message":{"role":"assistant","content":"new","thinking":"t"},"done":true}`},
		{"chat without a message", ollama.Chat{}, `{"model":"m","done":true}`,
			`{"model":"m","done":true,"message":{"role":"assistant","content":"new"}}`},
		{"chat with a message that is no object", ollama.Chat{}, `{"model":"m","message":"x","done":true}`,
			`{"model":"m","message":{"role":"assistant","content":"new"},"done":true}`},
	}
	for _, tt := range tests {
		obj, err := strictjson.Parse([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		got := string(strictjson.Marshal(tt.codec.WithText(obj, "new")))
		if got != tt.want {
			t.Errorf("%s: WithText = %s, want %s", tt.name, got, tt.want)
		}
		if after := string(strictjson.Marshal(obj)); after != tt.in {
			t.Errorf("%s: the original became %s", tt.name, after)
		}
	}
}
