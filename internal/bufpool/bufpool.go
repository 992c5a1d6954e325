// Package bufpool keeps a bounded set of byte buffers for reuse. Guarded
// answers are read and encoded through buffers of tens of kilobytes, one
// per request; a sync.Pool would drop them at every garbage collection,
// which under load comes every few requests, and each miss would grow a
// new buffer by doubling. A Pool keeps at most n buffers of at most max
// bytes each: what it holds is bounded, and it survives collections.
package bufpool

// Pool is a bounded free list of byte buffers, safe for concurrent use.
type Pool struct {
	free chan []byte
	max  int
}

// New returns a Pool that keeps up to n buffers of at most max bytes of
// capacity each.
func New(n, max int) *Pool {
	return &Pool{free: make(chan []byte, n), max: max}
}

// Get returns an empty buffer: a kept one, or nil when none is free
// (append grows it as usual).
func (p *Pool) Get() []byte {
	select {
	case b := <-p.free:
		return b[:0]
	default:
		return nil
	}
}

// Put keeps b for a later Get, unless it grew past the pool's max or the
// pool is full. The caller must not use b afterwards.
func (p *Pool) Put(b []byte) {
	if cap(b) == 0 || cap(b) > p.max {
		return
	}
	select {
	case p.free <- b:
	default:
	}
}
