package access

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// Store keeps the rate counters of keys: this process's memory, or a
// Redis the replicas share. Both run GCRA (a token bucket that refills
// continuously, with a burst of one minute's worth) through a maintained
// library: golang.org/x/time/rate in memory, go-redis/redis_rate in Redis.
type Store interface {
	// Take takes one of key's perMinute requests, or says how long until
	// one is free.
	Take(ctx context.Context, key string, perMinute int) (ok bool, retryAfter time.Duration, err error)
	// Under reports whether key is under its perMinute tokens (what it
	// was charged has not used up the minute's worth), or how long until
	// it is.
	Under(ctx context.Context, key string, perMinute int) (ok bool, retryAfter time.Duration, err error)
	// Charge records n tokens spent by key, beyond its limit if need be:
	// a request that spends more than is left puts the key in debt, which
	// later requests wait out.
	Charge(ctx context.Context, key string, perMinute, n int) error
}

// maxDebtMinutes bounds the debt one key can run into, in minutes of its
// token rate: a runaway charge cannot lock a key out for good.
const maxDebtMinutes = 24 * 60

// LimiterOptions configure a Limiter.
type LimiterOptions struct {
	// Store keeps the request and token counters. Nil means memory.
	Store Store
	// OnStoreError is called when the store fails, with degraded true on
	// the first failure of an outage and false once the store answers
	// again: the limiter fails open meanwhile (a request never fails
	// because the store does). Nil means nothing is said.
	OnStoreError func(err error, degraded bool)
	// Timeout bounds each call to the store. Zero means 100ms: a slow
	// store must not slow every request.
	Timeout time.Duration
}

// Limiter holds the keys' limits: requests and tokens per minute in its
// Store, requests in flight in this process.
type Limiter struct {
	store    Store
	onError  func(error, bool)
	timeout  time.Duration
	degraded atomic.Bool
	errors   atomic.Int64

	mu       sync.Mutex
	inflight map[string]int
}

// NewLimiter returns a Limiter.
func NewLimiter(opts LimiterOptions) *Limiter {
	l := &Limiter{store: opts.Store, onError: opts.OnStoreError, timeout: opts.Timeout, inflight: map[string]int{}}
	if l.store == nil {
		l.store = NewMemoryStore(nil)
	}
	if l.timeout == 0 {
		l.timeout = 100 * time.Millisecond
	}
	return l
}

// StoreErrors counts the store's failures since start (a metric).
func (l *Limiter) StoreErrors() int64 { return l.errors.Load() }

// Degraded reports whether the store is failing now.
func (l *Limiter) Degraded() bool { return l.degraded.Load() }

// storeResult notes a store call's outcome: the first failure of an
// outage and the first success after one are reported once each.
func (l *Limiter) storeResult(err error) bool {
	if err != nil {
		l.errors.Add(1)
		if !l.degraded.Swap(true) && l.onError != nil {
			l.onError(err, true)
		}
		return false
	}
	if l.degraded.Load() && l.degraded.Swap(false) && l.onError != nil {
		l.onError(nil, false)
	}
	return true
}

