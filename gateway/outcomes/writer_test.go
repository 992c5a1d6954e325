package outcomes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/internal/logcount"

	"github.com/contractgateway/gateway/internal/pgtest"
)

// blockingStore's Write reports that it started, then waits for release:
// a database that hangs.
type blockingStore struct {
	Store
	started chan struct{}
	release chan struct{}
	mu      sync.Mutex
	got     int
}

func (s *blockingStore) Write(_ context.Context, rs []Record) error {
	s.started <- struct{}{}
	<-s.release
	s.mu.Lock()
	s.got += len(rs)
	s.mu.Unlock()
	return nil
}

func (s *blockingStore) DeleteBefore(context.Context, time.Time) (int64, error) { return 0, nil }

// TestWriterAddNeverBlocks checks that while the database hangs, Add
// returns at once: the queue fills, then records are dropped and counted.
func TestWriterAddNeverBlocks(t *testing.T) {
	st := &blockingStore{started: make(chan struct{}), release: make(chan struct{})}
	w := NewWriter(st, WriterConfig{Queue: 2, Batch: 1, Interval: time.Hour})
	w.Add(Record{ID: "1"})
	<-st.started // the writer holds record 1 in a hanging write
	for _, id := range []string{"2", "3", "4", "5"} {
		w.Add(Record{ID: id}) // 2 and 3 fill the queue; 4 and 5 are dropped
	}
	if got := w.Dropped(); got != 2 {
		t.Errorf("Dropped() = %d, want 2", got)
	}
	go func() {
		for range st.started {
		}
	}()
	close(st.release)
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	close(st.started)
	if st.got != 3 || w.Written() != 3 {
		t.Errorf("written = %d (store got %d), want 3", w.Written(), st.got)
	}
	w.Add(Record{ID: "6"})
	if got := w.Dropped(); got != 3 {
		t.Errorf("Dropped() after Close = %d, want 3", got)
	}
}

