package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// OpenSQLite opens (creating it and its directory when missing) the SQLite
// file at path and migrates its schema. The file is in WAL mode, so that
// the dashboard's reads do not wait for the writer, with a busy timeout,
// so that two processes on one file wait for each other instead of
// failing. Two settings make the Writer's batches cheaper: the statement
// journal of a multi-row INSERT stays in memory (temp_store), and the WAL
// is checkpointed every 4,000 pages (16 MiB) instead of 1,000, so that an
// index page rewritten by many batches is copied into the file once.
func OpenSQLite(ctx context.Context, path string) (outcomes.Store, error) {
	if path == "" {
		return nil, fmt.Errorf("outcomes: sqlite: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("outcomes: sqlite: %w", err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(4000)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("outcomes: sqlite %s: %w", path, err)
	}
	s := &sqlStore{db: sqliteDB{db}}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("outcomes: sqlite %s: %w", path, err)
	}
	if err := s.ready(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (sqlite %s)", err, path)
	}
	return s, nil
}

// sqliteDB is the backend over database/sql and modernc.org/sqlite.
type sqliteDB struct{ db *sql.DB }

func (d sqliteDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := d.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (d sqliteDB) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (d sqliteDB) batch(ctx context.Context, stmts []stmt) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	prepared := map[string]*sql.Stmt{}
	for _, s := range stmts {
		ps := prepared[s.q]
		if ps == nil {
			if ps, err = tx.PrepareContext(ctx, s.q); err != nil {
				tx.Rollback()
				return err
			}
			prepared[s.q] = ps
		}
		if _, err := ps.ExecContext(ctx, s.args...); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// sequence is batch: batch prepares each statement when it comes to it.
func (d sqliteDB) sequence(ctx context.Context, stmts []stmt) error { return d.batch(ctx, stmts) }

func (sqliteDB) placeholder(int) string { return "?" }

// migrationLock is empty: a transaction taken with _txlock=immediate
// already holds SQLite's one write lock.
func (sqliteDB) migrationLock() string { return "" }

func (d sqliteDB) close() error { return d.db.Close() }

// sqlRows adapts *sql.Rows to rows.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
