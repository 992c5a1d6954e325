package outcomes

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a WriterConfig.
const (
	DefaultQueue     = 10000
	DefaultBatch     = 1024
	DefaultInterval  = time.Second
	DefaultRetention = 168 * time.Hour
	// DefaultRetryMin and DefaultRetryMax bound the wait between two
	// tries of a database that refused a batch: it doubles from the first
	// to the second.
	DefaultRetryMin = time.Second
	DefaultRetryMax = 5 * time.Second
	// writeTimeout bounds one batch's write, so that a database that
	// hangs costs queued records, never a stuck writer.
	writeTimeout = 10 * time.Second
)

// WriterConfig configures a Writer. The zero value of every field means
// its default.
type WriterConfig struct {
	// Queue bounds the records waiting to be written. Zero means
	// DefaultQueue (10,000). A record added to a full queue is dropped
	// and counted.
	Queue int
	// Batch is the most records written in one transaction. Zero means
	// DefaultBatch (1,024). Under load a batch fills before Interval
	// passes, so Batch sets how often the database commits: every commit
	// costs the same besides its records (SQLite rewrites the last pages
	// of each index and may checkpoint), so fewer, larger ones leave the
	// requests more of the CPU; 1,024 records cost about 13% less CPU
	// time each than 256 did (measured per record over many batches on a
	// store of 100k records), and hold about 300 KiB.
	Batch int
	// Interval is the longest a record waits for its batch to fill. Zero
	// means DefaultInterval (1s).
	Interval time.Duration
	// Retention is how long records are kept: older ones are deleted in
	// the background, at start and every Retention/24 (at least every
	// minute, at most every hour). Zero means DefaultRetention (168h); a
	// negative value keeps everything.
	Retention time.Duration
	// Logger gets one warning when the database starts failing and one
	// line when it is back. Nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of retention. Nil means time.Now.
	Now func() time.Time
	// StartDown says the database already failed at start, and its
	// warning is logged: the outage's failures log nothing more, and its
	// end one line.
	StartDown bool
	// Spool keeps the batches the database refuses until it takes them;
	// the Writer closes it on Close. Nil means a spool in memory bounded
	// by DefaultSpoolMaxBytes.
	Spool *Spool
	// RetryMin and RetryMax bound the wait between two tries of a
	// refusing database, which doubles from one to the other. Zero means
	// DefaultRetryMin (1s) and DefaultRetryMax (5s): a database back is
	// written to within 5s, at the cost of a connection attempt every 5s
	// while it is down.
	RetryMin, RetryMax time.Duration
}

// Writer puts records in a Store asynchronously, in batches. Add never
// blocks: a request never waits for the database, and a slow or down one
// never makes a slower or failed request.
//
// A batch the database refuses is not lost: it goes to the spool, and so
// does every batch after it while the spool holds records, so that order
// is kept; the Writer tries the database again with a backoff and, once it
// takes a batch, replays the spool oldest first. A record replayed twice
// (its batch written but the answer lost) is stored once: the store skips
// an id and time it already holds. Only a full queue or a full spool
// drops records, counted.
type Writer struct {
	store  Store
	cfg    WriterConfig
	queue  chan Record
	flush  chan chan struct{}
	prune  chan chan struct{}
	stop   chan struct{}
	done   sync.WaitGroup
	closed atomic.Bool

	dropped, failed, written, deleted atomic.Uint64
	spooled, replayed, spoolDropped   atomic.Uint64
	spoolBytes, spoolRecords          atomic.Int64

	// The rest is the writer goroutine's own. down is set by the first
	// failure of an outage and cleared once the spool is written; full by
	// the first record the spool refused in it.
	down, full bool
	spool      *Spool
	// retry fires when the database is to be tried again; nil while the
	// spool is empty. backoff is the wait after the next failure.
	retry   *time.Timer
	backoff time.Duration
}

// NewWriter starts a Writer over store. Close stops it.
func NewWriter(store Store, cfg WriterConfig) *Writer {
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(DefaultRetryMax, cfg.RetryMin)
	}
	if cfg.Spool == nil {
		cfg.Spool = NewMemorySpool(0)
	}
	w := &Writer{store: store, cfg: cfg, queue: make(chan Record, cfg.Queue),
		flush: make(chan chan struct{}), prune: make(chan chan struct{}), stop: make(chan struct{}), down: cfg.StartDown,
		spool: cfg.Spool, backoff: cfg.RetryMin}
	w.gauge()
	if w.spool.Len() > 0 {
		// Records a previous process spooled: written first, at once.
		w.retry = time.NewTimer(0)
	}
	w.done.Add(1)
	go w.run()
	if cfg.Retention > 0 {
		w.done.Add(1)
		go w.retain()
	}
	return w
}

