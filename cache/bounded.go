package cache

import (
	"math"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Bounded is an LRU bounded by the summed cost of its entries, not their
// count: what the gateway keeps in memory (answers, compiled schemas)
// varies in size by orders of magnitude, and a count bound lets a few
// large entries hold the heap. An entry costlier than the whole bound is
// not kept; the least recently used entries are evicted until a new one
// fits. It does not lock: its owner does.
type Bounded[K comparable, V any] struct {
	lru        *simplelru.LRU[K, costed[V]]
	bytes, max int64
	evictions  uint64
}

type costed[V any] struct {
	v    V
	cost int64
}

// NewBounded returns an empty Bounded of at most max cost.
func NewBounded[K comparable, V any](max int64) *Bounded[K, V] {
	b := &Bounded[K, V]{max: max}
	// The count bound is the cost bound's business; the callback keeps
	// the cost true for every removal, evictions included.
	b.lru, _ = simplelru.NewLRU[K, costed[V]](math.MaxInt, func(_ K, e costed[V]) { b.bytes -= e.cost })
	return b
}

// Get returns k's value and marks it the most recently used.
func (b *Bounded[K, V]) Get(k K) (V, bool) {
	e, ok := b.lru.Get(k)
	return e.v, ok
}

// Remove drops k's entry, if any.
func (b *Bounded[K, V]) Remove(k K) { b.lru.Remove(k) }

// Add keeps v under k at cost, in place of k's entry, evicting the least
// recently used entries until it fits. A v costlier than the whole bound
// is not kept, and k's entry stays as it was.
func (b *Bounded[K, V]) Add(k K, v V, cost int64) {
	if cost > b.max {
		return
	}
	b.lru.Remove(k)
	for b.bytes+cost > b.max {
		if _, _, ok := b.lru.RemoveOldest(); !ok {
			break
		}
		b.evictions++
	}
	b.lru.Add(k, costed[V]{v: v, cost: cost})
	b.bytes += cost
}

// Len is the number of entries, Bytes their summed cost, and Evictions
// how many entries made room for others since NewBounded.
func (b *Bounded[K, V]) Len() int          { return b.lru.Len() }
func (b *Bounded[K, V]) Bytes() int64      { return b.bytes }
func (b *Bounded[K, V]) Evictions() uint64 { return b.evictions }
