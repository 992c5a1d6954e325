package sqlstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// TestInsertsChunks checks that a batch becomes multi-row INSERTs, each
// under both databases' parameter limits, that together bind every row
// once and in order.
func TestInsertsChunks(t *testing.T) {
	tests := []struct {
		name       string
		db         backend
		width, n   int
		wantStmts  int
		wantMarker string
	}{
		{"sqlite none", sqliteDB{}, 21, 0, 0, "?"},
		{"sqlite one row", sqliteDB{}, 21, 1, 1, "?"},
		{"sqlite one chunk", sqliteDB{}, 21, maxRowsPerInsert, 1, "?"},
		{"sqlite chunk and one", sqliteDB{}, 21, maxRowsPerInsert + 1, 2, "?"},
		{"sqlite codes", sqliteDB{}, 4, 3*maxRowsPerInsert + 5, 4, "?"},
		{"sqlite wide rows", sqliteDB{}, 3000, 30, 3, "?"},
		{"postgres batch", pgDB{}, 21, outcomes.DefaultBatch, (outcomes.DefaultBatch + maxRowsPerInsert - 1) / maxRowsPerInsert, "$"},
		{"postgres wide rows", pgDB{}, 5000, 15, 3, "$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sqlStore{db: tt.db}
			var want []any
			for i := range tt.n * tt.width {
				want = append(want, i)
			}
			stmts := s.inserts([]stmt{{q: "earlier"}}, "INSERT INTO t VALUES ", tt.width, slices.Clone(want))
			if stmts[0].q != "earlier" {
				t.Fatalf("inserts dropped the statements before it: %q", stmts[0].q)
			}
			stmts = stmts[1:]
			if len(stmts) != tt.wantStmts {
				t.Fatalf("%d rows of %d: %d statements, want %d", tt.n, tt.width, len(stmts), tt.wantStmts)
			}
			var got []any
			for _, st := range stmts {
				if len(st.args) > maxParams || len(st.args)%tt.width != 0 {
					t.Errorf("a statement binds %d parameters, want whole rows of %d and at most %d", len(st.args), tt.width, maxParams)
				}
				if n := strings.Count(st.q, tt.wantMarker); n != len(st.args) {
					t.Errorf("a statement has %d markers for %d arguments", n, len(st.args))
				}
				if tt.wantMarker == "$" && !strings.Contains(st.q, fmt.Sprintf("$%d)", len(st.args))) {
					t.Errorf("postgres markers do not end at $%d: %.80q…", len(st.args), st.q)
				}
				if !strings.HasPrefix(st.q, "INSERT INTO t VALUES (") || !strings.HasSuffix(st.q, ") ON CONFLICT DO NOTHING") {
					t.Errorf("statement %.60q… is not one multi-row INSERT skipping conflicts", st.q)
				}
				got = append(got, st.args...)
			}
			if !slices.Equal(got, want) {
				t.Errorf("the statements bind %d arguments, not the %d rows' in order", len(got), len(want))
			}
		})
	}
}

// TestStoreWriteManyChunks writes a batch of several INSERT chunks, with a
// record repeated inside it and one written before, and reads back each
// record once and each violation code once per record and stage.
func TestStoreWriteManyChunks(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		recs := sample(3*maxRowsPerInsert + 7)
		if err := s.Write(t.Context(), recs[5:6]); err != nil {
			t.Fatal(err)
		}
		batch := append(slices.Clone(recs), recs[0], recs[len(recs)-1])
		if err := s.Write(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
		var got []outcomes.Record
		q := outcomes.Query{Limit: 50}
		for {
			page, err := s.List(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Records...)
			if page.Next == nil {
				break
			}
			q.After = page.Next
		}
		want := slices.Clone(recs)
		slices.Reverse(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}

		series, err := s.Trends(t.Context(), outcomes.TrendQuery{By: outcomes.ByCode, Since: t0, Until: t0.Add(24 * time.Hour), Step: 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		wantCodes := map[string]int64{}
		for _, r := range recs {
			for _, c := range uniq(r.CodesBefore) {
				wantCodes[c]++
			}
		}
		gotCodes := map[string]int64{}
		for _, se := range series {
			for _, p := range se.Points {
				gotCodes[se.Key] += p.N
			}
		}
		if diff := cmp.Diff(wantCodes, gotCodes); diff != "" {
			t.Errorf("Trends by code (-want +got):\n%s", diff)
		}
		for _, tt := range []struct {
			code string
			want int
		}{{"MCQ_ANSWER_INDEX", int(wantCodes["MCQ_ANSWER_INDEX"])}, {"NO_SUCH", 0}} {
			page, err := s.List(t.Context(), outcomes.Query{Code: tt.code, Limit: outcomes.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Records) != tt.want {
				t.Errorf("List(code %s): %d records, want %d", tt.code, len(page.Records), tt.want)
			}
		}
	})
}
