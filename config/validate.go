package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Validate reports every problem of cfg at once, joined with errors.Join,
// each a *Problem naming its YAML key; [Source.Locate] adds the file line
// (or the variable or flag) each came from. It returns nil when cfg is
// usable.
func (cfg Config) Validate() error {
	var errs []error
	// add records one problem of key; the message starts with the key
	// too, so that it reads alone when no line is known.
	add := func(key, format string, args ...any) {
		errs = append(errs, &Problem{Key: key, Err: fmt.Errorf(format, args...)})
	}

	if err := validListen(cfg.Listen); err != nil {
		add("listen", "listen: %v", err)
	}
	for i, h := range cfg.AllowedHosts {
		if err := validAllowedHost(h); err != nil {
			add(fmt.Sprintf("allowed_hosts[%d]", i), "allowed_hosts[%d] %q: %v", i, h, err)
		}
	}
	for i, o := range cfg.AllowedOrigins {
		if err := validAllowedOrigin(o); err != nil {
			add(fmt.Sprintf("allowed_origins[%d]", i), "allowed_origins[%d] %q: %v", i, o, err)
		}
	}
	if len(cfg.Upstreams) == 0 || cfg.Upstream != "" {
		up, err := ValidUpstream(cfg.Upstream)
		if err != nil {
			add("upstream", "upstream: %v", err)
		}
		if err == nil && sameAddress(cfg.Listen, up) {
			add("upstream", "upstream %q is the gateway's own listen address %q: point it at Ollama, not at the gateway", cfg.Upstream, cfg.Listen)
		}
	}
	cfg.validateUpstreams(add)

	nonNegative := func(key string, v int64) {
		if v < 0 {
			add(key, "%s: must not be negative (got %d)", key, v)
		}
	}
	// Limits, budgets and the cache take a negative value as "none"; a
	// breaker setting has no such meaning.
	nonNegative("upstream_timeout", int64(cfg.UpstreamTimeout))
	if cfg.Cache.Redis != "" {
		if u, err := url.Parse(cfg.Cache.Redis); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			add("cache.redis", "cache.redis %q: want redis://host:port[/db]", cfg.Cache.Redis)
		}
	}
	cfg.Cache.Lease.validate(add)
	if cfg.Tracing.Endpoint != "" {
		if u, err := url.Parse(cfg.Tracing.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("tracing.endpoint", "tracing.endpoint %q: want http(s)://host:port of an OTLP/HTTP collector", cfg.Tracing.Endpoint)
		}
	}
	nonNegative("debug_store_max_bytes", int64(cfg.DebugStoreMaxBytes))
	nonNegative("debug_store_ttl", int64(cfg.DebugStoreTTL))
	nonNegative("breaker.failure_threshold", int64(cfg.Breaker.FailureThreshold))
	nonNegative("breaker.open_timeout", int64(cfg.Breaker.OpenTimeout))
	nonNegative("breaker.half_open_max_requests", int64(cfg.Breaker.HalfOpenMaxRequests))

	switch strings.ToLower(cfg.Log.Level) {
	case "", "debug", "info", "warn", "warning", "error":
	default:
		add("log.level", "log.level %q: want debug, info, warn or error", cfg.Log.Level)
	}
	switch strings.ToLower(cfg.Log.Format) {
	case "", "text", "json":
	default:
		add("log.format", "log.format %q: want text or json", cfg.Log.Format)
	}

	first := map[string]int{}
	for i, r := range cfg.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		uniqueName(add, first, "routes", i, "model", r.Model, "the virtual model name clients send")
		if strings.TrimSpace(r.Contract) == "" {
			add(key+".contract", "%s.contract: required", key)
		}
		switch r.Output {
		case "", "bare", "fenced":
		default:
			add(key+".output", "%s.output %q: want bare or fenced", key, r.Output)
		}
		switch r.Report {
		case "", "corrections":
		default:
			add(key+".report", "%s.report %q: want corrections", key, r.Report)
		}
		switch r.Stream {
		case "", "progressive", "buffered":
		default:
			add(key+".stream", "%s.stream %q: want progressive or buffered", key, r.Stream)
		}
		switch r.Format {
		case "", "on":
		case "off":
			if r.AddFormat {
				add(key+".format", "%s: add_format true and format off contradict each other", key)
			}
		default:
			add(key+".format", "%s.format %q: want on or off", key, r.Format)
		}
		for k := range r.Params {
			if strings.TrimSpace(k) == "" {
				add(key+".params", "%s.params: empty parameter name", key)
			}
		}
	}
	if cfg.Outcomes.SpoolMaxBytes < 0 {
		add("outcomes.spool_max_bytes", "outcomes.spool_max_bytes: must be 0 (the default, 256MiB) or more")
	}
	if cfg.Outcomes.SQLite != "" && cfg.Outcomes.Postgres != "" {
		add("outcomes.postgres", "outcomes.postgres: excludes outcomes.sqlite; set one of them")
	}
	if p := cfg.Outcomes.Postgres; strings.Contains(p, "://") && !strings.HasPrefix(p, "postgres://") && !strings.HasPrefix(p, "postgresql://") {
		// The value is not echoed: a DSN may hold a password.
		add("outcomes.postgres", "outcomes.postgres: want postgres://user:password@host:port/database or key=value pairs")
	}
	cfg.Access.validate(add)
	return errors.Join(errs...)
}

