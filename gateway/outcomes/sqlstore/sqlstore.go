// Package sqlstore is the outcome store over database/sql and pgx: the one
// outcomes.Store implementation, on an embedded SQLite file (OpenSQLite,
// modernc.org/sqlite, no cgo) or a PostgreSQL that replicas share
// (OpenPostgres), with the same SQL on both, the schema's versioned
// migrations, and the queries behind List, Trends and Summary.
//
// It sits apart from outcomes so that what a record is, how the Writer
// batches and spools records, and how the admin routes read them, can be
// read without the SQL, and so that those depend on the Store interface
// rather than on a database driver.
package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// backend is what the SQL store needs of a database driver: SQLite
// through database/sql, PostgreSQL through a pgx pool. The SQL itself is
// shared; only placeholders and transactions differ.
type backend interface {
	// exec runs one statement and returns the rows it affected.
	exec(ctx context.Context, q string, args ...any) (int64, error)
	// query runs one query.
	query(ctx context.Context, q string, args ...any) (rows, error)
	// batch runs stmts in one transaction. They may all be prepared
	// before the first runs, so none may use a table an earlier one
	// creates.
	batch(ctx context.Context, stmts []stmt) error
	// sequence runs stmts in one transaction one after the other, each
	// prepared once those before it ran: a migration's statements use
	// the tables its earlier ones create.
	sequence(ctx context.Context, stmts []stmt) error
	// placeholder is the n-th (1-based) parameter's marker.
	placeholder(n int) string
	// migrationLock serialises migrations across processes sharing the
	// database; "" when the database serialises writers itself.
	migrationLock() string
	close() error
}

// rows is the part of *sql.Rows and pgx.Rows the store reads.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type stmt struct {
	q    string
	args []any
}

// migration is one version of the schema. Its statements are idempotent
// (IF NOT EXISTS), so that two processes starting at once on one
// database, or a migration interrupted before its version was recorded,
// end in the same schema.
type migration struct {
	version int
	stmts   []string
}

// outcomeColumns and codeColumns are the columns of the two tables as
// version 1 created them; version 2 keeps them and changes only the
// primary keys. A later change of columns is a new migration, never an
// edit of these.
const (
	outcomeColumns = `
			id TEXT NOT NULL,
			ts BIGINT NOT NULL,
			route TEXT NOT NULL,
			contract TEXT NOT NULL,
			model TEXT NOT NULL,
			upstream TEXT NOT NULL,
			access_key TEXT NOT NULL,
			status TEXT NOT NULL,
			codes_before TEXT NOT NULL,
			codes_after TEXT NOT NULL,
			rungs TEXT NOT NULL,
			llm_calls INTEGER NOT NULL,
			local_fixes INTEGER NOT NULL,
			first_prompt_tokens INTEGER NOT NULL,
			first_output_tokens INTEGER NOT NULL,
			repair_prompt_tokens INTEGER NOT NULL,
			repair_output_tokens INTEGER NOT NULL,
			latency_ms DOUBLE PRECISION NOT NULL,
			cache TEXT NOT NULL,
			first_text TEXT NOT NULL,
			final_text TEXT NOT NULL,`
	codeColumns = `
			id TEXT NOT NULL,
			ts BIGINT NOT NULL,
			stage TEXT NOT NULL,
			code TEXT NOT NULL,`
)

