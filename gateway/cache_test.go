package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// renderingRoutes are virtual models over one upstream model and one
// contract that differ only in how the answer is rendered or reported.
func renderingRoutes(c *config.Config) {
	c.Routes = []config.Route{
		{Model: "quiz", Upstream: "m", Contract: "json"},
		{Model: "quizfenced", Upstream: "m", Contract: "json", Output: "fenced"},
		{Model: "quizreport", Upstream: "m", Contract: "json", Report: "corrections"},
	}
}

// renderedAnswer is what the rendering tests read of a guarded answer.
type renderedAnswer struct {
	cache, response string
	corrections     json.RawMessage
}

func askRendered(t *testing.T, url, model string, hdr map[string]string) renderedAnswer {
	t.Helper()
	resp, b := post(t, url+"/api/generate", `{"model":"`+model+`","prompt":"p","stream":false}`, hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
	}
	var body struct {
		Response string                     `json:"response"`
		Contract map[string]json.RawMessage `json:"contract"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("%s: %v in %s", model, err, b)
	}
	return renderedAnswer{cache: resp.Header.Get("X-Cache"), response: body.Response, corrections: body.Contract["corrections"]}
}

// TestCacheKeysOnOutputMode: configured routes that differ only in output
// mode or report setting do not answer each other from the cache: the
// second request is a miss and gets its own shape.
func TestCacheKeysOnOutputMode(t *testing.T) {
	report := map[string]string{"X-Contract-Report": "corrections"}
	tests := []struct {
		name                   string
		first, second          string
		secondHdr              map[string]string
		wantFenced, wantReport bool
	}{
		{"bare then fenced", "quiz", "quizfenced", nil, true, false},
		{"fenced then bare", "quizfenced", "quiz", nil, false, false},
		{"then the route's report", "quiz", "quizreport", nil, false, true},
		{"then the client's report", "quiz", "quiz", report, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{`{"a":1,}`}}
			gw := newGuardedGateway(t, up, renderingRoutes)
			askRendered(t, gw.URL, tt.first, nil)
			got := askRendered(t, gw.URL, tt.second, tt.secondHdr)
			if got.cache != "miss" || len(up.requests()) != 2 {
				t.Errorf("second request: X-Cache %q after %d upstream calls, want a miss and 2", got.cache, len(up.requests()))
			}
			if fenced := strings.HasPrefix(got.response, "```json\n"); fenced != tt.wantFenced {
				t.Errorf("second request: response %q, fenced %v, want %v", got.response, fenced, tt.wantFenced)
			}
			if has := len(got.corrections) > 0 && string(got.corrections) != "[]"; has != tt.wantReport {
				t.Errorf("second request: corrections %s, want some: %v", got.corrections, tt.wantReport)
			}
		})
	}
}

// TestCacheSharedCorrectionsThroughRedis: an entry shared through Redis
// carries the corrections: the other replica's hit reports the same.
func TestCacheSharedCorrectionsThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	up := &scriptedUpstream{answers: []string{`{"a":1,}`}}
	gw1 := sharedRedisGateway(t, up, srv.URL, io.Discard)
	gw2 := sharedRedisGateway(t, up, srv.URL, io.Discard)
	hdr := map[string]string{"X-Contract": "json", "X-Contract-Report": "corrections"}
	miss, hit := askRendered(t, gw1, "m", hdr), askRendered(t, gw2, "m", hdr)
	if miss.cache != "miss" || hit.cache != "hit" {
		t.Fatalf("X-Cache %q on replica 1 then %q on replica 2, want miss then hit", miss.cache, hit.cache)
	}
	var want, got []correction
	if err := json.Unmarshal(miss.corrections, &want); err != nil || len(want) == 0 {
		t.Fatalf("replica 1 reports corrections %s (%v), want a repaired answer's", miss.corrections, err)
	}
	if err := json.Unmarshal(hit.corrections, &got); err != nil {
		t.Fatalf("replica 2's corrections %s: %v", hit.corrections, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("corrections of replica 2's hit (-miss +hit):\n%s", diff)
	}
}
