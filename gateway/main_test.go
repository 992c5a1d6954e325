package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/contractgateway/gateway/config"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logBuffer is a log sink that tests read while handlers write.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proxyFixture is a gateway in front of a fake upstream, both on httptest
// servers.
type proxyFixture struct {
	up   *httptest.Server
	gw   *httptest.Server
	srv  *Server
	logs *logBuffer
}

// newProxyFixture starts upstream (nil: none, the upstream URL points at a
// closed port) and a gateway in front of it. edit adjusts the config.
func newProxyFixture(t *testing.T, upstream http.Handler, edit func(*config.Config), opts Options) *proxyFixture {
	t.Helper()
	f := &proxyFixture{logs: &logBuffer{}}
	cfg := config.Default()
	if upstream != nil {
		f.up = httptest.NewServer(upstream)
		t.Cleanup(f.up.Close)
		cfg.Upstream = f.up.URL
	} else {
		cfg.Upstream = "http://" + closedLoopbackAddr(t)
	}
	if edit != nil {
		edit(&cfg)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	f.srv = srv
	f.gw = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		f.gw.Close()
		srv.CloseIdleConnections()
	})
	return f
}

// closedLoopbackAddr returns a loopback address nothing listens on.
func closedLoopbackAddr(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	addr := s.Listener.Addr().String()
	s.Close()
	return addr
}

// do sends a request to the gateway and returns the response with its
// body read.
func (f *proxyFixture) do(t *testing.T, method, path string, body io.Reader, header http.Header) (*http.Response, []byte) {
	t.Helper()
	return sendRequest(t, f.gw.URL, method, path, body, header)
}

func sendRequest(t *testing.T, base, method, path string, body io.Reader, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp, b
}

// ollamaError decodes Ollama's {"error": "…"} shape, failing the test on
// any other shape.
func ollamaError(t *testing.T, resp *http.Response, body []byte) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	msg, ok := e["error"].(string)
	if !ok || len(e) != 1 {
		t.Fatalf("error body = %s, want exactly {\"error\": string}", body)
	}
	return msg
}
