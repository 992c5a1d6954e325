package gateway

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/contractgateway/gateway/config"
)

// TestCacheLeaseSettings: cache.lease's ttl and poll reach the cache
// stage of a gateway on Redis (newCache does not dial it).
func TestCacheLeaseSettings(t *testing.T) {
	tests := []struct {
		name      string
		lease     config.CacheLease
		ttl, poll time.Duration
	}{
		{"defaults", config.CacheLease{}, 0, 0},
		{"set", config.CacheLease{TTL: 3 * time.Second, Poll: 20 * time.Millisecond}, 3 * time.Second, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		stage, closeCache, err := newCache(config.Cache{Redis: "redis://127.0.0.1:1/0", Lease: tt.lease},
			slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
		if err != nil {
			t.Fatalf("%s: newCache = %v", tt.name, err)
		}
		closeCache()
		if stage.Lease == nil || stage.LeaseTTL != tt.ttl || stage.LeasePoll != tt.poll {
			t.Errorf("%s: cache stage lease %v, ttl %v, poll %v; want a lease, ttl %v, poll %v", tt.name, stage.Lease != nil, stage.LeaseTTL, stage.LeasePoll, tt.ttl, tt.poll)
		}
	}
}
