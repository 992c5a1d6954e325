package middleware

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/cache"
)

// fakeLeaser is the Redis of replicas in one process, on the test's
// clock: leases expire unless renewed.
type fakeLeaser struct {
	mu      sync.Mutex
	holder  string
	expires time.Time
	err     error
	n       int
}

func (l *fakeLeaser) Acquire(_ context.Context, _ cache.Key, ttl time.Duration) (string, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return "", false, l.err
	}
	if l.holder != "" && time.Now().Before(l.expires) {
		return "", false, nil
	}
	l.n++
	l.holder, l.expires = string(rune('a'+l.n)), time.Now().Add(ttl)
	return l.holder, true, nil
}

func (l *fakeLeaser) Renew(_ context.Context, _ cache.Key, token string, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder == token {
		l.expires = time.Now().Add(ttl)
	}
	return l.err
}

func (l *fakeLeaser) Release(_ context.Context, _ cache.Key, token string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder == token {
		l.holder = ""
	}
	return l.err
}

func (l *fakeLeaser) Held(context.Context, cache.Key) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder != "" && time.Now().Before(l.expires), l.err
}

// leasedApp is a replica: the guard with c as its cache stage.
func leasedApp(t *testing.T, c *Cache, up Upstream) *echo.Echo {
	t.Helper()
	cfg := DefaultGuardConfig
	cfg.Resolver, cfg.Upstream, cfg.Cache = builtinRoutes(t), up, c
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler
	e.Use(mw)
	return e
}

// TestLeaseAcrossReplicas runs the lease's cases on a fake clock: a
// holder that died (its lease left to expire) delays the others by the
// lease's life, then they make their own call; a live holder slower than
// the lease's life renews it, and the other replica waits for its answer
// instead of calling; Redis down, each replica calls on its own and the
// outage is reported once.
func TestLeaseAcrossReplicas(t *testing.T) {
	const ttl = 10 * time.Second
	tests := []struct {
		name      string
		leaser    func() *fakeLeaser
		replicas  int
		slow      time.Duration // each upstream call's length
		wantCalls int32
		wantWait  time.Duration // the last answer's delay, at least
		wantDown  int           // outages reported: one per replica
	}{
		{"dead holder", func() *fakeLeaser { return &fakeLeaser{holder: "dead", expires: time.Now().Add(ttl)} }, 1, 0, 1, ttl, 0},
		{"live holder slower than the lease", func() *fakeLeaser { return &fakeLeaser{} }, 2, 3 * ttl, 1, 3 * ttl, 0},
		{"redis down", func() *fakeLeaser { return &fakeLeaser{err: errors.New("connection refused")} }, 2, time.Second, 2, time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := tt.leaser()
				store := cache.NewMemory(cache.MemoryConfig{}) // the replicas' shared store
				var calls atomic.Int32
				up := funcUpstream(func(req *http.Request) (*http.Response, error) {
					calls.Add(1)
					time.Sleep(tt.slow)
					return answerResponse(`{"a":1}`), nil
				})
				var down atomic.Int32
				start := time.Now()
				var wg sync.WaitGroup
				for i := range tt.replicas {
					c := NewCache(store)
					c.Lease, c.LeaseTTL = l, ttl
					c.OnLeaseError = func(_ error, degraded bool) {
						if degraded {
							down.Add(1)
						}
					}
					e := leasedApp(t, c, up)
					wg.Go(func() {
						time.Sleep(time.Duration(i) * time.Millisecond) // replica 0 first
						rec := httptest.NewRecorder()
						e.ServeHTTP(rec, guardedRequest(context.Background(), false, nil))
						if rec.Code != 200 || rec.Header().Get("X-Contract-Status") != "valid" {
							t.Errorf("replica %d: %d %s %s", i, rec.Code, rec.Header().Get("X-Contract-Status"), rec.Body)
						}
					})
				}
				wg.Wait()
				if got := calls.Load(); got != tt.wantCalls {
					t.Errorf("upstream calls = %d, want %d", got, tt.wantCalls)
				}
				if got := time.Since(start); got < tt.wantWait || got > tt.wantWait+time.Second {
					t.Errorf("answered after %v, want %v", got, tt.wantWait)
				}
				if got := int(down.Load()); got != tt.wantDown {
					t.Errorf("outages reported = %d, want %d", got, tt.wantDown)
				}
			})
		})
	}
}
