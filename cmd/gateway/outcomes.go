package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/outcomes/sqlstore"
)

// outcomesDefault fills in the outcome store's default SQLite path when
// the configuration names no store: the state directory getenv knows. The
// gateway package opens only what the Config names, so that a Config built
// in code (or a test's) writes nothing into the user's home.
func outcomesDefault(cfg *config.Config, getenv func(string) string) {
	o := &cfg.Outcomes
	if !o.Disabled && o.SQLite == "" && o.Postgres == "" {
		o.SQLite = config.DefaultOutcomesSQLite(getenv)
	}
	if !o.Disabled && o.Spool == "" {
		o.Spool = config.DefaultOutcomesSpool(getenv)
	}
}

// outcomesWhere says where the outcome store is, for the start-up log
// line; a DSN is not shown (it may hold a password).
func outcomesWhere(o config.Outcomes) string {
	switch {
	case o.Disabled:
		return "disabled"
	case o.Postgres != "":
		return "postgres"
	case o.SQLite != "":
		return o.SQLite
	}
	return "off (no state directory)"
}

// cmdOutcomes implements `gateway outcomes export --since T [--until T]
// --format jsonl|csv`: the records of the configured outcome store, newest
// first, for offline analysis.
func cmdOutcomes(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		return usageError("outcomes export --since TIME [--until TIME] [--format jsonl|csv] [--config FILE]")
	}
	fs := newFlagSet("outcomes export", stderr)
	path := fs.String("config", "", "YAML config `FILE` naming the store (default $"+config.EnvConfig+")")
	since := fs.String("since", "", "export records from `TIME` on (RFC 3339, or a duration back from now such as 24h); required")
	until := fs.String("until", "", "export records before `TIME` (RFC 3339 or a duration back from now); default now")
	format := fs.String("format", "jsonl", "jsonl (one JSON record a line) or csv")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("outcomes export takes no arguments, got %q", pos)
	}
	now := time.Now()
	var q outcomes.Query
	if *since == "" {
		return usageError("outcomes export: --since is required")
	}
	if q.Since, err = timeFlag("since", *since, now); err != nil {
		return err
	}
	if *until != "" {
		if q.Until, err = timeFlag("until", *until, now); err != nil {
			return err
		}
	}
	if *format != "jsonl" && *format != "csv" {
		return usageError("outcomes export: --format %q: want jsonl or csv", *format)
	}

	if *path == "" {
		*path = getenv(config.EnvConfig)
	}
	cfg := config.Default()
	if *path != "" {
		if cfg, err = config.Load(*path); err != nil {
			return &exitError{code: 2, err: err}
		}
	}
	if err := config.FromEnv(&cfg, getenv); err != nil {
		return &exitError{code: 2, err: err}
	}
	outcomesDefault(&cfg, getenv)
	store, err := openExisting(ctx, cfg.Outcomes)
	if err != nil {
		return err
	}
	defer store.Close()

	var write func(outcomes.Record) error
	var flush func() error
	switch *format {
	case "jsonl":
		enc := json.NewEncoder(stdout)
		write = func(r outcomes.Record) error { return enc.Encode(r) }
		flush = func() error { return nil }
	case "csv":
		cw := csv.NewWriter(stdout)
		cw.Write(csvHeader)
		write = func(r outcomes.Record) error { return cw.Write(csvRow(r)) }
		flush = func() error { cw.Flush(); return cw.Error() }
	}
	q.Limit = outcomes.MaxLimit
	for {
		page, err := store.List(ctx, q)
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			if err := write(r); err != nil {
				return err
			}
		}
		if page.Next == nil {
			return flush()
		}
		q.After = page.Next
	}
}

// openExisting opens the configured store for reading; a SQLite file that
// does not exist is an error rather than a new empty store.
func openExisting(ctx context.Context, o config.Outcomes) (outcomes.Store, error) {
	switch {
	case o.Disabled:
		return nil, usageError("the outcome store is disabled (outcomes.disabled)")
	case o.Postgres != "":
		s, err := sqlstore.OpenPostgres(ctx, o.Postgres)
		if err != nil && s != nil {
			s.Close()
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	case o.SQLite == "":
		return nil, usageError("no outcome store: set outcomes.sqlite, outcomes.postgres, $%s or $HOME", config.EnvOutcomesSQLite)
	}
	if _, err := os.Stat(o.SQLite); errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("no outcome store at %s (a gateway writes it once it has guarded a request)", o.SQLite)
	}
	return sqlstore.OpenSQLite(ctx, o.SQLite)
}

// timeFlag reads an RFC 3339 time, or a duration back from now ("24h").
func timeFlag(name, v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, usageError("outcomes export: --%s %q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (24h)", name, v)
	}
	return t, nil
}

var csvHeader = []string{"id", "time", "route", "contract", "model", "upstream", "key", "status", "codes_before", "codes_after",
	"rungs", "llm_calls", "local_fixes", "first_prompt_tokens", "first_output_tokens", "repair_prompt_tokens",
	"repair_output_tokens", "latency_ms", "cache", "first_text", "final_text"}

// csvRow is r in csvHeader's order; lists are space-separated (no code or
// rung holds a space). Every text cell goes through csvText: a request id
// is the client's X-Request-Id and a model name is the client's too.
func csvRow(r outcomes.Record) []string {
	n := strconv.Itoa
	t := csvText
	return []string{t(r.ID), r.Time.Format(time.RFC3339Nano), t(r.Route), t(r.Contract), t(r.Model), t(r.Upstream), t(r.Key), t(r.Status),
		t(strings.Join(r.CodesBefore, " ")), t(strings.Join(r.CodesAfter, " ")), t(strings.Join(r.Rungs, " ")),
		n(r.LLMCalls), n(r.LocalFixes), n(r.Tokens.FirstPrompt), n(r.Tokens.FirstOutput), n(r.Tokens.RepairPrompt),
		n(r.Tokens.RepairOutput), strconv.FormatFloat(r.LatencyMS, 'f', -1, 64), t(r.Cache), t(r.FirstText), t(r.FinalText)}
}

// csvText keeps a spreadsheet from reading a text cell as a formula
// (OWASP's CSV injection rule): a cell that starts with =, +, -, @, a tab
// or a carriage return gets a leading single quote, which spreadsheets
// show as text and do not evaluate. Quotes and separators inside the cell
// are encoding/csv's to escape.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
