package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/redistest"
)

// sharedRedisGateway builds a gateway in front of up whose cache is the
// Redis at url, and returns its URL.
func sharedRedisGateway(t *testing.T, up http.Handler, url string, log io.Writer) string {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	cfg := config.Default()
	cfg.Upstream = ups.URL
	cfg.Cache.Redis = url
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw.URL
}

// TestCacheSharedThroughRedis: two gateways (two replicas behind a load
// balancer) sharing one real Redis serve each other's entries; with Redis
// stopped mid-run every request is still answered, one warning is logged,
// and the store errors are counted.
func TestCacheSharedThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	up := &scriptedUpstream{answers: []string{`{"a":1}`}}
	log1 := &logBuffer{}
	gw1 := sharedRedisGateway(t, up, srv.URL, log1)
	gw2 := sharedRedisGateway(t, up, srv.URL, io.Discard)
	body := `{"model":"m","prompt":"p","stream":false}`
	hdr := map[string]string{"X-Contract": "json"}

	resp, b := post(t, gw1+"/api/generate", body, hdr)
	if resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "miss" {
		t.Fatalf("replica 1: %d X-Cache %q %s", resp.StatusCode, resp.Header.Get("X-Cache"), b)
	}
	resp, b = post(t, gw2+"/api/generate", body, hdr)
	if resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "hit" {
		t.Fatalf("replica 2: %d X-Cache %q %s; want replica 1's entry", resp.StatusCode, resp.Header.Get("X-Cache"), b)
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("%d upstream calls, want 1 for both replicas", n)
	}

	srv.Stop()
	for i, p := range []string{"q1", "q2", "q2"} {
		resp, b := post(t, gw1+"/api/generate", strings.Replace(body, `"p"`, `"`+p+`"`, 1), hdr)
		if resp.StatusCode != 200 || resp.Header.Get("X-Contract-Status") != "valid" {
			t.Fatalf("request %d with Redis down: %d %s", i, resp.StatusCode, b)
		}
		if i == 2 && resp.Header.Get("X-Cache") != "hit" {
			t.Errorf("with Redis down, a repeated request: X-Cache %q, want a memory hit", resp.Header.Get("X-Cache"))
		}
	}
	if n := strings.Count(log1.String(), "redis unavailable"); n != 1 {
		t.Errorf("%d warnings for one Redis outage, want 1:\n%s", n, log1.String())
	}
	resp, b = get(t, gw1+"/metrics")
	if !bytes.Contains(b, []byte("gateway_cache_store_errors_total ")) || bytes.Contains(b, []byte("gateway_cache_store_errors_total 0\n")) {
		t.Errorf("/metrics (%d) does not count the store errors:\n%s", resp.StatusCode, grepLines(b, "gateway_cache"))
	}
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func grepLines(b []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
