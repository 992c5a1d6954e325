package middleware

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// whitespaceUpstream is a fake Ollama /api/generate that streams the
// JSON text in two chunks, then whitespace chunk after chunk (Ollama
// issues #2577, #2623) until its client goes away or it has written max
// of them; stopped receives whether the client went away first.
func whitespaceUpstream(t *testing.T, text string, max int) (*httptest.Server, chan bool) {
	t.Helper()
	stopped := make(chan bool, 4)
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
		chunk := func(s string) bool {
			b, _ := json.Marshal(map[string]any{"model": "m", "response": s, "done": false})
			_, err := w.Write(append(b, '\n'))
			f.Flush()
			return err == nil && r.Context().Err() == nil
		}
		chunk(text[:len(text)/2])
		chunk(text[len(text)/2:])
		for i := 0; i < max; i++ {
			if !chunk("\n") {
				stopped <- true
				return
			}
		}
		fmt.Fprintf(w, `{"model":"m","response":"","done":true,"done_reason":"length","eval_count":%d}`+"\n", max+2)
		stopped <- false
	}))
	t.Cleanup(s.Close)
	return s, stopped
}

// TestEarlyStop: a call that carries a schema format is cancelled once
// the model's JSON value has closed with only whitespace after it, and
// its tokens are the chunks read (those that came in the same read as
// the close included); a free-text call is read to its end.
func TestEarlyStop(t *testing.T) {
	tests := []struct {
		name, body  string
		header      map[string]string
		wantStopped bool
	}{
		{"schema format", `{"model":"m","prompt":"p","stream":false,"format":{"type":"object","required":["a"]}}`, nil, true},
		{"free text", `{"model":"m","prompt":"p","stream":false}`, map[string]string{"X-Contract": "json"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, stopped := whitespaceUpstream(t, `{"a":1}`, 20000)
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
			if got.Response != `{"a":1}` {
				t.Errorf("response = %q, want the JSON value", got.Response)
			}
			if s := <-stopped; s != tt.wantStopped {
				t.Errorf("upstream call cancelled = %v, want %v", s, tt.wantStopped)
			}
			if tt.wantStopped && (got.EvalCount < 2 || got.EvalCount >= 20000) {
				t.Errorf("eval_count = %d, want the chunks read before the stop", got.EvalCount)
			}
		})
	}
}

// FuzzValueEnd: the watch for the end of a JSON value never panics, and
// reports an end only for a text that is one bracketed value and
// whitespace, however the text is cut into pieces.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`{"a":1}`, ` [1,[2]]  `, `{"a":"}"}`, `{"a":"\"}"}`, `{]`, `"x"`, `{"a":1} x`, "<think>{}</think>{}"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		size := int(n)%8 + 1
		v := &valueEnd{}
		ended, at := false, 0
		for i := 0; i < len(s); i += size {
			if v.feed(s[i:min(i+size, len(s))]) {
				ended, at = true, min(i+size, len(s))
				break
			}
		}
		whole := (&valueEnd{}).feed(s)
		if ended {
			head := strings.TrimSpace(s[:at])
			if head == "" || (head[0] != '{' && head[0] != '[') || (head[len(head)-1] != '}' && head[len(head)-1] != ']') {
				t.Fatalf("ended on %q", s[:at])
			}
			var x any
			if json.Valid([]byte(head)) {
				if err := json.Unmarshal([]byte(head), &x); err != nil {
					t.Fatal(err)
				}
			}
		}
		if whole && !ended && strings.TrimSpace(s) != "" {
			// Whole, the text ends; in pieces it must end too (on the
			// same piece boundary or earlier).
			t.Fatalf("%q ends whole but not in pieces of %d", s, size)
		}
	})
}
