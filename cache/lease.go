package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLeaseTTL is how long a lease lasts unless its holder renews it:
// how long replicas wait for a holder that died before they make their
// own call. The holder renews it every third of it while it runs.
const DefaultLeaseTTL = 10 * time.Second

// DefaultLeasePoll is how often a replica waiting for another's run looks
// for its cache entry (and whether the lease is still held): the most a
// waiting request lags behind the holder's answer.
const DefaultLeasePoll = 50 * time.Millisecond

// Lua scripts that touch a lease only while it is still the caller's: a
// holder whose lease expired and was taken by another replica must not
// end or extend the other's.
var (
	releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
	renewScript   = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
)

func (r *Redis) leaseKey(k Key) string { return r.prefix + "lease:" + k.String() }

// Acquire takes the lease of k for ttl (SET NX PX): the replica that
// takes it makes the upstream call of k for every replica, the others
// wait for its cache entry. ok is false when another holds it; token
// identifies this holder to Renew and Release.
func (r *Redis) Acquire(ctx context.Context, k Key, ttl time.Duration) (token string, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var b [16]byte
	rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	err = r.client.SetArgs(ctx, r.leaseKey(k), token, redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return token, true, nil
}

// Renew extends the lease of k to ttl from now if token still holds it.
func (r *Redis) Renew(ctx context.Context, k Key, token string, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return renewScript.Run(ctx, r.client, []string{r.leaseKey(k)}, token, ttl.Milliseconds()).Err()
}

// Release ends the lease of k if token still holds it.
func (r *Redis) Release(ctx context.Context, k Key, token string) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return releaseScript.Run(ctx, r.client, []string{r.leaseKey(k)}, token).Err()
}

// Held reports whether some replica holds the lease of k.
func (r *Redis) Held(ctx context.Context, k Key) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	n, err := r.client.Exists(ctx, r.leaseKey(k)).Result()
	return n > 0, err
}
