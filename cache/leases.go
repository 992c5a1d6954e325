package cache

import (
	"cmp"
	"context"
	"sync/atomic"
	"time"
)

// Leaser is a lease per cache key shared by the replicas (the cache's
// Redis, whose *Redis is one): the replica that takes a key's lease makes
// the upstream call and ladder for all, the others wait for its cache
// entry.
type Leaser interface {
	// Acquire takes the lease of k for ttl; ok is false when another
	// holds it.
	Acquire(ctx context.Context, k Key, ttl time.Duration) (token string, ok bool, err error)
	// Renew extends the lease of k while token holds it.
	Renew(ctx context.Context, k Key, token string, ttl time.Duration) error
	// Release ends the lease of k while token holds it.
	Release(ctx context.Context, k Key, token string) error
	// Held reports whether a replica holds the lease of k.
	Held(ctx context.Context, k Key) (bool, error)
}

var _ Leaser = (*Redis)(nil)

// Leases shares runs across replicas: before a run of a key, TakeLease
// takes the key's lease, or waits for the entry of the replica that holds
// it. The zero value shares nothing (no Lease): every run is this
// process's own.
type Leases struct {
	// Lease, when set, is the lease per key shared by the replicas.
	Lease Leaser
	// LeaseTTL is the lease's life unless renewed (config
	// cache.lease.ttl). Zero means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// LeasePoll is how often a replica waiting for another's run looks
	// for its entry (config cache.lease.poll). Zero means
	// DefaultLeasePoll.
	LeasePoll time.Duration
	// OnLeaseError hears of every error of Lease, with degraded true for
	// the first one after a success: the caller logs one warning per
	// outage. Nil means ignored.
	OnLeaseError func(err error, degraded bool)
	leaseDown    atomic.Bool
	remote       atomic.Uint64
}

// RemoteShared counts the runs answered by another replica's run, whose
// lease they found taken.
func (l *Leases) RemoteShared() uint64 { return l.remote.Load() }

// TakeLease takes key's lease across replicas before this process's run
// of it: it returns the function that ends the lease once the run stored
// its entry, or — found — the entry of another replica's run, read with
// entry and waited for while that replica holds the lease. A holder that
// dies stops renewing its lease, and it expires: then this replica takes
// it and makes its own run. Without a Lease, or with Redis down, the run
// is this process's own.
func TakeLease[T any](l *Leases, ctx context.Context, key Key, entry func(context.Context) (T, bool)) (end func(), res T, found bool) {
	noop := func() {}
	if l.Lease == nil {
		return noop, res, false
	}
	ttl := cmp.Or(l.LeaseTTL, DefaultLeaseTTL)
	poll := cmp.Or(l.LeasePoll, DefaultLeasePoll)
	for {
		token, ok, err := l.Lease.Acquire(ctx, key, ttl)
		if l.leaseError(ctx, err) {
			return noop, res, false
		}
		if ok {
			// The entry may have come between this request's miss and
			// its lease: another replica's run that just ended.
			if res, found := entry(ctx); found {
				l.leaseError(ctx, l.Lease.Release(context.WithoutCancel(ctx), key, token))
				l.remote.Add(1)
				return noop, res, true
			}
			return l.hold(ctx, key, token, ttl), res, false
		}
		// Another replica runs it: wait for its entry while it holds
		// the lease.
		for {
			t := time.NewTimer(poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return noop, res, false // the run is cancelled; it answers no one
			case <-t.C:
			}
			if res, found := entry(ctx); found {
				l.remote.Add(1)
				return noop, res, true
			}
			held, err := l.Lease.Held(ctx, key)
			if l.leaseError(ctx, err) {
				return noop, res, false
			}
			if !held {
				break // done without a storable answer, or dead: take it
			}
		}
	}
}

// hold renews the lease while the run goes on; the returned function
// ends it.
func (l *Leases) hold(ctx context.Context, key Key, token string, ttl time.Duration) func() {
	ctx = context.WithoutCancel(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				l.leaseError(ctx, l.Lease.Renew(ctx, key, token, ttl))
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		l.leaseError(ctx, l.Lease.Release(ctx, key, token))
	}
}

// leaseError reports err to OnLeaseError and whether there was one; the
// lease's state follows: the first error after a success is the start of
// an outage, and runs are this process's own until a lease call works.
func (l *Leases) leaseError(ctx context.Context, err error) bool {
	if err == nil {
		l.leaseDown.Store(false)
		return false
	}
	if ctx.Err() == nil && l.OnLeaseError != nil {
		l.OnLeaseError(err, !l.leaseDown.Swap(true))
	}
	return true
}
