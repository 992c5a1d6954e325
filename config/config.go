// Package config turns defaults, a YAML file, the environment and command
// line flags into one [Config], in that order of precedence.
//
// Decoding is strict: an unknown key in the file is an error that names the
// file, the line and the key. [Config.Validate] reports every problem at
// once, so that a user fixes a file in one pass.
//
// The upstream is never taken from OLLAMA_HOST: applications point
// OLLAMA_HOST at the gateway, so reading it would make the gateway proxy to
// itself.
package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Default values of the settings that have no component of their own.
// Every limit, budget and timeout is owned by the component it configures
// (the guard, the cache, the breaker, the server), which documents its
// default: in a Config, zero means that default and a negative value means
// none.
const (
	DefaultListen   = "127.0.0.1:11435"
	DefaultUpstream = "http://127.0.0.1:11434"
)

// Environment variables read by [FromEnv]. EnvConfig is not read by FromEnv:
// the file it names must be loaded before the environment is applied, so
// the caller reads it (see cmd/gateway).
const (
	EnvListen     = "GATEWAY_LISTEN"
	EnvUpstream   = "GATEWAY_UPSTREAM"
	EnvUpstreams  = "GATEWAY_UPSTREAMS"
	EnvContracts  = "GATEWAY_CONTRACTS"
	EnvAdminToken = "GATEWAY_ADMIN_TOKEN"
	EnvMaxBody    = "GATEWAY_MAX_BODY_BYTES"
	EnvLogLevel   = "GATEWAY_LOG_LEVEL"
	EnvLogFormat  = "GATEWAY_LOG_FORMAT"
	EnvConfig     = "GATEWAY_CONFIG"

	EnvOutcomesSQLite   = "GATEWAY_OUTCOMES_SQLITE"
	EnvOutcomesPostgres = "GATEWAY_OUTCOMES_POSTGRES"
)

