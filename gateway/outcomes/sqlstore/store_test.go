package sqlstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/internal/pgtest"
)

// TestMain stops the PostgreSQL the tests share once they have run.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// opener opens a Store on one database; each call is another instance on
// the same database, as a restarted gateway or a second replica.
type opener func(t *testing.T) outcomes.Store

// eachStore runs fn against an empty SQLite file and an empty PostgreSQL
// database: one table of tests, both stores.
func eachStore(t *testing.T, fn func(t *testing.T, open opener)) {
	t.Helper()
	tests := []struct {
		name    string
		newOpen func(t *testing.T) opener
	}{
		{"sqlite", func(t *testing.T) opener {
			path := filepath.Join(t.TempDir(), "state", "outcomes.db")
			return func(t *testing.T) outcomes.Store {
				return mustOpen(t, func(ctx context.Context) (outcomes.Store, error) { return OpenSQLite(ctx, path) })
			}
		}},
		{"postgres", func(t *testing.T) opener {
			dsn := pgtest.Shared(t).NewDatabase(t)
			return func(t *testing.T) outcomes.Store {
				return mustOpen(t, func(ctx context.Context) (outcomes.Store, error) { return OpenPostgres(ctx, dsn) })
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { fn(t, tt.newOpen(t)) })
	}
}

func mustOpen(t *testing.T, open func(context.Context) (outcomes.Store, error)) outcomes.Store {
	t.Helper()
	s, err := open(t.Context())
	if err != nil {
		if s != nil {
			s.Close()
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// sample is n records a minute apart from t0, statuses, models and codes
// cycling.
func sample(n int) []outcomes.Record {
	statuses := []string{"valid", "repaired", "failed", "fallback"}
	models := []string{"llama3.2", "qwen3"}
	var out []outcomes.Record
	for i := range n {
		r := outcomes.Record{
			ID: fmt.Sprintf("req-%03d", i), Time: t0.Add(time.Duration(i) * time.Minute), Route: "quiz",
			Contract: "mcq@1", Model: models[i%2], Key: "team-a", Status: statuses[i%4],
			CodesBefore: []string{}, CodesAfter: []string{}, Rungs: []string{},
			LLMCalls: i % 3, LocalFixes: i % 2, Tokens: outcomes.Tokens{FirstPrompt: 10 + i, FirstOutput: 20, RepairPrompt: i, RepairOutput: 1},
			LatencyMS: 12.5, Cache: "miss",
		}
		if r.Status != "valid" {
			r.CodesBefore = []string{"SCHEMA_TYPE", "MCQ_ANSWER_INDEX", "SCHEMA_TYPE"}
			r.Rungs = []string{"local", "llm_repair"}
		}
		if r.Status == "failed" {
			r.CodesAfter = []string{"MCQ_ANSWER_INDEX"}
		}
		out = append(out, r)
	}
	return out
}

func ids(rs []outcomes.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestStoreWriteAndList(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		recs := sample(12)
		if err := s.Write(t.Context(), recs); err != nil {
			t.Fatal(err)
		}
		// Written again (a retried batch): skipped, not doubled.
		if err := s.Write(t.Context(), recs[:3]); err != nil {
			t.Fatal(err)
		}
		page, err := s.List(t.Context(), outcomes.Query{})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]outcomes.Record, 0, len(recs))
		for i := len(recs) - 1; i >= 0; i-- {
			want = append(want, recs[i])
		}
		if diff := cmp.Diff(want, page.Records); diff != "" {
			t.Errorf("List(all) (-want +got):\n%s", diff)
		}
		if page.Next != nil {
			t.Errorf("List(all).Next = %v, want nil", page.Next)
		}

		tests := []struct {
			name string
			q    outcomes.Query
			want []string
		}{
			{"status", outcomes.Query{Status: "failed"}, []string{"req-010", "req-006", "req-002"}},
			{"contract and model", outcomes.Query{Contract: "mcq@1", Model: "qwen3", Status: "repaired"}, []string{"req-009", "req-005", "req-001"}},
			{"code before", outcomes.Query{Code: "SCHEMA_TYPE", Since: t0.Add(8 * time.Minute)}, []string{"req-011", "req-010", "req-009"}},
			{"code after", outcomes.Query{Code: "MCQ_ANSWER_INDEX", Status: "failed", Until: t0.Add(6 * time.Minute)}, []string{"req-002"}},
			{"since inclusive until exclusive", outcomes.Query{Since: t0.Add(3 * time.Minute), Until: t0.Add(5 * time.Minute)}, []string{"req-004", "req-003"}},
			{"unknown code", outcomes.Query{Code: "NO_SUCH"}, []string{}},
			{"limit", outcomes.Query{Limit: 2}, []string{"req-011", "req-010"}},
		}
		for _, tt := range tests {
			page, err := s.List(t.Context(), tt.q)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, ids(page.Records)); diff != "" {
				t.Errorf("%s: List(%+v) (-want +got):\n%s", tt.name, tt.q, diff)
			}
		}
	})
}

func TestStoreCursorPages(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		recs := sample(7)
		// Two records at one time: the id breaks the tie.
		twin := recs[3]
		twin.ID = "req-003b"
		if err := s.Write(t.Context(), append(recs, twin)); err != nil {
			t.Fatal(err)
		}
		var got []string
		q := outcomes.Query{Limit: 3}
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("cursor does not end")
			}
			page, err := s.List(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ids(page.Records)...)
			if page.Next == nil {
				break
			}
			// Through its string form, as a client pages.
			c, err := outcomes.ParseCursor(page.Next.String())
			if err != nil {
				t.Fatal(err)
			}
			q.After = &c
		}
		want := []string{"req-006", "req-005", "req-004", "req-003b", "req-003", "req-002", "req-001", "req-000"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
	})
}

