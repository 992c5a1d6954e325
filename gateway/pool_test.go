package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
)

// poolOllama is an Ollama of a pool in the gateway's tests: its models,
// and a generate that answers a JSON object naming it.
type poolOllama struct {
	name   string
	models []string
	srv    *httptest.Server
	down   atomic.Bool
	asked  atomic.Int64
	// cut makes generate break its answer after the first line; loaded
	// lists its models in /api/ps.
	cut    atomic.Bool
	loaded bool
}

func newPoolOllama(t *testing.T, name string, models ...string) *poolOllama {
	t.Helper()
	o := &poolOllama{name: name, models: models}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.down.Load() {
			http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/api/version":
			fmt.Fprint(w, `{"version":"0.17.4"}`)
		case "/api/ps":
			if o.loaded {
				fmt.Fprintf(w, `{"models":[{"name":%q}]}`, o.models[0])
				return
			}
			fmt.Fprint(w, `{"models":[]}`)
		case "/api/tags":
			var items []string
			for _, m := range o.models {
				items = append(items, fmt.Sprintf(`{"name":%q,"model":%q}`, m, m))
			}
			fmt.Fprintf(w, `{"models":[%s]}`, strings.Join(items, ","))
		case "/api/generate":
			o.asked.Add(1)
			w.Header().Set("Content-Type", "application/x-ndjson")
			if o.cut.Load() {
				fmt.Fprint(w, `{"model":"m","response":"{\"by\":","done":false}`+"\n")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
			text, _ := json.Marshal(fmt.Sprintf(`{"by":%q}`, o.name))
			fmt.Fprintf(w, `{"model":"m","response":%s,"done":false}`+"\n", text)
			fmt.Fprint(w, `{"model":"m","response":"","done":true,"done_reason":"stop"}`+"\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// TestPoolServesAsOneOllama: a gateway over two Ollamas routes
// pass-through and guarded requests to the one that has the model, lists
// the union, answers 404 for a model neither has, stays ready while one
// is up, and shows each upstream on /admin/stats, /metrics and the log.
func TestPoolServesAsOneOllama(t *testing.T) {
	a := newPoolOllama(t, "a", "small:latest")
	b := newPoolOllama(t, "b", "small:latest", "big:latest")
	var logs bytes.Buffer
	srv, gw := newPoolGateway(t, &logs, nil, a.srv.URL, b.srv.URL)

	tests := []struct {
		name   string
		method string
		path   string
		body   string
		code   int
		want   string
	}{
		{"pass-through to the only one that has big", http.MethodPost, "/api/generate", `{"model":"big","prompt":"x"}`, 200, `\"by\":\"b\"`},
		{"guarded to the only one that has big", http.MethodPost, "/api/generate", `{"model":"big","prompt":"x","stream":false,"format":{"type":"object"}}`, 200, `\"by\":\"b\"`},
		{"a model neither has", http.MethodPost, "/api/generate", `{"model":"huge","prompt":"x"}`, 404, `{"error":"model \"huge\" not found"}`},
		{"the union of the lists", http.MethodGet, "/api/tags", "", 200, `{"models":[{"name":"small:latest","model":"small:latest"},{"name":"big:latest","model":"big:latest"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendRequest(t, gw.URL, tt.method, tt.path, strings.NewReader(tt.body), nil)
			if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.want) {
				t.Errorf("%s %s = %d %s, want %d with %s", tt.method, tt.path, resp.StatusCode, body, tt.code, tt.want)
			}
		})
	}
	if !strings.Contains(logs.String(), `"upstream":"`+b.srv.URL+`"`) {
		t.Errorf("no log line names the upstream %s:\n%s", b.srv.URL, logs.String())
	}

	a.down.Store(true)
	srv.up.Check(context.Background())
	if resp, body := sendRequest(t, gw.URL, http.MethodGet, "/readyz", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz with b up = %d %s, want 200", resp.StatusCode, body)
	}
	resp, body := sendRequest(t, gw.URL, http.MethodGet, "/admin/stats", nil, nil)
	var stats StatsReport
	if err := json.Unmarshal(body, &stats); err != nil || resp.StatusCode != 200 || len(stats.Upstreams) != 2 || stats.Upstreams[0].Healthy || !stats.Upstreams[1].Healthy {
		t.Errorf("/admin/stats upstreams = %+v (%v), want a down and b up", stats.Upstreams, err)
	}
	_, body = sendRequest(t, gw.URL, http.MethodGet, "/metrics", nil, nil)
	if want := `gateway_upstream_healthy{upstream="` + a.srv.URL + `"} 0`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	b.down.Store(true)
	srv.up.Check(context.Background())
	if resp, body := sendRequest(t, gw.URL, http.MethodGet, "/readyz", nil, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with both down = %d %s, want 503", resp.StatusCode, body)
	}
}

// TestRepairModel: a route's repair_model (else its contract's) takes the
// ladder's repair calls; the first answer stays on the route's model.
func TestRepairModel(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "mended"), 0o755); err != nil {
		t.Fatal(err)
	}
	contract := `{"name": "mended", "version": "1", "rules": [], "shape": {"expect": "any", "unwrap": [], "wrap_single": false},
  "policy": {"max_repairs": 1, "repair_prompt": "repair-engine", "temperatures": [], "use_format": true, "repair_model": "strong"},
  "fallback": {"mode": "error"}, "output": "bare"}`
	if err := os.WriteFile(filepath.Join(dir, "mended", "contract.json"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		contract    string
		repairModel string
		want        []string // the models of the first answer and the repair call
	}{
		{"the route's model mends", "json", "", []string{"small", "small"}},
		{"the route's repair_model mends", "json", "big", []string{"small", "big"}},
		{"the contract's repair_model mends", "mended", "", []string{"small", "strong"}},
		{"the route's over the contract's", "mended", "big", []string{"small", "big"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{"no JSON here at all", `{"a":1}`}}
			gw := newGuardedGateway(t, up, func(cfg *config.Config) {
				cfg.ContractsDir = dir
				cfg.Routes = []config.Route{{Model: "quiz", Upstream: "small", Contract: tt.contract, RepairModel: tt.repairModel}}
			})
			resp, body := post(t, gw.URL+"/api/generate", `{"model":"quiz","prompt":"p","stream":false}`, nil)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "repaired" {
				t.Fatalf("status %d %s %s, want 200 repaired", resp.StatusCode, resp.Header.Get("X-Contract-Status"), body)
			}
			up.mu.Lock()
			defer up.mu.Unlock()
			var got []string
			for _, b := range up.bodies {
				m, _ := b["model"].(string)
				got = append(got, m)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("models asked = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPoolGuardedCallCutIsSentAgain: a guarded call whose answer broke off
// before its end reached no client: on a pool it is sent once more, to
// another upstream than the one that broke, though that one has the
// model loaded.
func TestPoolGuardedCallCutIsSentAgain(t *testing.T) {
	a := newPoolOllama(t, "a", "m:latest")
	b := newPoolOllama(t, "b", "m:latest")
	a.loaded = true
	a.cut.Store(true)
	_, gw := newPoolGateway(t, nil, nil, a.srv.URL, b.srv.URL)
	resp, body := sendRequest(t, gw.URL, http.MethodPost, "/api/generate", strings.NewReader(`{"model":"m","prompt":"x","stream":false,"format":{"type":"object"}}`), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `\"by\":\"b\"`) {
		t.Errorf("guarded call cut on a = %d %s, want b's answer", resp.StatusCode, body)
	}
	if n, m := a.asked.Load(), b.asked.Load(); n != 1 || m != 1 {
		t.Errorf("generate asked of a %d and b %d times, want once each", n, m)
	}
}

// newPoolGateway builds the whole gateway over a pool of urls, logging to
// logs (nil: nowhere), with edit applied to its config, and serves it.
// Health checks are left to the test: with the default hour between them
// the pool is checked once here, so that it knows each upstream's models;
// an edit that turns them off (a negative interval) leaves the pool
// unchecked.
func newPoolGateway(t *testing.T, logs io.Writer, edit func(*config.Config), urls ...string) (*Server, *httptest.Server) {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = ""
	for _, u := range urls {
		cfg.Upstreams = append(cfg.Upstreams, config.UpstreamServer{URL: u})
	}
	cfg.UpstreamHealthInterval = time.Hour
	if edit != nil {
		edit(&cfg)
	}
	if logs == nil {
		logs = io.Discard
	}
	srv, err := Build(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if cfg.UpstreamHealthInterval > 0 {
		srv.up.Check(context.Background())
	}
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return srv, gw
}
