package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/pool"
	"github.com/contractgateway/gateway/middleware/apierr"
)

// seenRequest is what the fake upstream received.
type seenRequest struct {
	Method, Path, RawQuery, Host string
	Header                       http.Header
	Body                         string
}

// recordingUpstream answers like Ollama on a few endpoints and records
// every request.
type recordingUpstream struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (u *recordingUpstream) last() seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) == 0 {
		return seenRequest{}
	}
	return u.seen[len(u.seen)-1]
}

func (u *recordingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.seen = append(u.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Host, r.Header.Clone(), string(body)})
	u.mu.Unlock()
	h := w.Header()
	h.Set("X-Upstream", "fake")
	h.Add("Set-Cookie", "a=1")
	h.Add("Set-Cookie", "b=2")
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Content-Length", "17")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			io.WriteString(w, "Ollama is running")
		}
	case r.URL.Path == "/api/tags":
		h.Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"models":[{"name":"stories:latest","size":1185}]}`)
	case r.URL.Path == "/api/show" && r.Method == http.MethodPost:
		h.Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintf(w, `{"modelfile":"FROM x","got_bytes":%d}`, len(body))
	case r.URL.Path == "/api/version":
		h.Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"version":"0.17.4"}`)
	case r.URL.Path == "/api/fail":
		h.Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"model runner crashed"}`)
	default:
		h.Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"model \"nope\" not found, try pulling it first"}`)
	}
}

// comparableHeader drops the headers that differ between two answers of
// the same server (Date) or that the gateway adds (X-Request-Id).
func comparableHeader(h http.Header) http.Header {
	h = h.Clone()
	h.Del("Date")
	h.Del("X-Request-Id")
	return h
}

func TestPassThroughIsByteExact(t *testing.T) {
	up := &recordingUpstream{}
	f := newProxyFixture(t, up, nil, Options{})
	// Odd spacing, unknown fields and keep_alive: the upstream must get
	// these bytes as they are.
	showBody := "{ \"model\" : \"stories\",\n  \"verbose\":true, \"keep_alive\": -1, \"x_unknown\": [1, 2.50] }"
	tests := []struct {
		method, path, body string
	}{
		{http.MethodGet, "/api/tags", ""},
		{http.MethodPost, "/api/show", showBody},
		{http.MethodHead, "/", ""},
		{http.MethodGet, "/", ""},
		{http.MethodGet, "/api/version?probe=1&x=%2F", ""},
		{http.MethodDelete, "/api/delete", `{"model":"nope"}`},
		{http.MethodPost, "/api/fail", `{}`},
		{http.MethodGet, "/api/generate", ""}, // not POST: not guarded
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			hdr := http.Header{"X-Client": {"yes"}, "Content-Type": {"application/json"}}
			direct, directBody := sendRequest(t, f.up.URL, tt.method, tt.path, strings.NewReader(tt.body), hdr)
			directSeen := up.last()
			via, viaBody := f.do(t, tt.method, tt.path, strings.NewReader(tt.body), hdr)
			viaSeen := up.last()

			if via.StatusCode != direct.StatusCode {
				t.Errorf("status = %d, want %d (direct)", via.StatusCode, direct.StatusCode)
			}
			if string(viaBody) != string(directBody) {
				t.Errorf("body = %q, want %q (direct)", viaBody, directBody)
			}
			if diff := cmp.Diff(comparableHeader(direct.Header), comparableHeader(via.Header)); diff != "" {
				t.Errorf("response headers differ (-direct +gateway):\n%s", diff)
			}
			if via.Header.Get("X-Request-Id") == "" {
				t.Errorf("no X-Request-Id on the gateway's answer")
			}

			// The upstream saw the same request, addressed to itself.
			if viaSeen.Body != tt.body {
				t.Errorf("upstream got body %q, want %q", viaSeen.Body, tt.body)
			}
			got := [4]string{viaSeen.Method, viaSeen.Path, viaSeen.RawQuery, viaSeen.Host}
			want := [4]string{directSeen.Method, directSeen.Path, directSeen.RawQuery, directSeen.Host}
			if got != want {
				t.Errorf("upstream got method, path, query, host = %q, want %q", got, want)
			}
			if h := viaSeen.Header.Get("X-Client"); h != "yes" {
				t.Errorf("upstream got X-Client %q, want yes", h)
			}
			gwHost := strings.TrimPrefix(f.gw.URL, "http://")
			if h := viaSeen.Header.Get("X-Forwarded-Host"); h != gwHost {
				t.Errorf("upstream got X-Forwarded-Host %q, want %q", h, gwHost)
			}
		})
	}
}