// TestWriterCloseDeadline checks that Close gives up at its deadline when
// the database hangs, instead of holding the shutdown.
func TestWriterCloseDeadline(t *testing.T) {
	st := &blockingStore{started: make(chan struct{}, 1), release: make(chan struct{})}
	w := NewWriter(st, WriterConfig{Interval: time.Hour})
	w.Add(Record{ID: "1"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close(done ctx) = %v, want context.Canceled", err)
	}
	close(st.release)
}

// TestWriterBatches checks that records are written in batches of Batch.
func TestWriterBatches(t *testing.T) {
	s := mustOpen(t, func(ctx context.Context) (Store, error) { return OpenSQLite(ctx, t.TempDir()+"/o.db") })
	w := NewWriter(s, WriterConfig{Batch: 4, Interval: time.Hour, Retention: -1})
	for _, r := range sample(10) {
		w.Add(r)
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	page, err := s.List(t.Context(), Query{})
	if err != nil || len(page.Records) != 10 || w.Written() != 10 {
		t.Errorf("after Flush: %d listed (%v), Written() = %d; want 10", len(page.Records), err, w.Written())
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestWriterDatabaseDown stops a real PostgreSQL under a Writer with a
// spool file: Add never blocks, the refused batches go to the spool, one
// warning is logged for the whole outage and one line when the database
// is back, and once it is restarted every record is listed: none lost,
// none twice.
func TestWriterDatabaseDown(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	s := mustOpen(t, func(ctx context.Context) (Store, error) { return OpenPostgres(ctx, dsn) })
	logs := &logcount.Counter{}
	sp, err := OpenSpool(t.TempDir()+"/outcomes.spool", 0)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(s, WriterConfig{Interval: time.Hour, Retention: -1, Logger: slog.New(logs), Spool: sp, RetryMin: time.Hour})
	defer w.Close(t.Context())
	recs := sample(12)

	w.Add(recs[0])
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	for _, r := range recs[1:7] {
		w.Add(r)
		// Each outage batch fails on its own; the warning stays one.
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.SpoolRecords(); got != 6 {
		t.Errorf("SpoolRecords() while down = %d, want 6", got)
	}
	if got := logs.Count(slog.LevelWarn); got != 1 {
		t.Errorf("warnings while down = %d, want 1", got)
	}
	pg.Restart(t)
	for _, r := range recs[7:] {
		w.Add(r)
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := logs.Count(slog.LevelInfo); got != 1 {
		t.Errorf("recovered lines = %d, want 1", got)
	}
	if got := logs.Count(slog.LevelWarn); got != 1 {
		t.Errorf("warnings after recovery = %d, want 1", got)
	}
	page, err := s.List(t.Context(), Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != len(recs) || w.Written() != uint64(len(recs)) || w.Dropped() != 0 || w.Failed() != 0 {
		t.Errorf("after restart: %d listed, Written() = %d, Dropped() = %d, Failed() = %d; want %d, %d, 0, 0",
			len(page.Records), w.Written(), w.Dropped(), w.Failed(), len(recs), len(recs))
	}
	// The records added after the restart queue behind the spooled ones
	// until the next try, which the Flush makes: 6 + 5 replayed.
	if w.SpoolRecords() != 0 || w.SpoolBytes() != 0 || w.Replayed() != 11 {
		t.Errorf("spool after restart: %d records, %d bytes, %d replayed; want 0, 0, 11", w.SpoolRecords(), w.SpoolBytes(), w.Replayed())
	}
}

// TestWriterOutageUnderLoad runs 3,000 records (CG_OUTAGE_RECORDS) through
// a Writer on a real PostgreSQL stopped for the middle third of them, with
// short retries firing during the outage and batches forced by Flush:
// every record is listed once after the restart, and the spool is empty
// again.
func TestWriterOutageUnderLoad(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	s := mustOpen(t, func(ctx context.Context) (Store, error) { return OpenPostgres(ctx, dsn) })
	sp, err := OpenSpool(t.TempDir()+"/outcomes.spool", 0)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(s, WriterConfig{Batch: 64, Interval: time.Hour, Retention: -1, Logger: slog.New(&logcount.Counter{}),
		Spool: sp, RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond})
	// CG_OUTAGE_RECORDS sets how many records the run adds, a third of
	// them during the outage (360,000 in the outage is an hour at 100
	// guarded requests/s).
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("CG_OUTAGE_RECORDS")); err == nil && v >= 3 {
		n = v
	}
	var peak int64
	for i := range n {
		switch i {
		case n / 3:
			pg.Stop()
		case 2 * n / 3:
			peak = w.SpoolBytes()
			pg.Restart(t)
		}
		w.Add(Record{ID: fmt.Sprintf("load-%05d", i), Time: t0.Add(time.Duration(i) * time.Millisecond), Status: "valid",
			CodesBefore: []string{}, CodesAfter: []string{}, Rungs: []string{}})
		if i%100 == 99 {
			if err := w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got int
	q := Query{Limit: MaxLimit}
	seen := map[string]bool{}
	for {
		page, err := s.List(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			if seen[r.ID] {
				t.Errorf("record %s listed twice", r.ID)
			}
			seen[r.ID] = true
			got++
		}
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	t.Logf("added %d, listed %d, spooled %d, replayed %d, spool peak %d bytes, dropped %d+%d, failed %d",
		n, got, w.Spooled(), w.Replayed(), peak, w.Dropped(), w.SpoolDropped(), w.Failed())
	if got != n || w.Dropped() != 0 || w.SpoolDropped() != 0 || w.Failed() != 0 || w.SpoolRecords() != 0 {
		t.Errorf("listed %d of %d, dropped %d+%d, failed %d, %d left in the spool; want all, none lost",
			got, n, w.Dropped(), w.SpoolDropped(), w.Failed(), w.SpoolRecords())
	}
}
