package cache

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func key(s string) Key { return NewKey(Request{Endpoint: s}) }

// TestMemoryTTL: an entry is served until its TTL, then it is a miss and
// gone — on the bubble's fake clock, no waiting.
func TestMemoryTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := NewMemory(MemoryConfig{TTL: time.Minute})
		m.Set(ctx, key("a"), []byte("A"))
		time.Sleep(59 * time.Second)
		if v, ok, _ := m.Get(ctx, key("a")); !ok || string(v) != "A" {
			t.Fatalf("Get at 59s = %q, %v; want A", v, ok)
		}
		time.Sleep(time.Second)
		if _, ok, _ := m.Get(ctx, key("a")); ok {
			t.Fatal("Get at 60s hit; want the entry expired")
		}
		if s := m.Stats(); s.Entries != 0 || s.Bytes != 0 {
			t.Errorf("Stats after expiry = %+v, want empty", s)
		}
	})
}

func TestMemoryNoExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := NewMemory(MemoryConfig{TTL: -1})
		m.Set(ctx, key("a"), []byte("A"))
		time.Sleep(1000 * time.Hour)
		if _, ok, _ := m.Get(ctx, key("a")); !ok {
			t.Fatal("Get after 1000h missed; want no expiry with a negative TTL")
		}
	})
}

// TestMemoryByteBound: the store never holds more than MaxBytes; the least
// recently used entry goes first, and a Get counts as a use.
func TestMemoryByteBound(t *testing.T) {
	ctx := context.Background()
	val := []byte(strings.Repeat("x", 1000))
	per := cost(val)
	m := NewMemory(MemoryConfig{MaxBytes: 3 * per})
	for _, k := range []string{"a", "b", "c"} {
		m.Set(ctx, key(k), val)
	}
	m.Get(ctx, key("a")) // a is now the most recent
	m.Set(ctx, key("d"), val)
	tests := []struct {
		k    string
		want bool
	}{{"a", true}, {"b", false}, {"c", true}, {"d", true}}
	for _, tt := range tests {
		if _, ok, _ := m.Get(ctx, key(tt.k)); ok != tt.want {
			t.Errorf("Get(%s) hit = %v, want %v", tt.k, ok, tt.want)
		}
	}
	s := m.Stats()
	if s.Bytes > 3*per || s.Entries != 3 || s.Evictions != 1 {
		t.Errorf("Stats = %+v, want 3 entries within %d bytes, 1 eviction", s, 3*per)
	}
	// Overwriting a key replaces its cost; a value over the bound is not
	// kept.
	m.Set(ctx, key("a"), []byte("short"))
	if got, want := m.Stats().Bytes, 2*per+cost([]byte("short")); got != want {
		t.Errorf("Bytes after overwrite = %d, want %d", got, want)
	}
	m.Set(ctx, key("huge"), make([]byte, 4*per))
	if _, ok, _ := m.Get(ctx, key("huge")); ok {
		t.Error("a value larger than the bound was kept")
	}
}

func BenchmarkMemoryGetHit(b *testing.B) {
	ctx := context.Background()
	m := NewMemory(MemoryConfig{})
	m.Set(ctx, key("a"), make([]byte, 20<<10))
	b.ReportAllocs()
	for b.Loop() {
		m.Get(ctx, key("a"))
	}
}
