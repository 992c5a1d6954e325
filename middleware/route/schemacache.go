package route

import (
	"sync"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
)

// DefaultSchemaCacheBytes bounds the compiled client schemas (ad-hoc
// formats, tool parameters) kept in memory, by their estimated heap
// (contracts.CostBytes). Apps send a few schemas over and over, and
// compiling one costs far more than validating; a flood of distinct large
// schemas must not hold the heap (count bounds did not: fifteen 2 MB
// schemas kept almost a gigabyte).
const DefaultSchemaCacheBytes = 64 << 20

// SchemaCache keeps the validators of compiled client schemas
// (ad-hoc formats, tool parameters) by the hash of the schema, bounded by
// their estimated heap: compiling a schema costs far more than validating
// with it, and apps send the same few schemas over and over. It is a byte-bounded LRU, safe
// for concurrent use.
type SchemaCache struct {
	mu  sync.Mutex
	lru *cache.Bounded[string, *validators.Validator]
}

// NewSchemaCache returns a cache of at most max estimated bytes.
func NewSchemaCache(max int64) *SchemaCache {
	return &SchemaCache{lru: cache.NewBounded[string, *validators.Validator](max)}
}

// Get returns the validator of raw, compiling it with build on a miss.
// Compilation runs outside the lock: two requests with one new schema may
// both compile it, which costs less than making every request wait.
func (c *SchemaCache) Get(raw []byte, build func([]byte) (*validators.Validator, error)) (*validators.Validator, error) {
	key := contracts.SchemaHash(raw)
	c.mu.Lock()
	v, ok := c.lru.Get(key)
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Add(key, v, contracts.CostBytes(raw))
	return v, nil
}

// Size returns the entries and their estimated bytes.
func (c *SchemaCache) Size() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.lru.Bytes()
}
