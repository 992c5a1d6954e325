package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// ErrDSN is OpenPostgres's error for a DSN that does not parse.
var ErrDSN = errors.New("outcomes: postgres: the DSN does not parse")

// OpenPostgres connects to the PostgreSQL at dsn (a postgres:// URL or
// key=value string) and migrates its schema. Every replica of a
// deployment opens the same database, so that each one's records are
// listed by all.
//
// A database that cannot be reached returns the store with the error: it
// connects and migrates on first use, so that a gateway starting while its
// database is down starts anyway and writes its records once the database
// is back. Only a DSN that does not parse (ErrDSN) returns no store.
func OpenPostgres(ctx context.Context, dsn string) (outcomes.Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included.
		return nil, ErrDSN
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("outcomes: postgres: %w", err)
	}
	s := &sqlStore{db: pgDB{pool}}
	return s, s.ready(ctx)
}

// pgDB is the backend over a pgx pool.
type pgDB struct{ pool *pgxpool.Pool }

func (d pgDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (d pgDB) query(ctx context.Context, q string, args ...any) (rows, error) {
	return d.pool.Query(ctx, q, args...)
}

// batch sends stmts in one round trip, inside one transaction. A data
// exception or an integrity violation (SQLSTATE classes 22 and 23) is the
// records' fault, and wraps outcomes.ErrRejected.
func (d pgDB) batch(ctx context.Context, stmts []stmt) error {
	err := d.sendBatch(ctx, stmts)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23")) {
		return fmt.Errorf("%w: %w", outcomes.ErrRejected, err)
	}
	return err
}

func (d pgDB) sendBatch(ctx context.Context, stmts []stmt) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, s := range stmts {
			b.Queue(s.q, s.args...)
		}
		br := tx.SendBatch(ctx, b)
		for range stmts {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
		}
		return br.Close()
	})
}

// sequence runs stmts one round trip each: a batch is prepared whole
// before it runs, so a statement could not use a table an earlier one in
// it creates.
func (d pgDB) sequence(ctx context.Context, stmts []stmt) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s.q, s.args...); err != nil {
				return err
			}
		}
		return nil
	})
}

func (pgDB) placeholder(n int) string { return "$" + strconv.Itoa(n) }

// migrationLock takes a transaction-scoped advisory lock: replicas that
// start at once migrate one after the other.
func (pgDB) migrationLock() string { return "SELECT pg_advisory_xact_lock(7232021)" }

func (d pgDB) close() error {
	d.pool.Close()
	return nil
}
