package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/modelcall"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
)

// stallingUpstream is a fake Ollama /api/generate that streams chunks
// with the texts given, then holds its stream open — as a model that
// goes on writing would — until the call's context ends, which it
// reports on cancelled; it gives up after a long wait only so that a
// guard that never cancels fails instead of hanging. sent is closed once
// the chunks are out.
func stallingUpstream(t *testing.T, texts []string) (url string, sent, cancelled chan struct{}) {
	t.Helper()
	sent, cancelled = make(chan struct{}), make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, text := range texts {
			b, _ := json.Marshal(map[string]any{"model": "m", "response": text, "done": false})
			w.Write(append(b, '\n'))
			w.(http.Flusher).Flush()
		}
		close(sent)
		giveUp := time.NewTimer(10 * time.Second)
		defer giveUp.Stop()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-giveUp.C:
		}
	}))
	t.Cleanup(s.Close)
	return s.URL, sent, cancelled
}

// TestEarlyStopDrainsWithinLimits: once the JSON value of a call with a
// schema format has closed, the guard answers at once while the rest of
// the call is read in the background (cutting it may block the model in
// Ollama, see upstream.Stream.Drain) — holding the caller's place
// (Background) until it ends, and charging the chunks it read; the
// request is charged the chunks read before the stop and its prompt,
// estimated from its text (Ollama's counters never came).
func TestEarlyStopDrainsWithinLimits(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		chunk := func(s string) {
			b, _ := json.Marshal(map[string]any{"model": "m", "response": s, "done": false})
			w.Write(append(b, '\n'))
			w.(http.Flusher).Flush()
		}
		for _, s := range []string{`{"a":`, `1}`, "\n"} {
			chunk(s)
		}
		<-release
		for range 5 {
			chunk(" ")
		}
		io.WriteString(w, `{"model":"m","response":"","done":true,"done_reason":"length","prompt_eval_count":9,"eval_count":4000}`+"\n")
	}))
	t.Cleanup(up.Close)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	events := make(chan Event, 1)
	held, charged := make(chan struct{}, 1), make(chan int, 1)
	gw := mountWith(t, up.URL, func(c *GuardConfig) { c.Observe = func(ev Event) { events <- ev } },
		func(ctx context.Context) context.Context {
			return modelcall.WithBackground(ctx, func() func(int) {
				held <- struct{}{}
				return func(tokens int) { charged <- tokens }
			})
		})
	body := `{"model":"m","prompt":"Tell a story","stream":false,"format":{"type":"object","required":["a"]}}`
	resp, err := http.Post(gw.URL+"/api/generate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Response string `json:"response"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || got.Response != `{"a":1}` {
		t.Fatalf("answer = %d %q (%v), want 200 with the JSON value", resp.StatusCode, got.Response, err)
	}
	select {
	case <-held:
	default:
		t.Fatal("the drain holds no place of the caller")
	}
	ev := <-events
	if ev.FirstTokens.PromptTokens != 3 || ev.FirstTokens.OutputTokens < 2 {
		t.Errorf("first tokens = %+v, want the prompt's 3 (\"Tell a story\": 12 bytes) and the chunks read", ev.FirstTokens)
	}
	close(release)
	// The drain reads the five chunks of whitespace and the done chunk,
	// and the last chunk before them when the stop came a chunk earlier.
	if drained := <-charged; drained < 6 || drained > 7 {
		t.Errorf("the drain was charged %d tokens, want the 6 or 7 frames it read", drained)
	}
}

// mountWith is mount with edit, the requests' contexts made by ctx.
func mountWith(t *testing.T, upstreamURL string, edit func(*GuardConfig), ctx func(context.Context) context.Context) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(upstreamURL)
	cfg := DefaultGuardConfig
	cfg.Resolver = builtinRoutes(t)
	cfg.Upstream = upstream.New(upstream.Options{URL: u})
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	edit(&cfg)
	guard, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.SetRequest(c.Request().WithContext(ctx(c.Request().Context())))
			return next(c)
		}
	}, guard)
	e.Any("/*", echo.WrapHandler(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }}))
	s := httptest.NewServer(e)
	t.Cleanup(s.Close)
	return s
}

// TestAbandonedRequestLoggedAndCharged: a guarded request whose client
// leaves while the model writes is still logged (its outcome record) with
// what the upstream did — the prompt estimated from its text, a token per
// chunk read — and its upstream call is cancelled.
func TestAbandonedRequestLoggedAndCharged(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
	}{
		{"whole answer", false},
		{"held stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, _, cancelled := stallingUpstream(t, []string{`{"a":`, `1,`, `"b":`})
			events := make(chan Event, 1)
			read := make(chan struct{})
			gw := mount(t, up, func(c *GuardConfig) {
				c.Observe = func(ev Event) { events <- ev }
				c.Upstream = linesRead{c.Upstream, 3, read}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := `{"model":"m","prompt":"Tell a story","stream":` + map[bool]string{true: "true", false: "false"}[tt.stream] + `}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/api/generate", strings.NewReader(body))
			req.Header.Set("X-Contract", "json")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			<-read // the guard has the three chunks
			cancel()
			<-done
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream call went on after the client left")
			}
			var ev Event
			select {
			case ev = <-events:
			case <-time.After(10 * time.Second):
				t.Fatal("no Event for the abandoned request")
			}
			want := repair.Usage{PromptTokens: 3, OutputTokens: 3}
			if ev.Status != StatusError || ev.Error != "client closed the request" || ev.FirstTokens != want {
				t.Errorf("Event = status %q, error %q, first tokens %+v; want %q, the client's leaving, %+v", ev.Status, ev.Error, ev.FirstTokens, StatusError, want)
			}
		})
	}
}

// linesRead is an Upstream whose answers close read once the guard has
// read lines of them.
type linesRead struct {
	Upstream
	lines int
	read  chan struct{}
}

func (l linesRead) Do(req *http.Request) (*http.Response, error) {
	resp, err := l.Upstream.Do(req)
	if err == nil {
		resp.Body = &lineReader{ReadCloser: resp.Body, left: l.lines, read: l.read}
	}
	return resp, err
}

type lineReader struct {
	io.ReadCloser
	left int
	read chan struct{}
}

func (r *lineReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if r.left > 0 {
		if r.left -= bytes.Count(p[:n], []byte("\n")); r.left <= 0 {
			close(r.read)
		}
	}
	return n, err
}
