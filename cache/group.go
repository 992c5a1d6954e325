package cache

import (
	"context"
	"sync"
	"sync/atomic"
)

// Group shares one run of a function among identical concurrent calls, as
// singleflight does, with one difference that matters for a gateway: a
// caller that leaves stops waiting without cancelling the run for the
// others, and the run is cancelled only when the last caller has left.
type Group[V any] struct {
	mu        sync.Mutex
	calls     map[Key]*call[V]
	coalesced atomic.Uint64
}

type call[V any] struct {
	done    chan struct{}
	val     V
	err     error
	waiters int
	cancel  context.CancelFunc
	// share is what DoShared's newShare made for the run, nil for Do.
	share any
}

// Do runs fn once for all the calls with key k that overlap it, and
// returns its result to each; shared is false for the call that started
// the run. fn's context keeps the values of the first caller's context
// but not its cancellation: it is cancelled when every caller has left.
// A caller whose ctx ends returns ctx.Err() at once. After fn returns, the
// next call with k runs fn again.
func (g *Group[V]) Do(ctx context.Context, k Key, fn func(ctx context.Context) (V, error)) (v V, shared bool, err error) {
	return g.do(ctx, k, nil, nil, func(ctx context.Context, _ any) (V, error) { return fn(ctx) })
}

// DoShared is Do for a run that shows its callers how far it got:
// newShare makes a value for the run before it starts (a feed of what it
// made so far, say), fn gets it, and so does join, called for each caller
// before Do waits. A caller that joins late finds the very value of the
// run it shares, never one of a run before or after it.
func DoShared[V, S any](g *Group[V], ctx context.Context, k Key, newShare func() S, join func(s S), fn func(ctx context.Context, s S) (V, error)) (v V, shared bool, err error) {
	return g.do(ctx, k, func() any { return newShare() }, func(s any) { join(s.(S)) },
		func(ctx context.Context, s any) (V, error) { return fn(ctx, s.(S)) })
}

func (g *Group[V]) do(ctx context.Context, k Key, newShare func() any, join func(any), fn func(context.Context, any) (V, error)) (v V, shared bool, err error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[Key]*call[V]{}
	}
	c, ok := g.calls[k]
	if ok && c.waiters == 0 {
		// Every caller of that run left and cancelled it: it answers no
		// one, and this caller needs a run of its own.
		ok = false
	}
	if ok {
		c.waiters++
		g.coalesced.Add(1)
	} else {
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &call[V]{done: make(chan struct{}), waiters: 1, cancel: cancel}
		if newShare != nil {
			c.share = newShare()
		}
		g.calls[k] = c
		go g.run(runCtx, k, c, fn)
	}
	g.mu.Unlock()
	if join != nil {
		join(c.share)
	}

	select {
	case <-c.done:
		return c.val, ok, c.err
	case <-ctx.Done():
		g.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			c.cancel()
		}
		g.mu.Unlock()
		var zero V
		return zero, ok, ctx.Err()
	}
}

func (g *Group[V]) run(ctx context.Context, k Key, c *call[V], fn func(context.Context, any) (V, error)) {
	defer c.cancel()
	c.val, c.err = fn(ctx, c.share)
	g.mu.Lock()
	if g.calls[k] == c {
		delete(g.calls, k)
	}
	g.mu.Unlock()
	close(c.done)
}

// Coalesced counts the calls that shared another's run.
func (g *Group[V]) Coalesced() uint64 { return g.coalesced.Load() }
