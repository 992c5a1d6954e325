package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/contractgateway/gateway/config"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logBuffer is a log sink that tests read while handlers write. A test
// waits for a line with waitFor, which wakes on each write rather than
// polling: a server writes its request log when the handler returns, which
// may be just after the client has read the whole answer.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed on the next Write; nil while nobody waits
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor returns once the log holds substr, and fails the test if no such
// line is written within ten seconds.
func (b *logBuffer) waitFor(t *testing.T, substr string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		b.mu.Lock()
		if strings.Contains(b.buf.String(), substr) {
			b.mu.Unlock()
			return
		}
		if b.written == nil {
			b.written = make(chan struct{})
		}
		written := b.written
		b.mu.Unlock()
		select {
		case <-written:
		case <-timeout.C:
			t.Fatalf("no log line with %q in:\n%s", substr, b)
		}
	}
}

// pipeListener is a net.Listener whose connections are in-memory pipes
// (net.Pipe), dialled with its DialContext. Servers and clients on it can
// run inside a testing/synctest bubble: with no real network, read
// deadlines and timeouts run on the bubble's fake clock, and a wait ends
// as soon as every goroutine in the bubble is blocked.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr }

// DialContext connects to the listener, as a net.Dialer's would; the
// address is ignored.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- pipeConn{server}:
		return pipeConn{client}, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: pipeAddr, Err: syscall.ECONNREFUSED}
}

// client is an HTTP client whose connections go to the listener.
func (l *pipeListener) client(t *testing.T) *http.Client {
	tr := &http.Transport{DialContext: l.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// pipeAddr is the loopback address both ends of a pipeConn report, as a
// local TCP connection's would.
var pipeAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 11434}

type pipeConn struct{ net.Conn }

func (pipeConn) LocalAddr() net.Addr  { return pipeAddr }
func (pipeConn) RemoteAddr() net.Addr { return pipeAddr }

// servePipe serves h on a new pipeListener until the test ends.
func servePipe(t *testing.T, h http.Handler) *pipeListener {
	l := newPipeListener()
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return l
}

// newPipeGateway builds a gateway whose upstream is upstream served on a
// pipe, for tests inside a testing/synctest bubble; edit adjusts the
// config. The gateway is not served: the caller mounts its Handler or
// runs its Serve.
func newPipeGateway(t *testing.T, upstream http.Handler, edit func(*config.Config), logs io.Writer) *Server {
	t.Helper()
	up := servePipe(t, upstream)
	cfg := config.Default()
	cfg.Upstream = "http://" + pipeAddr.String()
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	srv.base.DialContext = up.DialContext
	t.Cleanup(srv.Close)
	return srv
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
