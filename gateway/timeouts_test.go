package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/contractgateway/gateway/config"
)

// serveGateway runs the whole gateway with Serve (the timeouts are the
// http.Server's) in front of up, and returns its address.
func serveGateway(t *testing.T, up http.Handler, edit func(*config.Config)) string {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	cfg := config.Default()
	cfg.Upstream = ups.URL
	edit(&cfg)
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// readUntilClosed reads conn until the server closes it and returns what
// came, or fails after limit.
func readUntilClosed(t *testing.T, conn net.Conn, limit time.Duration) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept the connection open past %s; read %q", limit, b)
	}
	return string(b)
}

// TestSlowBodyIsCut: a client that stops sending its body has its
// connection closed after the body read timeout, not never: with a 408 on
// a guarded route; on a pass-through one the upstream got a cut body and
// answers as it does.
func TestSlowBodyIsCut(t *testing.T) {
	addr := serveGateway(t, &scriptedUpstream{answers: []string{`{"a":1}`}}, func(c *config.Config) {
		c.BodyReadTimeout = 200 * time.Millisecond
	})
	for _, path := range []string{"/api/generate", "/api/create"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nX-Contract: json\r\nContent-Length: 100\r\n\r\n{\"model\":", path)
		got := readUntilClosed(t, conn, 5*time.Second)
		conn.Close()
		if path == "/api/generate" && !strings.HasPrefix(got, "HTTP/1.1 408") {
			t.Errorf("%s: a stalled body got %.80q, want 408 and a closed connection", path, got)
		}
	}
}

// servePipeGateway is serveGateway on pipes, for a testing/synctest
// bubble: the gateway's Serve and its upstream run on in-memory
// connections, so the timeouts run on the bubble's fake clock. Clients
// reach the gateway through the returned listener.
func servePipeGateway(t *testing.T, up http.Handler, edit func(*config.Config)) *pipeListener {
	t.Helper()
	srv := newPipeGateway(t, up, edit, io.Discard)
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln
}

// TestFlowingBodyAndLongStreamAreNotCut: a body that keeps coming, each
// piece within the timeout, is read to its end however long it takes in
// all; and a streamed answer that outlasts the timeout after the body
// was read is not cut by a deadline left behind. The client and the
// upstream take their time on the bubble's fake clock, against the
// server's real read deadlines.
func TestFlowingBodyAndLongStreamAreNotCut(t *testing.T) {
	synctest.Test(t, testFlowingBodyAndLongStream)
}

func testFlowingBodyAndLongStream(t *testing.T) {
	const timeout, gap = 250 * time.Millisecond, 100 * time.Millisecond
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		for i := range 6 {
			fmt.Fprintf(w, `{"status":"chunk %d","read":%d}`+"\n", i, n)
			w.(http.Flusher).Flush()
			time.Sleep(gap) // a slow stream: 600ms in all
		}
	})
	gw := servePipeGateway(t, up, func(c *config.Config) { c.BodyReadTimeout = timeout })
	pr, pw := io.Pipe()
	go func() {
		for range 6 {
			pw.Write([]byte(strings.Repeat("x", 100)))
			time.Sleep(gap) // a slow client: 600ms in all
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, "http://"+pipeAddr.String()+"/api/create", pr)
	start := time.Now()
	resp, err := gw.client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || strings.Count(string(b), "\n") != 6 || !strings.Contains(string(b), `"read":600`) {
		t.Errorf("got %d %q (%v); want the whole 600-byte body read and all six chunks", resp.StatusCode, b, err)
	}
	if took := time.Since(start); took < 2*timeout {
		t.Errorf("the exchange took %v on the bubble's clock, want over twice the %v timeout", took, timeout)
	}
}

// TestIdleConnectionClosed: a keep-alive connection that carries no
// request is closed after the idle timeout.
func TestIdleConnectionClosed(t *testing.T) {
	addr := serveGateway(t, &scriptedUpstream{answers: []string{`{}`}}, func(c *config.Config) {
		c.IdleTimeout = 200 * time.Millisecond
	})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/tags HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The answer came; now nothing is sent and the server must hang up.
	readUntilClosed(t, conn, 5*time.Second)
}