// Config is the gateway's whole configuration. Start from [Default] (which
// [Load] does): a zero Config is not the default configuration, since
// Listen, Upstream and AdHocSchemas have defaults of their own. Every
// numeric field's zero means its default, everywhere.
type Config struct {
	// Listen is the host:port the gateway serves on. Default
	// "127.0.0.1:11435" (loopback, one above Ollama's 11434). Empty is
	// invalid. Port 0 picks a free port.
	Listen string `yaml:"listen"`

	// Upstream is the base URL of the Ollama server (http or https).
	// Default "http://127.0.0.1:11434". Empty is invalid unless Upstreams
	// is set; setting both is a problem.
	Upstream string `yaml:"upstream"`

	// Upstreams are several Ollama servers the gateway serves as one: each
	// request goes to a healthy one that has its model (see
	// [UpstreamServer]). Empty means Upstream alone, a pool of one.
	Upstreams []UpstreamServer `yaml:"upstreams"`

	// UpstreamHealthInterval is how often each of several Upstreams is
	// asked for its /api/version, /api/tags and /api/ps, to know which are
	// up and which models each has and has loaded. Zero means the default,
	// 5s; a negative value means never (every member may then have every
	// model, and only its breaker takes it out). One upstream is never
	// polled.
	UpstreamHealthInterval time.Duration `yaml:"upstream_health_interval"`

	// ContractsDir is a directory of user contracts loaded next to the
	// built-in ones. Empty means built-in contracts only.
	ContractsDir string `yaml:"contracts_dir"`

	// AllowedHosts lists host names, besides the local ones, that a
	// request's Host header may name while the gateway listens on a
	// loopback address. Ollama refuses any other Host there, so that a web
	// page whose domain is rebound to 127.0.0.1 (DNS rebinding) cannot
	// reach it; the gateway keeps that defence at its edge. Local names are
	// always allowed: localhost, *.localhost, *.local, *.internal, the
	// machine's hostname, the listen address's own host, and loopback,
	// private and this machine's IP addresses. Entries are host names or IP
	// addresses without port, matched case-insensitively. Empty means the
	// local names only. Not consulted when the gateway listens on another
	// address, as Ollama does not check Host there.
	AllowedHosts []string `yaml:"allowed_hosts"`

	// AllowedOrigins lists the browser origins, besides Ollama's defaults,
	// that may call the gateway (OLLAMA_ORIGINS's rule): a request with an
	// Origin header that matches none gets 403, and one that matches gets
	// CORS headers. Entries are scheme://host[:port] (http, https or a
	// browser extension's scheme) and may hold one "*" as a wildcard
	// ("https://*.example.com", "chrome-extension://*"); "*" alone allows
	// every origin. Empty means Ollama's defaults only: http(s) on
	// localhost, 127.0.0.1 and 0.0.0.0 on any port, and app://, file://,
	// tauri://, vscode-webview:// and vscode-file://.
	AllowedOrigins []string `yaml:"allowed_origins"`

	// AdminToken, when set, is required as "Authorization: Bearer TOKEN" on
	// every admin route except /healthz and /readyz (which a load
	// balancer's health check asks without it, and which then says ready
	// or not, nothing more). Empty leaves admin routes open:
	// fine on loopback; on another listen address with access keys the
	// gateway refuses to start without one (protected mode).
	AdminToken string `yaml:"admin_token"`

	// MaxBodyBytes bounds a client's request body, in bytes; a larger body
	// gets 413. Accepts units ("32MiB"). Zero means the default, 32 MiB; a
	// negative value means no limit. Blob uploads (/api/blobs/…) are streamed to the upstream and
	// never buffered, so they are exempt: model files are gigabytes.
	MaxBodyBytes ByteSize `yaml:"max_body_bytes"`

	// MaxResponseBytes bounds how much of an upstream response the gateway
	// buffers on a guarded route, in bytes; a larger response gets 502.
	// Pass-through responses are streamed and not bounded. Zero means the
	// default, 64 MiB; a negative value means no limit.
	MaxResponseBytes ByteSize `yaml:"max_response_bytes"`

	// ShutdownGrace is how long in-flight requests may run after a shutdown
	// signal before their connections are closed. Zero means the default,
	// 10s; a negative value closes them at once.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`

	// ShutdownDelay is how long a gateway told to stop (SIGTERM) keeps
	// serving, new connections included, while /readyz answers 503, so
	// that a load balancer's health check takes it out of rotation before
	// it stops accepting: a rolling restart then fails no request. The
	// grace period for in-flight requests starts after it. Zero means the
	// default, 5s; a negative value means none.
	ShutdownDelay time.Duration `yaml:"shutdown_delay"`

	// UpstreamTimeout bounds the wait for the upstream's response headers,
	// on every upstream request. Ollama sends the headers of a streamed
	// response as soon as the model is loaded, but those of a non-streamed
	// one only when generation has finished, so a value that suits streams
	// cuts long non-streamed generations short: set it above the longest
	// generation you expect. A timeout counts as an upstream failure for the
	// breaker. Zero means the default, no timeout (the client's own
	// disconnect and, on guarded routes, Deadline still apply).
	UpstreamTimeout time.Duration `yaml:"upstream_timeout"`

	// UpstreamMaxConns bounds the connections open to the upstream at
	// once, pass-through and guarded calls together: a request beyond it
	// waits for one to free (or for its client to leave) instead of
	// opening another, so that many slow clients cannot make the gateway
	// open one upstream connection each. Zero means the default, 256; a
	// negative value means no bound.
	UpstreamMaxConns int `yaml:"upstream_max_conns"`

	// IdleTimeout closes a keep-alive connection that carries no request
	// for this long. Zero means the default, 120s; a negative value means
	// none.
	IdleTimeout time.Duration `yaml:"idle_timeout"`

	// BodyReadTimeout bounds the wait for the next bytes of a request body
	// (nginx's client_body_timeout): a client that stops sending gets 408
	// and its connection closed. An upload that keeps flowing is never
	// cut, however long. Zero means the default, 60s; a negative value
	// means none.
	BodyReadTimeout time.Duration `yaml:"body_read_timeout"`

	// Deadline is the wall-clock budget of one guarded request, repair
	// included. Zero means the default, 120s; a negative value means no
	// deadline.
	Deadline time.Duration `yaml:"deadline"`

	// StreamKeepAlive is how often a client that asked for a stream hears
	// from a guarded request the guard still holds (validating, repairing):
	// the API's own harmless keep-alive — an NDJSON chunk with empty
	// content and done false, an SSE comment, Anthropic's ping, the
	// Responses API's in-progress event — so that no proxy or client cuts
	// an idle stream. Zero means the default, 10s; a negative value means
	// none (the stream starts when the answer is ready).
	StreamKeepAlive time.Duration `yaml:"stream_keepalive"`

	// MaxLLMCalls is the number of upstream model calls one guarded request
	// may make for repair, partial regeneration and re-runs. Zero means the
	// default, 6; a negative value means none (local repair only).
	MaxLLMCalls int `yaml:"max_llm_calls"`

	// AdHocSchemas guards requests that match no route but carry a JSON
	// Schema as `format` (or OpenAI response_format.json_schema), against
	// that schema, with fallback best_effort. Default true. False passes
	// such requests through untouched.
	AdHocSchemas bool `yaml:"ad_hoc_schemas"`

	// Cache configures the cache of validated outputs, keyed by the
	// canonical request, so that a repeated request is answered without
	// another upstream call or repair.
	Cache Cache `yaml:"cache"`

	// Breaker configures the upstream circuit breaker.
	Breaker Breaker `yaml:"breaker"`

	// Access configures API keys, their limits and protected mode. The
	// zero value has no keys: every request is let through.
	Access Access `yaml:"access"`

	// GuardToolCalls checks the tool calls of requests no contract guards:
	// when such a request declares tools and the answer calls them, each
	// call's arguments are validated against the function's parameters
	// schema and repaired, or the client gets 422. False (the default)
	// passes them through untouched; guarded requests always get their
	// tool calls checked.
	GuardToolCalls bool `yaml:"guard_tool_calls"`

	// NoSchemaFormat lists upstream models that cannot take a JSON Schema
	// as their format (their server refuses it or their output degrades):
	// the guard never adds the contract's schema to a request for them,
	// and only validates and repairs their answers. A name without a tag
	// means its "latest" tag. Empty means every model takes one.
	NoSchemaFormat []string `yaml:"no_schema_format"`

	// Routes are the virtual models: a request whose model names one is
	// guarded by the route's contract. Empty means only X-Contract headers
	// and ad hoc schemas guard requests.
	Routes []Route `yaml:"routes"`

	// Log configures the process log.
	Log Log `yaml:"log"`

	// Tracing configures OpenTelemetry traces of guarded requests.
	Tracing Tracing `yaml:"tracing"`

	// DebugStore keeps the before/after JSON of guarded requests in memory,
	// with a TTL, for inspection (GET /admin/requests). Prompts and outputs
	// may hold personal data, so it is off by default. False means nothing
	// is kept.
	DebugStore bool `yaml:"debug_store"`

	// DebugStoreMaxBytes bounds the debug store's memory. Accepts units
	// ("16MiB"). Zero means the default, 16 MiB.
	DebugStoreMaxBytes ByteSize `yaml:"debug_store_max_bytes"`

	// DebugStoreTTL is how long the debug store keeps a request. Zero means
	// the default, 15m.
	DebugStoreTTL time.Duration `yaml:"debug_store_ttl"`

	// DebugStoreRedact lists the values blanked out before a request is
	// kept, as JSON Pointers ("/customer/email") or dotted paths
	// ("customer.email", "items[*].name"; * matches any key or index).
	// When set, text that is not JSON is not kept either.
	DebugStoreRedact []string `yaml:"debug_store_redact"`

	// Outcomes configures the outcome store: one record per guarded
	// request in a database, for GET /admin/outcomes and /admin/trends.
	Outcomes Outcomes `yaml:"outcomes"`
}

