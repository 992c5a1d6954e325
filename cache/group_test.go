package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestGroupCoalesces: N identical concurrent calls share one run and its
// value.
func TestGroupCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string]
		var runs atomic.Int32
		release := make(chan struct{})
		fn := func(ctx context.Context) (string, error) {
			runs.Add(1)
			<-release
			return "answer", nil
		}
		const n = 8
		var wg sync.WaitGroup
		results := make([]string, n)
		shared := make([]bool, n)
		for i := range n {
			wg.Go(func() { results[i], shared[i], _ = g.Do(context.Background(), key("k"), fn) })
		}
		synctest.Wait() // every caller is waiting on the one run
		close(release)
		wg.Wait()
		if runs.Load() != 1 {
			t.Errorf("fn ran %d times, want 1", runs.Load())
		}
		nShared := 0
		for i := range n {
			if results[i] != "answer" {
				t.Errorf("caller %d got %q", i, results[i])
			}
			if shared[i] {
				nShared++
			}
		}
		if nShared != n-1 || g.Coalesced() != n-1 {
			t.Errorf("%d shared, Coalesced() = %d; want %d", nShared, g.Coalesced(), n-1)
		}
		// The run is over: the next call runs fn again.
		g.Do(context.Background(), key("k"), func(context.Context) (string, error) { runs.Add(1); return "", nil })
		if runs.Load() != 2 {
			t.Errorf("a call after the run did not run fn")
		}
	})
}

// TestGroupWaiterLeaves: a caller that leaves does not cancel the run for
// the others; when the last one leaves, the run is cancelled.
func TestGroupWaiterLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string]
		runCtx := make(chan context.Context, 1)
		release := make(chan struct{})
		fn := func(ctx context.Context) (string, error) {
			runCtx <- ctx
			select {
			case <-release:
				return "answer", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		ctx1, cancel1 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { _, _, err := g.Do(ctx1, key("k"), fn); errs <- err }()
		synctest.Wait()
		go func() { _, _, err := g.Do(ctx2, key("k"), fn); errs <- err }()
		synctest.Wait()
		rc := <-runCtx

		cancel1()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("the leaving caller got %v, want context.Canceled", err)
		}
		synctest.Wait()
		if rc.Err() != nil {
			t.Fatal("the run was cancelled while a caller still waited")
		}
		cancel2()
		<-errs
		synctest.Wait()
		if rc.Err() == nil {
			t.Fatal("the run goes on after the last caller left")
		}
	})
}

func TestGroupSharesErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[int]
		boom := errors.New("boom")
		release := make(chan struct{})
		fn := func(context.Context) (int, error) { <-release; return 0, boom }
		errs := make(chan error, 3)
		for range 3 {
			go func() { _, _, err := g.Do(context.Background(), key("k"), fn); errs <- err }()
		}
		synctest.Wait()
		close(release)
		for range 3 {
			if err := <-errs; !errors.Is(err, boom) {
				t.Errorf("caller got %v, want boom", err)
			}
		}
	})
}

// TestGroupAfterAllLeft: a call that comes after every caller of a run
// left gets a run of its own, not the cancelled one's error.
func TestGroupAfterAllLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string]
		stuck := make(chan struct{})
		ctx1, cancel1 := context.WithCancel(context.Background())
		done1 := make(chan struct{})
		go func() {
			g.Do(ctx1, key("k"), func(ctx context.Context) (string, error) { <-stuck; return "old", nil })
			close(done1)
		}()
		synctest.Wait()
		cancel1()
		<-done1
		v, shared, err := g.Do(context.Background(), key("k"), func(context.Context) (string, error) { return "new", nil })
		if v != "new" || shared || err != nil {
			t.Errorf("Do after all left = %q, %v, %v; want a fresh run", v, shared, err)
		}
		close(stuck)
	})
}

// TestDoSharedJoinsTheRunsValue: every caller of one run gets the value
// its first caller's newShare made, before the run ends; a caller after
// every caller of a run left gets the value of its own, fresh run.
func TestDoSharedJoinsTheRunsValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string]
		made := 0
		newShare := func() *[]string { made++; return &[]string{fmt.Sprint("share", made)} }
		release := make(chan struct{})
		fn := func(_ context.Context, s *[]string) (string, error) { <-release; return (*s)[0], nil }
		type got struct {
			joined string
			shared bool
			v      string
		}
		out := make(chan got, 3)
		for range 3 {
			go func() {
				var joined string
				v, shared, _ := DoShared(&g, context.Background(), key("k"), newShare,
					func(s *[]string) { joined = (*s)[0] }, fn)
				out <- got{joined, shared, v}
			}()
		}
		synctest.Wait()
		if made != 1 {
			t.Fatalf("newShare ran %d times for one run, want 1", made)
		}
		close(release)
		leaders := 0
		for range 3 {
			r := <-out
			if r.joined != "share1" || r.v != "share1" {
				t.Errorf("caller joined %q and got %q; want the run's share1 both times", r.joined, r.v)
			}
			if !r.shared {
				leaders++
			}
		}
		if leaders != 1 {
			t.Errorf("%d callers started the run, want 1", leaders)
		}

		// A run whose callers all left: the next caller gets a new run and
		// a new value, not the abandoned run's.
		stuck := make(chan struct{})
		ctx1, cancel1 := context.WithCancel(context.Background())
		done1 := make(chan struct{})
		go func() {
			DoShared(&g, ctx1, key("j"), newShare, func(*[]string) {},
				func(_ context.Context, s *[]string) (string, error) { <-stuck; return (*s)[0], nil })
			close(done1)
		}()
		synctest.Wait()
		cancel1()
		<-done1
		var joined string
		v, shared, err := DoShared(&g, context.Background(), key("j"), newShare,
			func(s *[]string) { joined = (*s)[0] }, func(_ context.Context, s *[]string) (string, error) { return (*s)[0], nil })
		if v != "share3" || joined != "share3" || shared || err != nil {
			t.Errorf("after all left: joined %q, got %q, shared %v, err %v; want a fresh share3", joined, v, shared, err)
		}
		close(stuck)
	})
}
