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
)

// startServe runs srv.Serve on a loopback listener until the returned
// cancel is called; done yields Serve's result. stopped, when not nil, is
// closed when Serve closes the listener: its shutdown has begun and it
// accepts no more connections.
func startServe(t *testing.T, upstream http.Handler, grace time.Duration, stopped chan<- struct{}) (base string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	cfg := config.Default()
	cfg.Upstream = up.URL
	cfg.ShutdownGrace = grace
	cfg.ShutdownDelay = -1 // these tests are of the grace period
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if stopped != nil {
		ln = &notifyingListener{Listener: ln, closed: stopped}
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	t.Cleanup(cancel)
	return "http://" + ln.Addr().String(), cancel, errc
}

// notifyingListener closes closed when it is first closed.
type notifyingListener struct {
	net.Listener
	closed chan<- struct{}
	once   sync.Once
}

func (l *notifyingListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// TestGracefulShutdownLetsInFlightFinish: a request in flight when the
// shutdown begins gets its whole answer, which the upstream sends only
// once the gateway has stopped accepting connections.
func TestGracefulShutdownLetsInFlightFinish(t *testing.T) {
	arrived, stopped := make(chan struct{}), make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-stopped // a generation still in progress when the shutdown begins
		io.WriteString(w, `{"response":"done","done":true}`)
	})
	base, cancel, done := startServe(t, up, 5*time.Second, stopped)

	res := postInFlight(base+"/api/generate", `{"stream":false}`)
	<-arrived
	cancel()

	r := <-res
	if r.err != nil || r.status != 200 || r.body != `{"response":"done","done":true}` {
		t.Errorf("in-flight request during shutdown: %d %q %v, want 200 and the whole body", r.status, r.body, r.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve() = %v, want nil after a shutdown", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Errorf("the listener still accepts after shutdown")
	}
}

func TestGracefulShutdownCutsAfterGrace(t *testing.T) {
	arrived, canceled := make(chan struct{}), make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"status":"pulling"}`+"\n")
		w.(http.Flusher).Flush()
		close(arrived)
		select {
		case <-r.Context().Done():
			close(canceled)
		case <-time.After(10 * time.Second):
		}
	})
	const grace = 200 * time.Millisecond
	base, cancel, done := startServe(t, up, grace, nil)
	go func() {
		resp, err := http.Post(base+"/api/pull", "application/json", strings.NewReader(`{}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-arrived
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve() = %v, want nil", err)
		}
		if d := time.Since(start); d < grace {
			t.Errorf("Serve returned after %v, before the grace period %v", d, grace)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running 5s after shutdown with a grace of 200ms")
	}
	select {
	case <-canceled:
	case <-time.After(3 * time.Second):
		t.Error("the upstream stream was not cancelled when the grace period ended")
	}
}

func TestServeListenerError(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	cfg := config.Default()
	cfg.Upstream = up.URL
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := srv.Serve(context.Background(), ln); err == nil {
		t.Errorf("Serve(closed listener) = nil, want an error")
	}
}

// inFlight is the answer to a request sent by postInFlight.
type inFlight struct {
	status int
	body   string
	err    error
}

// postInFlight posts body to url from a goroutine of its own, so that the
// test can shut the gateway down while the request is in flight, and
// hands over the answer, read whole, when it ends.
func postInFlight(url, body string) <-chan inFlight {
	res := make(chan inFlight, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			res <- inFlight{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		res <- inFlight{resp.StatusCode, string(b), err}
	}()
	return res
}
