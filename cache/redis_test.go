package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contractgateway/gateway/internal/redistest"
)

func newRedis(t *testing.T, url, prefix string) *Redis {
	t.Helper()
	// The tests read what Redis holds, not how fast it answers: an
	// operation may take longer than DefaultRedisTimeout's 100 ms on a
	// machine loaded with -race runs, which would read as a miss.
	r, err := NewRedis(RedisConfig{URL: url, Prefix: prefix, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRedisStore: values round-trip compressed, with Redis keeping the
// TTL, under the deployment's prefix; two stores on one Redis (two
// replicas) serve each other's entries, another prefix sees none.
func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := newRedis(t, srv.URL, "dep1:")
	b := newRedis(t, srv.URL, "dep1:")
	other := newRedis(t, srv.URL, "dep2:")
	val := []byte(strings.Repeat(`{"question":"Which keyword defines a function?"}`, 2000))
	if err := a.Set(ctx, key("k"), val); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.Get(ctx, key("k"))
	if err != nil || !ok || string(got) != string(val) {
		t.Fatalf("replica b Get = %d bytes, %v, %v; want the %d bytes a stored", len(got), ok, err, len(val))
	}
	if _, ok, _ := other.Get(ctx, key("k")); ok {
		t.Error("another prefix sees the entry")
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	n, err := raw.StrLen(ctx, "dep1:"+key("k").String()).Result()
	if err != nil || n >= int64(len(val))/10 {
		t.Errorf("stored %d bytes (%v) for a %d-byte compressible value, want under a tenth", n, err, len(val))
	}
	ttl, err := raw.PTTL(ctx, "dep1:"+key("k").String()).Result()
	if err != nil || ttl <= 0 || ttl > DefaultTTL {
		t.Errorf("PTTL = %v (%v), want 0 < ttl <= %v", ttl, err, DefaultTTL)
	}
	if _, ok, err := a.Get(ctx, key("missing")); ok || err != nil {
		t.Errorf("Get(missing) = %v, %v; want a plain miss", ok, err)
	}
}

// TestTieredRedisDown: Redis stopped mid-run costs no request: the memory
// tier answers, one degraded notice per outage, every error counted; Redis
// back, entries are shared again.
func TestTieredRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	var degraded, errs int
	onError := func(err error, d bool) {
		errs++
		if d {
			degraded++
		}
	}
	r := newRedis(t, srv.URL, "")
	tiered := NewTiered(NewMemory(MemoryConfig{}), r, onError)
	if err := tiered.Set(ctx, key("a"), []byte("A")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if v, ok, err := tiered.Get(ctx, key("a")); !ok || err != nil || string(v) != "A" {
		t.Fatalf("Get with Redis down = %q, %v, %v; want A from memory", v, ok, err)
	}
	if _, ok, err := tiered.Get(ctx, key("b")); ok || err != nil {
		t.Fatalf("Get(b) with Redis down = %v, %v; want a miss, no error", ok, err)
	}
	if err := tiered.Set(ctx, key("c"), []byte("C")); err != nil {
		t.Fatalf("Set with Redis down = %v, want nil", err)
	}
	if degraded != 1 || errs != 2 || tiered.Errors() != 2 {
		t.Errorf("degraded %d, errors %d (%d counted); want 1 notice for 2 errors", degraded, errs, tiered.Errors())
	}
	srv.Restart(t)
	other := NewTiered(NewMemory(MemoryConfig{}), newRedis(t, srv.URL, ""), nil)
	if err := tiered.Set(ctx, key("d"), []byte("D")); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := other.Get(ctx, key("d")); !ok || string(v) != "D" {
		t.Errorf("after Redis came back, the other replica Get(d) = %q, %v; want D", v, ok)
	}
	if degraded != 1 {
		t.Errorf("degraded %d after recovery, want still 1", degraded)
	}
}

func BenchmarkRedisGetHit(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	r, err := NewRedis(RedisConfig{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	r.Set(ctx, key("a"), make([]byte, 20<<10))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := r.Get(ctx, key("a")); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
