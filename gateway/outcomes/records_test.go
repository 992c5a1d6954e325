package outcomes

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// OpenSQLite and OpenPostgres open the real stores of sqlstore for this
// package's tests of the Writer and the handlers. sqlstore imports this
// package, so only its external tests may import sqlstore: stores_test.go
// sets these before any test runs.
var OpenSQLite, OpenPostgres func(ctx context.Context, where string) (Store, error)

func mustOpen(t *testing.T, open func(context.Context) (Store, error)) Store {
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
func sample(n int) []Record {
	statuses := []string{"valid", "repaired", "failed", "fallback"}
	models := []string{"llama3.2", "qwen3"}
	var out []Record
	for i := range n {
		r := Record{
			ID: fmt.Sprintf("req-%03d", i), Time: t0.Add(time.Duration(i) * time.Minute), Route: "quiz",
			Contract: "mcq@1", Model: models[i%2], Key: "team-a", Status: statuses[i%4],
			CodesBefore: []string{}, CodesAfter: []string{}, Rungs: []string{},
			LLMCalls: i % 3, LocalFixes: i % 2, Tokens: Tokens{FirstPrompt: 10 + i, FirstOutput: 20, RepairPrompt: i, RepairOutput: 1},
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

func ids(rs []Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}
