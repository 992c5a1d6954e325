package gateway

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/config"
)

// TestBreakerInServer drives the breaker through the gateway: upstream
// 500s to two keys open it, pass-through then gets 503 at once, and the
// upstream's recovery closes it after the open timeout. It runs in a
// bubble, on pipes: the open timeout passes on the fake clock.
func TestBreakerInServer(t *testing.T) {
	synctest.Test(t, testBreakerInServer)
}

func testBreakerInServer(t *testing.T) {
	var healthy atomic.Bool
	var calls atomic.Int32
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"runner crashed"}`)
			return
		}
		io.WriteString(w, `{"models":[]}`)
	})
	const openTimeout = 30 * time.Second
	logs := &logBuffer{}
	srv := newPipeGateway(t, up, func(c *config.Config) {
		twoKeys(c)
		c.Breaker = config.Breaker{FailureThreshold: 2, OpenTimeout: openTimeout}
	}, logs)
	gw := servePipe(t, srv.Handler())
	client := gw.client(t)
	sent := 0
	get := func() (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+pipeAddr.String()+"/api/tags", nil)
		req.Header = bearer([]string{appASecret, appBSecret}[sent%2])
		sent++
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}

	// The first 500 is to one key only: it does not count.
	for i := 0; i < 3; i++ {
		resp, body := get()
		if resp.StatusCode != 500 || string(body) != `{"error":"runner crashed"}` {
			t.Fatalf("failure %d: got %d %s, want the upstream's 500 unchanged", i, resp.StatusCode, body)
		}
	}
	resp, body := get()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("with the breaker open: status %d, want 503", resp.StatusCode)
	}
	if msg := ollamaError(t, resp, body); !strings.HasPrefix(msg, "upstream circuit open") {
		t.Errorf("error = %q, want upstream circuit open…", msg)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra != int(openTimeout/time.Second) {
		t.Errorf("Retry-After = %q, want the %d seconds left of the open timeout", resp.Header.Get("Retry-After"), int(openTimeout/time.Second))
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("upstream called %d times, want 3 (none while open)", n)
	}

	healthy.Store(true)
	time.Sleep(openTimeout - time.Second)
	if resp, body := get(); resp.StatusCode != http.StatusServiceUnavailable || calls.Load() != 3 {
		t.Fatalf("a second before the open timeout ends: %d %s (upstream calls %d), want 503 without calling it", resp.StatusCode, body, calls.Load())
	}
	time.Sleep(2 * time.Second)
	resp, body = get()
	if resp.StatusCode != 200 {
		t.Fatalf("a second after the open timeout: %d %s, want 200", resp.StatusCode, body)
	}
	if s := srv.Breaker().State(); s != gobreaker.StateClosed {
		t.Errorf("breaker %v after a successful trial, want closed", s)
	}
	if !strings.Contains(logs.String(), `"to":"open"`) {
		t.Errorf("no log line for the transition to open:\n%s", logs)
	}
}
