package guardlog

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/stats"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/repair"
)

// statsTimeout bounds the store's answer to /admin/stats: past it the
// report falls back to this process's counts rather than hang the page.
const statsTimeout = 10 * time.Second

// StatsReport returns the counts of GET /admin/stats for a request. With
// a store they are read from it, so that they survive restarts and span
// every replica writing to it: by default over the retention window
// (everything kept; the last 168h unless outcomes.retention says
// otherwise), or between the query's since and until (RFC 3339). What the
// store does not hold stays this process's: its uptime, and the error
// text of a failure it saw itself. A store that fails to answer gives
// this process's counts with store_error saying so; the store's error is
// logged, never sent. Without a store the counts are this process's since
// its start, as they always were, and since or until are refused. A
// refused parameter is a 400 naming it (outcomes.ClientError), returned
// for the gateway's one error writer.
func (l *Log) StatsReport(st *stats.Stats) func(*http.Request) (stats.Report, error) {
	return func(r *http.Request) (stats.Report, error) {
		proc := st.Report()
		since, until, err := l.statsWindow(r.URL.Query(), time.Now())
		if err != nil {
			return proc, outcomes.ClientError(err)
		}
		if l == nil {
			return proc, nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), statsTimeout)
		defer cancel()
		sum, err := l.store.Summary(ctx, outcomes.SummaryQuery{Since: since, Until: until})
		if err != nil {
			// The store's error may name its host, user or file: it goes
			// to the log, and the page only says where to read it.
			l.logger().Warn("outcomes: the store did not answer /admin/stats; its counts are this process's", "error", err.Error())
			proc.StoreError = storeUnanswered
			return proc, nil
		}
		return reportOf(sum, proc, since, until), nil
	}
}

// storeUnanswered is the store_error of /admin/stats when the store
// failed to answer; the store's own error is logged.
const storeUnanswered = "the outcome store did not answer; the counts are this process's, and the cause is in the gateway's log"

// statsWindow reads since and until of /admin/stats; any other parameter
// is an error, as on /admin/outcomes, so that a misspelt one is not
// silently ignored.
func (l *Log) statsWindow(v url.Values, now time.Time) (since, until time.Time, err error) {
	for name, vals := range v {
		if name != "since" && name != "until" {
			return since, until, &outcomes.ParamError{Param: name, Msg: "unknown parameter; want since or until"}
		}
		if l == nil {
			return since, until, &outcomes.ParamError{Param: name, Msg: "needs the outcome store (outcomes: in the config); without it the counts are this process's since its start"}
		}
		if len(vals) != 1 {
			return since, until, &outcomes.ParamError{Param: name, Msg: "given more than once"}
		}
		t, perr := time.Parse(time.RFC3339Nano, vals[0])
		if perr != nil {
			return since, until, &outcomes.ParamError{Param: name, Msg: fmt.Sprintf("%.64q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", vals[0])}
		}
		if name == "since" {
			since = t.UTC()
		} else {
			until = t.UTC()
		}
	}
	if l == nil {
		return since, until, nil
	}
	if until.IsZero() {
		until = now.UTC().Truncate(time.Microsecond).Add(time.Microsecond)
	}
	if since.IsZero() && l.retention > 0 {
		since = until.Add(-l.retention)
	}
	if !since.IsZero() && !since.Before(until) {
		return since, until, &outcomes.ParamError{Param: "since", Msg: "must be before until"}
	}
	return since, until, nil
}

// reportOf is the store's summary as the report /admin/stats gives, with
// the labels the process's counts use (ad-hoc schema contracts count as
// "schema", an error has no model).
func reportOf(sum outcomes.Summary, proc stats.Report, since, until time.Time) stats.Report {
	if since.IsZero() {
		since = sum.Oldest
		if since.IsZero() || since.After(until) {
			since = until
		}
	}
	r := stats.Report{Source: "outcomes", Since: since, Until: &until, UptimeSeconds: proc.UptimeSeconds,
		ByStatus: map[string]int{}, ByCode: map[string]int{}, ByModel: map[string]int{}, Rungs: map[string]int{}}
	label := func(name, contract, model, status string) (string, string) {
		if name == route.AdHoc {
			contract = route.AdHoc
		}
		if status == middleware.StatusError {
			model = ""
		}
		return contract, model
	}
	counts := map[stats.Count]int{}
	for _, g := range sum.Groups {
		n := int(g.N)
		contract, model := label(g.Route, g.Contract, g.Model, g.Status)
		counts[stats.Count{Contract: contract, Model: model, Status: g.Status}] += n
		r.Requests += n
		r.ByStatus[g.Status] += n
		ev := middleware.Event{Status: g.Status, Rungs: g.Rungs, Cache: g.Cache, CacheHit: g.Cache == "hit"}
		r.Rungs[stats.AcceptedRung(ev)] += n
		switch g.Cache {
		case "hit":
			r.Cache.Hit += n
		case "miss":
			r.Cache.Miss += n
		case "bypass":
			r.Cache.Bypass += n
		}
		// A request with no rungs that did not end in an error shared
		// another's answer (coalesced): no first call of its own.
		if g.Cache != "hit" && (len(g.Rungs) > 0 || g.Status == middleware.StatusError) {
			r.LLMCalls.First += n
		}
		r.LLMCalls.Repair += int(g.LLMCalls)
		if g.Status == repair.StatusRepaired && slices.Equal(g.Rungs, []string{"local"}) {
			r.LLMCalls.Saved += int(g.NoLLMCalls)
		}
		r.LocalFixes += int(g.LocalFixes)
		r.Tokens.FirstPrompt += g.Tokens.FirstPrompt
		r.Tokens.FirstOutput += g.Tokens.FirstOutput
		r.Tokens.RepairPrompt += g.Tokens.RepairPrompt
		r.Tokens.RepairOutput += g.Tokens.RepairOutput
	}
	for k, n := range counts {
		r.Counts = append(r.Counts, stats.Count{Contract: k.Contract, Model: k.Model, Status: k.Status, Count: n})
	}
	violations := map[stats.Count]int{}
	for _, c := range sum.Codes {
		contract, model := label(c.Route, c.Contract, c.Model, c.Status)
		violations[stats.Count{Contract: contract, Model: model, Code: c.Code, Status: c.Status}] += int(c.N)
		r.ByCode[c.Code] += int(c.N)
		r.ByModel[model] += int(c.N)
	}
	for k, n := range violations {
		r.Violations = append(r.Violations, stats.Count{Contract: k.Contract, Model: k.Model, Code: k.Code, Status: k.Status, Count: n})
	}
	r.Latency = stats.Latency{Samples: int(sum.Latency.Samples), P50: sum.Latency.P50, P90: sum.Latency.P90, P99: sum.Latency.P99}
	// The process's failures carry their error text, which the store does
	// not keep.
	errText := map[string]string{}
	for _, f := range proc.Failures {
		errText[f.RequestID] = f.Error
	}
	// Oldest first, as the process lists them.
	for _, rec := range slices.Backward(sum.Failures) {
		contract, model := label(rec.Route, rec.Contract, rec.Model, rec.Status)
		r.Failures = append(r.Failures, stats.Failure{RequestID: rec.ID, Time: rec.Time, Contract: contract, Model: model,
			Status: rec.Status, Codes: rec.CodesAfter, Error: errText[rec.ID]})
	}
	r.Finish()
	return r
}
