package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/cache"
)

func TestLoadCacheLease(t *testing.T) {
	runDecodeCases(t, func(c Config) CacheLease { return c.Cache.Lease }, []decodeCase[CacheLease]{
		{"both keys", "cache:\n  lease:\n    ttl: 3s\n    poll: 20ms\n", CacheLease{TTL: 3 * time.Second, Poll: 20 * time.Millisecond}, ""},
		{"absent", "cache:\n  ttl: 1h\n", CacheLease{}, ""},
		{"ttl not a duration", "cache:\n  lease: {ttl: ten}\n", CacheLease{}, "cache.lease.ttl"},
		{"unknown key", "cache:\n  lease: {interval: 1s}\n", CacheLease{}, "cache.lease.interval"},
	})
}

func TestValidateCacheLease(t *testing.T) {
	tests := []struct {
		name  string
		lease CacheLease
		want  []string // the problems' messages; none for valid
	}{
		{"defaults", CacheLease{}, nil},
		{"both set", CacheLease{TTL: 2 * time.Second, Poll: 100 * time.Millisecond}, nil},
		{"shortest ttl", CacheLease{TTL: 100 * time.Millisecond, Poll: 10 * time.Millisecond}, nil},
		{"poll alone, below the default ttl", CacheLease{Poll: 9 * time.Second}, nil},
		{"negative ttl", CacheLease{TTL: -time.Second},
			[]string{"cache.lease.ttl: must not be negative (got -1s); 0 means the default, 10s"}},
		{"ttl too short", CacheLease{TTL: 30 * time.Millisecond},
			[]string{"cache.lease.ttl 30ms: must be at least 100ms: the holder renews its lease every third of it, and a shorter one lapses while its run goes on"}},
		{"negative poll", CacheLease{Poll: -time.Millisecond},
			[]string{"cache.lease.poll: must not be negative (got -1ms); 0 means the default, 50ms"}},
		{"poll as long as the ttl", CacheLease{TTL: time.Second, Poll: time.Second},
			[]string{"cache.lease.poll 1s: must be below cache.lease.ttl (1s): a waiting replica would look for the holder's answer less often than the lease lasts"}},
		{"poll above the default ttl", CacheLease{Poll: 15 * time.Second},
			[]string{"cache.lease.poll 15s: must be below cache.lease.ttl (10s): a waiting replica would look for the holder's answer less often than the lease lasts"}},
	}
	for _, tt := range tests {
		cfg := Default()
		cfg.Cache.Lease = tt.lease
		if diff := cmp.Diff(tt.want, lines(cfg.Validate())); diff != "" {
			t.Errorf("%s: Validate() problems (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestCacheLeaseProblemLocated: a bad lease setting is reported at its
// line of the file.
func TestCacheLeaseProblemLocated(t *testing.T) {
	path := writeFile(t, "cache:\n  redis: redis://127.0.0.1:6379/0\n  lease:\n    ttl: 2s\n    poll: 5s\n")
	cfg, src, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{path + ": line 5: cache.lease.poll 5s: must be below cache.lease.ttl (2s): a waiting replica would look for the holder's answer less often than the lease lasts"}
	if diff := cmp.Diff(want, lines(src.Locate(cfg.Validate()))); diff != "" {
		t.Errorf("Locate(Validate()) (-want +got):\n%s", diff)
	}
}

// TestCacheLeaseDefaults keeps the defaults the validation assumes equal
// to the ones the cache applies.
func TestCacheLeaseDefaults(t *testing.T) {
	if defaultLeaseTTL != cache.DefaultLeaseTTL || defaultLeasePoll != cache.DefaultLeasePoll {
		t.Errorf("config's lease defaults = %v, %v; cache's = %v, %v", defaultLeaseTTL, defaultLeasePoll, cache.DefaultLeaseTTL, cache.DefaultLeasePoll)
	}
}