// Add queues r for writing. It never blocks: when the queue is full, or
// the Writer closed, r is dropped and counted.
func (w *Writer) Add(r Record) {
	if w.closed.Load() {
		w.dropped.Add(1)
		return
	}
	select {
	case w.queue <- r:
	default:
		w.dropped.Add(1)
	}
}

// Dropped counts the records Add dropped: queue full or Writer closed.
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Failed counts the records lost to failed writes: those a spool in
// memory still held at Close, and those a spool file could not take (a
// full disk).
func (w *Writer) Failed() uint64 { return w.failed.Load() }

// Spooled counts the records put in the spool because the database
// refused them or their elders were there.
func (w *Writer) Spooled() uint64 { return w.spooled.Load() }

// Replayed counts the spooled records since written to the database.
func (w *Writer) Replayed() uint64 { return w.replayed.Load() }

// SpoolDropped counts the records the spool refused, past its bound.
func (w *Writer) SpoolDropped() uint64 { return w.spoolDropped.Load() }

// SpoolBytes is the spool's size now, in bytes.
func (w *Writer) SpoolBytes() int64 { return w.spoolBytes.Load() }

// SpoolRecords is the number of records in the spool now.
func (w *Writer) SpoolRecords() int64 { return w.spoolRecords.Load() }

// Written counts the records written.
func (w *Writer) Written() uint64 { return w.written.Load() }

// Deleted counts the records retention deleted.
func (w *Writer) Deleted() uint64 { return w.deleted.Load() }

// Flush writes what is queued now, and tries the spool's records at once
// if it holds any, and returns once that is done (the database took them,
// or they are in the spool), or when ctx is done.
func (w *Writer) Flush(ctx context.Context) error {
	return w.ask(ctx, w.flush)
}

// Prune runs retention once now and returns once it is done, or when ctx
// is done. Without retention (negative) it does nothing.
func (w *Writer) Prune(ctx context.Context) error {
	if w.cfg.Retention < 0 {
		return nil
	}
	return w.ask(ctx, w.prune)
}