// migrations are the schema's versions, in order; a released one is never
// edited, a change is a new version.
//
// Time is a BIGINT of microseconds since the epoch in UTC on both
// databases: the same SQL runs on both, buckets of a trend are integer
// arithmetic, and keyset comparisons are exact.
//
// Violation codes live in a child table, outcome_codes, one row per
// record, stage and code, besides the JSON lists in the record itself: a
// filter by code is then an indexed lookup instead of a LIKE over every
// row, and trends by code are one GROUP BY; the JSON lists keep each
// list's order (and repeats) for the listing.
var migrations = []migration{
	{version: 1, stmts: []string{
		`CREATE TABLE IF NOT EXISTS outcomes (` + outcomeColumns + `
			PRIMARY KEY (id, ts)
		)`,
		`CREATE INDEX IF NOT EXISTS outcomes_ts ON outcomes (ts, id)`,
		`CREATE INDEX IF NOT EXISTS outcomes_status ON outcomes (status, ts)`,
		`CREATE INDEX IF NOT EXISTS outcomes_contract ON outcomes (contract, ts)`,
		`CREATE INDEX IF NOT EXISTS outcomes_model ON outcomes (model, ts)`,
		`CREATE TABLE IF NOT EXISTS outcome_codes (` + codeColumns + `
			PRIMARY KEY (id, ts, stage, code)
		)`,
		`CREATE INDEX IF NOT EXISTS outcome_codes_code ON outcome_codes (code, ts)`,
		`CREATE INDEX IF NOT EXISTS outcome_codes_ts ON outcome_codes (ts)`,
	}},
	// Version 2 keys both tables by time first: (ts, id) and (ts, id,
	// stage, code) instead of (id, ts) and (id, ts, stage, code). The
	// same pairs are unique, so the same records are skipped as written
	// before, but a request id is random: keyed by it, every record of a
	// batch landed on another page of the key's B-tree, and each commit
	// rewrote about one page per record (most of a batch's cost in SQLite,
	// and growing with the table), where keyed by time a batch appends to
	// the last few pages. The time-first keys also serve every query the
	// indexes on (ts, id) and (ts) served, so those two go.
	//
	// Neither database can change a primary key in place with the same
	// SQL, so each table is copied into a new one in key order, dropped
	// and replaced. Run twice (two replicas starting at once on a database
	// of version 1), the second run copies the new table into another new
	// one and ends in the same schema.
	{version: 2, stmts: []string{
		`CREATE TABLE IF NOT EXISTS outcomes_v2 (` + outcomeColumns + `
			PRIMARY KEY (ts, id)
		)`,
		`INSERT INTO outcomes_v2 (` + recordColumns + `) SELECT ` + recordColumns + ` FROM outcomes ORDER BY ts, id`,
		`DROP TABLE outcomes`,
		`ALTER TABLE outcomes_v2 RENAME TO outcomes`,
		`CREATE INDEX IF NOT EXISTS outcomes_status ON outcomes (status, ts)`,
		`CREATE INDEX IF NOT EXISTS outcomes_contract ON outcomes (contract, ts)`,
		`CREATE INDEX IF NOT EXISTS outcomes_model ON outcomes (model, ts)`,
		`CREATE TABLE IF NOT EXISTS outcome_codes_v2 (` + codeColumns + `
			PRIMARY KEY (ts, id, stage, code)
		)`,
		`INSERT INTO outcome_codes_v2 (id, ts, stage, code) SELECT id, ts, stage, code FROM outcome_codes ORDER BY ts, id, stage, code`,
		`DROP TABLE outcome_codes`,
		`ALTER TABLE outcome_codes_v2 RENAME TO outcome_codes`,
		`CREATE INDEX IF NOT EXISTS outcome_codes_code ON outcome_codes (code, ts)`,
	}},
}

// SchemaVersion is the newest schema version this build knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// sqlStore is the Store over either database.
type sqlStore struct {
	db backend
	// mu guards migrated: a store opened while its database was down
	// migrates on first use.
	mu       sync.Mutex
	migrated bool
}

// ready migrates the schema unless that is done.
func (s *sqlStore) ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.migrated {
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.migrated = true
	return nil
}

// migrateTimeout bounds one migration's transaction. A migration that
// copies a table takes seconds per million records; it runs to its end
// whatever the caller's deadline (a batch's write, a gateway's start),
// since a transaction cut short is rolled back and would start over, and
// never finish, at every later call.
const migrateTimeout = 30 * time.Minute

