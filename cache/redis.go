package cache

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConfig configures a Redis store. Zero values mean the defaults.
type RedisConfig struct {
	// URL is redis://[:password@]host:port[/db] (rediss:// for TLS).
	// Required.
	URL string
	// Prefix starts every key, one per deployment sharing a Redis. Empty
	// means DefaultPrefix.
	Prefix string
	// TTL is how long Redis keeps an entry. Zero means DefaultTTL; a
	// negative value means no expiry (Redis's own memory policy applies).
	TTL time.Duration
	// Timeout bounds each operation: a slow Redis costs a request a miss,
	// never its latency. Zero means DefaultRedisTimeout.
	Timeout time.Duration
}

// Redis defaults.
const (
	DefaultPrefix       = "cg:"
	DefaultRedisTimeout = 100 * time.Millisecond
)

// formatGzip tags a value compressed with gzip: the first byte of every
// stored value names its format, so that a later format can be told apart.
const formatGzip = 1

// Redis is a Store in a Redis shared by every gateway replica: the same
// keys, values compressed, the TTL kept by Redis.
type Redis struct {
	client  *redis.Client
	prefix  string
	ttl     time.Duration
	timeout time.Duration
}

var _ Store = (*Redis)(nil)

// NewRedis returns a Redis store. It does not connect: a Redis that is
// down at startup is a Redis that is down, answered like one later.
func NewRedis(c RedisConfig) (*Redis, error) {
	opts, err := redis.ParseURL(c.URL)
	if err != nil {
		return nil, fmt.Errorf("cache redis url: %w", err)
	}
	r := &Redis{prefix: c.Prefix, ttl: c.TTL, timeout: c.Timeout}
	if r.prefix == "" {
		r.prefix = DefaultPrefix
	}
	if r.ttl == 0 {
		r.ttl = DefaultTTL
	}
	if r.timeout == 0 {
		r.timeout = DefaultRedisTimeout
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = r.timeout, r.timeout, r.timeout
	// One attempt: the memory tier answers while Redis is away.
	opts.MaxRetries, opts.DialerRetries = -1, 1
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	r.client = redis.NewClient(opts)
	return r, nil
}

// quiet drops go-redis's own log lines: they repeat, once per request, the
// errors the caller hears of (Tiered's onError logs one line per outage).
// go-redis has one logger per process, so this is set once, by the first
// Redis store.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

func (r *Redis) key(k Key) string { return r.prefix + k.String() }

// Get implements Store.
func (r *Redis) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	b, err := r.client.Get(ctx, r.key(k)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, err := decode(b)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Set implements Store.
func (r *Redis) Set(ctx context.Context, k Key, v []byte) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	ttl := r.ttl
	if ttl < 0 {
		ttl = 0 // go-redis: no expiry
	}
	return r.client.Set(ctx, r.key(k), encode(v), ttl).Err()
}

// Close closes the connections.
func (r *Redis) Close() error { return r.client.Close() }

func encode(v []byte) []byte {
	var b bytes.Buffer
	b.WriteByte(formatGzip)
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	zw.Write(v)
	zw.Close()
	return b.Bytes()
}

func decode(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != formatGzip {
		return nil, errors.New("cache redis: value of an unknown format")
	}
	zr, err := gzip.NewReader(bytes.NewReader(b[1:]))
	if err != nil {
		return nil, fmt.Errorf("cache redis: %w", err)
	}
	v, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("cache redis: %w", err)
	}
	return v, nil
}
