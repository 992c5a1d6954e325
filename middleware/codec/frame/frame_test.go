package frame

import (
	"testing"

	"github.com/contractgateway/gateway/strictjson"
)

// TestFrames checks the frames that end or keep alive a stream already
// started: each is one whole frame that its parser takes as such.
func TestFrames(t *testing.T) {
	ev, _ := strictjson.Parse([]byte(`{"type":"ping"}`))
	tests := []struct {
		name, got, want string
	}{
		{"named SSE error", string(SSEErrorEvent([]byte(`{"type":"error","error":{}}`))), "event: error\ndata: {\"type\":\"error\",\"error\":{}}\n\n"},
		{"data-only SSE error", string(SSEErrorEvent([]byte(`{"error":{}}`))), "data: {\"error\":{}}\n\n"},
		{"NDJSON error", string(NDJSONErrorLine([]byte(`{"error":"x"}`))), "{\"error\":\"x\"}\n"},
		{"named event", string(NamedEvent(ev)), "event: ping\ndata: {\"type\":\"ping\"}\n\n"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	chunk, err := strictjson.Parse(KeepAliveNDJSON("m", strictjson.Member{Key: "response", KeyOffset: -1, Value: strictjson.String("")}))
	if err != nil || chunk.Get("done").Bool || chunk.Get("model").Str != "m" || chunk.Get("response").Str != "" {
		t.Errorf("KeepAliveNDJSON = %v, %v: want one chunk of m, empty response, done false", chunk, err)
	}
}
