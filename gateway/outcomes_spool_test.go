package gateway

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/outcomes/sqlstore"
	"github.com/contractgateway/gateway/internal/pgtest"
)

// TestOutcomesSurviveOutageAndShutdown stops the real PostgreSQL of a
// gateway, sends guarded requests and shuts the gateway down while the
// database is still down: their records wait in the spool file, and the
// next gateway on that file writes them once the database is back, each
// once, next to the records written before the outage.
func TestOutcomesSurviveOutageAndShutdown(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	spool := filepath.Join(t.TempDir(), "outcomes.spool")
	ups := httptest.NewServer(&scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}})
	defer ups.Close()
	start := func() (*Server, *httptest.Server) {
		cfg := config.Default()
		cfg.Upstream, cfg.MaxLLMCalls, cfg.AdminToken = ups.URL, 1, statsToken
		cfg.Outcomes.Postgres, cfg.Outcomes.Spool = dsn, spool
		srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		return srv, httptest.NewServer(srv.Handler())
	}
	send := func(url, prefix string) {
		for _, prompt := range []string{"one", "two", "three", "four", "five"} {
			resp, body := post(t, url+"/api/generate", `{"model":"m","stream":false,"prompt":"`+prefix+prompt+`"}`,
				map[string]string{"X-Contract": "mcq"})
			if resp.StatusCode != 200 {
				t.Fatalf("%s%s: status %d: %s", prefix, prompt, resp.StatusCode, body)
			}
		}
	}
	srv, gw := start()
	send(gw.URL, "before ")
	pg.Stop()
	send(gw.URL, "during ")
	gw.Close()
	srv.Close() // SIGTERM's end: the queue goes to the spool, the database refusing it

	pg.Restart(t)
	srv, gw = start()
	gw.Close()
	srv.Close() // writes what the spool still holds, if its replay at start has not

	store, err := sqlstore.OpenPostgres(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.List(t.Context(), outcomes.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range page.Records {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if len(ids) != 10 || len(slices.Compact(slices.Clone(ids))) != 10 {
		t.Errorf("records after the outage and a restart: %d %v, want the 10 requests' once each", len(ids), ids)
	}
}
