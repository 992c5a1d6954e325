// Package guardlog puts the guard's outcomes in the outcome store: it
// opens the store the configuration names, turns each guarded request's
// Event into a Record for the asynchronous Writer, counts the Writer's
// drops and failures for Prometheus, and serves GET /admin/outcomes and
// /admin/trends on the admin group.
//
// It is the one place that knows both the guard and the store, so that
// the outcomes package stays free of echo and the guard, and the gateway's
// wiring is a few lines.
package guardlog

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/contractgateway/gateway/gateway/debugstore"
	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/outcomes/sqlstore"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/repair"
)

// Options say which store to open and what to wire it to.
type Options struct {
	// SQLite is the path of the SQLite file; Postgres a DSN instead. With
	// neither, or with Disabled, no records are kept.
	SQLite, Postgres string
	Disabled         bool
	// Retention is how long records are kept. Zero means 168h; a negative
	// value keeps everything.
	Retention time.Duration
	// Spool is the path of the file that keeps what the database refuses
	// until it takes it; empty, or a file another process holds, means a
	// spool in memory. SpoolMaxBytes bounds it; zero means 256 MiB.
	Spool         string
	SpoolMaxBytes int64
	// Logger gets the store's outage warnings. Nil means slog.Default().
	Logger *slog.Logger
	// Registry, when set, gets the Writer's counters.
	Registry *prometheus.Registry
	// Debug, when set (debug_store: true), lends its redacted first and
	// final text to the records of repaired and failed requests. Without
	// it no record holds text.
	Debug *debugstore.Store
}

// openTimeout bounds opening the store and migrating its schema at start.
const openTimeout = 30 * time.Second

// closeTimeout bounds the last flush at shutdown.
const closeTimeout = 5 * time.Second

// Log is the outcome store of a running gateway. A nil *Log keeps nothing
// and its admin routes say that the store is off.
type Log struct {
	store outcomes.Store
	w     *outcomes.Writer
	debug *debugstore.Store
	// retention is the window /admin/stats counts by default; negative
	// for everything kept.
	retention time.Duration
	// log gets the store's errors that the admin routes do not send. Nil
	// means slog.Default().
	log *slog.Logger
}

// logger is where l logs, slog.Default() when Open was given no Logger
// (a Log built by hand in a test).
func (l *Log) logger() *slog.Logger {
	if l.log == nil {
		return slog.Default()
	}
	return l.log
}

// Open opens the store o names, migrates it and starts its Writer. It
// returns nil (and no error) when o names no store.
func Open(o Options) (*Log, error) {
	if o.Disabled || (o.SQLite == "" && o.Postgres == "") {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var store outcomes.Store
	var err error
	down := false
	if o.Postgres != "" {
		store, err = sqlstore.OpenPostgres(ctx, o.Postgres)
		if err != nil && store != nil {
			// Replicas restarting during a database outage still start:
			// the store connects and migrates once the database is back.
			o.Logger.Warn("outcomes: PostgreSQL is unreachable at start; outcome records are kept in the spool until it is back",
				"error", err.Error())
			err, down = nil, true
		}
	} else {
		store, err = sqlstore.OpenSQLite(ctx, o.SQLite)
	}
	if err != nil {
		return nil, err
	}
	if o.Retention == 0 {
		o.Retention = outcomes.DefaultRetention
	}
	l := &Log{store: store, debug: o.Debug, retention: o.Retention, log: o.Logger,
		w: outcomes.NewWriter(store, outcomes.WriterConfig{Retention: o.Retention, Logger: o.Logger, StartDown: down,
			Spool: openSpool(o)})}
	if o.Registry != nil {
		if err := l.register(o.Registry); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// openSpool opens o's spool file, or a spool in memory when o names none
// or the file cannot be used (another gateway holds it), with a warning.
func openSpool(o Options) *outcomes.Spool {
	if o.Spool != "" {
		sp, err := outcomes.OpenSpool(o.Spool, o.SpoolMaxBytes)
		if err == nil {
			return sp
		}
		o.Logger.Warn("outcomes: the spool file cannot be used; records the database refuses are kept in memory, and lost if the gateway stops before it is back (set outcomes.spool to a file of this gateway's own)",
			"error", err.Error())
	}
	return outcomes.NewMemorySpool(o.SpoolMaxBytes)
}

func (l *Log) register(reg *prometheus.Registry) error {
	counters := []struct {
		name, help string
		n          func() uint64
	}{
		{"gateway_outcomes_written_total", "Outcome records written to the outcome store.", l.w.Written},
		{"gateway_outcomes_dropped_total", "Outcome records dropped because the outcome store's queue was full (the database slower than the requests).", l.w.Dropped},
		{"gateway_outcomes_failed_total", "Outcome records lost to the database's failures: a spool in memory still holding them at shutdown, or a spool file that could not be written.", l.w.Failed},
		{"gateway_outcomes_deleted_total", "Outcome records deleted by retention.", l.w.Deleted},
		{"gateway_outcomes_spooled_total", "Outcome records put in the spool because the database refused them (or records before them were waiting there).", l.w.Spooled},
		{"gateway_outcomes_replayed_total", "Spooled outcome records since written to the database.", l.w.Replayed},
		{"gateway_outcomes_spool_dropped_total", "Outcome records dropped because the spool was full (outcomes.spool_max_bytes).", l.w.SpoolDropped},
	}
	var errs []error
	for _, c := range counters {
		errs = append(errs, reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help},
			func() float64 { return float64(c.n()) })))
	}
	gauges := []struct {
		name, help string
		n          func() int64
	}{
		{"gateway_outcomes_spool_bytes", "Size of the outcome spool in bytes: records the database has not taken yet.", l.w.SpoolBytes},
		{"gateway_outcomes_spool_records", "Outcome records in the spool, waiting for the database.", l.w.SpoolRecords},
	}
	for _, g := range gauges {
		errs = append(errs, reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help},
			func() float64 { return float64(g.n()) })))
	}
	return errors.Join(errs...)
}