func TestStoreTrends(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		// 90 records a minute apart: 60 in the first hour, 30 in the next.
		if err := s.Write(t.Context(), sample(90)); err != nil {
			t.Fatal(err)
		}
		h0, h1 := t0, t0.Add(time.Hour)
		tests := []struct {
			q    outcomes.TrendQuery
			want []outcomes.Series
		}{
			{outcomes.TrendQuery{By: outcomes.ByStatus, Step: time.Hour, Since: t0, Until: t0.Add(2 * time.Hour)}, []outcomes.Series{
				{Key: "failed", Points: []outcomes.Point{{T: h0, N: 15}, {T: h1, N: 7}}},
				{Key: "fallback", Points: []outcomes.Point{{T: h0, N: 15}, {T: h1, N: 7}}},
				{Key: "repaired", Points: []outcomes.Point{{T: h0, N: 15}, {T: h1, N: 8}}},
				{Key: "valid", Points: []outcomes.Point{{T: h0, N: 15}, {T: h1, N: 8}}},
			}},
			{outcomes.TrendQuery{By: outcomes.ByModel, Step: 24 * time.Hour, Since: t0, Until: t0.Add(24 * time.Hour)}, []outcomes.Series{
				{Key: "llama3.2", Points: []outcomes.Point{{T: t0.Truncate(24 * time.Hour), N: 45}}},
				{Key: "qwen3", Points: []outcomes.Point{{T: t0.Truncate(24 * time.Hour), N: 45}}},
			}},
			// Codes before repair, each request once although listed twice.
			{outcomes.TrendQuery{By: outcomes.ByCode, Step: time.Hour, Since: t0.Add(time.Hour), Until: t0.Add(2 * time.Hour)}, []outcomes.Series{
				{Key: "MCQ_ANSWER_INDEX", Points: []outcomes.Point{{T: h1, N: 22}}},
				{Key: "SCHEMA_TYPE", Points: []outcomes.Point{{T: h1, N: 22}}},
			}},
			{outcomes.TrendQuery{By: outcomes.ByContract, Step: time.Minute, Since: t0, Until: t0.Add(2 * time.Minute)}, []outcomes.Series{
				{Key: "mcq@1", Points: []outcomes.Point{{T: t0, N: 1}, {T: t0.Add(time.Minute), N: 1}}},
			}},
			{outcomes.TrendQuery{By: outcomes.ByStatus, Step: time.Hour, Since: t0.Add(-48 * time.Hour), Until: t0.Add(-24 * time.Hour)}, []outcomes.Series{}},
		}
		for _, tt := range tests {
			got, err := s.Trends(t.Context(), tt.q)
			if err != nil {
				t.Fatalf("Trends(%+v) = %v", tt.q, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Trends(%+v) (-want +got):\n%s", tt.q, diff)
			}
		}
		if _, err := s.Trends(t.Context(), outcomes.TrendQuery{By: "route", Step: time.Hour}); err == nil {
			t.Error("Trends(by route) = nil error, want ErrBadQuery")
		}
	})
}