// Outcomes configures the outcome store. The zero value keeps records in
// SQLite at the command's default path (DefaultOutcomesSQLite) for 168h.
type Outcomes struct {
	// SQLite is the path of the SQLite file records are kept in, created
	// with its directory when missing. Empty means the default path in
	// the user's state directory, which the command fills in
	// (DefaultOutcomesSQLite); a gateway built from a Config with neither
	// SQLite nor Postgres keeps no records.
	SQLite string `yaml:"sqlite"`

	// Postgres, when set, is the DSN of a PostgreSQL every replica writes
	// to and reads from (postgres://user:pass@host:port/db, or key=value
	// pairs), instead of SQLite. Prefer $GATEWAY_OUTCOMES_POSTGRES for a
	// DSN holding a password.
	Postgres string `yaml:"postgres"`

	// Retention is how long records are kept; older ones are deleted in
	// the background. Zero means the default, 168h; a negative value
	// (-1) keeps everything.
	Retention Retention `yaml:"retention"`

	// Disabled turns the outcome store off: no records, no database.
	Disabled bool `yaml:"disabled"`

	// Spool is the path of the file the batches a failing database
	// refuses are kept in, in order, until it takes them (also across a
	// restart), so that an outage loses no record. Empty means the
	// default path next to the default SQLite file, which the command
	// fills in (DefaultOutcomesSpool); with no state directory the spool
	// is kept in memory. Each gateway of a host needs its own: a spool in
	// use by another process is refused, and that gateway spools in
	// memory.
	Spool string `yaml:"spool"`

	// SpoolMaxBytes bounds the spool. Records past it are dropped and
	// counted (gateway_outcomes_spool_dropped_total). Accepts units
	// ("256MiB"). Zero means the default, 256 MiB: about an hour of
	// records at 100 guarded requests/s.
	SpoolMaxBytes ByteSize `yaml:"spool_max_bytes"`
}

