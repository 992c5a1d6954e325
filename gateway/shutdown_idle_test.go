package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// TestShutdownDelayKeepsIdleConnections: a balancer's idle keep-alive
// connection to a gateway that got SIGTERM stays open during the delay,
// so that a request the balancer sends on it before its health check
// fails is answered (with Connection: close, so that it is the last on
// that connection) rather than cut: closing idle connections at once
// races the balancer's reuse of them, and the client of that request
// gets an empty answer.
func TestShutdownDelayKeepsIdleConnections(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			io.WriteString(w, `{"version":"0.17.4"}`)
		default:
			io.WriteString(w, `{"models":[]}`)
		}
	}))
	t.Cleanup(up.Close)
	cfg := config.Default()
	cfg.Upstream = up.URL
	srv, delayAsked, delayEnd, ln := delayedServer(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	ask := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/api/tags", nil)
		if err := req.Write(conn); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(r, req)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, err
	}

	tests := []struct {
		when      string
		wantClose bool
	}{
		{"before the shutdown", false},
		{"during the delay, on the connection left idle", true},
	}
	for i, tt := range tests {
		if i == 1 {
			cancel()
			<-delayAsked // the gateway is draining: not ready, still serving
		}
		resp, err := ask()
		switch {
		case err != nil:
			t.Fatalf("%s: GET /api/tags = %v, want 200", tt.when, err)
		case resp.StatusCode != http.StatusOK || resp.Close != tt.wantClose:
			t.Errorf("%s: GET /api/tags = %d, Connection: close %v; want 200, %v", tt.when, resp.StatusCode, resp.Close, tt.wantClose)
		}
	}
	close(delayEnd)
	if err := <-done; err != nil {
		t.Errorf("Serve() = %v, want nil after a shutdown", err)
	}
}
