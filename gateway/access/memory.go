package access

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// MemoryStore keeps the counters in this process: golang.org/x/time/rate's
// token bucket (GCRA's equivalent) per key and limit.
type MemoryStore struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[memKey]*rate.Limiter
}

type memKey struct {
	key       string
	perMinute int
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore reading the time from now
// (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, by: map[memKey]*rate.Limiter{}}
}

// limiter returns the bucket of key at perMinute: full at first, one
// minute's worth, refilled continuously. The keys are the configured ones,
// so the map stays small.
func (m *MemoryStore) limiter(key string, perMinute int) *rate.Limiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey{key, perMinute}
	l, ok := m.by[k]
	if !ok {
		l = rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
		m.by[k] = l
	}
	return l
}

// Take implements Store.
func (m *MemoryStore) Take(_ context.Context, key string, perMinute int) (bool, time.Duration, error) {
	now := m.now()
	r := m.limiter(key, perMinute).ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, nil
	}
	return true, 0, nil
}

// Under implements Store.
func (m *MemoryStore) Under(_ context.Context, key string, perMinute int) (bool, time.Duration, error) {
	now := m.now()
	tokens := m.limiter(key, perMinute).TokensAt(now)
	if tokens >= 0 {
		return true, 0, nil
	}
	return false, time.Duration(-tokens / (float64(perMinute) / 60) * float64(time.Second)), nil
}

// Charge implements Store: in reservations of at most the bucket's size,
// each of which the limiter grants by going into debt.
func (m *MemoryStore) Charge(_ context.Context, key string, perMinute, n int) error {
	now := m.now()
	l := m.limiter(key, perMinute)
	for left, rounds := n, 0; left > 0 && rounds < maxDebtMinutes; rounds++ {
		take := min(left, perMinute)
		l.ReserveN(now, take)
		left -= take
	}
	return nil
}