// Retention is a duration ("168h") that also takes -1, keeping everything.
type Retention time.Duration

// DefaultOutcomesSpool is the outcome spool's default path:
// outcomes.spool in the directory of DefaultOutcomesSQLite, or "" (a spool
// in memory) when getenv knows no state directory.
func DefaultOutcomesSpool(getenv func(string) string) string {
	db := DefaultOutcomesSQLite(getenv)
	if db == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(db), "outcomes.spool")
}

// DefaultOutcomesSQLite is the outcome store's default SQLite path:
// $XDG_STATE_HOME/contract-gateway/outcomes.db, else
// $HOME/.local/state/contract-gateway/outcomes.db (the XDG default). It is
// "" when getenv knows neither, and then no records are kept.
func DefaultOutcomesSQLite(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "contract-gateway", "outcomes.db")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "contract-gateway", "outcomes.db")
	}
	return ""
}

// Cache configures the byte-bounded TTL cache of validated outputs, and
// the sharing of identical concurrent requests that goes with it.
type Cache struct {
	// MaxBytes bounds the outputs kept in this process's memory, in bytes.
	// Accepts units ("64MiB"). Zero means the default, 64 MiB; a negative
	// value keeps nothing in memory: Redis alone when Redis is set, else no
	// cache at all (and no sharing of identical requests).
	MaxBytes ByteSize `yaml:"max_bytes"`

	// TTL is how long an entry may be served. Zero means the default, 1h;
	// a negative value means entries do not expire (they are still
	// evicted by MaxBytes, and by Redis's own memory policy).
	TTL time.Duration `yaml:"ttl"`

	// Redis, when set, is the URL of a Redis shared by every replica
	// behind one load balancer (redis://[:password@]host:port[/db]), so
	// that a repaired answer is paid for once across them. Empty means
	// this process's memory only. Redis down or slow degrades to memory,
	// with one warning per outage; a request never fails for the cache.
	Redis string `yaml:"redis"`

	// RedisPrefix is prepended to every key, one per deployment sharing a
	// Redis. Empty means "cg:".
	RedisPrefix string `yaml:"redis_prefix"`

	// SharedAcrossKeys lets requests of different API keys (access.keys)
	// answer one another from the cache and share runs in flight. False,
	// the default, keeps each key's entries to that key: a hit would tell
	// one tenant what another asked. Requests without a key share one
	// partition either way.
	SharedAcrossKeys bool `yaml:"shared_across_keys"`

	// Lease tunes how replicas on one Redis share one run of identical
	// guarded requests; it does nothing without Redis.
	Lease CacheLease `yaml:"lease"`
}

// The lease's defaults, which cache.DefaultLeaseTTL and
// cache.DefaultLeasePoll also are (config imports no component; a test
// keeps them equal), and the shortest lease the holder can keep renewed.
const (
	defaultLeaseTTL  = 10 * time.Second
	defaultLeasePoll = 50 * time.Millisecond
	minLeaseTTL      = 100 * time.Millisecond
)

