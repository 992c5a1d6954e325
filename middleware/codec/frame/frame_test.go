package frame

import (
	"net/http/httptest"
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
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

// flushCounter records a response's writes and flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++ }

// TestStream: a stream written in pieces sends its status and headers
// once, before the first piece (an empty one included), and flushes every
// piece; the appended frames are whole events of their framing.
func TestStream(t *testing.T) {
	v, _ := strictjson.Parse([]byte(`{"type":"t","a":1}`))
	tests := []struct {
		contentType  string
		pieces       []string
		cacheControl string
	}{
		{NDJSONType, []string{string(AppendNDJSON(nil, v)), "", string(AppendNDJSON(nil, v))}, ""},
		{SSEType, []string{"", string(AppendData(nil, v)), string(AppendNamed(nil, v)) + Done}, "no-cache"},
	}
	for _, tt := range tests {
		rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
		s := NewStream(rec, tt.contentType)
		var want string
		for _, p := range tt.pieces {
			if err := s.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
			want += p
		}
		if rec.Code != 200 || rec.Header().Get("Content-Type") != tt.contentType || rec.Header().Get("Cache-Control") != tt.cacheControl {
			t.Errorf("%s: status %d, headers %v", tt.contentType, rec.Code, rec.Header())
		}
		if rec.Body.String() != want || rec.flushes != len(tt.pieces) {
			t.Errorf("%s: body %q with %d flushes, want %q with %d", tt.contentType, rec.Body.String(), rec.flushes, want, len(tt.pieces))
		}
	}
	for _, tt := range []struct{ got, want string }{
		{string(AppendNDJSON(nil, v)), "{\"type\":\"t\",\"a\":1}\n"},
		{string(AppendData([]byte("x"), v)), "xdata: {\"type\":\"t\",\"a\":1}\n\n"},
		{string(AppendNamed(nil, v)), "event: t\ndata: {\"type\":\"t\",\"a\":1}\n\n"},
	} {
		if tt.got != tt.want {
			t.Errorf("frame %q, want %q", tt.got, tt.want)
		}
	}
}