// Observe queues ev's record. It never blocks (the Writer drops when
// full), so it is called on the request's path.
func (l *Log) Observe(ev middleware.Event) {
	if l == nil {
		return
	}
	l.w.Add(l.record(ev, time.Now()))
}

// record is ev as a Record at now. Text comes only from the debug store,
// already redacted, and only for answers that were repaired or failed:
// the ones an operator opens.
func (l *Log) record(ev middleware.Event, now time.Time) outcomes.Record {
	r := outcomes.Record{ID: ev.RequestID, Time: now.UTC().Truncate(time.Microsecond), Route: ev.Route,
		Contract: ev.Contract, Model: ev.Model, Upstream: ev.Upstream, Key: ev.Key, Status: ev.Status,
		CodesBefore: ev.CodesBefore, CodesAfter: ev.CodesAfter, Rungs: ev.Rungs,
		LLMCalls: ev.LLMCalls, LocalFixes: ev.LocalFixes,
		Tokens: outcomes.Tokens{FirstPrompt: ev.FirstTokens.PromptTokens, FirstOutput: ev.FirstTokens.OutputTokens,
			RepairPrompt: ev.RepairTokens.PromptTokens, RepairOutput: ev.RepairTokens.OutputTokens},
		LatencyMS: float64(ev.Latency.Microseconds()) / 1000, Cache: ev.Cache}
	if l.debug != nil && (ev.Status == repair.StatusRepaired || ev.Status == repair.StatusFailed || ev.Status == repair.StatusFallback) {
		if d, ok := l.debug.Get(ev.RequestID); ok {
			r.FirstText, r.FinalText = d.First, d.Final
		}
	}
	return r
}

// Routes registers GET /admin/outcomes and /admin/trends on the admin
// group. With the store off they answer 404 saying so. Their errors are
// returned, for the gateway's one error writer.
func (l *Log) Routes(g *echo.Group) {
	if l == nil {
		off := func(echo.Context) error {
			return &apierr.Error{Code: http.StatusNotFound, Msg: "the outcome store is off (outcomes.disabled, or no state directory for its file)"}
		}
		g.GET("/admin/outcomes", off)
		g.GET("/admin/trends", off)
		return
	}
	g.GET("/admin/outcomes", serveJSON(outcomes.ListHandler(l.store)))
	g.GET("/admin/trends", serveJSON(outcomes.TrendsHandler(l.store, time.Now)))
}

// serveJSON serves h on echo: its value as JSON, its error returned to the
// gateway's error handler.
func serveJSON(h outcomes.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := h(c.Request())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// Close writes what is queued, and the spool if the database takes it,
// within a deadline, and closes the store.
func (l *Log) Close() {
	if l == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	l.w.Close(ctx)
	l.store.Close()
}

// Flush writes what is queued now and returns once it is written, so
// that a reader sees every request observed before.
func (l *Log) Flush(ctx context.Context) error {
	if l == nil {
		return nil
	}
	return l.w.Flush(ctx)
}