// CacheLease configures the lease in Redis through which replicas share
// one run of identical guarded requests: the replica that takes a key's
// lease makes the upstream call, the others wait for its cache entry.
type CacheLease struct {
	// TTL is the lease's life unless its holder renews it, which it does
	// every third of it while its run goes on: how long the other
	// replicas wait for a holder that died before they make their own
	// call. Zero means the default, 10s; otherwise at least 100ms.
	TTL time.Duration `yaml:"ttl"`

	// Poll is how often a waiting replica looks for the holder's cache
	// entry (and whether the lease is still held): the most a waiting
	// request lags behind the holder's answer, against one Redis read
	// per waiting request each time. Zero means the default, 50ms;
	// otherwise below the TTL.
	Poll time.Duration `yaml:"poll"`
}

// Breaker configures the upstream circuit breaker. The zero value of every
// field means its default, so that a file may set one field alone.
type Breaker struct {
	// FailureThreshold is the number of consecutive upstream failures
	// that opens the breaker: transport errors, timeouts and a proxy's
	// 502/504 from any caller, other 5xx once they reached two callers
	// (keys or client addresses; see upstream.BreakerSettings). Default 5.
	// Zero means the default.
	FailureThreshold int `yaml:"failure_threshold"`

	// OpenTimeout is how long the breaker stays open, answering 503 at
	// once, before it lets trial requests through. Default 30s. Zero means
	// the default.
	OpenTimeout time.Duration `yaml:"open_timeout"`

	// HalfOpenMaxRequests is the number of trial requests let through while
	// half-open; that many successes close the breaker, one failure opens it
	// again. Default 1. Zero means the default.
	HalfOpenMaxRequests int `yaml:"half_open_max_requests"`
}

// UpstreamServer is one Ollama server of a pool.
type UpstreamServer struct {
	// URL is the server's base URL (http or https). Required.
	URL string `yaml:"url"`
	// Weight decides between servers that are otherwise equal for a
	// request (the model loaded or not on both, as many requests in
	// flight): the higher first. Zero means 1; negative is invalid.
	Weight int `yaml:"weight"`
}

// UpstreamList returns the upstreams cfg describes: Upstreams, or
// Upstream alone as a pool of one.
func (cfg Config) UpstreamList() []UpstreamServer {
	if len(cfg.Upstreams) > 0 {
		return cfg.Upstreams
	}
	return []UpstreamServer{{URL: cfg.Upstream}}
}

// ParseUpstreams reads a list of upstreams as GATEWAY_UPSTREAMS and
// --upstreams give it: URLs separated by commas, each optionally followed
// by ";weight=N" ("http://gpu1:11434;weight=2,http://gpu2:11434").
func ParseUpstreams(s string) ([]UpstreamServer, error) {
	var out []UpstreamServer
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		u, opt, found := strings.Cut(item, ";")
		us := UpstreamServer{URL: strings.TrimSpace(u)}
		if found {
			w, ok := strings.CutPrefix(strings.TrimSpace(opt), "weight=")
			n, err := strconv.Atoi(w)
			if !ok || err != nil {
				return nil, fmt.Errorf("%q: want URL or URL;weight=N", item)
			}
			us.Weight = n
		}
		out = append(out, us)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q: no URL", s)
	}
	return out, nil
}

