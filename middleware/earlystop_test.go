package middleware

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// whitespaceUpstream is a fake Ollama /api/generate that streams the
// JSON text in two chunks, then whitespace (Ollama issues #2577, #2623)
// until release is closed, and then its done chunk; ended receives
// whether it was released (rather than giving up after a long wait, as
// it does only so that a guard that waits for its end fails instead of
// hanging).
func whitespaceUpstream(t *testing.T, text string, release chan struct{}) (*httptest.Server, chan bool) {
	t.Helper()
	ended := make(chan bool, 4)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		if !body.Stream {
			t.Errorf("upstream asked without a stream")
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		f := w.(http.Flusher)
		chunk := func(s string) {
			b, _ := json.Marshal(map[string]any{"model": "m", "response": s, "done": false})
			w.Write(append(b, '\n'))
			f.Flush()
		}
		chunk(text[:len(text)/2])
		chunk(text[len(text)/2:])
		chunk("\n")
		giveUp := time.NewTimer(10 * time.Second)
		defer giveUp.Stop()
		select {
		case <-release:
			ended <- true
		case <-giveUp.C:
			ended <- false
		}
		fmt.Fprintf(w, `{"model":"m","response":"","done":true,"done_reason":"length","eval_count":%d}`+"\n", 4000)
	}))
	t.Cleanup(s.Close)
	return s, ended
}

// TestEarlyStop: the answer of a call that carries a schema format is
// complete once the model's JSON value has closed with only whitespace
// after it — the client has it while the model still writes whitespace —
// and its tokens are the chunks read; a free-text call is read to its
// end first.
func TestEarlyStop(t *testing.T) {
	tests := []struct {
		name, body string
		header     map[string]string
		early      bool
	}{
		{"schema format", `{"model":"m","prompt":"p","stream":false,"format":{"type":"object","required":["a"]}}`, nil, true},
		{"free text", `{"model":"m","prompt":"p","stream":false}`, map[string]string{"X-Contract": "json"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			if !tt.early {
				close(release) // the answer comes after the stream's end
			}
			up, ended := whitespaceUpstream(t, `{"a":1}`, release)
			gw := mount(t, up.URL, nil)
			req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/generate", strings.NewReader(tt.body))
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				Response  string `json:"response"`
				EvalCount int    `json:"eval_count"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", resp.StatusCode, err)
			}
			if tt.early {
				close(release)
			}
			if got.Response != `{"a":1}` {
				t.Errorf("response = %q, want the JSON value", got.Response)
			}
			if !<-ended {
				t.Errorf("the client got its answer only after the upstream's end")
			}
			if tt.early && (got.EvalCount < 2 || got.EvalCount >= 4000) {
				t.Errorf("eval_count = %d, want the chunks read before the stop", got.EvalCount)
			}
		})
	}
}