func TestUpstreamBasePath(t *testing.T) {
	up := &recordingUpstream{}
	f := newProxyFixture(t, up, nil, Options{})
	f2 := newProxyFixture(t, nil, func(c *config.Config) { c.Upstream = f.up.URL + "/ollama" }, Options{})
	f2.do(t, http.MethodGet, "/api/tags?a=b", nil, nil)
	if got := up.last(); got.Path != "/ollama/api/tags" || got.RawQuery != "a=b" {
		t.Errorf("upstream got %s?%s, want /ollama/api/tags?a=b", got.Path, got.RawQuery)
	}
}

// ndjsonUpstream writes the first line of a stream, then waits for the
// test's go-ahead before the second, so that a test can see whether the
// first line reached the client on its own.
type ndjsonUpstream struct {
	proceed  chan struct{}
	canceled chan struct{} // closed when a request's context ends early
}

func newNDJSONUpstream() *ndjsonUpstream {
	return &ndjsonUpstream{proceed: make(chan struct{}), canceled: make(chan struct{})}
}

func (u *ndjsonUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/x-ndjson")
	io.WriteString(w, `{"model":"m","response":"Once","done":false}`+"\n")
	w.(http.Flusher).Flush()
	select {
	case <-u.proceed:
	case <-r.Context().Done():
		close(u.canceled)
		return
	case <-time.After(10 * time.Second):
		return
	}
	io.WriteString(w, `{"model":"m","response":"","done":true,"eval_count":2}`+"\n")
}

func TestStreamIsFlushedPerChunk(t *testing.T) {
	tests := []struct {
		name, method, path string
		guard              echo.MiddlewareFunc
	}{
		{"pass-through pull", http.MethodPost, "/api/pull", nil},
		{"generate without a guard", http.MethodPost, "/api/generate", nil},
		{"generate through a guard that passes", http.MethodPost, "/api/generate", func(next echo.HandlerFunc) echo.HandlerFunc { return next }},
		{"openai chat", http.MethodPost, "/v1/chat/completions", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newNDJSONUpstream()
			f := newProxyFixture(t, up, nil, Options{Guard: staticGuard(tt.guard)})
			req, _ := http.NewRequest(tt.method, f.gw.URL+tt.path, strings.NewReader(`{"model":"m","prompt":"hi"}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lines := make(chan string)
			go func() {
				defer close(lines)
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					lines <- line
				}
			}()
			select {
			case line := <-lines:
				if !strings.Contains(line, `"response":"Once"`) {
					t.Errorf("first line = %q", line)
				}
			case <-time.After(5 * time.Second):
				close(up.proceed)
				t.Fatal("the first line did not reach the client before the upstream wrote the second: the stream is buffered")
			}
			close(up.proceed)
			if line := <-lines; !strings.Contains(line, `"done":true`) {
				t.Errorf("second line = %q, want the done chunk", line)
			}
			for range lines {
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
				t.Errorf("Content-Type = %q, want application/x-ndjson", ct)
			}
		})
	}
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	t.Run("mid-stream", func(t *testing.T) {
		up := newNDJSONUpstream()
		f := newProxyFixture(t, up, nil, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.gw.URL+"/api/generate", strings.NewReader(`{"model":"m"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cancel()
		resp.Body.Close()
		select {
		case <-up.canceled:
			t.Logf("upstream saw the cancellation after %v", time.Since(start))
		case <-time.After(3 * time.Second):
			t.Fatal("upstream request still running 3s after the client left")
		}
	})
	t.Run("before the answer", func(t *testing.T) {
		arrived, canceled := make(chan struct{}), make(chan struct{})
		up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Like Ollama, read the request first: net/http notices a
			// closed connection only once the body is consumed.
			io.Copy(io.Discard, r.Body)
			close(arrived)
			select {
			case <-r.Context().Done():
				close(canceled)
			case <-time.After(10 * time.Second):
			}
		})
		f := newProxyFixture(t, up, nil, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.gw.URL+"/api/generate", strings.NewReader(`{"stream":false}`))
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		<-arrived
		cancel()
		select {
		case <-canceled:
		case <-time.After(3 * time.Second):
			t.Fatal("upstream request still running 3s after the client left")
		}
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("client error = %v, want context.Canceled", err)
		}
		if s := f.srv.Breaker().State().String(); s != "closed" {
			t.Errorf("breaker %s after a client cancellation, want closed", s)
		}
	})
}

