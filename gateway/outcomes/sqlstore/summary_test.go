package sqlstore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// TestStoreSummary checks the counts /admin/stats reads, on both stores:
// groups with their sums, first-answer codes once per request, latency
// percentiles by nearest rank, the newest failures, and the window.
func TestStoreSummary(t *testing.T) {
	eachStore(t, func(t *testing.T, open opener) {
		s := open(t)
		recs := sample(12)
		for i := range recs {
			recs[i].LatencyMS = float64(i + 1)
		}
		if err := s.Write(t.Context(), recs); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			q    outcomes.SummaryQuery
			// groups are "status model n llm_calls" lines.
			groups   []string
			codes    map[string]int64
			latency  outcomes.LatencySummary
			failures []string
		}{
			{"everything", outcomes.SummaryQuery{},
				[]string{"failed llama3.2 3 3", "fallback qwen3 3 3", "repaired qwen3 3 3", "valid llama3.2 3 3"},
				map[string]int64{"SCHEMA_TYPE": 9, "MCQ_ANSWER_INDEX": 9},
				outcomes.LatencySummary{Samples: 12, P50: 6, P90: 11, P99: 12},
				[]string{"req-011", "req-010", "req-007", "req-006", "req-003", "req-002"}},
			{"since inclusive until exclusive", outcomes.SummaryQuery{Since: t0.Add(4 * time.Minute), Until: t0.Add(7 * time.Minute)},
				[]string{"failed llama3.2 1 0", "repaired qwen3 1 2", "valid llama3.2 1 1"},
				map[string]int64{"SCHEMA_TYPE": 2, "MCQ_ANSWER_INDEX": 2},
				outcomes.LatencySummary{Samples: 3, P50: 6, P90: 7, P99: 7},
				[]string{"req-006"}},
			{"empty window", outcomes.SummaryQuery{Since: t0.Add(-time.Hour), Until: t0},
				nil, map[string]int64{}, outcomes.LatencySummary{}, []string{}},
		}
		for _, tt := range tests {
			sum, err := s.Summary(t.Context(), tt.q)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			var groups []string
			for _, g := range sum.Groups {
				groups = append(groups, fmt.Sprintf("%s %s %d %d", g.Status, g.Model, g.N, g.LLMCalls))
			}
			codes := map[string]int64{}
			for _, c := range sum.Codes {
				codes[c.Code] += c.N
			}
			got := struct {
				Groups   []string
				Codes    map[string]int64
				Latency  outcomes.LatencySummary
				Failures []string
			}{slices.Sorted(slices.Values(groups)), codes, sum.Latency, ids(sum.Failures)}
			want := struct {
				Groups   []string
				Codes    map[string]int64
				Latency  outcomes.LatencySummary
				Failures []string
			}{tt.groups, tt.codes, tt.latency, tt.failures}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Summary(%s) (-want +got):\n%s", tt.name, diff)
			}
			if !sum.Oldest.Equal(t0) {
				t.Errorf("Summary(%s).Oldest = %v, want %v", tt.name, sum.Oldest, t0)
			}
		}
	})
}