func TestStoreRetention(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		if err := s.Write(t.Context(), sample(10)); err != nil {
			t.Fatal(err)
		}
		// Retention of 5 minutes at t0+8m: records before t0+3m go.
		w := outcomes.NewWriter(s, outcomes.WriterConfig{Retention: 5 * time.Minute, Now: func() time.Time { return t0.Add(8 * time.Minute) }})
		defer w.Close(t.Context())
		if err := w.Prune(t.Context()); err != nil {
			t.Fatal(err)
		}
		page, err := s.List(t.Context(), outcomes.Query{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"req-009", "req-008", "req-007", "req-006", "req-005", "req-004", "req-003"}
		if diff := cmp.Diff(want, ids(page.Records)); diff != "" {
			t.Errorf("after retention (-want +got):\n%s", diff)
		}
		// Their codes went with them: a code filter finds none of them.
		page, err = s.List(t.Context(), outcomes.Query{Code: "SCHEMA_TYPE", Until: t0.Add(3 * time.Minute)})
		if err != nil || len(page.Records) != 0 {
			t.Errorf("codes of deleted records: List = %v, %v; want none", ids(page.Records), err)
		}
		if got := w.Deleted(); got != 3 {
			t.Errorf("Deleted() = %d, want 3", got)
		}
	})
}

// TestStoreReopen checks that migrations are idempotent and that the
// history survives a restart: a second Open of the same database migrates
// nothing and lists what the first wrote.
func TestStoreReopen(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		first := open(t)
		if err := first.Write(t.Context(), sample(3)); err != nil {
			t.Fatal(err)
		}
		first.Close()
		second := open(t)
		v, err := second.(*sqlStore).version(t.Context())
		if err != nil || v != SchemaVersion() {
			t.Errorf("version after reopen = %d, %v; want %d", v, err, SchemaVersion())
		}
		r, err := second.(*sqlStore).db.query(t.Context(), `SELECT COUNT(*) FROM schema_migrations`)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for r.Next() {
			r.Scan(&n)
		}
		r.Close()
		if n != int64(len(migrations)) {
			t.Errorf("schema_migrations rows = %d, want %d", n, len(migrations))
		}
		page, err := second.List(t.Context(), outcomes.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"req-002", "req-001", "req-000"}, ids(page.Records)); diff != "" {
			t.Errorf("after reopen (-want +got):\n%s", diff)
		}
	})
}

// TestStoreNewerSchemaRefused checks that a gateway does not write into a
// schema a newer one migrated.
func TestStoreNewerSchemaRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t).(*sqlStore)
		if _, err := s.db.exec(t.Context(), `INSERT INTO schema_migrations (version, applied_at) VALUES (`+
			s.db.placeholder(1)+`, 0)`, SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		if err := s.migrate(t.Context()); err == nil {
			t.Error("migrate over a newer schema = nil, want an error")
		}
	})
}

// TestPostgresReplicasShare checks that two stores on one PostgreSQL — two
// replicas — list each other's records, at once and concurrently opened.
func TestPostgresReplicasShare(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	stores := make([]outcomes.Store, 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = OpenPostgres(t.Context(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	recs := sample(4)
	for i, r := range recs {
		if err := stores[i%2].Write(t.Context(), []outcomes.Record{r}); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range stores {
		page, err := s.List(t.Context(), outcomes.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"req-003", "req-002", "req-001", "req-000"}, ids(page.Records)); diff != "" {
			t.Errorf("replica %d lists (-want +got):\n%s", i, diff)
		}
	}
}

// TestStoreWriteOddText: text PostgreSQL's text type refuses (NUL,
// invalid UTF-8), in a client's model name or a model's answer, is
// stored cleaned, so that its batch is not refused (and retried) forever.
func TestStoreWriteOddText(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		r := sample(1)[0]
		r.Model, r.FirstText, r.CodesBefore = "llama\x00x", "a\xffb\x00c", []string{"CODE\x00"}
		if err := s.Write(t.Context(), []outcomes.Record{r}); err != nil {
			t.Fatalf("Write(odd text) = %v, want it stored", err)
		}
		page, err := s.List(t.Context(), outcomes.Query{})
		if err != nil || len(page.Records) != 1 {
			t.Fatalf("List = %d records, %v; want 1", len(page.Records), err)
		}
		if got := page.Records[0]; got.Model != "llamax" || got.FirstText != "a\uFFFDbc" {
			t.Errorf("stored model %q, first text %q; want %q, %q", got.Model, got.FirstText, "llamax", "a\uFFFDbc")
		}
	})
}