// chunked hides a reader's length, so that the client sends it chunked.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestBodyLimit(t *testing.T) {
	const limit = 1024
	tests := []struct {
		name       string
		path       string
		body       func() io.Reader
		wantStatus int
	}{
		{"declared length over the limit", "/api/show", func() io.Reader { return strings.NewReader(strings.Repeat("x", limit+1)) }, http.StatusRequestEntityTooLarge},
		{"chunked over the limit", "/api/show", func() io.Reader { return chunked{strings.NewReader(strings.Repeat("x", 64*limit))} }, http.StatusRequestEntityTooLarge},
		{"guarded route over the limit", "/api/generate", func() io.Reader { return strings.NewReader(strings.Repeat("x", limit+1)) }, http.StatusRequestEntityTooLarge},
		{"exactly the limit", "/api/show", func() io.Reader { return strings.NewReader(strings.Repeat("x", limit)) }, http.StatusOK},
		{"chunked at the limit", "/api/show", func() io.Reader { return chunked{strings.NewReader(strings.Repeat("x", limit))} }, http.StatusOK},
		{"blob uploads are exempt", "/api/blobs/sha256:00", func() io.Reader { return strings.NewReader(strings.Repeat("x", 4*limit)) }, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &recordingUpstream{}
			f := newProxyFixture(t, up, func(c *config.Config) { c.MaxBodyBytes = limit }, Options{})
			resp, body := f.do(t, http.MethodPost, tt.path, tt.body(), nil)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d (%s), want %d", resp.StatusCode, body, tt.wantStatus)
			}
			if tt.wantStatus == http.StatusRequestEntityTooLarge {
				if msg := ollamaError(t, resp, body); !strings.Contains(msg, "1024 bytes") {
					t.Errorf("error = %q, want it to name the limit", msg)
				}
			}
		})
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	f := newProxyFixture(t, nil, nil, Options{})
	for _, path := range []string{"/api/tags", "/api/generate", "/"} {
		resp, body := f.do(t, http.MethodPost, path, strings.NewReader(`{}`), nil)
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("POST %s: status = %d, want 502", path, resp.StatusCode)
		}
		// The cause (the dialer's address and words) is the log's, not
		// the client's.
		if msg := ollamaError(t, resp, body); msg != "upstream unreachable" || strings.Contains(string(body), "127.0.0.1") {
			t.Errorf("POST %s: error = %q (%s), want the plain \"upstream unreachable\"", path, msg, body)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("POST %s: no X-Request-Id", path)
		}
	}
}

func TestUpstreamHeaderTimeout(t *testing.T) {
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	f := newProxyFixture(t, up, func(c *config.Config) { c.UpstreamTimeout = 50 * time.Millisecond }, Options{})
	resp, body := f.do(t, http.MethodPost, "/api/generate", strings.NewReader(`{"stream":false}`), nil)
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status = %d (%s), want 504", resp.StatusCode, body)
	}
	if msg := ollamaError(t, resp, body); !strings.HasPrefix(msg, "upstream timed out") {
		t.Errorf("error = %q, want upstream timed out…", msg)
	}
}

