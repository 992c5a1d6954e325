package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// keyAndIndexes reads, from the database itself, a table's primary key
// columns in order and the names of its other indexes, sorted.
func keyAndIndexes(t *testing.T, s *sqlStore, table string) (key, indexes []string) {
	t.Helper()
	ctx := t.Context()
	var keyQ, idxQ string
	switch s.db.(type) {
	case sqliteDB:
		keyQ = `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`
		// The primary key's own index is SQLite's, with no SQL.
		idxQ = `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`
	case pgDB:
		keyQ = `SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`
		idxQ = `SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = $1::regclass AND NOT i.indisprimary`
	default:
		t.Fatalf("unknown backend %T", s.db)
	}
	read := func(q string) []string {
		r, err := s.db.query(ctx, q, table)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		out := []string{}
		for r.Next() {
			var name string
			if err := r.Scan(&name); err != nil {
				t.Fatal(err)
			}
			out = append(out, name)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	key, indexes = read(keyQ), read(idxQ)
	slices.Sort(indexes)
	return key, indexes
}

// TestStoreKeysInTimeOrder checks the schema a migrated store has: each
// table keyed by time first, so that a batch of records with random
// request ids appends to its key's B-tree instead of touching a page per
// record, and no index beyond those a query uses (each one costs every
// record a B-tree insert).
func TestStoreKeysInTimeOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t).(*sqlStore)
		tests := []struct {
			table       string
			wantKey     []string
			wantIndexes []string
		}{
			{"outcomes", []string{"ts", "id"}, []string{"outcomes_contract", "outcomes_model", "outcomes_status"}},
			{"outcome_codes", []string{"ts", "id", "stage", "code"}, []string{"outcome_codes_code"}},
		}
		for _, tt := range tests {
			key, indexes := keyAndIndexes(t, s, tt.table)
			if diff := cmp.Diff(tt.wantKey, key); diff != "" {
				t.Errorf("%s: primary key (-want +got):\n%s", tt.table, diff)
			}
			if diff := cmp.Diff(tt.wantIndexes, indexes); diff != "" {
				t.Errorf("%s: indexes (-want +got):\n%s", tt.table, diff)
			}
		}
	})
}

// TestStoreMigratesKeptRecords checks that a database written by a
// gateway of schema version 1 keeps every record, code and text through
// the migrations after it: listed, filtered, counted and summarised as
// before, and a record written again is still skipped.
func TestStoreMigratesKeptRecords(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		all := migrations
		migrations = all[:1]
		old := open(t)
		migrations = all
		recs := sample(12)
		recs[2].FirstText, recs[2].FinalText = "first", "final"
		if err := old.Write(t.Context(), recs); err != nil {
			t.Fatal(err)
		}
		read := func(s outcomes.Store) (outcomes.Page, outcomes.Page, []outcomes.Series, outcomes.Summary) {
			t.Helper()
			ctx := context.Background()
			list, err := s.List(ctx, outcomes.Query{})
			if err != nil {
				t.Fatal(err)
			}
			byCode, err := s.List(ctx, outcomes.Query{Code: "MCQ_ANSWER_INDEX", Status: "failed"})
			if err != nil {
				t.Fatal(err)
			}
			trends, err := s.Trends(ctx, outcomes.TrendQuery{By: outcomes.ByCode, Step: 24 * time.Hour, Since: t0, Until: t0.Add(24 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := s.Summary(ctx, outcomes.SummaryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			// A Summary's groups come in no order.
			slices.SortFunc(sum.Groups, func(a, b outcomes.Group) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			slices.SortFunc(sum.Codes, func(a, b outcomes.CodeCount) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			return list, byCode, trends, sum
		}
		wantList, wantByCode, wantTrends, wantSum := read(old)
		old.Close()

		s := open(t)
		if v, err := s.(*sqlStore).version(t.Context()); err != nil || v != SchemaVersion() {
			t.Fatalf("version after migrating = %d, %v; want %d", v, err, SchemaVersion())
		}
		gotList, gotByCode, gotTrends, gotSum := read(s)
		if len(gotList.Records) != len(recs) {
			t.Errorf("after migrating List lists %d records, want %d", len(gotList.Records), len(recs))
		}
		for _, c := range []struct {
			name      string
			want, got any
		}{
			{"List", wantList, gotList}, {"List(code, status)", wantByCode, gotByCode},
			{"Trends(by code)", wantTrends, gotTrends}, {"Summary", wantSum, gotSum},
		} {
			if diff := cmp.Diff(c.want, c.got); diff != "" {
				t.Errorf("%s after migrating (-before +after):\n%s", c.name, diff)
			}
		}
		// A retried batch of records already stored is skipped, as before.
		if err := s.Write(t.Context(), recs); err != nil {
			t.Fatal(err)
		}
		if again, _, _, _ := read(s); len(again.Records) != len(recs) {
			t.Errorf("after writing them again List lists %d records, want %d", len(again.Records), len(recs))
		}
	})
}
