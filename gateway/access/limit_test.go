package access

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contractgateway/gateway/internal/redistest"
	"github.com/contractgateway/gateway/middleware/apierr"
)

func principal(limits Limits) *Principal {
	return &Principal{Name: "k", limits: limits}
}

// admit admits one request and ends it at once with tokens spent; it
// returns the refusal's status and Retry-After ("" when admitted).
func admit(t *testing.T, l *Limiter, p *Principal, tokens int) (int, string) {
	t.Helper()
	done, err := l.Admit(context.Background(), p)
	if err != nil {
		var e *apierr.Error
		if !errors.As(err, &e) {
			t.Fatalf("Admit = %v, want an *apierr.Error", err)
		}
		return e.Status(), e.Header.Get("Retry-After")
	}
	done(tokens)
	return http.StatusOK, ""
}

// TestMemoryLimits runs the memory limiter on synctest's fake clock.
func TestMemoryLimits(t *testing.T) {
	type step struct {
		wait   time.Duration
		tokens int // spent by the request, if admitted
		want   int
		retry  string
	}
	tests := []struct {
		name   string
		limits Limits
		steps  []step
	}{
		{"requests per minute: a burst of a minute, then one per 20s", Limits{RequestsPerMinute: 3}, []step{
			{0, 0, 200, ""}, {0, 0, 200, ""}, {0, 0, 200, ""}, {0, 0, 429, "20"},
			{10 * time.Second, 0, 429, "10"}, {10 * time.Second, 0, 200, ""}, {0, 0, 429, "20"},
		}},
		{"tokens: admitted while under, charged at the end, debt waited out", Limits{TokensPerMinute: 600}, []step{
			{0, 500, 200, ""}, {0, 400, 200, ""}, // 100 left, then 300 in debt
			{0, 0, 429, "30"},
			{29 * time.Second, 0, 429, "1"},
			{time.Second, 10, 200, ""},
		}},
		{"a charge beyond a minute's worth is charged whole", Limits{TokensPerMinute: 60}, []step{
			{0, 600, 200, ""}, {time.Minute, 0, 429, "480"}, {8 * time.Minute, 0, 200, ""},
		}},
		{"no limits", Limits{}, []step{{0, 1 << 30, 200, ""}, {0, 1 << 30, 200, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := NewLimiter(LimiterOptions{})
				p := principal(tt.limits)
				for i, s := range tt.steps {
					time.Sleep(s.wait)
					if got, retry := admit(t, l, p, s.tokens); got != s.want || retry != s.retry {
						t.Errorf("step %d: Admit = %d Retry-After %q, want %d %q", i, got, retry, s.want, s.retry)
					}
				}
			})
		})
	}
}

func TestConcurrentLimit(t *testing.T) {
	l := NewLimiter(LimiterOptions{})
	p := principal(Limits{Concurrent: 2})
	var dones []func(int)
	for range 2 {
		done, err := l.Admit(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		dones = append(dones, done)
	}
	if got, retry := admit(t, l, p, 0); got != 429 || retry != "1" {
		t.Fatalf("third in flight = %d %q, want 429 Retry-After 1", got, retry)
	}
	dones[0](0)
	dones[0](0) // a second call frees nothing more
	if got, _ := admit(t, l, p, 0); got != 200 {
		t.Fatalf("after one ended = %d, want 200", got)
	}
	done, err := l.Admit(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := admit(t, l, p, 0); got != 429 {
		t.Fatalf("two in flight again = %d, want 429", got)
	}
	done(0)
	dones[1](0)
}

// TestRedisSharedLimits runs two limiters — two replicas — on one real
// Redis: they share the request and token limits. Redis stopped mid-run
// lets requests through with one warning, and its return one notice.
func TestRedisSharedLimits(t *testing.T) {
	srv := redistest.Start(t)
	newReplica := func(onErr func(error, bool)) *Limiter {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		t.Cleanup(func() { client.Close() })
		return NewLimiter(LimiterOptions{Store: NewRedisStore(client, "test:"), OnStoreError: onErr, Timeout: time.Second})
	}
	var mu sync.Mutex
	var events []bool
	a := newReplica(func(err error, degraded bool) { mu.Lock(); events = append(events, degraded); mu.Unlock() })
	b := newReplica(nil)

	reqs := principal(Limits{RequestsPerMinute: 2})
	if got, _ := admit(t, a, reqs, 0); got != 200 {
		t.Fatalf("a: %d", got)
	}
	if got, _ := admit(t, b, reqs, 0); got != 200 {
		t.Fatalf("b: %d", got)
	}
	if got, retry := admit(t, a, reqs, 0); got != 429 || retry == "" {
		t.Fatalf("third request across replicas = %d %q, want 429 with Retry-After", got, retry)
	}

	toks := &Principal{Name: "t", limits: Limits{TokensPerMinute: 100}}
	if got, _ := admit(t, a, toks, 250); got != 200 {
		t.Fatalf("first tokens: %d", got)
	}
	if got, retry := admit(t, b, toks, 0); got != 429 || retry == "" {
		t.Fatalf("other replica after 250 of 100 tokens = %d %q, want 429 with Retry-After", got, retry)
	}

	srv.Stop()
	for range 3 {
		if got, _ := admit(t, a, reqs, 10); got != 200 {
			t.Fatalf("redis down: %d, want 200 (fail open)", got)
		}
	}
	if a.StoreErrors() == 0 || !a.Degraded() {
		t.Errorf("errors = %d degraded = %v, want counted and degraded", a.StoreErrors(), a.Degraded())
	}
	srv.Restart(t)
	if got, _ := admit(t, a, reqs, 0); got != 200 {
		t.Fatalf("redis back (empty): %d", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || !events[0] || events[1] {
		t.Errorf("store events = %v, want one outage then one recovery", events)
	}
}

// failingStore fails every call, as a Redis that is down or a call whose
// context ended.
type failingStore struct{}

func (failingStore) Take(ctx context.Context, _ string, _ int) (bool, time.Duration, error) {
	return false, 0, errors.Join(errors.New("store down"), ctx.Err())
}
func (failingStore) Under(ctx context.Context, _ string, _ int) (bool, time.Duration, error) {
	return false, 0, errors.Join(errors.New("store down"), ctx.Err())
}
func (failingStore) Charge(ctx context.Context, _ string, _, _ int) error {
	return errors.Join(errors.New("store down"), ctx.Err())
}

// TestLimiterFailsOpen: a failing store lets requests through, counted and
// reported once; a client that left is not the store's failure.
func TestLimiterFailsOpen(t *testing.T) {
	var events []bool
	l := NewLimiter(LimiterOptions{Store: failingStore{}, OnStoreError: func(_ error, degraded bool) { events = append(events, degraded) }})
	p := principal(Limits{RequestsPerMinute: 1, TokensPerMinute: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done, err := l.Admit(ctx, p)
	if err != nil {
		t.Fatalf("Admit(client gone) = %v, want let through", err)
	}
	if l.StoreErrors() != 0 || l.Degraded() {
		t.Errorf("a client that left counted as the store's failure: errors %d, degraded %v", l.StoreErrors(), l.Degraded())
	}
	done(5)
	for range 3 {
		if got, _ := admit(t, l, p, 5); got != 200 {
			t.Fatalf("store down: %d, want 200", got)
		}
	}
	if len(events) != 1 || !events[0] || !l.Degraded() {
		t.Errorf("events %v degraded %v, want one outage reported", events, l.Degraded())
	}
}
