package outcomes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/contractgateway/gateway/internal/logcount"
)

// flakyStore is a database that can be down, or that writes a batch and
// then loses the answer; like the real stores it skips a record whose id
// and time it already holds.
type flakyStore struct {
	Store
	mu       sync.Mutex
	down     bool
	loseNext bool // the next write is stored but reported failed
	ids      []string
	seen     map[string]bool
}

var errDown = errors.New("connection refused")

func (s *flakyStore) Write(_ context.Context, rs []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errDown
	}
	for _, r := range rs {
		if r.ID == "poison" {
			return fmt.Errorf("%w: invalid byte sequence", ErrRejected)
		}
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for _, r := range rs {
		k := r.ID + "@" + r.Time.String()
		if !s.seen[k] {
			s.seen[k] = true
			s.ids = append(s.ids, r.ID)
		}
	}
	if s.loseNext {
		s.loseNext = false
		return errDown
	}
	return nil
}

func (s *flakyStore) DeleteBefore(context.Context, time.Time) (int64, error) { return 0, nil }

func (s *flakyStore) set(down, loseNext bool) {
	s.mu.Lock()
	s.down, s.loseNext = down, loseNext
	s.mu.Unlock()
}

func (s *flakyStore) stored() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.ids...)
}

// TestWriterOutageLosesNothing runs a Writer on a fake clock through a
// database outage of a minute under a steady trickle of records: the
// batches it refuses are retried with a backoff, without a Flush, and
// once it is back every record is stored once, in the order added, even
// though the first replayed batch's answer was lost after it was stored.
func TestWriterOutageLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flakyStore{}
		logs := &logcount.Counter{}
		sp, err := OpenSpool(t.TempDir()+"/o.spool", 0)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(st, WriterConfig{Batch: 4, Interval: time.Second, Retention: -1, Logger: slog.New(logs),
			Spool: sp, RetryMin: time.Second, RetryMax: 8 * time.Second})
		recs := sample(200)
		for i, r := range recs {
			switch i {
			case 20:
				st.set(true, false)
			case 140:
				st.set(false, true)
			}
			w.Add(r)
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got, want := st.stored(), ids(recs); !slices.Equal(got, want) {
			t.Errorf("stored %d records %v…, want %d in order", len(got), got[:min(len(got), 30)], len(want))
		}
		if w.SpoolRecords() != 0 || w.SpoolBytes() != 0 || w.Dropped() != 0 || w.SpoolDropped() != 0 || w.Failed() != 0 {
			t.Errorf("after the outage: spool %d records %d bytes, dropped %d+%d, failed %d; want all 0",
				w.SpoolRecords(), w.SpoolBytes(), w.Dropped(), w.SpoolDropped(), w.Failed())
		}
		if w.Spooled() == 0 || w.Replayed() < w.Spooled() {
			t.Errorf("Spooled() = %d, Replayed() = %d; want some spooled, all replayed", w.Spooled(), w.Replayed())
		}
		if got := logs.Count(slog.LevelWarn); got != 1 {
			t.Errorf("warnings = %d, want 1 for the outage", got)
		}
		if got := logs.Count(slog.LevelInfo); got != 1 {
			t.Errorf("recovered lines = %d, want 1", got)
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSpoolBound fills a spool past its bound during an outage: the
// records past it are counted as dropped and logged once, the ones it took
// are written once the database is back.
func TestSpoolBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := sample(10)
		one := NewMemorySpool(1 << 20)
		if _, err := one.Append(recs[:1]); err != nil {
			t.Fatal(err)
		}
		// Room for three records of sample's size, not four.
		sp := NewMemorySpool(3*one.Bytes() + one.Bytes()/2)
		st := &flakyStore{down: true}
		logs := &logcount.Counter{}
		w := NewWriter(st, WriterConfig{Batch: 5, Interval: time.Hour, Retention: -1, Logger: slog.New(logs), Spool: sp, RetryMin: time.Hour})
		for _, r := range recs {
			w.Add(r) // two batches of 5: the first fills the spool, the second is dropped whole
		}
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			got  int64
			want int64
		}{
			{"SpoolRecords()", w.SpoolRecords(), 3},
			{"SpoolDropped()", int64(w.SpoolDropped()), 7},
			{"warnings", int64(logs.Count(slog.LevelWarn)), 2}, // the outage, the full spool
		}
		for _, tt := range tests {
			if tt.got != tt.want {
				t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
			}
		}
		if w.SpoolBytes() > sp.max {
			t.Errorf("SpoolBytes() = %d, over the bound %d", w.SpoolBytes(), sp.max)
		}
		st.set(false, false)
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, want := st.stored(), ids(recs[:3]); !slices.Equal(got, want) {
			t.Errorf("stored %v, want %v", got, want)
		}
	})
}

