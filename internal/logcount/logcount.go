// Package logcount is an slog.Handler for tests that counts the records
// logged at each level: a test of "one warning per outage" reads the
// count instead of parsing log text.
package logcount

import (
	"context"
	"log/slog"
	"sync"
)

// Counter counts log records by level; its zero value is ready, and it is
// safe for concurrent use.
type Counter struct {
	mu     sync.Mutex
	levels map[slog.Level]int
}

// Enabled is true at every level: every record is counted.
func (c *Counter) Enabled(context.Context, slog.Level) bool { return true }

// Handle counts r.
func (c *Counter) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.levels == nil {
		c.levels = map[slog.Level]int{}
	}
	c.levels[r.Level]++
	return nil
}

// WithAttrs is c: attributes do not change the count.
func (c *Counter) WithAttrs([]slog.Attr) slog.Handler { return c }

// WithGroup is c: groups do not change the count.
func (c *Counter) WithGroup(string) slog.Handler { return c }

// Count is the number of records logged at l so far.
func (c *Counter) Count(l slog.Level) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.levels[l]
}
