package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// failureStatuses are the statuses a Summary lists as failures: what the
// client got was not the contract's answer. Literal here, not the
// guard's constants: the store imports nothing of the guard.
var failureStatuses = []string{"failed", "fallback", "error"}

// Summary implements outcomes.Store.
func (s *sqlStore) Summary(ctx context.Context, q outcomes.SummaryQuery) (outcomes.Summary, error) {
	if err := s.ready(ctx); err != nil {
		return outcomes.Summary{}, err
	}
	var out outcomes.Summary
	var err error
	if out.Groups, err = s.groups(ctx, q); err != nil {
		return outcomes.Summary{}, err
	}
	if out.Codes, err = s.codes(ctx, q); err != nil {
		return outcomes.Summary{}, err
	}
	for _, g := range out.Groups {
		out.Latency.Samples += g.N
	}
	if out.Latency, err = s.latency(ctx, q, out.Latency.Samples); err != nil {
		return outcomes.Summary{}, err
	}
	if out.Failures, err = s.failures(ctx, q); err != nil {
		return outcomes.Summary{}, err
	}
	if out.Oldest, err = s.oldest(ctx); err != nil {
		return outcomes.Summary{}, err
	}
	return out, nil
}

// window is q's WHERE condition on the time column col, with its
// arguments from the first placeholder on.
func (s *sqlStore) window(q outcomes.SummaryQuery, col string) (string, []any) {
	conds := []string{"1 = 1"}
	var args []any
	if !q.Since.IsZero() {
		args = append(args, q.Since.UnixMicro())
		conds = append(conds, col+" >= "+s.db.placeholder(len(args)))
	}
	if !q.Until.IsZero() {
		args = append(args, q.Until.UnixMicro())
		conds = append(conds, col+" < "+s.db.placeholder(len(args)))
	}
	return strings.Join(conds, " AND "), args
}

func (s *sqlStore) groups(ctx context.Context, q outcomes.SummaryQuery) ([]outcomes.Group, error) {
	where, args := s.window(q, "ts")
	return summaryRows(ctx, s.db, nil, func(r rows) (outcomes.Group, error) {
		var g outcomes.Group
		var rungs string
		var fp, fo, rp, ro int64
		if err := r.Scan(&g.Route, &g.Contract, &g.Model, &g.Status, &g.Cache, &rungs, &g.N,
			&g.NoLLMCalls, &g.LLMCalls, &g.LocalFixes, &fp, &fo, &rp, &ro); err != nil {
			return g, err
		}
		g.Rungs = parseList(rungs)
		g.Tokens = outcomes.Tokens{FirstPrompt: int(fp), FirstOutput: int(fo), RepairPrompt: int(rp), RepairOutput: int(ro)}
		return g, nil
	}, `SELECT route, contract, model, status, cache, rungs, COUNT(*),
		SUM(CASE WHEN llm_calls = 0 THEN 1 ELSE 0 END), SUM(llm_calls), SUM(local_fixes),
		SUM(first_prompt_tokens), SUM(first_output_tokens), SUM(repair_prompt_tokens), SUM(repair_output_tokens)
		FROM outcomes WHERE `+where+` GROUP BY route, contract, model, status, cache, rungs`, args...)
}

// summaryRows runs one query of a Summary and appends each row of its
// answer, read by scan, to out; any error is the summary's.
func summaryRows[T any](ctx context.Context, db backend, out []T, scan func(rows) (T, error), q string, args ...any) ([]T, error) {
	r, err := db.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("outcomes: summary: %w", err)
	}
	defer r.Close()
	for r.Next() {
		v, err := scan(r)
		if err != nil {
			return nil, fmt.Errorf("outcomes: summary: %w", err)
		}
		out = append(out, v)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("outcomes: summary: %w", err)
	}
	return out, nil
}

func (s *sqlStore) codes(ctx context.Context, q outcomes.SummaryQuery) ([]outcomes.CodeCount, error) {
	where, args := s.window(q, "c.ts")
	return summaryRows(ctx, s.db, nil, func(r rows) (outcomes.CodeCount, error) {
		var c outcomes.CodeCount
		err := r.Scan(&c.Route, &c.Contract, &c.Model, &c.Status, &c.Code, &c.N)
		return c, err
	}, `SELECT o.route, o.contract, o.model, o.status, c.code, COUNT(*)
		FROM outcome_codes c JOIN outcomes o ON o.id = c.id AND o.ts = c.ts
		WHERE c.stage = 'before' AND `+where+` GROUP BY o.route, o.contract, o.model, o.status, c.code`, args...)
}

// latency reads the percentiles by nearest rank, one ordered lookup each:
// the same SQL on both databases (SQLite has no percentile function), and
// exact over the window, unlike a sample.
func (s *sqlStore) latency(ctx context.Context, q outcomes.SummaryQuery, n int64) (outcomes.LatencySummary, error) {
	out := outcomes.LatencySummary{Samples: n}
	if n == 0 {
		return out, nil
	}
	where, args := s.window(q, "ts")
	for _, p := range []struct {
		pct int64
		dst *float64
	}{{50, &out.P50}, {90, &out.P90}, {99, &out.P99}} {
		rank := max((p.pct*n+99)/100-1, 0)
		r, err := s.db.query(ctx, `SELECT latency_ms FROM outcomes WHERE `+where+
			` ORDER BY latency_ms LIMIT 1 OFFSET `+strconv.FormatInt(rank, 10), args...)
		if err != nil {
			return outcomes.LatencySummary{}, fmt.Errorf("outcomes: summary: %w", err)
		}
		if r.Next() {
			err = r.Scan(p.dst)
		}
		if err == nil {
			err = r.Err()
		}
		r.Close()
		if err != nil {
			return outcomes.LatencySummary{}, fmt.Errorf("outcomes: summary: %w", err)
		}
	}
	return out, nil
}

func (s *sqlStore) failures(ctx context.Context, q outcomes.SummaryQuery) ([]outcomes.Record, error) {
	where, args := s.window(q, "ts")
	marks := make([]string, len(failureStatuses))
	for i, st := range failureStatuses {
		args = append(args, st)
		marks[i] = s.db.placeholder(len(args))
	}
	// An empty list, not nil: a summary without failures lists none.
	return summaryRows(ctx, s.db, []outcomes.Record{}, scanRecord, `SELECT `+recordColumns+` FROM outcomes WHERE `+where+
		` AND status IN (`+strings.Join(marks, ", ")+`) ORDER BY ts DESC, id DESC LIMIT `+strconv.Itoa(outcomes.SummaryFailures), args...)
}

func (s *sqlStore) oldest(ctx context.Context) (time.Time, error) {
	r, err := s.db.query(ctx, `SELECT COALESCE(MIN(ts), -1) FROM outcomes`)
	if err != nil {
		return time.Time{}, fmt.Errorf("outcomes: summary: %w", err)
	}
	defer r.Close()
	ts := int64(-1)
	if r.Next() {
		if err := r.Scan(&ts); err != nil {
			return time.Time{}, fmt.Errorf("outcomes: summary: %w", err)
		}
	}
	if err := r.Err(); err != nil || ts < 0 {
		return time.Time{}, err
	}
	return time.UnixMicro(ts).UTC(), nil
}
