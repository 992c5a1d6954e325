package middleware

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pacedUpstream is an Upstream whose every answer is body, written after
// delay: a model that takes its time. It runs on the clock of the test's
// synctest bubble.
type pacedUpstream struct {
	delay time.Duration
	body  string
}

func (u pacedUpstream) Do(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	go func() {
		select {
		case <-time.After(u.delay):
			io.WriteString(pw, u.body)
			pw.Close()
		case <-req.Context().Done():
			pw.CloseWithError(req.Context().Err())
		}
	}()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: pr, ContentLength: -1, Request: req}, nil
}

// timedWriter records each write with the time it happened.
type timedWriter struct {
	mu     sync.Mutex
	header http.Header
	code   int
	start  time.Time
	writes []timedWrite
}

type timedWrite struct {
	at   time.Duration
	data string
}

func (w *timedWriter) Header() http.Header { return w.header }
func (w *timedWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}
func (w *timedWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, timedWrite{time.Since(w.start), string(b)})
	return len(b), nil
}
func (w *timedWriter) Flush() {}

// serveHeld sends a request for path with body, guarded by the json
// contract, through a guard whose upstream is up and whose keep-alive
// interval is keepAlive, and returns what the client got, write by write.
func serveHeld(t *testing.T, up Upstream, keepAlive time.Duration, path, body string) *timedWriter {
	cfg := DefaultGuardConfig
	cfg.Resolver = builtinRoutes(t)
	cfg.Upstream = up
	cfg.StreamKeepAlive = keepAlive
	e := guardApp(t, cfg)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("X-Contract", "json")
	w := &timedWriter{header: http.Header{}, start: time.Now()}
	e.ServeHTTP(w, req)
	return w
}

// TestHeldStreamKeepAlive: a client that asked for a stream hears the
// API's own keep-alive every stream_keepalive while the guard waits for
// the model, the stream starting with the first one, then the answer;
// the X-Contract-* headers come as trailers. With -1 the client hears
// nothing until the answer, and an answer sooner than the interval keeps
// its own status and headers.
func TestHeldStreamKeepAlive(t *testing.T) {
	const text = `{\"a\":1}`
	tests := []struct {
		name, path, body, answer string
		keepAlive, delay         time.Duration
		wantKeepAlives           int
		frame                    string // in every keep-alive
	}{
		{"generate", "/api/generate", `{"model":"m","prompt":"p"}`,
			`{"model":"m","response":"` + text + `","done":true,"done_reason":"stop"}`, 10 * time.Second, 35 * time.Second, 3, `"response":"","done":false`},
		{"chat", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"p"}]}`,
			`{"model":"m","message":{"role":"assistant","content":"` + text + `"},"done":true,"done_reason":"stop"}`, 10 * time.Second, 35 * time.Second, 3, `"content":""},"done":false`},
		{"chat completions", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"p"}]}`,
			`{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` + text + `"},"finish_reason":"stop"}]}`, 10 * time.Second, 35 * time.Second, 3, ": keep-alive\n\n"},
		{"completions", "/v1/completions", `{"model":"m","stream":true,"prompt":"p"}`,
			`{"id":"c","object":"text_completion","choices":[{"index":0,"text":"` + text + `","finish_reason":"stop"}]}`, 10 * time.Second, 35 * time.Second, 3, ": keep-alive\n\n"},
		{"messages", "/v1/messages", `{"model":"m","stream":true,"max_tokens":9,"messages":[{"role":"user","content":"p"}]}`,
			`{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"` + text + `"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}`, 10 * time.Second, 35 * time.Second, 3, "event: ping\n"},
		{"responses", "/v1/responses", `{"model":"m","stream":true,"input":"p"}`,
			`{"id":"r","object":"response","status":"completed","output":[{"type":"message","id":"x","role":"assistant","content":[{"type":"output_text","text":"` + text + `"}]}]}`, 10 * time.Second, 35 * time.Second, 3, "event: response.in_progress\n"},
		{"none", "/api/generate", `{"model":"m","prompt":"p"}`,
			`{"model":"m","response":"` + text + `","done":true}`, -1, 35 * time.Second, 0, ""},
		{"answer sooner", "/api/generate", `{"model":"m","prompt":"p"}`,
			`{"model":"m","response":"` + text + `","done":true}`, 10 * time.Second, 5 * time.Second, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := serveHeld(t, pacedUpstream{delay: tt.delay, body: tt.answer}, tt.keepAlive, tt.path, tt.body)

				if w.code != http.StatusOK || len(w.writes) != tt.wantKeepAlives+1 {
					t.Fatalf("status %d, %d writes, want 200 and %d keep-alives then the answer: %v", w.code, len(w.writes), tt.wantKeepAlives, w.writes)
				}
				for i, wr := range w.writes[:tt.wantKeepAlives] {
					if want := time.Duration(i+1) * tt.keepAlive; wr.at != want || !strings.Contains(wr.data, tt.frame) {
						t.Errorf("write %d at %v: %q, want the keep-alive (%q) at %v", i, wr.at, wr.data, tt.frame, want)
					}
				}
				last := w.writes[len(w.writes)-1]
				if last.at != tt.delay || !strings.Contains(last.data, `{\"a\":1}`) {
					t.Errorf("answer at %v: %q, want the answer at %v", last.at, last.data, tt.delay)
				}
				status := w.header.Get("X-Contract-Status")
				if tt.wantKeepAlives > 0 {
					status = w.header.Get(http.TrailerPrefix + "X-Contract-Status")
				}
				if status != "valid" {
					t.Errorf("X-Contract-Status = %q (header or trailer), want valid; header %v", status, w.header)
				}
			})
		})
	}
}

// TestHeldStreamErrorShape: a stream that only keep-alives began and
// whose answer then fails ends with its API's one stream error frame —
// the frame a stream writer's Fail sends — whichever path failed: Ollama's
// NDJSON line, OpenAI's data-only event, Anthropic's and the Responses
// API's events named error (the Responses one once ended in a bare
// data-only error object).
func TestHeldStreamErrorShape(t *testing.T) {
	tests := []struct {
		name, path, body string
		prefix, contains string
	}{
		{"generate", "/api/generate", `{"model":"m","prompt":"p"}`, `{"error":`, ""},
		{"chat completions", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"p"}]}`, `data: {"error":`, ""},
		{"messages", "/v1/messages", `{"model":"m","stream":true,"max_tokens":9,"messages":[{"role":"user","content":"p"}]}`, "event: error\ndata: {\"type\":\"error\"", ""},
		{"responses", "/v1/responses", `{"model":"m","stream":true,"input":"p"}`, "event: error\ndata: {\"type\":\"error\"", `"sequence_number":0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := serveHeld(t, pacedUpstream{delay: 25 * time.Second, body: "not an answer"}, 10*time.Second, tt.path, tt.body)

				if len(w.writes) != 3 {
					t.Fatalf("%d writes, want 2 keep-alives then the error: %v", len(w.writes), w.writes)
				}
				last := w.writes[2].data
				if !strings.HasPrefix(last, tt.prefix) || !strings.Contains(last, tt.contains) {
					t.Errorf("%s: last frame %q, want it to start with %q and hold %q", tt.path, last, tt.prefix, tt.contains)
				}
				if strings.Contains(last, "not an answer") {
					t.Errorf("%s: last frame %q carries the upstream's bytes", tt.path, last)
				}
			})
		})
	}
}