func tooMany(reason, msg string, retry time.Duration) *apierr.Error {
	secs := int(math.Ceil(retry.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return &apierr.Error{Code: http.StatusTooManyRequests, Msg: msg, Err: &Refusal{reason},
		Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}
}

// Admit admits one request of p, or refuses it with 429 and Retry-After:
// p has its Concurrent requests in flight, has used up its tokens, or its
// requests per minute. An admitted request calls done once it has ended,
// with the tokens it spent: they are charged then, and its place in
// flight freed. A store that fails lets the request through.
func (l *Limiter) Admit(ctx context.Context, p *Principal) (done func(tokens int), err error) {
	lim := p.limits
	if lim.Concurrent > 0 {
		l.mu.Lock()
		if l.inflight[p.Name] >= lim.Concurrent {
			l.mu.Unlock()
			return nil, tooMany(ReasonConcurrent, fmt.Sprintf("key %q has %d requests in flight, its limit", p.Name, lim.Concurrent), time.Second)
		}
		l.inflight[p.Name]++
		l.mu.Unlock()
	}
	release := func() {
		if lim.Concurrent > 0 {
			l.mu.Lock()
			if l.inflight[p.Name]--; l.inflight[p.Name] <= 0 {
				delete(l.inflight, p.Name)
			}
			l.mu.Unlock()
		}
	}
	// The token check and the request count are asked of the store at
	// once: with Redis, two round trips cost one. A request refused for
	// its tokens has then been counted against its requests too.
	type result struct {
		ok    bool
		retry time.Duration
		err   error
	}
	var tokens, requests result
	tokens.ok, requests.ok = true, true
	var wg sync.WaitGroup
	if lim.TokensPerMinute > 0 {
		check := func() {
			tokens.ok, tokens.retry, tokens.err = l.call(ctx, func(ctx context.Context) (bool, time.Duration, error) {
				return l.store.Under(ctx, "tokens:"+p.Name, lim.TokensPerMinute)
			})
		}
		if lim.RequestsPerMinute > 0 {
			wg.Go(check)
		} else {
			check()
		}
	}
	if lim.RequestsPerMinute > 0 {
		requests.ok, requests.retry, requests.err = l.call(ctx, func(ctx context.Context) (bool, time.Duration, error) {
			return l.store.Take(ctx, "requests:"+p.Name, lim.RequestsPerMinute)
		})
	}
	wg.Wait()
	switch {
	case tokens.err == nil && !tokens.ok:
		release()
		return nil, tooMany(ReasonTokens, fmt.Sprintf("key %q is over its %d tokens per minute", p.Name, lim.TokensPerMinute), tokens.retry)
	case requests.err == nil && !requests.ok:
		release()
		return nil, tooMany(ReasonRequests, fmt.Sprintf("key %q is over its %d requests per minute", p.Name, lim.RequestsPerMinute), requests.retry)
	}
	return l.done(ctx, p, release), nil
}

// Hold counts work of p that goes on after its request has ended — the
// rest of an upstream answer read in the background — as a request in
// flight, whatever its Concurrent limit, until done is called with the
// tokens the work spent, which are charged then.
func (l *Limiter) Hold(ctx context.Context, p *Principal) (done func(tokens int)) {
	lim := p.limits
	if lim.Concurrent > 0 {
		l.mu.Lock()
		l.inflight[p.Name]++
		l.mu.Unlock()
	}
	return l.done(ctx, p, func() {
		if lim.Concurrent > 0 {
			l.mu.Lock()
			if l.inflight[p.Name]--; l.inflight[p.Name] <= 0 {
				delete(l.inflight, p.Name)
			}
			l.mu.Unlock()
		}
	})
}

// done is the end of a request or work of p admitted: it frees its place
// in flight and charges its tokens, once.
func (l *Limiter) done(ctx context.Context, p *Principal, release func()) func(tokens int) {
	lim := p.limits
	var once sync.Once
	return func(tokens int) {
		once.Do(func() {
			release()
			if lim.TokensPerMinute > 0 && tokens > 0 {
				// The request's context may be gone (a client that left
				// still spent the tokens).
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
				defer cancel()
				l.storeResult(l.store.Charge(ctx, "tokens:"+p.Name, lim.TokensPerMinute, tokens))
			}
		})
	}
}

// call runs one store call within the timeout; its error is reported and
// returned, and the caller lets the request through.
func (l *Limiter) call(parent context.Context, f func(context.Context) (bool, time.Duration, error)) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(parent, l.timeout)
	defer cancel()
	ok, retry, err := f(ctx)
	if err != nil && parent.Err() != nil {
		// The client left: the store is not at fault.
		return true, 0, err
	}
	if !l.storeResult(err) {
		return true, 0, err
	}
	return ok, retry, nil
}