// validateUpstreams checks the pool: one of upstream and upstreams, each
// member a valid URL, none twice, no negative weight.
func (cfg Config) validateUpstreams(add func(key, format string, args ...any)) {
	if len(cfg.Upstreams) > 0 && cfg.Upstream != "" {
		add("upstreams", "upstreams: upstream is set too; keep upstreams (several Ollama servers) or upstream (one), not both")
	}
	seen := map[string]int{}
	for i, u := range cfg.Upstreams {
		key := fmt.Sprintf("upstreams[%d]", i)
		parsed, err := ValidUpstream(u.URL)
		switch {
		case err != nil:
			add(key+".url", "%s.url: %v", key, err)
		case sameAddress(cfg.Listen, parsed):
			add(key+".url", "%s.url %q is the gateway's own listen address %q: point it at Ollama, not at the gateway", key, u.URL, cfg.Listen)
		}
		if j, dup := seen[strings.TrimSuffix(u.URL, "/")]; dup && err == nil {
			add(key+".url", "%s.url %q: duplicate of upstreams[%d]", key, u.URL, j)
		} else {
			seen[strings.TrimSuffix(u.URL, "/")] = i
		}
		if u.Weight < 0 {
			add(key+".weight", "%s.weight: must not be negative (got %d)", key, u.Weight)
		}
	}
}

// validAllowedHost accepts a host name or an IP address, without port,
// scheme or path: what the Host header names once its port is cut off.
func validAllowedHost(h string) error {
	if h == "" {
		return errors.New("empty; want a host name such as gpu-box.lan")
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return errors.New("want a host name or IP address without port, scheme or path")
		}
	}
	return nil
}

// originSchemes are the schemes an origin without a wildcard may have:
// gin-contrib/cors's default and browser-extension schemas, which Ollama
// enables (AllowBrowserExtensions).
var originSchemes = []string{
	"http://", "https://",
	"chrome-extension://", "safari-extension://", "moz-extension://", "ms-browser-extension://",
}

// validAllowedOrigin applies gin-contrib/cors's Config.Validate and
// parseWildcardRules to one entry, whose failures make Ollama panic at
// startup: at most one "*", and an entry without one must start with an
// allowed scheme.
func validAllowedOrigin(o string) error {
	o = strings.TrimSpace(o)
	switch n := strings.Count(o, "*"); {
	case o == "":
		return errors.New("empty; want an origin such as https://app.example.com")
	case n > 1:
		return errors.New("only one * is allowed")
	case n == 1:
		return nil
	}
	for _, s := range originSchemes {
		if strings.HasPrefix(o, s) {
			return nil
		}
	}
	return fmt.Errorf("want scheme://host[:port] with scheme %s, or a * wildcard", strings.Join(originSchemes, ", "))
}

func validListen(addr string) error {
	if addr == "" {
		return errors.New("empty; want host:port such as 127.0.0.1:11435")
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port such as 127.0.0.1:11435", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

// ValidUpstream parses an upstream base URL: http or https, a host, no
// query, fragment or user info.
func ValidUpstream(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("empty; want the Ollama URL such as http://127.0.0.1:11434")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", raw, errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q: want an http:// or https:// URL", raw)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%q: no host", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%q: no query or fragment allowed", raw)
	case u.User != nil:
		return nil, fmt.Errorf("%q: user info is not supported (the proxy would not send it)", raw)
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return nil, fmt.Errorf("%q: bad port %q", raw, p)
		}
	}
	return u, nil
}

// sameAddress reports whether the upstream is literally the listen address,
// a loop that would exhaust file descriptors on the first request.
func sameAddress(listen string, up *url.URL) bool {
	lh, lp, err := net.SplitHostPort(listen)
	if err != nil || lp == "0" {
		return false
	}
	port := up.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[up.Scheme]
	}
	if port != lp {
		return false
	}
	uh := up.Hostname()
	loop := func(h string) bool { return h == "" || h == "localhost" || isLoopback(h) || isUnspecified(h) }
	return uh == lh || (loop(uh) && loop(lh))
}

func isLoopback(h string) bool {
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isUnspecified(h string) bool {
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}

// validate checks the lease's settings: a TTL the holder can keep renewed,
// and a poll below it (a waiting replica that looked less often than the
// lease lasts would notice neither the answer nor a dead holder in time).
func (l CacheLease) validate(add func(key, format string, args ...any)) {
	ttl := l.TTL
	switch {
	case ttl == 0:
		ttl = defaultLeaseTTL
	case ttl < 0:
		add("cache.lease.ttl", "cache.lease.ttl: must not be negative (got %v); 0 means the default, %v", l.TTL, defaultLeaseTTL)
	case ttl < minLeaseTTL:
		add("cache.lease.ttl", "cache.lease.ttl %v: must be at least %v: the holder renews its lease every third of it, and a shorter one lapses while its run goes on", l.TTL, minLeaseTTL)
	}
	switch {
	case l.Poll < 0:
		add("cache.lease.poll", "cache.lease.poll: must not be negative (got %v); 0 means the default, %v", l.Poll, defaultLeasePoll)
	case ttl > 0 && l.Poll >= ttl:
		add("cache.lease.poll", "cache.lease.poll %v: must be below cache.lease.ttl (%v): a waiting replica would look for the holder's answer less often than the lease lasts", l.Poll, ttl)
	}
}
