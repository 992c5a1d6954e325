package cache

import (
	"context"
	"sync"
	"time"
)

// Store keeps answers by key. Get of a missing key is (nil, false, nil).
type Store interface {
	Get(ctx context.Context, k Key) ([]byte, bool, error)
	Set(ctx context.Context, k Key, v []byte) error
}

// Defaults of MemoryConfig and RedisConfig.
const (
	DefaultMaxBytes = 64 << 20
	DefaultTTL      = time.Hour
)

// entryOverhead is what one entry costs besides its value and key: the
// list element, the map bucket and the entry struct, rounded up. It keeps
// a flood of tiny entries from outgrowing the bound it claims.
const entryOverhead = 128

// MemoryConfig configures a Memory store. Zero values mean the defaults.
type MemoryConfig struct {
	// MaxBytes bounds the entries' cost (value, key and entryOverhead
	// each). Zero means DefaultMaxBytes.
	MaxBytes int64
	// TTL is how long an entry is served. Zero means DefaultTTL; a
	// negative value means no expiry (MaxBytes still evicts).
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Memory is a byte-bounded LRU store with a TTL, for one process. It
// starts no goroutine: expired entries are dropped when read or when the
// bound needs room.
type Memory struct {
	ttl time.Duration
	now func() time.Time

	mu  sync.Mutex
	lru *Bounded[Key, memEntry]
}

type memEntry struct {
	value   []byte
	expires time.Time // zero: never
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory store.
func NewMemory(c MemoryConfig) *Memory {
	m := &Memory{ttl: c.TTL, now: c.Now}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if m.ttl == 0 {
		m.ttl = DefaultTTL
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.lru = NewBounded[Key, memEntry](c.MaxBytes)
	return m
}

func cost(v []byte) int64 { return int64(len(v)) + int64(len(Key{})) + entryOverhead }

// Get implements Store. An expired entry is a miss, and is dropped.
func (m *Memory) Get(_ context.Context, k Key) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.lru.Get(k)
	if !ok {
		return nil, false, nil
	}
	if !e.expires.IsZero() && !m.now().Before(e.expires) {
		m.lru.Remove(k)
		return nil, false, nil
	}
	return e.value, true, nil
}

// Set implements Store. A value larger than the whole bound is not kept;
// older entries are evicted until the new one fits.
func (m *Memory) Set(_ context.Context, k Key, v []byte) error {
	e := memEntry{value: v}
	if m.ttl > 0 {
		e.expires = m.now().Add(m.ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lru.Add(k, e, cost(v))
	return nil
}

// MemoryStats are a Memory store's figures, for metrics.
type MemoryStats struct {
	Entries   int
	Bytes     int64
	Evictions uint64
}

// Stats returns the store's figures.
func (m *Memory) Stats() MemoryStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MemoryStats{Entries: m.lru.Len(), Bytes: m.lru.Bytes(), Evictions: m.lru.Evictions()}
}
