package gateway

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/contractgateway/gateway/config"
)

// collectorCause is the error of failingCollector: it names a file, as a
// collector reading the system would, and no client may read it.
const collectorCause = "open /var/lib/gateway/MARKER-state: permission denied"

// failingCollector is a Prometheus collector whose metric fails to
// collect.
type failingCollector struct{ desc *prometheus.Desc }

func (f failingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

func (f failingCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(f.desc, errors.New(collectorCause))
}

// builtGateway is the whole gateway of cfg (with the admin token
// "admin-token"), logging to logs.
func builtGateway(t *testing.T, edit func(*config.Config), logs *logBuffer) string {
	t.Helper()
	ups := httptest.NewServer(&recordingUpstream{})
	t.Cleanup(ups.Close)
	cfg := config.Default()
	cfg.Upstream, cfg.AdminToken = ups.URL, "admin-token"
	if edit != nil {
		edit(&cfg)
	}
	srv, err := Build(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(srv.Close)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw.URL
}

// TestAdminErrorsThroughOneWriter checks that every admin and ops route
// that can fail — the stats, the outcome log and its trends, the UI's
// files, the metrics — answers its error through the one error writer:
// Ollama's shape {"error": "…"} and nothing else, with the route's
// status, and a cause (a collector's error, the file server's text) in
// the request's log line and never in the body.
func TestAdminErrorsThroughOneWriter(t *testing.T) {
	logs := map[string]*logBuffer{"store": {}, "no store": {}, "store down": {}, "metrics": {}}
	dir := t.TempDir()
	// A PostgreSQL store nobody listens for: the gateway starts, and every
	// read of the store fails with an error naming its address and user.
	down := closedLoopbackAddr(t)
	urls := map[string]string{
		"store":    builtGateway(t, func(c *config.Config) { c.Outcomes.SQLite = filepath.Join(dir, "o.db") }, logs["store"]),
		"no store": builtGateway(t, nil, logs["no store"]),
		"store down": builtGateway(t, func(c *config.Config) {
			c.Outcomes.Postgres = "postgres://MARKER-user@" + down + "/outcomes?sslmode=disable&connect_timeout=5"
			c.Outcomes.Spool = filepath.Join(dir, "outcomes.spool")
		}, logs["store down"]),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(failingCollector{prometheus.NewDesc("test_failing", "A metric that fails to collect.", nil, nil)})
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Registry: reg, Logger: slog.New(slog.NewJSONHandler(logs["metrics"], nil))})
	urls["metrics"] = f.gw.URL

	tests := []struct {
		name    string
		gateway string
		path    string
		status  int
		msg     string // prefix of the client's message
		cause   string // in the request's log line, never in the body; "" for none
	}{
		{"stats with an unknown parameter", "store", "/admin/stats?bogus=1", 400, "bogus: unknown parameter", ""},
		{"stats with a bad time", "store", "/admin/stats?since=yesterday", 400, "since: ", ""},
		{"stats window without a store", "no store", "/admin/stats?since=2001-01-01T00:00:00Z", 400, "since: needs the outcome store", ""},
		{"outcomes with a bad parameter", "store", "/admin/outcomes?stauts=failed", 400, "stauts: unknown parameter", ""},
		{"trends with a bad step", "store", "/admin/trends?step=5m", 400, "step: ", ""},
		{"outcomes without a store", "no store", "/admin/outcomes", 404, "the outcome store is off", ""},
		{"trends without a store", "no store", "/admin/trends", 404, "the outcome store is off", ""},
		{"outcomes with the store down", "store down", "/admin/outcomes", 503, "the outcome store did not answer", down},
		{"trends with the store down", "store down", "/admin/trends", 503, "the outcome store did not answer", down},
		{"a file the UI does not have", "store", "/ui/nope.js", 404, "not found", "404 page not found"},
		{"metrics with a failing collector", "metrics", "/metrics", 500, "internal server error", collectorCause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendRequest(t, urls[tt.gateway], "GET", tt.path, nil, bearer("admin-token"))
			if resp.StatusCode != tt.status {
				t.Fatalf("GET %s = %d %s, want %d", tt.path, resp.StatusCode, body, tt.status)
			}
			if msg := ollamaError(t, resp, body); !strings.HasPrefix(msg, tt.msg) {
				t.Errorf("GET %s error = %q, want %q…", tt.path, msg, tt.msg)
			}
			if tt.cause == "" {
				return
			}
			if strings.Contains(string(body), tt.cause) {
				t.Errorf("GET %s body %s holds the cause %q", tt.path, body, tt.cause)
			}
			logs[tt.gateway].waitFor(t, tt.cause)
		})
	}

	// /admin/stats with the store down answers this process's counts and
	// says the store did not answer, without the store's error.
	resp, body := sendRequest(t, urls["store down"], "GET", "/admin/stats", nil, bearer("admin-token"))
	var got StatsReport
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/stats with the store down = %d %s, want 200 with the process's counts", resp.StatusCode, body)
	}
	if got.Source != "process" || !strings.HasPrefix(got.StoreError, "the outcome store did not answer") {
		t.Errorf("GET /admin/stats with the store down: source %q, store_error %q; want process, the store did not answer", got.Source, got.StoreError)
	}
	for _, secret := range []string{down, "MARKER-user"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("GET /admin/stats with the store down = %s, holds the store's error (%q)", body, secret)
		}
	}
}