func TestGuardWrapsOnlyGuardedRoutes(t *testing.T) {
	guard := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Set("X-Guarded", "1")
			return next(c)
		}
	}
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Guard: staticGuard(guard)})
	tests := []struct {
		method, path string
		want         string
	}{
		{http.MethodPost, "/api/generate", "1"},
		{http.MethodPost, "/api/chat", "1"},
		{http.MethodPost, "/v1/chat/completions", "1"},
		{http.MethodGet, "/api/generate", ""},
		{http.MethodPost, "/api/embed", ""},
		{http.MethodPost, "/v1/completions", "1"},
		{http.MethodPost, "/v1/responses", "1"},
		{http.MethodPost, "/v1/messages", "1"},
		{http.MethodPost, "/v1/embeddings", ""},
		{http.MethodGet, "/api/tags", ""},
	}
	for _, tt := range tests {
		resp, _ := f.do(t, tt.method, tt.path, strings.NewReader(`{}`), nil)
		if got := resp.Header.Get("X-Guarded"); got != tt.want {
			t.Errorf("%s %s: X-Guarded = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestErrorsInOllamaShape(t *testing.T) {
	tests := []struct {
		name       string
		guard      echo.MiddlewareFunc
		wantStatus int
		wantMsg    string
	}{
		{"panic", func(echo.HandlerFunc) echo.HandlerFunc {
			return func(echo.Context) error { panic("boom") }
		}, http.StatusInternalServerError, "internal server error"},
		{"HTTPError keeps its cause out of the answer", func(echo.HandlerFunc) echo.HandlerFunc {
			return func(echo.Context) error {
				return apierr.New(http.StatusBadRequest, "bad contract", errors.New("secret path /etc/x"))
			}
		}, http.StatusBadRequest, "bad contract"},
		{"echo error", func(echo.HandlerFunc) echo.HandlerFunc {
			return func(echo.Context) error { return echo.ErrUnauthorized }
		}, http.StatusUnauthorized, "unauthorized"},
		{"plain error says nothing of its cause", func(echo.HandlerFunc) echo.HandlerFunc {
			return func(echo.Context) error { return errors.New("secret") }
		}, http.StatusInternalServerError, "internal server error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Guard: staticGuard(tt.guard)})
			resp, body := f.do(t, http.MethodPost, "/api/generate", strings.NewReader(`{}`), nil)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if msg := ollamaError(t, resp, body); msg != tt.wantMsg {
				t.Errorf("error = %q, want %q", msg, tt.wantMsg)
			}
			if strings.Contains(string(body), "secret") {
				t.Errorf("body %s leaks the internal cause", body)
			}
		})
	}
}

func TestErrorAfterStreamStarted(t *testing.T) {
	guard := func(echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Set("Content-Type", "application/x-ndjson")
			c.Response().WriteHeader(http.StatusOK)
			io.WriteString(c.Response(), `{"response":"a","done":false}`+"\n")
			return apierr.New(http.StatusBadGateway, "upstream stream broke", nil)
		}
	}
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Guard: staticGuard(guard)})
	resp, body := f.do(t, http.MethodPost, "/api/generate", strings.NewReader(`{}`), nil)
	want := `{"response":"a","done":false}` + "\n" + `{"error":"upstream stream broke"}` + "\n"
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Errorf("got %d %q, want 200 %q", resp.StatusCode, body, want)
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRequestID(t *testing.T) {
	up := &recordingUpstream{}
	f := newProxyFixture(t, up, nil, Options{})
	tests := []struct {
		name, sent string
		keep       bool
	}{
		{"generated", "", false},
		{"client's kept", "client-id-42", true},
		{"too long replaced", strings.Repeat("a", 200), false},
		{"not printable replaced", "a b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := http.Header{}
			if tt.sent != "" {
				hdr.Set("X-Request-Id", tt.sent)
			}
			resp, _ := f.do(t, http.MethodGet, "/api/tags", nil, hdr)
			got := resp.Header.Get("X-Request-Id")
			if tt.keep && got != tt.sent {
				t.Errorf("X-Request-Id = %q, want the client's %q", got, tt.sent)
			}
			if !tt.keep && !hexID.MatchString(got) {
				t.Errorf("X-Request-Id = %q, want 32 hex digits", got)
			}
			if up := up.last().Header.Get("X-Request-Id"); up != got {
				t.Errorf("upstream got X-Request-Id %q, want %q", up, got)
			}
		})
	}
}

func TestRequestLogLine(t *testing.T) {
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{})
	resp, _ := f.do(t, http.MethodPost, "/api/show?token=QUERY-SECRET", strings.NewReader(`{"prompt":"BODY-SECRET"}`), nil)
	// The line is written when the handler returns, which may be just after
	// the client has read the whole response.
	f.logs.waitFor(t, `"msg":"request"`)
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			if line != nil {
				t.Errorf("more than one request line:\n%s", f.logs)
			}
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no request line in:\n%s", f.logs)
	}
	for k, want := range map[string]any{
		"method": "POST", "path": "/api/show", "route": "/*", "status": float64(200),
		"request_id": resp.Header.Get("X-Request-Id"),
	} {
		if line[k] != want {
			t.Errorf("log %s = %v, want %v", k, line[k], want)
		}
	}
	if _, ok := line["latency_ms"].(float64); !ok {
		t.Errorf("log line has no latency_ms: %v", line)
	}
	if strings.Contains(f.logs.String(), "SECRET") {
		t.Errorf("the log holds a body or query:\n%s", f.logs)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Upstream = "localhost:11434"
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "upstream") {
		t.Errorf("New(upstream %q) = %v, want an upstream error", cfg.Upstream, err)
	}
}