// TestSpoolSurvivesRestart closes a Writer while the database is down:
// its records stay in the spool file (a last line cut short by a kill is
// cut off), and the next Writer on that file writes them at start.
func TestSpoolSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := t.TempDir() + "/o.spool"
		recs := sample(6)
		st := &flakyStore{down: true}
		sp, err := OpenSpool(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := OpenSpool(path, 0); !errors.Is(err, ErrSpoolLocked) {
			t.Errorf("OpenSpool of a spool in use = %v, want ErrSpoolLocked", err)
		}
		w := NewWriter(st, WriterConfig{Interval: time.Hour, Retention: -1, Logger: slog.New(&logcount.Counter{}), Spool: sp})
		for _, r := range recs {
			w.Add(r)
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if w.Failed() != 0 {
			t.Errorf("Failed() = %d with a spool file, want 0", w.Failed())
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"id":"cut-sho`)
		f.Close()

		st.set(false, false)
		sp, err = OpenSpool(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Len() != len(recs) {
			t.Errorf("reopened spool holds %d records, want %d", sp.Len(), len(recs))
		}
		w = NewWriter(st, WriterConfig{Interval: time.Hour, Retention: -1, Logger: slog.New(&logcount.Counter{}), Spool: sp})
		synctest.Wait()
		if got, want := st.stored(), ids(recs); !slices.Equal(got, want) {
			t.Errorf("stored after restart %v, want %v", got, want)
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
			t.Errorf("spool file after replay: %v, %v; want empty", fi.Size(), err)
		}
	})
}

// TestWriterCloseWritesSpool: a database back before the shutdown gets the
// spooled records at Close, without waiting for the next try.
func TestWriterCloseWritesSpool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &flakyStore{down: true}
		w := NewWriter(st, WriterConfig{Interval: time.Hour, Retention: -1, Logger: slog.New(&logcount.Counter{}), RetryMin: time.Hour})
		recs := sample(5)
		for _, r := range recs[:3] {
			w.Add(r)
		}
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		st.set(false, false)
		for _, r := range recs[3:] {
			w.Add(r)
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got, want := st.stored(), ids(recs); !slices.Equal(got, want) {
			t.Errorf("stored after Close %v, want %v", got, want)
		}
	})
}

// FuzzSpoolOpen opens a spool file of any content: it never panics, and
// what Peek reads is what Len counts.
func FuzzSpoolOpen(f *testing.F) {
	sp := NewMemorySpool(0)
	sp.Append(sample(3))
	f.Add(sp.mem)
	f.Add([]byte("{\"id\":\"a\"}\nnot json\n{\"id\""))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := t.TempDir() + "/s"
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenSpool(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := s.Len()
		_, m, err := s.Peek(n + 1)
		if err != nil || m.lines != n {
			t.Fatalf("Peek read %d lines (%v), Len() = %d", m.lines, err, n)
		}
		if err := s.Advance(m); err != nil || s.Len() != 0 || s.Bytes() != 0 {
			t.Fatalf("after Advance: %d records, %d bytes, %v", s.Len(), s.Bytes(), err)
		}
	})
}

// TestWriterRejectedBatch: a batch the database refuses for its records'
// sake (not an outage) is counted as failed and logged, and the records
// after it are written, whether it came straight or from the spool.
func TestWriterRejectedBatch(t *testing.T) {
	tests := []struct {
		name       string
		downFirst  bool
		wantFailed uint64
	}{
		{"written straight", false, 1},
		{"replayed from the spool", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &flakyStore{down: tt.downFirst}
				logs := &logcount.Counter{}
				w := NewWriter(st, WriterConfig{Batch: 1, Interval: time.Hour, Retention: -1, Logger: slog.New(logs), RetryMin: time.Hour})
				for _, id := range []string{"a", "poison", "b"} {
					w.Add(Record{ID: id})
				}
				if err := w.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				st.set(false, false)
				w.Add(Record{ID: "c"})
				if err := w.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
				if got, want := st.stored(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
					t.Errorf("stored %v, want %v", got, want)
				}
				if w.Failed() != tt.wantFailed || w.SpoolRecords() != 0 {
					t.Errorf("Failed() = %d, SpoolRecords() = %d; want %d, 0", w.Failed(), w.SpoolRecords(), tt.wantFailed)
				}
			})
		})
	}
}
