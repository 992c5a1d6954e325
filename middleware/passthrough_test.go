package middleware

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestNewEndpointsPassThroughUnguarded: a request no route guards reaches
// the upstream as the client wrote it, and its answer the client as the
// upstream wrote it, on every new endpoint.
func TestNewEndpointsPassThroughUnguarded(t *testing.T) {
	var got string
	answer := "event: message_start\ndata: {\"odd\" :  1}\n\n"
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	}))
	t.Cleanup(fake.Close)
	gw := mount(t, fake.URL, nil)
	tests := []struct{ path, body string }{
		{"/v1/completions", `{"model":"m",  "prompt":"p","stream":true , "x":[1,2]}`},
		{"/v1/responses", `{"model":"m","input":"p","text":{"format":{"type":"text"}},"stream":true}`},
		{"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"p"}],"stream":true, "tools":[{"name":"f","input_schema":{}}]}`},
	}
	for _, tt := range tests {
		resp, err := http.Post(gw.URL+tt.path, "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got != tt.body {
			t.Errorf("%s: upstream got %s, want the client's bytes %s", tt.path, got, tt.body)
		}
		if string(b) != answer || resp.Header.Get("X-Contract") != "" {
			t.Errorf("%s: client got %q (X-Contract %q), want the upstream's bytes", tt.path, b, resp.Header.Get("X-Contract"))
		}
	}
}