func (w *Writer) ask(ctx context.Context, ch chan chan struct{}) error {
	reply := make(chan struct{})
	select {
	case ch <- reply:
	case <-w.stop:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close writes what is queued, and what the spool holds if the database
// takes it, closes the spool and stops the Writer; records added after
// are dropped. A spool file keeps what is left for the next start. It
// waits for the last write until ctx is done, then returns ctx's error
// and leaves the write to finish on its own; it does not close the Store.
func (w *Writer) Close(ctx context.Context) error {
	if w.closed.Swap(true) {
		return nil
	}
	close(w.stop)
	finished := make(chan struct{})
	go func() {
		w.done.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the writer goroutine: it gathers records into batches and writes
// a batch when it is full, when Interval has passed, on Flush and on
// Close.
func (w *Writer) run() {
	defer w.done.Done()
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	batch := make([]Record, 0, w.cfg.Batch)
	write := func() {
		if len(batch) > 0 {
			w.write(batch)
			batch = batch[:0]
		}
	}
	add := func(r Record) {
		batch = append(batch, r)
		if len(batch) == w.cfg.Batch {
			write()
		}
	}
	drain := func() {
		for {
			select {
			case r := <-w.queue:
				add(r)
			default:
				write()
				return
			}
		}
	}
	for {
		var retry <-chan time.Time
		if w.retry != nil {
			retry = w.retry.C
		}
		select {
		case r := <-w.queue:
			add(r)
		case <-tick.C:
			write()
		case <-retry:
			w.retry = nil
			w.replay()
		case reply := <-w.flush:
			drain()
			w.replayNow()
			close(reply)
		case <-w.stop:
			drain()
			w.replayNow()
			w.closeSpool()
			return
		}
	}
}

// replayNow tries the spool at once, if it holds records.
func (w *Writer) replayNow() {
	if w.spool.Len() == 0 {
		return
	}
	if w.retry != nil {
		w.retry.Stop()
		w.retry = nil
	}
	w.replay()
}

// closeSpool closes the spool at Close. What a spool in memory still
// holds is lost, and counted.
func (w *Writer) closeSpool() {
	if w.retry != nil {
		w.retry.Stop()
	}
	if n := w.spool.Len(); n > 0 {
		if w.spool.Path() == "" {
			w.failed.Add(uint64(n))
			w.cfg.Logger.Warn("outcomes: the database is still failing at shutdown; the outcome records of the spool in memory are lost (counted in gateway_outcomes_failed_total)",
				"records", n)
		} else {
			w.cfg.Logger.Warn("outcomes: the database is still failing at shutdown; outcome records stay in the spool for the next start",
				"records", n, "spool", w.spool.Path())
		}
	}
	w.spool.Close()
}

// write writes one batch, or spools it: when the spool holds records
// (order is kept), or when the database refuses it.
func (w *Writer) write(batch []Record) {
	if w.spool.Len() == 0 && w.retry == nil {
		err := w.tryWrite(batch)
		if err == nil {
			w.written.Add(uint64(len(batch)))
			w.back()
			return
		}
		if errors.Is(err, ErrRejected) {
			w.rejected(err, len(batch))
			return
		}
		w.failing(err)
	}
	w.toSpool(batch)
	if w.retry == nil {
		w.retry = time.NewTimer(w.backoff)
	}
}

func (w *Writer) tryWrite(batch []Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return w.store.Write(ctx, batch)
}

// rejected counts a batch the database refused for its records' sake, and
// logs it.
func (w *Writer) rejected(err error, n int) {
	w.failed.Add(uint64(n))
	w.cfg.Logger.Warn("outcomes: the database rejected a batch of outcome records; they are lost (counted in gateway_outcomes_failed_total)",
		"error", err.Error(), "records", n)
}

// failing keeps the outage state: one warning when the database starts
// failing.
func (w *Writer) failing(err error) {
	if w.down {
		return
	}
	w.down = true
	where := "in memory"
	if p := w.spool.Path(); p != "" {
		where = p
	}
	w.cfg.Logger.Warn("outcomes: the database is failing; outcome records are kept in the spool and written once it is back (gateway_outcomes_spool_bytes)",
		"error", err.Error(), "spool", where)
}

// toSpool appends batch to the spool; what it refuses is counted and
// logged once an outage.
func (w *Writer) toSpool(batch []Record) {
	took, err := w.spool.Append(batch)
	w.spooled.Add(uint64(took))
	if lost := len(batch) - took; lost > 0 {
		if err != nil {
			w.failed.Add(uint64(lost))
			w.cfg.Logger.Warn("outcomes: the spool cannot be written; outcome records are lost (counted in gateway_outcomes_failed_total)",
				"error", err.Error(), "records", lost)
		} else {
			w.spoolDropped.Add(uint64(lost))
			if !w.full {
				w.full = true
				w.cfg.Logger.Warn("outcomes: the spool is full; outcome records are dropped until the database is back (counted in gateway_outcomes_spool_dropped_total)",
					"max_bytes", w.spool.max)
			}
		}
	}
	w.gauge()
}

// replay writes the spool to the database oldest first, a batch at a
// time, until it is empty or the database refuses a batch; then it waits
// twice as long before the next try.
func (w *Writer) replay() {
	for {
		recs, mark, err := w.spool.Peek(w.cfg.Batch)
		if err == nil && !mark.Empty() {
			if err = w.tryWrite(recs); errors.Is(err, ErrRejected) {
				// Never written, however often tried: let the rest
				// through.
				w.rejected(err, len(recs))
				err = w.spool.Advance(mark)
				w.gauge()
			} else if err == nil {
				err = w.spool.Advance(mark)
				w.written.Add(uint64(len(recs)))
				w.replayed.Add(uint64(len(recs)))
				w.gauge()
			}
		}
		if err != nil {
			w.failing(err)
			w.retry = time.NewTimer(w.backoff)
			w.backoff = min(2*w.backoff, w.cfg.RetryMax)
			return
		}
		if w.spool.Len() == 0 {
			break
		}
	}
	w.backoff = w.cfg.RetryMin
	w.full = false
	w.back()
}

// back ends the outage state, with one line.
func (w *Writer) back() {
	if w.down {
		w.down = false
		w.cfg.Logger.Info("outcomes: the database is back; outcome records are written again, the spooled ones included")
	}
}

// gauge publishes the spool's size for the metrics.
func (w *Writer) gauge() {
	w.spoolBytes.Store(w.spool.Bytes())
	w.spoolRecords.Store(int64(w.spool.Len()))
}

// retain deletes old records at start and then periodically, and on
// Prune.
func (w *Writer) retain() {
	defer w.done.Done()
	every := min(max(w.cfg.Retention/24, time.Minute), time.Hour)
	tick := time.NewTicker(every)
	defer tick.Stop()
	w.deleteOld()
	for {
		select {
		case <-tick.C:
			w.deleteOld()
		case reply := <-w.prune:
			w.deleteOld()
			close(reply)
		case <-w.stop:
			return
		}
	}
}

func (w *Writer) deleteOld() {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	// A failure is the outage the writes report; retention tries again
	// at its next tick.
	if n, err := w.store.DeleteBefore(ctx, w.cfg.Now().Add(-w.cfg.Retention)); err == nil {
		w.deleted.Add(uint64(n))
	}
}