// staticGuard is an Options.Guard that ignores the upstream; nil for nil.
func staticGuard(mw echo.MiddlewareFunc) func(*pool.Pool) (echo.MiddlewareFunc, error) {
	if mw == nil {
		return nil
	}
	return func(*pool.Pool) (echo.MiddlewareFunc, error) { return mw, nil }
}

// TestGuardUpstreamIsTheBreaker: the guard gets the server's one upstream
// client, which is the pass-through's transport (one breaker for both),
// and a call through it reaches Ollama.
func TestGuardUpstreamIsTheBreaker(t *testing.T) {
	var got *pool.Pool
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Guard: func(up *pool.Pool) (echo.MiddlewareFunc, error) {
		got = up
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }, nil
	}})
	if got == nil || got != f.srv.up || f.srv.proxy.Transport != http.RoundTripper(got) || got.Breaker() != f.srv.Breaker() {
		t.Fatalf("the guard's upstream is not the pass-through's client and breaker")
	}
	req, _ := http.NewRequest(http.MethodGet, "/api/version", nil)
	resp, err := got.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/version through the guard's upstream = %d, want 200", resp.StatusCode)
	}
}

// TestStreamsAfterRequestBodyAreWhole guards against golang/go#40747: with
// the request body closed when the response starts, the transport's last
// read of the body fails after the upstream has answered and cuts the
// stream. No body limit, so no MaxBytesReader hides the race.
func TestStreamsAfterRequestBodyAreWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 requests")
	}
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		for i := range 20 {
			fmt.Fprintf(w, `{"response":"w%d","done":false}`+"\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, `{"done":true}`+"\n")
	})
	f := newProxyFixture(t, up, func(c *config.Config) { c.MaxBodyBytes = 0 }, Options{})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	cut := 0
	for range 2000 {
		resp, err := client.Post(f.gw.URL+"/api/generate", "application/json", strings.NewReader(`{"model":"m","prompt":"Once upon a time","stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			cut++
		}
	}
	if cut > 0 {
		t.Errorf("%d of 2000 streams cut short", cut)
	}
}

// TestUpstreamConnectionCap: the upstream transport is built with a bound
// on its connections (upstream_max_conns), so that slow pass-through
// clients cannot open one upstream connection each; zero is the default
// bound and a negative value none.
func TestUpstreamConnectionCap(t *testing.T) {
	tests := []struct {
		name   string
		config int
		want   int // http.Transport.MaxConnsPerHost; 0 is no bound
	}{
		{"default", 0, DefaultUpstreamMaxConns},
		{"set", 8, 8},
		{"none", -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.UpstreamMaxConns = tt.config
			srv, err := New(cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if got := srv.base.MaxConnsPerHost; got != tt.want {
				t.Errorf("upstream_max_conns %d: MaxConnsPerHost = %d, want %d", tt.config, got, tt.want)
			}
		})
	}
}

// TestGuardAndProxyShareOneConnectionPool: the guard's calls, the model
// routes' and the pass-through go through one upstream client on one
// bounded connection pool. With upstream_max_conns 1, a guarded call and
// then a pass-through request reach the upstream on one connection; a
// second pool would have dialled a second.
func TestGuardAndProxyShareOneConnectionPool(t *testing.T) {
	var dials atomic.Int32
	up := httptest.NewUnstartedServer(&recordingUpstream{})
	up.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			dials.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	cfg := config.Default()
	cfg.Upstream, cfg.UpstreamMaxConns = up.URL, 1
	var guardUp *pool.Pool
	srv, err := New(cfg, Options{Guard: func(c *pool.Pool) (echo.MiddlewareFunc, error) {
		guardUp = c
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()

	if _, err := guardUp.Post(context.Background(), "/api/show", []byte(`{"model":"m"}`), nil); err != nil {
		t.Fatalf("guard's call: %v", err)
	}
	resp, body := sendRequest(t, gw.URL, http.MethodGet, "/api/tags", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pass-through: %d %s", resp.StatusCode, body)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("upstream connections = %d, want 1 (one pool for the guard and the pass-through)", n)
	}
}
