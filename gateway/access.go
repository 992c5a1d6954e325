package gateway

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/gateway/pool"
)

// accessConfig maps the config's access section onto the access
// package's.
func accessConfig(cfg config.Access) access.Config {
	ac := access.Config{AllowAnonymous: cfg.AllowAnonymous}
	for _, k := range cfg.Keys {
		ac.Keys = append(ac.Keys, access.Key{Name: k.Name, SHA256: k.SHA256,
			Scope:  access.Scope{Models: k.Models, Manage: k.Manage},
			Limits: access.Limits{RequestsPerMinute: k.Limits.RequestsPerMinute, TokensPerMinute: k.Limits.TokensPerMinute, Concurrent: k.Limits.Concurrent}})
	}
	if a := cfg.Anonymous; a != nil {
		ac.Anonymous = &access.Scope{Models: a.Models, Manage: a.Manage}
	}
	return ac
}

// newAccessGate builds the access check of cfg; nil when cfg has no keys
// (every request is let through, as before). Limits are counted in
// cfg.Cache.Redis when set, shared by the replicas, else in memory.
func newAccessGate(cfg config.Config, logger *slog.Logger, reg *prometheus.Registry) (*access.Gate, error) {
	checker, err := access.New(accessConfig(cfg.Access))
	if err != nil {
		return nil, fmt.Errorf("access: %w", err)
	}
	if !checker.Enabled() {
		return nil, nil
	}
	gopts := access.GateOptions{MaxListBytes: pool.MaxMemberAnswerBytes}
	opts := access.LimiterOptions{OnStoreError: func(err error, degraded bool) {
		if degraded {
			logger.Warn("access: redis unavailable; request and token limits are not enforced until it is back", "error", err.Error())
		} else {
			logger.Info("access: redis is back; limits are enforced again")
		}
	}}
	if cfg.Cache.Redis != "" {
		ro, err := redis.ParseURL(cfg.Cache.Redis)
		if err != nil {
			return nil, err
		}
		// One attempt, a short timeout: the limiter fails open meanwhile.
		ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
		ro.MaxRetries = -1
		client := redis.NewClient(ro)
		prefix := cfg.Cache.RedisPrefix
		if prefix == "" {
			prefix = cache.DefaultPrefix
		}
		opts.Store = access.NewRedisStore(client, prefix+"access:")
		gopts.OnClose = func() { client.Close() }
	}
	gopts.Limiter = access.NewLimiter(opts)
	g := access.NewGate(checker, gopts)
	for _, c := range g.Collectors() {
		register(reg, c)
	}
	return g, nil
}

// CheckProtected is the protected mode: it refuses a configuration that
// listens on an address other than loopback with no access keys, unless
// access.allow_anonymous says so (see access.CheckProtected), and one
// that guards its models with keys there but leaves the admin surface
// open: without admin_token, /admin/requests/{id} (the debug store's
// texts), /admin/stats, /admin/outcomes and /metrics would answer anyone
// on the network. The command calls it before it starts serving.
func CheckProtected(cfg config.Config) error {
	ac := accessConfig(cfg.Access)
	if err := access.CheckProtected(cfg.Listen, ac); err != nil {
		return err
	}
	if len(ac.Keys) > 0 && cfg.AdminToken == "" && !access.Loopback(cfg.Listen) {
		return fmt.Errorf("protected mode: listen %q is reachable from other machines and access has keys but no admin_token, so anyone could read "+
			"the admin routes (/admin/requests/{id} with the debug store's texts, /admin/stats, /admin/outcomes, /ui) and /metrics; "+
			"set admin_token (or $GATEWAY_ADMIN_TOKEN), or listen on 127.0.0.1", cfg.Listen)
	}
	return nil
}
