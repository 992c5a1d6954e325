package guardlog

import (
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/internal/logcount"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/internal/pgtest"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/repair"
)

// TestRecordOfEvent checks the mapping of an Event onto a Record: every
// field, the key's name, and no text without the debug store.
func TestRecordOfEvent(t *testing.T) {
	ev := middleware.Event{RequestID: "r1", Route: "quiz", Contract: "mcq@1", Model: "qwen3", Status: repair.StatusFailed,
		Rungs: []string{"local", "llm_repair"}, LLMCalls: 1, LocalFixes: 2, CodesBefore: []string{"A"}, CodesAfter: []string{"B"},
		Latency: 1500 * time.Microsecond, Cache: "miss", Key: "team-a", Upstream: "http://gpu-1:11434",
		FirstTokens: repair.Usage{PromptTokens: 10, OutputTokens: 20}, RepairTokens: repair.Usage{PromptTokens: 3, OutputTokens: 4}}
	now := time.Date(2026, 3, 10, 12, 0, 0, 123456789, time.UTC)
	got := (&Log{}).record(ev, now)
	want := outcomes.Record{ID: "r1", Time: time.Date(2026, 3, 10, 12, 0, 0, 123456000, time.UTC), Route: "quiz",
		Contract: "mcq@1", Model: "qwen3", Upstream: "http://gpu-1:11434", Key: "team-a", Status: "failed", CodesBefore: []string{"A"}, CodesAfter: []string{"B"},
		Rungs: []string{"local", "llm_repair"}, LLMCalls: 1, LocalFixes: 2,
		Tokens:    outcomes.Tokens{FirstPrompt: 10, FirstOutput: 20, RepairPrompt: 3, RepairOutput: 4},
		LatencyMS: 1.5, Cache: "miss"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
}

// TestOpen checks which options open a store, and that the Writer's
// counters reach the registry.
func TestOpen(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		open bool
	}{
		{"no store named", Options{}, false},
		{"disabled", Options{SQLite: filepath.Join(t.TempDir(), "o.db"), Disabled: true}, false},
		{"sqlite", Options{SQLite: filepath.Join(t.TempDir(), "o.db"), Registry: prometheus.NewRegistry()}, true},
	}
	for _, tt := range tests {
		l, err := Open(tt.o)
		if err != nil {
			t.Fatalf("%s: Open = %v", tt.name, err)
		}
		if (l != nil) != tt.open {
			t.Errorf("%s: Open = %v, want a store: %v", tt.name, l, tt.open)
		}
		l.Observe(middleware.Event{RequestID: "x"}) // nil-safe
		if err := l.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if tt.o.Registry != nil {
			mfs, err := tt.o.Registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, mf := range mfs {
				if strings.HasPrefix(mf.GetName(), "gateway_outcomes_") {
					names = append(names, mf.GetName())
				}
			}
			want := []string{"gateway_outcomes_deleted_total", "gateway_outcomes_dropped_total", "gateway_outcomes_failed_total",
				"gateway_outcomes_replayed_total", "gateway_outcomes_spool_bytes", "gateway_outcomes_spool_dropped_total",
				"gateway_outcomes_spool_records", "gateway_outcomes_spooled_total", "gateway_outcomes_written_total"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("%s: metrics (-want +got):\n%s", tt.name, diff)
			}
		}
		l.Close()
	}
}

// TestOpenWhilePostgresDown checks that a gateway starting while its
// PostgreSQL is down starts anyway, with one warning for the outage, keeps
// the records of the outage in its spool file, and writes them all once
// the database is back.
func TestOpenWhilePostgresDown(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	pg.Stop()
	logs := &logcount.Counter{}
	l, err := Open(Options{Postgres: dsn, Logger: slog.New(logs), Spool: t.TempDir() + "/outcomes.spool"})
	if err != nil || l == nil {
		t.Fatalf("Open with PostgreSQL down = %v, %v; want a store", l, err)
	}
	defer l.Close()
	l.Observe(middleware.Event{RequestID: "spooled", Status: "valid"})
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if l.w.Failed() != 0 || l.w.SpoolRecords() != 1 || logs.Count(slog.LevelWarn) != 1 {
		t.Errorf("while down: Failed() = %d, SpoolRecords() = %d, warnings = %d; want 0, 1, 1",
			l.w.Failed(), l.w.SpoolRecords(), logs.Count(slog.LevelWarn))
	}
	pg.Restart(t)
	l.Observe(middleware.Event{RequestID: "kept", Status: "valid"})
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	page, err := l.store.List(t.Context(), outcomes.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Records {
		got = append(got, r.ID)
	}
	if !slices.Equal(got, []string{"kept", "spooled"}) || logs.Count(slog.LevelInfo) != 1 || logs.Count(slog.LevelWarn) != 1 {
		t.Errorf("after restart: records %v, info lines %d, warnings %d; want [kept spooled], 1, 1",
			got, logs.Count(slog.LevelInfo), logs.Count(slog.LevelWarn))
	}
}

// TestSpoolInUse: a second gateway given the spool file of a running one
// starts anyway, with one warning, and spools in memory.
func TestSpoolInUse(t *testing.T) {
	dir := t.TempDir()
	spool := filepath.Join(dir, "outcomes.spool")
	first, err := Open(Options{SQLite: filepath.Join(dir, "a.db"), Spool: spool, Logger: slog.New(&logcount.Counter{})})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	logs := &logcount.Counter{}
	second, err := Open(Options{SQLite: filepath.Join(dir, "b.db"), Spool: spool, Logger: slog.New(logs)})
	if err != nil || second == nil {
		t.Fatalf("Open with a spool in use = %v, %v; want a store", second, err)
	}
	defer second.Close()
	if got := logs.Count(slog.LevelWarn); got != 1 {
		t.Errorf("warnings = %d, want 1", got)
	}
	second.Observe(middleware.Event{RequestID: "r", Status: "valid"})
	if err := second.Flush(t.Context()); err != nil || second.w.Written() != 1 {
		t.Errorf("second gateway: Flush() = %v, Written() = %d; want its record written", err, second.w.Written())
	}
}
