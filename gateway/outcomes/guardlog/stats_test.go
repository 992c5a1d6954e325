package guardlog

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/stats"
)

var statsNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// TestStatsWindow checks the window /admin/stats counts: the retention
// by default, everything when retention keeps everything, since and
// until when given, and a 400's ParamError for anything else.
func TestStatsWindow(t *testing.T) {
	until := statsNow.Add(time.Microsecond)
	tests := []struct {
		name       string
		log        *Log
		query      string
		since, end time.Time
		badParam   string
	}{
		{"retention", &Log{retention: 168 * time.Hour}, "", until.Add(-168 * time.Hour), until, ""},
		{"keep everything", &Log{retention: -1}, "", time.Time{}, until, ""},
		{"since", &Log{retention: time.Hour}, "since=2026-03-01T00:00:00Z", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), until, ""},
		{"since and until", &Log{retention: time.Hour}, "since=2026-03-01T00:00:00Z&until=2026-03-02T00:00:00%2B01:00",
			time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC), ""},
		{"until before since", &Log{retention: time.Hour}, "since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z", time.Time{}, time.Time{}, "since"},
		{"not a time", &Log{retention: time.Hour}, "until=tomorrow", time.Time{}, time.Time{}, "until"},
		{"twice", &Log{retention: time.Hour}, "since=2026-03-01T00:00:00Z&since=2026-03-01T00:00:00Z", time.Time{}, time.Time{}, "since"},
		{"unknown", &Log{retention: time.Hour}, "window=1h", time.Time{}, time.Time{}, "window"},
		{"no store", nil, "", time.Time{}, time.Time{}, ""},
		{"no store, since", nil, "since=2026-03-01T00:00:00Z", time.Time{}, time.Time{}, "since"},
	}
	for _, tt := range tests {
		v, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		since, end, err := tt.log.statsWindow(v, statsNow)
		var pe *outcomes.ParamError
		switch {
		case tt.badParam != "":
			if !errors.As(err, &pe) || pe.Param != tt.badParam {
				t.Errorf("%s: statsWindow(%q) = %v, want a ParamError of %s", tt.name, tt.query, err, tt.badParam)
			}
		case err != nil || !since.Equal(tt.since) || !end.Equal(tt.end):
			t.Errorf("%s: statsWindow(%q) = %v, %v, %v; want %v, %v", tt.name, tt.query, since, end, err, tt.since, tt.end)
		}
	}
}

// FuzzStatsWindow checks that any since and until give a window that
// ends after it starts, or a ParamError.
func FuzzStatsWindow(f *testing.F) {
	f.Add("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z")
	f.Add("", "2026-03-02T00:00:00.123456789+05:30")
	f.Add("9999-12-31T23:59:59Z", "")
	f.Add("yesterday", "")
	f.Fuzz(func(t *testing.T, since, until string) {
		v := url.Values{}
		if since != "" {
			v.Set("since", since)
		}
		if until != "" {
			v.Set("until", until)
		}
		s, u, err := (&Log{retention: time.Hour}).statsWindow(v, statsNow)
		var pe *outcomes.ParamError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("statsWindow(%q, %q) = %v, want a ParamError", since, until, err)
		}
		if err == nil && !s.IsZero() && !s.Before(u) {
			t.Fatalf("statsWindow(%q, %q) = %v to %v: empty window", since, until, s, u)
		}
	})
}

// TestReportOf checks the store's summary as /admin/stats reports it,
// with the process's labels: ad-hoc schemas count as "schema", an error
// has no model, a request without rungs shared another's answer, and a
// failure the process saw keeps its error text.
func TestReportOf(t *testing.T) {
	sum := outcomes.Summary{
		Groups: []outcomes.Group{
			{Route: "schema", Contract: "schema:ab12", Model: "m", Status: "valid", Cache: "miss", Rungs: []string{"first"}, N: 3},
			{Route: "quiz", Contract: "mcq@1", Model: "m", Status: "error", Cache: "bypass", Rungs: []string{}, N: 1},
			{Route: "quiz", Contract: "mcq@1", Model: "m", Status: "valid", Cache: "miss", Rungs: []string{}, N: 2},
			{Route: "quiz", Contract: "mcq@1", Model: "m", Status: "repaired", Cache: "miss", Rungs: []string{"local"}, N: 4, NoLLMCalls: 4, LocalFixes: 5},
		},
		Codes:    []outcomes.CodeCount{{Route: "quiz", Contract: "mcq@1", Model: "m", Status: "error", Code: "X", N: 1}},
		Failures: []outcomes.Record{{ID: "e1", Route: "quiz", Contract: "mcq@1", Model: "m", Status: "error", CodesAfter: []string{}}},
	}
	proc := stats.Report{Failures: []stats.Failure{{RequestID: "e1", Error: "upstream down"}}}
	r := reportOf(sum, proc, statsNow.Add(-time.Hour), statsNow)
	got := struct {
		Counts   []stats.Count
		ByModel  map[string]int
		Rungs    map[string]int
		Calls    stats.Calls
		Failures []stats.Failure
	}{r.Counts, r.ByModel, r.Rungs, r.LLMCalls, r.Failures}
	want := struct {
		Counts   []stats.Count
		ByModel  map[string]int
		Rungs    map[string]int
		Calls    stats.Calls
		Failures []stats.Failure
	}{
		Counts: []stats.Count{
			{Contract: "mcq@1", Model: "", Status: "error", Count: 1},
			{Contract: "mcq@1", Model: "m", Status: "repaired", Count: 4},
			{Contract: "mcq@1", Model: "m", Status: "valid", Count: 2},
			{Contract: "schema", Model: "m", Status: "valid", Count: 3},
		},
		ByModel:  map[string]int{"": 1},
		Rungs:    map[string]int{"first": 3, "error": 1, "cache": 2, "local": 4},
		Calls:    stats.Calls{First: 8, Saved: 4},
		Failures: []stats.Failure{{RequestID: "e1", Contract: "mcq@1", Status: "error", Codes: []string{}, Error: "upstream down"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reportOf (-want +got):\n%s", diff)
	}
	if r.Source != "outcomes" || r.Requests != 10 || r.LocalFixes != 5 {
		t.Errorf("reportOf: source %q, requests %d, local fixes %d; want outcomes, 10, 5", r.Source, r.Requests, r.LocalFixes)
	}
}
