package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/stats"
	"github.com/contractgateway/gateway/internal/pgtest"
)

// TestAdminStatsFromOutcomeStore sends the stats script through one
// gateway, closes it, and reads /admin/stats on another gateway on the
// same store: a second replica on one PostgreSQL, or the same gateway
// restarted on its SQLite file. The counts are the first gateway's,
// although the second served no guarded request.
func TestAdminStatsFromOutcomeStore(t *testing.T) {
	tests := []struct {
		name  string
		store func(t *testing.T) func(*config.Config)
	}{
		{"two replicas on one postgres", func(t *testing.T) func(*config.Config) {
			dsn := pgtest.Start(t).NewDatabase(t)
			return func(c *config.Config) { c.Outcomes.Postgres = dsn }
		}},
		{"restart on one sqlite file", func(t *testing.T) func(*config.Config) {
			path := filepath.Join(t.TempDir(), "outcomes.db")
			return func(c *config.Config) { c.Outcomes.SQLite = path }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := tt.store(t)
			up := statsScript(t, nil)
			ups := httptest.NewServer(up)
			defer ups.Close()
			start := func() (*Server, *httptest.Server) {
				cfg := config.Default()
				cfg.Upstream, cfg.MaxLLMCalls, cfg.AdminToken = ups.URL, 1, statsToken
				store(&cfg)
				srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				return srv, httptest.NewServer(srv.Handler())
			}
			srvA, gwA := start()
			sendStatsScript(t, gwA.URL, "")
			gwA.Close()
			srvA.Close() // writes what is queued

			srvB, gwB := start()
			defer srvB.Close()
			defer gwB.Close()
			var got StatsReport
			adminGet(t, gwB.URL+"/admin/stats", &got)
			if got.Source != "outcomes" || got.Requests != 5 || got.Until == nil || !got.Since.Before(*got.Until) {
				t.Fatalf("stats source %q, requests %d, window %v to %v; want 5 from the outcome store", got.Source, got.Requests, got.Since, got.Until)
			}
			checkStatsScriptCounts(t, got)
			if diff := cmp.Diff(map[string]int{"m": 3}, got.ByModel); diff != "" {
				t.Errorf("by model (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]int{"first": 1, "local": 1, "llm_repair": 1, "failed": 1, "cache": 1}, got.Rungs); diff != "" {
				t.Errorf("rungs (-want +got):\n%s", diff)
			}
			if want := (stats.Calls{First: 4, Repair: 2, Saved: 1}); got.LLMCalls != want {
				t.Errorf("llm calls = %+v, want %+v", got.LLMCalls, want)
			}
			if want := (stats.Cache{Hit: 1, Miss: 4, HitRate: 0.2}); got.Cache != want {
				t.Errorf("cache = %+v, want %+v", got.Cache, want)
			}
			if want := (stats.Tokens{FirstPrompt: 28, FirstOutput: 168, RepairPrompt: 14, RepairOutput: 84}); got.Tokens != want {
				t.Errorf("tokens = %+v, want %+v", got.Tokens, want)
			}
			if got.Latency.Samples != 5 || got.Latency.P50 <= 0 || got.Latency.P50 > got.Latency.P90 || got.Latency.P90 > got.Latency.P99 {
				t.Errorf("latency = %+v", got.Latency)
			}
			if len(got.Failures) != 1 || got.Failures[0].Status != "failed" || got.Failures[0].RequestID == "" ||
				!cmp.Equal(got.Failures[0].Codes, []string{"ANSWER_RANGE"}) {
				t.Errorf("recent failures = %+v", got.Failures)
			}

			// A window that holds none of them, and bad windows.
			var empty StatsReport
			adminGet(t, gwB.URL+"/admin/stats?since=2001-01-01T00:00:00Z&until=2001-01-02T00:00:00Z", &empty)
			if empty.Requests != 0 || len(empty.Counts) != 0 || empty.Since.Year() != 2001 {
				t.Errorf("stats of 2001-01-01: requests %d, counts %v, since %v; want none", empty.Requests, empty.Counts, empty.Since)
			}
			for _, q := range []string{"since=yesterday", "since=2001-01-02T00:00:00Z&until=2001-01-01T00:00:00Z", "window=1h"} {
				code, body := adminStatus(t, gwB.URL+"/admin/stats?"+q)
				if code != http.StatusBadRequest || !strings.Contains(body, `"error"`) {
					t.Errorf("GET /admin/stats?%s = %d %s, want 400 with an error", q, code, body)
				}
			}
		})
	}
}

// TestAdminStatsWithoutStore checks that without an outcome store the
// counts stay this process's and a window is refused, naming the reason.
func TestAdminStatsWithoutStore(t *testing.T) {
	url, _ := scriptedStatsGateway(t, nil)
	var got StatsReport
	adminGet(t, url+"/admin/stats", &got)
	if got.Source != "process" || got.Requests != 5 || got.Until != nil {
		t.Errorf("stats without a store: source %q, requests %d, until %v; want 5 of this process", got.Source, got.Requests, got.Until)
	}
	code, body := adminStatus(t, url+"/admin/stats?since=2001-01-01T00:00:00Z")
	if code != http.StatusBadRequest || !strings.Contains(body, "outcome store") {
		t.Errorf("GET /admin/stats?since=… without a store = %d %s, want 400 naming the outcome store", code, body)
	}
}

// adminStatus GETs url with the admin token and returns the status and
// body.
func adminStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+statsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
