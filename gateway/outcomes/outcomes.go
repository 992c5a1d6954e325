// Package outcomes is the central log of guarded requests: one Record per
// request, kept in a database (SQLite embedded by default, PostgreSQL shared
// by replicas) so that an operator can ask, days later and on any replica,
// which model broke which rule and show the failing requests.
//
// A Record never holds prompt or answer text unless the debug store is on,
// and then only the text the debug store kept after its own redaction. The
// Writer puts records in the database asynchronously: a slow or down
// database never slows or fails a request.
//
// This package holds what a record is, the Store interface and the
// queries it answers, the Writer with its spool and retention, and the
// /admin/outcomes and /admin/trends handlers; the Store over SQLite and
// PostgreSQL, with its schema and migrations, is outcomes/sqlstore.
package outcomes

import (
	"context"
	"errors"
	"time"
)

// Record is one guarded request's outcome.
type Record struct {
	// ID is the request id the client got in X-Request-Id.
	ID string `json:"id"`
	// Time is when the guarded request ended, in UTC with microsecond
	// precision (what both databases keep).
	Time     time.Time `json:"time"`
	Route    string    `json:"route"`
	Contract string    `json:"contract"`
	Model    string    `json:"model"`
	// Upstream is the URL of the Ollama that answered the last model
	// call (of a pool, the one it chose); empty for a cache hit.
	Upstream string `json:"upstream"`
	// Key is the name of the API key the request came with (never its
	// secret); empty without access keys.
	Key         string   `json:"key"`
	Status      string   `json:"status"`
	CodesBefore []string `json:"codes_before"`
	CodesAfter  []string `json:"codes_after"`
	Rungs       []string `json:"rungs"`
	LLMCalls    int      `json:"llm_calls"`
	LocalFixes  int      `json:"local_fixes"`
	Tokens      Tokens   `json:"tokens"`
	// LatencyMS is the time spent on the request, in milliseconds.
	LatencyMS float64 `json:"latency_ms"`
	// Cache is "hit", "miss" or "bypass".
	Cache string `json:"cache"`
	// FirstText and FinalText are the model's first answer and the answer
	// the client got, filled only when the debug store is on, as the debug
	// store kept them (redacted). Empty otherwise: prompts and answers may
	// hold personal data.
	FirstText string `json:"first_text,omitempty"`
	FinalText string `json:"final_text,omitempty"`
}

// Tokens are the model tokens one guarded request cost: its first answer
// and the repair ladder's calls.
type Tokens struct {
	FirstPrompt  int `json:"first_prompt"`
	FirstOutput  int `json:"first_output"`
	RepairPrompt int `json:"repair_prompt"`
	RepairOutput int `json:"repair_output"`
}

// Query selects records for List. The zero value lists the newest
// DefaultLimit records.
type Query struct {
	// Status, Contract and Model match exactly; empty matches any.
	Status, Contract, Model string
	// Code matches a record with that violation code before or after
	// repair; empty matches any.
	Code string
	// Since (inclusive) and Until (exclusive) bound the record's time; the
	// zero time leaves that side open.
	Since, Until time.Time
	// Limit is the page size. Zero means DefaultLimit; it is capped at
	// MaxLimit.
	Limit int
	// After continues a listing after the last record of the previous page
	// (the next_cursor of the page); nil starts at the newest.
	After *Cursor
}

// Bounds of a page of records.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Cursor is the position of a record in the listing order, newest first:
// by time, then by id. Keyset paging on it stays correct while records
// are written, unlike an offset.
type Cursor struct {
	Time time.Time
	ID   string
}

// Page is one page of records, newest first. Next is nil on the last page.
type Page struct {
	Records []Record
	Next    *Cursor
}

// Trend groupings and steps.
const (
	ByStatus   = "status"
	ByCode     = "code"
	ByModel    = "model"
	ByContract = "contract"
)

// Steps of a trend, by their names in GET /admin/trends.
var Steps = map[string]time.Duration{"1m": time.Minute, "1h": time.Hour, "1d": 24 * time.Hour}

// TrendQuery asks for counts of records over time.
type TrendQuery struct {
	// By is ByStatus, ByCode, ByModel or ByContract. ByCode counts the
	// requests whose first answer had the code (what the model got wrong,
	// before any repair).
	By string
	// Step is the width of a bucket: one of Steps' values.
	Step time.Duration
	// Since (inclusive) and Until (exclusive) bound the records counted.
	Since, Until time.Time
}

// Series is the counts of one key over time.
type Series struct {
	Key    string  `json:"key"`
	Points []Point `json:"points"`
}

// Point is the count of one bucket, which starts at T. Buckets without a
// record are left out (no zero-filling): a reader fills the gaps it
// draws.
type Point struct {
	T time.Time `json:"t"`
	N int64     `json:"n"`
}

// Store keeps records. Its implementations, sqlstore's SQLite and
// PostgreSQL stores, are safe for concurrent use.
type Store interface {
	// Write stores records; a record whose id and time are already stored
	// is skipped.
	Write(ctx context.Context, records []Record) error
	// List returns one page of the records q selects, newest first.
	List(ctx context.Context, q Query) (Page, error)
	// Trends counts the records of q by key and bucket, keys in order,
	// buckets oldest first.
	Trends(ctx context.Context, q TrendQuery) ([]Series, error)
	// Summary counts the records of q for /admin/stats.
	Summary(ctx context.Context, q SummaryQuery) (Summary, error)
	// DeleteBefore deletes the records older than t and returns how many.
	DeleteBefore(ctx context.Context, t time.Time) (int64, error)
	// Close releases the database.
	Close() error
}

// ErrRejected is wrapped by a Store's Write error when the database
// refused the records themselves (a value it cannot hold), not because it
// is unreachable: writing them again would fail again, so the Writer
// counts them as failed instead of keeping them for a retry.
var ErrRejected = errors.New("outcomes: the database rejected the records")

// ErrBadQuery is wrapped by the errors of a query that no store can run
// (an unknown grouping or step).
var ErrBadQuery = errors.New("bad query")
