package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
)

// get sends GET base+path on a connection of its own (a balancer's health
// check, or a new client), with the admin token when token is set.
func getFresh(t *testing.T, base, path, token string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

// TestShutdownDelayDrains is a rolling restart seen from the balancer:
// once the shutdown begins /readyz answers 503 (to a health check without
// the token, only "not ready"), while a request in flight completes and a
// new request on a new connection during the delay still succeeds; the
// listener closes only when the delay ends.
func TestShutdownDelayDrains(t *testing.T) {
	const token = "s3cret"
	arrived, release := make(chan struct{}), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			io.WriteString(w, `{"version":"0.17.4"}`)
		case "/api/generate":
			close(arrived)
			<-release // a generation still running through the delay
			io.WriteString(w, `{"response":"done","done":true}`)
		default:
			io.WriteString(w, `{"models":[]}`)
		}
	}))
	t.Cleanup(up.Close)
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // before up.Close, which waits for the handler
	cfg := config.Default()
	cfg.Upstream, cfg.AdminToken = up.URL, token
	srv, delayAsked, delayEnd, ln := delayedServer(t, cfg)
	stopped := make(chan struct{})
	ln = &notifyingListener{Listener: ln, closed: stopped}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	type check struct {
		name, token string
		wantStatus  int
		wantBody    string
	}
	run := func(when string, tests []check) {
		t.Helper()
		for _, tt := range tests {
			status, body, err := getFresh(t, base, "/readyz", tt.token)
			if err != nil || status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("%s: GET /readyz %s = %d %q %v, want %d %q", when, tt.name, status, body, err, tt.wantStatus, tt.wantBody)
			}
		}
	}
	run("serving", []check{
		{"without token", "", 200, `{"status":"ready"}`},
		{"with the token", token, 200, `"upstream_version":"0.17.4"`},
	})

	inflight := postInFlight(base+"/api/generate", `{"stream":false}`)
	<-arrived
	cancel()
	select {
	case d := <-delayAsked:
		if d != time.Hour {
			t.Errorf("shutdown delay = %v, want shutdown_delay's 1h", d)
		}
	case <-stopped:
		t.Fatal("the listener closed at once on shutdown, with no delay")
	}

	run("during the delay", []check{
		{"without token", "", 503, `{"status":"not ready"}`},
		{"with the token", token, 503, `not ready: shutting down`},
	})
	if status, body, err := getFresh(t, base, "/api/tags", ""); err != nil || status != 200 {
		t.Errorf("a new request during the delay = %d %q %v, want 200", status, body, err)
	}
	select {
	case <-stopped:
		t.Errorf("the listener closed before the delay ended")
	default:
	}

	close(delayEnd)
	<-stopped // the delay is over: no new connections
	free()
	if r := <-inflight; r.err != nil || r.status != 200 || r.body != `{"response":"done","done":true}` {
		t.Errorf("in-flight request through the shutdown: %d %q %v, want 200 and the whole body", r.status, r.body, r.err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve() = %v, want nil after a shutdown", err)
	}
}

// TestReadyzBriefWhenDown: a health check without the token learns that
// the gateway is not ready, and nothing of why.
func TestReadyzBriefWhenDown(t *testing.T) {
	f := newProxyFixture(t, nil, func(c *config.Config) { c.AdminToken = "s3cret" }, Options{})
	resp, body := f.do(t, "GET", "/readyz", nil, nil)
	if got := strings.TrimSpace(string(body)); resp.StatusCode != http.StatusServiceUnavailable || got != `{"status":"not ready"}` {
		t.Errorf("GET /readyz without token, upstream down = %d %s, want 503 {\"status\":\"not ready\"}", resp.StatusCode, got)
	}
}

// TestReadyzOpenWithKeys: with API keys and an admin token, a health
// check that carries neither still gets its answer.
func TestReadyzOpenWithKeys(t *testing.T) {
	f := newProxyFixture(t, &recordingUpstream{}, func(c *config.Config) {
		c.AdminToken = "s3cret"
		c.Access = config.Access{Keys: []config.AccessKey{{Name: "quiz-app", SHA256: access.Hash("k-secret")}}}
	}, Options{})
	resp, body := f.do(t, "GET", "/readyz", nil, nil)
	if got := strings.TrimSpace(string(body)); resp.StatusCode != http.StatusOK || got != `{"status":"ready"}` {
		t.Errorf("GET /readyz with keys, no credentials = %d %s, want 200 {\"status\":\"ready\"}", resp.StatusCode, got)
	}
}

// delayedServer builds a gateway of cfg with an hour's shutdown delay that
// the test ends itself, and a loopback listener for it: asked receives
// the delay Serve waits out, and a send on end (or its close) ends it.
func delayedServer(t *testing.T, cfg config.Config) (srv *Server, asked chan time.Duration, end chan time.Time, ln net.Listener) {
	t.Helper()
	cfg.ShutdownDelay, cfg.ShutdownGrace = time.Hour, 5*time.Second
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	asked, end = make(chan time.Duration, 1), make(chan time.Time)
	srv.afterDelay = func(d time.Duration) <-chan time.Time {
		asked <- d
		return end
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return srv, asked, end, ln
}
