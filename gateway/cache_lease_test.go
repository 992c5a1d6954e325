package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/redistest"
)

// heldUpstream answers like inner, but holds every generation until
// release is closed, so that every request of a test is in flight at once.
type heldUpstream struct {
	inner   http.Handler
	calls   atomic.Int64
	arrived chan struct{}
	release chan struct{}
}

func (u *heldUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/generate" {
		if u.calls.Add(1) == 1 {
			close(u.arrived)
		}
		<-u.release
	}
	u.inner.ServeHTTP(w, r)
}

// metricValue is the value of the metric line name in the gateway's
// /metrics, 0 when absent.
func metricValue(t *testing.T, gw, name string) float64 {
	t.Helper()
	resp, err := http.Get(gw + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// TestCoalescingAcrossReplicas: identical guarded requests sent at once
// to two gateways on one real Redis make one upstream call in all — the
// replica that takes the lease calls, the other waits for its entry — and
// every client gets the valid answer.
func TestCoalescingAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t)
	up := &heldUpstream{inner: &scriptedUpstream{answers: []string{`{"a":1}`}}, arrived: make(chan struct{}), release: make(chan struct{})}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(up.release) }) }
	var gws []string
	for range 2 {
		cfg := config.Default()
		cfg.Upstream, cfg.Cache.Redis = ups.URL, rs.URL
		srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		gw := httptest.NewServer(srv.Handler())
		t.Cleanup(gw.Close)
		gws = append(gws, gw.URL)
	}
	t.Cleanup(free) // before the gateways close, which wait for their requests

	const n = 10
	type answer struct {
		status         int
		contract, body string
	}
	answers := make(chan answer, n)
	for i := range n {
		go func() {
			resp, b := post(t, gws[i%2]+"/api/generate", `{"model":"m","prompt":"p","stream":false}`, map[string]string{"X-Contract": "json"})
			answers <- answer{resp.StatusCode, resp.Header.Get("X-Contract-Status"), string(b)}
		}()
	}
	<-up.arrived
	// Every request is in flight: each replica's others joined its own
	// run (n/2 - 1 each), and the replica that did not take the lease is
	// waiting for the other's entry.
	deadline := time.Now().Add(20 * time.Second)
	for metricValue(t, gws[0], "gateway_cache_coalesced_total")+metricValue(t, gws[1], "gateway_cache_coalesced_total") < n-2 {
		if time.Now().After(deadline) {
			t.Fatal("the requests never all joined a run")
		}
		<-time.After(5 * time.Millisecond) // a poll of the metrics, not a wait for a guess
	}
	free()
	for range n {
		a := <-answers
		if a.status != 200 || a.contract != "valid" || !strings.Contains(a.body, `{\"a\":1}`) {
			t.Errorf("answer %d %s %s, want 200 valid {\"a\":1}", a.status, a.contract, a.body)
		}
	}
	if got := up.calls.Load(); got != 1 {
		t.Errorf("%d upstream generations for %d identical requests on 2 replicas, want 1", got, n)
	}
	if got := metricValue(t, gws[0], "gateway_cache_coalesced_remote_total") + metricValue(t, gws[1], "gateway_cache_coalesced_remote_total"); got != 1 {
		t.Errorf("runs answered by the other replica's = %v, want 1", got)
	}
}
