package cache

import (
	"context"
	"sync"
	"sync/atomic"
)

// Tiered is the store of a replica behind a load balancer: its own memory
// first, then the Redis the replicas share. A remote failure never fails a
// call: the memory tier answers, and onError hears of it.
type Tiered struct {
	mem     *Memory
	remote  Store
	onError func(err error, degraded bool)

	errors atomic.Uint64
	mu     sync.Mutex
	down   bool
}

var _ Store = (*Tiered)(nil)

// NewTiered returns a tiered store. mem may be nil (remote only). onError
// (nil: ignored) is called on every remote error, with degraded true for
// the first error after a success, so that the caller logs one warning per
// outage and counts every error.
func NewTiered(mem *Memory, remote Store, onError func(err error, degraded bool)) *Tiered {
	if onError == nil {
		onError = func(error, bool) {}
	}
	return &Tiered{mem: mem, remote: remote, onError: onError}
}

// Get implements Store: memory, then remote; a remote hit is kept in
// memory too.
func (t *Tiered) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	if t.mem != nil {
		if v, ok, _ := t.mem.Get(ctx, k); ok {
			return v, true, nil
		}
	}
	v, ok, err := t.remote.Get(ctx, k)
	t.outcome(ctx, err)
	if err != nil || !ok {
		return nil, false, nil
	}
	if t.mem != nil {
		t.mem.Set(ctx, k, v)
	}
	return v, true, nil
}

// Set implements Store: memory and remote.
func (t *Tiered) Set(ctx context.Context, k Key, v []byte) error {
	if t.mem != nil {
		t.mem.Set(ctx, k, v)
	}
	t.outcome(ctx, t.remote.Set(ctx, k, v))
	return nil
}

func (t *Tiered) outcome(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		// The caller left: that says nothing about the remote.
		return
	}
	t.mu.Lock()
	degraded := err != nil && !t.down
	t.down = err != nil
	t.mu.Unlock()
	if err != nil {
		t.errors.Add(1)
		t.onError(err, degraded)
	}
}

// Errors counts the remote errors.
func (t *Tiered) Errors() uint64 { return t.errors.Load() }