// Route maps a virtual model name to an upstream model and a contract.
type Route struct {
	// Model is the virtual model name clients send. Required, unique
	// across routes.
	Model string `yaml:"model"`

	// Upstream is the model asked upstream. Empty means Model itself.
	Upstream string `yaml:"upstream"`

	// Contract is the contract's name, or name@version. Required.
	Contract string `yaml:"contract"`

	// Params are the contract's parameters (for mcq: count, options, …).
	// Empty means the contract's defaults.
	Params map[string]string `yaml:"params"`

	// AddFormat passes the contract's schema as Ollama `format` when the
	// client set none, so that the first attempt is grammar-constrained.
	// That is the default; true says so explicitly and cannot be combined
	// with Format "off".
	AddFormat bool `yaml:"add_format"`

	// Format says whether the contract's schema is passed as the format of
	// a request whose client set none: "on" (or empty, the default) or
	// "off", which leaves the request's format as the client wrote it.
	// Upstream models listed in NoSchemaFormat never get one.
	Format string `yaml:"format"`

	// Output overrides the contract's output mode: "bare" or "fenced".
	// Empty means the contract's own.
	Output string `yaml:"output"`

	// Report adds to the contract summary of every answer of the route:
	// "corrections" lists what changed (as X-Contract-Report: corrections
	// asks per request). Empty means the summary alone.
	Report string `yaml:"report"`

	// Stream is how a client's stream of a contract with an item array is
	// answered: "progressive" releases each item as it validates,
	// "buffered" holds the answer (with keep-alives) until it is whole.
	// Empty means progressive; X-Contract-Stream overrides it per request.
	Stream string `yaml:"stream"`
	// RepairModel is the model of the route's LLM repair and partial
	// regeneration calls, on whichever upstream has it; the first answer
	// and re-runs stay on Upstream. Empty means the contract's
	// repair_model, else Upstream.
	RepairModel string `yaml:"repair_model"`
}

// Log configures the process log.
type Log struct {
	// Level is the lowest level logged: debug, info, warn or error. Empty
	// means info.
	Level string `yaml:"level"`

	// Format is text (logfmt-like key=value) or json. Empty means text.
	Format string `yaml:"format"`
}

// Default returns the default configuration.
func Default() Config {
	return Config{
		Listen:       DefaultListen,
		Upstream:     DefaultUpstream,
		AdHocSchemas: true,
		Log:          Log{Level: "info", Format: "text"},
	}
}

// FromEnv applies the GATEWAY_* environment variables that are set and not
// empty to cfg: GATEWAY_LISTEN, GATEWAY_UPSTREAM, GATEWAY_UPSTREAMS,
// GATEWAY_CONTRACTS, GATEWAY_ADMIN_TOKEN, GATEWAY_MAX_BODY_BYTES,
// GATEWAY_LOG_LEVEL, GATEWAY_LOG_FORMAT, GATEWAY_OUTCOMES_SQLITE and
// GATEWAY_OUTCOMES_POSTGRES. It never reads OLLAMA_HOST. getenv is os.Getenv in
// production and a map lookup in tests. The error names the variable whose
// value does not parse; cfg is left unchanged for that variable only.
func FromEnv(cfg *Config, getenv func(string) string) error {
	set := func(dst *string, key string) {
		if v := getenv(key); v != "" {
			*dst = v
		}
	}
	set(&cfg.Listen, EnvListen)
	set(&cfg.Upstream, EnvUpstream)
	if getenv(EnvUpstream) != "" {
		cfg.Upstreams = nil // one upstream in the environment replaces the file's pool
	}
	if v := getenv(EnvUpstreams); v != "" {
		list, err := ParseUpstreams(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvUpstreams, err)
		}
		cfg.Upstreams = list
		if getenv(EnvUpstream) == "" {
			cfg.Upstream = "" // the environment's pool replaces the file's upstream
		}
	}
	set(&cfg.ContractsDir, EnvContracts)
	set(&cfg.AdminToken, EnvAdminToken)
	set(&cfg.Log.Level, EnvLogLevel)
	set(&cfg.Log.Format, EnvLogFormat)
	set(&cfg.Outcomes.SQLite, EnvOutcomesSQLite)
	set(&cfg.Outcomes.Postgres, EnvOutcomesPostgres)
	if v := getenv(EnvMaxBody); v != "" {
		n, err := ParseByteSize(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvMaxBody, err)
		}
		cfg.MaxBodyBytes = n
	}
	return nil
}

// Tracing configures the OpenTelemetry traces of guarded requests: a span
// per request, its stages and its model calls, exported over OTLP/HTTP.
type Tracing struct {
	// Endpoint is the OTLP/HTTP collector's URL ("http://localhost:4318";
	// spans go to its /v1/traces unless the URL names another path).
	// Empty means no tracing.
	Endpoint string `yaml:"endpoint"`
	// ServiceName is the service.name of the spans. Empty means
	// "contract-gateway".
	ServiceName string `yaml:"service_name"`
}
