package cache

import (
	"context"
	"testing"
	"time"

	"github.com/contractgateway/gateway/internal/redistest"
)

// TestRedisLease: on a real Redis one replica takes a key's lease, the
// other cannot until it is released; a holder cannot end or renew a lease
// that is no longer its own; a lease not renewed expires.
func TestRedisLease(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a, b := newRedis(t, srv.URL, "dep1:"), newRedis(t, srv.URL, "dep1:")
	k := key("k")
	ta, ok, err := a.Acquire(ctx, k, time.Minute)
	if err != nil || !ok {
		t.Fatalf("a.Acquire = %v, %v; want the lease", ok, err)
	}
	if _, ok, err := b.Acquire(ctx, k, time.Minute); err != nil || ok {
		t.Errorf("b.Acquire while a holds it = %v, %v; want false", ok, err)
	}
	if held, err := b.Held(ctx, k); err != nil || !held {
		t.Errorf("b.Held = %v, %v; want true", held, err)
	}
	if err := b.Release(ctx, k, "not-b's"); err != nil {
		t.Fatal(err)
	}
	if held, _ := a.Held(ctx, k); !held {
		t.Errorf("a release by a wrong token ended the lease")
	}
	if err := a.Release(ctx, k, ta); err != nil {
		t.Fatal(err)
	}
	tb, ok, err := b.Acquire(ctx, k, 50*time.Millisecond)
	if err != nil || !ok {
		t.Fatalf("b.Acquire after release = %v, %v; want the lease", ok, err)
	}
	if err := a.Renew(ctx, k, ta, time.Hour); err != nil {
		t.Fatal(err)
	}
	ttl, err := b.client.PTTL(ctx, b.leaseKey(k)).Result()
	if err != nil || ttl > 50*time.Millisecond {
		t.Errorf("lease TTL after a stale holder's renew = %v (%v), want at most 50ms", ttl, err)
	}
	if err := b.Renew(ctx, k, tb, time.Hour); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := b.client.PTTL(ctx, b.leaseKey(k)).Result(); ttl < time.Minute {
		t.Errorf("lease TTL after its holder's renew = %v, want about 1h", ttl)
	}
}
