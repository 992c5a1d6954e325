package assemble

import (
	"errors"
	"testing"

	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// assembler is what every assembler of the package does.
type assembler interface {
	Event(data []byte) (string, error)
	Object(done, stopped bool) (*strictjson.Value, error)
}

// TestIncomplete: a stream that ends before its API's end is incomplete,
// the same events stopped by the guard make an answer, and the text of
// each event comes back as it is taken.
func TestIncomplete(t *testing.T) {
	chatChoice := func(c *strictjson.Value) string { s, _ := c.Get("delta").Get("content").AsString(); return s }
	tests := []struct {
		name   string
		asm    func() assembler
		events []string
		text   string
	}{
		{"native", func() assembler { return &Native{} }, []string{`{"response":"{}","done":false}`}, "{}"},
		{"choices", func() assembler {
			return &Choices{Name: "chat.completion", DeltaText: chatChoice, Choice: func(string, *strictjson.Value) *strictjson.Value { return strictjson.Object() }}
		}, []string{`{"choices":[{"delta":{"content":"{}"}}]}`}, "{}"},
		{"anthropic", func() assembler { return &Anthropic{} }, []string{`{"type":"message_start","message":{"content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{}"}}`}, "{}"},
		{"responses", func() assembler {
			return &Responses{WithText: func(obj *strictjson.Value, _ string) *strictjson.Value { return obj }}
		}, []string{`{"type":"response.created","response":{}}`, `{"type":"response.output_text.delta","delta":"{}"}`}, "{}"},
	}
	for _, tt := range tests {
		for _, stopped := range []bool{false, true} {
			asm, text := tt.asm(), ""
			for _, ev := range tt.events {
				d, err := asm.Event([]byte(ev))
				if err != nil {
					t.Fatalf("%s: Event(%s) = %v", tt.name, ev, err)
				}
				text += d
			}
			if text != tt.text {
				t.Errorf("%s: deltas %q, want %q", tt.name, text, tt.text)
			}
			_, err := asm.Object(false, stopped)
			if stopped != (err == nil) || (!stopped && !errors.Is(err, frame.ErrIncomplete)) {
				t.Errorf("%s: Object(stopped %v) = %v, want ErrIncomplete only when not stopped", tt.name, stopped, err)
			}
		}
	}
}