// migrate brings the schema to the newest version, each version in one
// transaction that records it in schema_migrations.
func (s *sqlStore) migrate(ctx context.Context) error {
	// Even CREATE TABLE IF NOT EXISTS races in PostgreSQL: two replicas
	// starting at once take the lock for it too.
	if err := s.db.sequence(ctx, s.locked(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`)); err != nil {
		return fmt.Errorf("outcomes: schema_migrations: %w", err)
	}
	current, err := s.version(ctx)
	if err != nil {
		return err
	}
	if current > SchemaVersion() {
		return fmt.Errorf("outcomes: the database's schema is version %d, newer than this gateway's %d: upgrade the gateway", current, SchemaVersion())
	}
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		stmts := append(s.locked(m.stmts...), stmt{
			q:    `INSERT INTO schema_migrations (version, applied_at) VALUES (` + s.db.placeholder(1) + `, ` + s.db.placeholder(2) + `) ON CONFLICT DO NOTHING`,
			args: []any{m.version, time.Now().UnixMicro()},
		})
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), migrateTimeout)
		err := s.db.sequence(mctx, stmts)
		cancel()
		if err != nil {
			return fmt.Errorf("outcomes: migration %d: %w", m.version, err)
		}
	}
	return nil
}

// locked is qs after the backend's migration lock, if it has one.
func (s *sqlStore) locked(qs ...string) []stmt {
	var stmts []stmt
	if lock := s.db.migrationLock(); lock != "" {
		stmts = append(stmts, stmt{q: lock})
	}
	for _, q := range qs {
		stmts = append(stmts, stmt{q: q})
	}
	return stmts
}

// version is the newest version recorded in schema_migrations, 0 for none.
func (s *sqlStore) version(ctx context.Context) (int, error) {
	r, err := s.db.query(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`)
	if err != nil {
		return 0, fmt.Errorf("outcomes: schema version: %w", err)
	}
	defer r.Close()
	var v int64
	if r.Next() {
		if err := r.Scan(&v); err != nil {
			return 0, fmt.Errorf("outcomes: schema version: %w", err)
		}
	}
	return int(v), r.Err()
}

const recordColumns = `id, ts, route, contract, model, upstream, access_key, status, codes_before, codes_after, rungs,
	llm_calls, local_fixes, first_prompt_tokens, first_output_tokens, repair_prompt_tokens, repair_output_tokens,
	latency_ms, cache, first_text, final_text`

// Write implements outcomes.Store.
func (s *sqlStore) Write(ctx context.Context, records []outcomes.Record) error {
	if len(records) == 0 {
		return nil
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	// One flat slice of arguments per table, which the statements share
	// in slices of whole rows; the integers are int64 already, so that
	// database/sql need not convert each by reflection.
	recs := make([]any, 0, len(records)*recordWidth)
	var codes []any
	for _, r := range records {
		ts := r.Time.UnixMicro()
		recs = append(recs, text(r.ID), ts, text(r.Route), text(r.Contract), text(r.Model), text(r.Upstream), text(r.Key), text(r.Status),
			jsonList(r.CodesBefore), jsonList(r.CodesAfter), jsonList(r.Rungs), int64(r.LLMCalls), int64(r.LocalFixes),
			int64(r.Tokens.FirstPrompt), int64(r.Tokens.FirstOutput), int64(r.Tokens.RepairPrompt), int64(r.Tokens.RepairOutput),
			r.LatencyMS, text(r.Cache), text(r.FirstText), text(r.FinalText))
		for _, sc := range [...]struct {
			stage string
			codes []string
		}{{"before", r.CodesBefore}, {"after", r.CodesAfter}} {
			for _, c := range uniq(sc.codes) {
				codes = append(codes, text(r.ID), ts, sc.stage, text(c))
			}
		}
	}
	stmts := s.inserts(nil, `INSERT INTO outcomes (`+recordColumns+`) VALUES `, recordWidth, recs)
	stmts = s.inserts(stmts, `INSERT INTO outcome_codes (id, ts, stage, code) VALUES `, 4, codes)
	return s.db.batch(ctx, stmts)
}

// text is s as PostgreSQL's text takes it: valid UTF-8 (an invalid byte
// becomes U+FFFD) without NUL. A model's answer or a client's model name
// may hold either, and a batch the database refuses is retried until it
// takes it: one such record must not hold back the records after it.
func text(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// recordWidth is the number of recordColumns.
const recordWidth = 21

// maxParams is the most parameters one statement binds: SQLite's limit
// is 32,766 and PostgreSQL's 65,535, so one bound serves both.
const maxParams = 32766

// maxRowsPerInsert caps the rows of one multi-row INSERT below what
// maxParams allows: inside a transaction SQLite keeps a statement journal
// for a multi-row INSERT, which grows with the statement, so past a few
// dozen rows a longer statement measured no faster (BenchmarkSQLiteWrite).
const maxRowsPerInsert = 64

// inserts appends to stmts the multi-row INSERTs, prefix followed by
// VALUES tuples, that write args, rows of width values one after the
// other, in chunks each under maxParams: a batch is then a few statements
// instead of one per row, which is most of its cost. Every full chunk has
// the same text, built once, so that SQLite prepares it once per batch.
// Conflicting rows are skipped, as a single row's INSERT would skip them.
func (s *sqlStore) inserts(stmts []stmt, prefix string, width int, args []any) []stmt {
	per := min(maxParams/width, maxRowsPerInsert)
	var full string
	for len(args) >= width {
		n := min(per, len(args)/width)
		chunk := args[: n*width : n*width]
		args = args[len(chunk):]
		q := full
		if q == "" || n != per {
			q = s.insertText(prefix, width, n)
		}
		if n == per {
			full = q
		}
		stmts = append(stmts, stmt{q: q, args: chunk})
	}
	return stmts
}

// insertText is prefix followed by n tuples of width placeholders.
func (s *sqlStore) insertText(prefix string, width, n int) string {
	var q strings.Builder
	q.Grow(len(prefix) + n*width*6 + 32)
	q.WriteString(prefix)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for j := range width {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString(s.db.placeholder(i*width + j + 1))
		}
		q.WriteByte(')')
	}
	q.WriteString(` ON CONFLICT DO NOTHING`)
	return q.String()
}

// List implements outcomes.Store.
func (s *sqlStore) List(ctx context.Context, q outcomes.Query) (outcomes.Page, error) {
	if err := s.ready(ctx); err != nil {
		return outcomes.Page{}, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = outcomes.DefaultLimit
	}
	limit = min(limit, outcomes.MaxLimit)
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return s.db.placeholder(len(args))
	}
	for _, f := range []struct{ col, v string }{{"status", q.Status}, {"contract", q.Contract}, {"model", q.Model}} {
		if f.v != "" {
			where = append(where, f.col+" = "+arg(f.v))
		}
	}
	if q.Code != "" {
		where = append(where, `EXISTS (SELECT 1 FROM outcome_codes c WHERE c.id = outcomes.id AND c.ts = outcomes.ts AND c.code = `+arg(q.Code)+`)`)
	}
	if !q.Since.IsZero() {
		where = append(where, "ts >= "+arg(q.Since.UnixMicro()))
	}
	if !q.Until.IsZero() {
		where = append(where, "ts < "+arg(q.Until.UnixMicro()))
	}
	if q.After != nil {
		t := q.After.Time.UnixMicro()
		where = append(where, "(ts < "+arg(t)+" OR (ts = "+arg(t)+" AND id < "+arg(q.After.ID)+"))")
	}
	sqlq := `SELECT ` + recordColumns + ` FROM outcomes`
	if len(where) > 0 {
		sqlq += ` WHERE ` + strings.Join(where, " AND ")
	}
	sqlq += ` ORDER BY ts DESC, id DESC LIMIT ` + strconv.Itoa(limit+1)
	r, err := s.db.query(ctx, sqlq, args...)
	if err != nil {
		return outcomes.Page{}, fmt.Errorf("outcomes: list: %w", err)
	}
	defer r.Close()
	page := outcomes.Page{Records: []outcomes.Record{}}
	for r.Next() {
		rec, err := scanRecord(r)
		if err != nil {
			return outcomes.Page{}, fmt.Errorf("outcomes: list: %w", err)
		}
		page.Records = append(page.Records, rec)
	}
	if err := r.Err(); err != nil {
		return outcomes.Page{}, fmt.Errorf("outcomes: list: %w", err)
	}
	if len(page.Records) > limit {
		page.Records = page.Records[:limit]
		last := page.Records[limit-1]
		page.Next = &outcomes.Cursor{Time: last.Time, ID: last.ID}
	}
	return page, nil
}

// scanRecord reads one row of recordColumns.
func scanRecord(r rows) (outcomes.Record, error) {
	var rec outcomes.Record
	var ts int64
	var before, after, rungs string
	if err := r.Scan(&rec.ID, &ts, &rec.Route, &rec.Contract, &rec.Model, &rec.Upstream, &rec.Key, &rec.Status,
		&before, &after, &rungs, &rec.LLMCalls, &rec.LocalFixes,
		&rec.Tokens.FirstPrompt, &rec.Tokens.FirstOutput, &rec.Tokens.RepairPrompt, &rec.Tokens.RepairOutput,
		&rec.LatencyMS, &rec.Cache, &rec.FirstText, &rec.FinalText); err != nil {
		return outcomes.Record{}, err
	}
	rec.Time = time.UnixMicro(ts).UTC()
	rec.CodesBefore, rec.CodesAfter, rec.Rungs = parseList(before), parseList(after), parseList(rungs)
	return rec, nil
}

// Trends implements outcomes.Store.
func (s *sqlStore) Trends(ctx context.Context, q outcomes.TrendQuery) ([]outcomes.Series, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var col, from string
	switch q.By {
	case outcomes.ByStatus, outcomes.ByModel, outcomes.ByContract:
		col, from = q.By, "outcomes"
	case outcomes.ByCode:
		col, from = "code", "outcome_codes"
	default:
		return nil, fmt.Errorf("%w: by %q: want status, code, model or contract", outcomes.ErrBadQuery, q.By)
	}
	if !slices.Contains([]time.Duration{time.Minute, time.Hour, 24 * time.Hour}, q.Step) {
		return nil, fmt.Errorf("%w: step %v: want 1m, 1h or 1d", outcomes.ErrBadQuery, q.Step)
	}
	// The step is one of three constants, so it is written into the SQL:
	// a parameter would leave PostgreSQL to guess its type.
	step := strconv.FormatInt(q.Step.Microseconds(), 10)
	sqlq := `SELECT ` + col + `, (ts / ` + step + `) * ` + step + `, COUNT(*) FROM ` + from +
		` WHERE ts >= ` + s.db.placeholder(1) + ` AND ts < ` + s.db.placeholder(2)
	args := []any{q.Since.UnixMicro(), q.Until.UnixMicro()}
	if q.By == outcomes.ByCode {
		sqlq += ` AND stage = 'before'`
	}
	sqlq += ` GROUP BY 1, 2`
	r, err := s.db.query(ctx, sqlq, args...)
	if err != nil {
		return nil, fmt.Errorf("outcomes: trends: %w", err)
	}
	defer r.Close()
	byKey := map[string]*outcomes.Series{}
	for r.Next() {
		var key string
		var bucket, n int64
		if err := r.Scan(&key, &bucket, &n); err != nil {
			return nil, fmt.Errorf("outcomes: trends: %w", err)
		}
		se := byKey[key]
		if se == nil {
			se = &outcomes.Series{Key: key}
			byKey[key] = se
		}
		se.Points = append(se.Points, outcomes.Point{T: time.UnixMicro(bucket).UTC(), N: n})
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("outcomes: trends: %w", err)
	}
	// Sorted here rather than by ORDER BY: PostgreSQL sorts text by its
	// collation, SQLite by bytes; every store answers alike.
	out := make([]outcomes.Series, 0, len(byKey))
	for _, se := range byKey {
		slices.SortFunc(se.Points, func(a, b outcomes.Point) int { return a.T.Compare(b.T) })
		out = append(out, *se)
	}
	slices.SortFunc(out, func(a, b outcomes.Series) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}

// DeleteBefore implements outcomes.Store.
func (s *sqlStore) DeleteBefore(ctx context.Context, t time.Time) (int64, error) {
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	ts := t.UnixMicro()
	if _, err := s.db.exec(ctx, `DELETE FROM outcome_codes WHERE ts < `+s.db.placeholder(1), ts); err != nil {
		return 0, fmt.Errorf("outcomes: retention: %w", err)
	}
	n, err := s.db.exec(ctx, `DELETE FROM outcomes WHERE ts < `+s.db.placeholder(1), ts)
	if err != nil {
		return 0, fmt.Errorf("outcomes: retention: %w", err)
	}
	return n, nil
}

// Close implements outcomes.Store.
func (s *sqlStore) Close() error { return s.db.close() }

// jsonList is l as a JSON array; an empty or nil list, most records'
// codes and rungs, is "[]" without encoding.
func jsonList(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(l)
	return string(b)
}

func parseList(s string) []string {
	l := []string{}
	if json.Unmarshal([]byte(s), &l) != nil || l == nil {
		return []string{}
	}
	return l
}

func uniq(l []string) []string {
	out := slices.Clone(l)
	slices.Sort(out)
	return slices.Compact(out)
}
