package access

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// RedisStore keeps the counters in a Redis the replicas share, with
// go-redis/redis_rate's GCRA (Redis's own clock, one Lua script per
// call), so that N replicas behind a load balancer enforce one limit.
type RedisStore struct {
	lim    *redis_rate.Limiter
	prefix string
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns a store on client, its keys under prefix.
func NewRedisStore(client redis.UniversalClient, prefix string) *RedisStore {
	return &RedisStore{lim: redis_rate.NewLimiter(client), prefix: prefix}
}

func perMinute(n int) redis_rate.Limit {
	return redis_rate.Limit{Rate: n, Burst: n, Period: time.Minute}
}

// Take implements Store.
func (s *RedisStore) Take(ctx context.Context, key string, n int) (bool, time.Duration, error) {
	res, err := s.lim.AllowN(ctx, s.prefix+key, perMinute(n), 1)
	if err != nil {
		return false, 0, fmt.Errorf("redis limiter: %w", err)
	}
	return res.Allowed > 0, max(res.RetryAfter, 0), nil
}

// Under implements Store: a GCRA check of no cost, which passes while the
// key's theoretical arrival time is within one minute's burst.
func (s *RedisStore) Under(ctx context.Context, key string, n int) (bool, time.Duration, error) {
	res, err := s.lim.AllowN(ctx, s.prefix+key, perMinute(n), 0)
	if err != nil {
		return false, 0, fmt.Errorf("redis limiter: %w", err)
	}
	if res.RetryAfter > 0 {
		return false, res.RetryAfter, nil
	}
	return true, 0, nil
}

// Charge implements Store: the same rate with a burst of maxDebtMinutes,
// so that GCRA takes the whole cost however far it puts the key into
// debt; Under, with its one-minute burst, then refuses the key until the
// debt is paid.
func (s *RedisStore) Charge(ctx context.Context, key string, n, tokens int) error {
	l := redis_rate.Limit{Rate: n, Burst: n * maxDebtMinutes, Period: time.Minute}
	if _, err := s.lim.AllowN(ctx, s.prefix+key, l, min(tokens, n*maxDebtMinutes)); err != nil {
		return fmt.Errorf("redis limiter: %w", err)
	}
	return nil
}
