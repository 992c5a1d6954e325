package apis

import (
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestNormalStop: an answer in contract reports the API's normal stop, and
// NormalStop returns the upstream's reason when it was another.
func TestNormalStop(t *testing.T) {
	tests := []struct {
		path, answer, want, upstream string
	}{
		{"/api/generate", `{"response":"x","done":true,"done_reason":"length"}`, `{"response":"x","done":true,"done_reason":"stop"}`, "length"},
		{"/api/chat", `{"message":{"content":"x"},"done":true,"done_reason":"stop"}`, `{"message":{"content":"x"},"done":true,"done_reason":"stop"}`, ""},
		{"/v1/chat/completions", `{"choices":[{"message":{},"finish_reason":"length"}]}`, `{"choices":[{"message":{},"finish_reason":"stop"}]}`, "length"},
		{"/v1/chat/completions", `{"choices":[{"message":{},"finish_reason":"tool_calls"}]}`, `{"choices":[{"message":{},"finish_reason":"tool_calls"}]}`, ""},
		{"/v1/completions", `{"choices":[{"text":"x","finish_reason":"length"}]}`, `{"choices":[{"text":"x","finish_reason":"stop"}]}`, "length"},
		{"/v1/responses", `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`, `{"status":"completed","incomplete_details":null,"output":[]}`, "max_output_tokens"},
		{"/v1/responses", `{"status":"completed","incomplete_details":null,"output":[]}`, `{"status":"completed","incomplete_details":null,"output":[]}`, ""},
		{"/v1/messages", `{"content":[],"stop_reason":"max_tokens"}`, `{"content":[],"stop_reason":"end_turn"}`, "max_tokens"},
		{"/v1/messages", `{"content":[],"stop_reason":"tool_use"}`, `{"content":[],"stop_reason":"tool_use"}`, ""},
	}
	for _, tt := range tests {
		obj, err := strictjson.Parse([]byte(tt.answer))
		if err != nil {
			t.Fatal(err)
		}
		up := codecFor(t, tt.path).NormalStop(obj)
		if got := string(strictjson.Marshal(obj)); got != tt.want {
			t.Errorf("%s %s: answer = %s, want %s", tt.path, tt.answer, got, tt.want)
		}
		if up != tt.upstream {
			t.Errorf("%s NormalStop(%s) = %q, want %q", tt.path, tt.answer, up, tt.upstream)
		}
	}
}
