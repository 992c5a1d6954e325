package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/gateway/debugstore"
	"github.com/contractgateway/gateway/gateway/models"
	"github.com/contractgateway/gateway/gateway/outcomes/guardlog"
	"github.com/contractgateway/gateway/gateway/pool"
	"github.com/contractgateway/gateway/gateway/stats"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
)

// Build assembles the whole gateway from cfg: the contracts (built-in and
// cfg.ContractsDir), the routes, the guard with its repair ladder, repair
// breakers and cache, the guard's metrics and the /contracts admin routes.
// Its errors are the configuration's.
func Build(cfg config.Config, logger *slog.Logger) (*Server, error) {
	return build(cfg, logger, nil)
}

// build is Build with a tracer provider of the caller's (tests); nil means
// the one cfg.Tracing configures, if any.
func build(cfg config.Config, logger *slog.Logger, tp trace.TracerProvider) (*Server, error) {
	if logger == nil {
		logger = slog.Default()
	}
	reg, err := contracts.LoadRegistry(cfg.ContractsDir)
	if err != nil {
		return nil, contractProblems(err)
	}
	routes, err := newRoutes(cfg, reg)
	if err != nil {
		return nil, err
	}
	promReg := prometheus.NewRegistry()
	gm := newGuardMetrics(promReg)
	breakers := newRepairBreakers(cfg.Breaker.FailureThreshold, cfg.Breaker.OpenTimeout)
	cacheStage, closeCache, err := newCache(cfg.Cache, logger, promReg)
	if err != nil {
		return nil, err
	}
	closeTracing := func() {}
	if tp == nil {
		if tp, closeTracing, err = newTracerProvider(cfg.Tracing); err != nil {
			closeCache()
			return nil, fmt.Errorf("tracing: %w", err)
		}
	}
	st := stats.New(nil)
	var ds *debugstore.Store
	if cfg.DebugStore {
		if ds, err = debugstore.New(int64(cfg.DebugStoreMaxBytes), cfg.DebugStoreTTL, cfg.DebugStoreRedact); err != nil {
			closeCache()
			closeTracing()
			return nil, err
		}
	}
	ol, err := guardlog.Open(guardlog.Options{SQLite: cfg.Outcomes.SQLite, Postgres: cfg.Outcomes.Postgres, Disabled: cfg.Outcomes.Disabled,
		Retention: time.Duration(cfg.Outcomes.Retention), Spool: cfg.Outcomes.Spool, SpoolMaxBytes: int64(cfg.Outcomes.SpoolMaxBytes),
		Logger: logger, Registry: promReg, Debug: ds})
	if err != nil {
		closeCache()
		closeTracing()
		return nil, err
	}
	// srv is set once New returns, before any request: the guard's Event
	// charges a key its tokens.
	var srv *Server
	guard := func(up *pool.Pool) (echo.MiddlewareFunc, error) {
		gc := guardConfig(cfg, logger, routes, up, breakers, func(ev middleware.Event) {
			gm.observe(ev)
			st.Observe(ev)
			srv.access.Observe(ev)
			ol.Observe(ev)
		})
		gc.Cache = cacheStage
		if ds != nil {
			gc.Record = ds.Add
		}
		gc.TracerProvider = tp
		mw, err := gc.ToMiddleware()
		if ds != nil && err == nil {
			mw = ds.OwnIDs(mw)
		}
		return mw, err
	}
	// The stats' route states are the server's, which exists once New
	// returns: before any request.
	routeStates := func(ctx context.Context) []models.RouteState { return srv.RouteStates(ctx) }
	srv, err = New(cfg, Options{
		Logger: logger,
		Guard:  guard,
		Admin: func(g *echo.Group) {
			contractRoutes(g, routes)
			statsRoute(g, ol.StatsReport(st), cfg.DebugStore, routeStates, func() map[string]access.KeyStats { return srv.access.Stats() },
				func() []pool.MemberStats { return srv.up.Stats() })
			if ds != nil {
				debugstore.Routes(g, ds)
			}
			ol.Routes(g)
		},
		Registry: promReg,
		OnClose: func() {
			ol.Close()
			closeTracing()
			closeCache()
		},

		VirtualModels: routes.VirtualModels,
	})
	if err != nil {
		ol.Close()
		closeTracing()
		closeCache()
		return nil, err
	}
	return srv, nil
}

// Check reports the problems of cfg that only loading shows, as Build
// would: every contract that does not load (a *contracts.FileError names
// its file and line) and every route whose contract or parameters are
// wrong (a *config.Problem names its key, routes[i].contract or
// routes[i].params). It builds no server: a caller that found problems of
// its own calls it to report every problem of every stage at once.
func Check(cfg config.Config) error {
	reg, err := contracts.LoadRegistry(cfg.ContractsDir)
	var errs []error
	if err != nil {
		errs = append(errs, contractProblems(err))
	}
	if reg != nil {
		if _, err := newRoutes(cfg, reg); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// contractProblems keeps the located problems of contract files as they
// are, and makes the others (a contracts_dir that cannot be read)
// problems of the contracts_dir key.
func contractProblems(err error) error {
	var out []error
	for _, e := range config.Problems(err) {
		var fe *contracts.FileError
		if !errors.As(e, &fe) {
			e = &config.Problem{Key: "contracts_dir", Err: fmt.Errorf("contracts_dir: %w", e)}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// newRoutes builds the routes of cfg over reg; each problem of a route is
// a *config.Problem of its key (routes[i].contract, .params, .model).
func newRoutes(cfg config.Config, reg *contracts.Registry) (*route.Routes, error) {
	specs := make([]route.Spec, 0, len(cfg.Routes))
	for _, r := range cfg.Routes {
		specs = append(specs, route.Spec{Model: r.Model, Upstream: r.Upstream, Contract: r.Contract,
			Params: r.Params, AddFormat: r.AddFormat, NoFormat: r.Format == "off", Output: r.Output, Report: r.Report, Stream: r.Stream,
			RepairModel: r.RepairModel})
	}
	routes, err := route.NewRoutes(reg, specs, cfg.AdHocSchemas, route.WithNoSchemaFormat(cfg.NoSchemaFormat...))
	if err == nil {
		return routes, nil
	}
	var out []error
	for _, e := range config.Problems(err) {
		var re *route.Error
		if errors.As(e, &re) {
			key := fmt.Sprintf("routes[%d].%s", re.Index, re.Field)
			e = &config.Problem{Key: key, Err: fmt.Errorf("%s: %w", key, e)}
		}
		out = append(out, e)
	}
	return nil, errors.Join(out...)
}

// guardConfig maps cfg onto the guard's own config, once: the guard owns
// its defaults, and the config's zero and negative values mean the same
// there (default, none).
func guardConfig(cfg config.Config, logger *slog.Logger, routes *route.Routes, up *pool.Pool,
	breakers *repairBreakers, observe func(middleware.Event)) middleware.GuardConfig {
	return middleware.GuardConfig{
		Resolver: routes,
		Upstream: up,
		// While the upstream breaker is open every model call would fail
		// at once: the ladder stops after local repair and falls back.
		RepairGate: func(route, model string) (bool, func(bool)) {
			if up.State() == gobreaker.StateOpen {
				return false, func(bool) {}
			}
			return breakers.gate(route, model)
		},
		MaxBodyBytes:     int64(cfg.MaxBodyBytes),
		MaxResponseBytes: int64(cfg.MaxResponseBytes),
		Deadline:         cfg.Deadline,
		StreamKeepAlive:  cfg.StreamKeepAlive,
		MaxLLMCalls:      cfg.MaxLLMCalls,
		ToolCalls:        cfg.GuardToolCalls,
		Logger:           logger,
		Observe:          observe,
	}
}

// repairBreakers holds one breaker per route and upstream model: requests
// whose ladder ended in fallback count as failures; while a breaker is open
// the ladder stops after local repair, so a model that cannot repair stops
// costing repair calls.
type repairBreakers struct {
	threshold uint32
	open      time.Duration
	mu        sync.Mutex
	byKey     map[string]*gobreaker.TwoStepCircuitBreaker[struct{}]
}

func newRepairBreakers(threshold int, open time.Duration) *repairBreakers {
	// The upstream breaker's settings and defaults serve both.
	if threshold <= 0 {
		threshold = upstream.DefaultFailureThreshold
	}
	if open <= 0 {
		open = upstream.DefaultOpenTimeout
	}
	return &repairBreakers{threshold: uint32(threshold), open: open, byKey: map[string]*gobreaker.TwoStepCircuitBreaker[struct{}]{}}
}

func (b *repairBreakers) get(route, model string) *gobreaker.TwoStepCircuitBreaker[struct{}] {
	key := route + "\x00" + model
	b.mu.Lock()
	defer b.mu.Unlock()
	cb, ok := b.byKey[key]
	if !ok {
		threshold := b.threshold
		cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        "repair:" + route + ":" + model,
			MaxRequests: 1,
			Timeout:     b.open,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= threshold },
		})
		b.byKey[key] = cb
	}
	return cb
}

// gate implements middleware.GuardConfig.RepairGate.
func (b *repairBreakers) gate(route, model string) (bool, func(bool)) {
	done, err := b.get(route, model).Allow()
	if err != nil {
		return false, func(bool) {}
	}
	return true, func(ok bool) {
		if ok {
			done(nil)
		} else {
			done(errFallback)
		}
	}
}

// State reports a repair breaker's state, for metrics and tests.
func (b *repairBreakers) State(route, model string) gobreaker.State {
	return b.get(route, model).State()
}

var errFallback = errors.New("ladder ended in fallback")

// guardMetrics are the Prometheus series of guarded requests, labelled by
// contract, model and code — never by prompt or output, which would leak
// what clients send and give every request a series of its own.
type guardMetrics struct {
	requests   *prometheus.CounterVec
	violations *prometheus.CounterVec
	llmCalls   *prometheus.CounterVec
	localFixes *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	cache      *prometheus.CounterVec
	tokens     *prometheus.CounterVec
	models     *stats.ModelLabels
}

func newGuardMetrics(reg *prometheus.Registry) *guardMetrics {
	return &guardMetrics{
		models: stats.NewModelLabels(stats.MaxModels),
		requests: counterVec(reg, "gateway_guarded_requests_total",
			"Guarded requests by contract (\"schema\" for ad-hoc schemas), upstream model and final status (valid, repaired, fallback, failed, or error when the upstream failed).",
			"contract", "model", "status"),
		violations: counterVec(reg, "gateway_violations_total",
			"Violations found in model output, by contract, model, code and stage (before repair, after repair).",
			"contract", "model", "code", "stage"),
		llmCalls: counterVec(reg, "gateway_repair_llm_calls_total",
			"Model calls made by the repair ladder (repairs, regenerations, re-runs).",
			"contract", "model"),
		localFixes: counterVec(reg, "gateway_local_fixes_total",
			"Edits made by local repair without a model.",
			"contract", "model"),
		cache: counterVec(reg, "gateway_cache_requests_total",
			"Guarded requests by cache result: hit (answered from the cache), miss (looked up, not found), bypass (no cache, or Cache-Control: no-cache).",
			"result"),
		tokens: counterVec(reg, "gateway_tokens_total",
			"Model tokens of guarded requests by contract, model, kind (prompt, output) and phase (first: the first answer; repair: the ladder's calls). Cache hits and coalesced requests cost none.",
			"contract", "model", "kind", "phase"),
		latency: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gateway_guard_duration_seconds",
			Help:    "Time spent on a guarded request, upstream calls included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"contract"})),
	}
}

// observe counts one guarded request. Label values stay bounded although
// clients choose schemas and model names (stats.ModelLabels.Of): every
// ad-hoc schema contract counts as "schema", a request that ended in an
// upstream error has model "", every spelling of one model is its
// canonical name (route.ModelName), and past stats.MaxModels names the
// rest count as "other".
func (m *guardMetrics) observe(ev middleware.Event) {
	contract, model := m.models.Of(ev)
	m.requests.WithLabelValues(contract, model, ev.Status).Inc()
	for _, c := range ev.CodesBefore {
		m.violations.WithLabelValues(contract, model, c, "before").Inc()
	}
	for _, c := range ev.CodesAfter {
		m.violations.WithLabelValues(contract, model, c, "after").Inc()
	}
	m.llmCalls.WithLabelValues(contract, model).Add(float64(ev.LLMCalls))
	m.localFixes.WithLabelValues(contract, model).Add(float64(ev.LocalFixes))
	m.latency.WithLabelValues(contract).Observe(ev.Latency.Seconds())
	if ev.Status != middleware.StatusError {
		m.tokens.WithLabelValues(contract, model, "prompt", "first").Add(float64(ev.FirstTokens.PromptTokens))
		m.tokens.WithLabelValues(contract, model, "output", "first").Add(float64(ev.FirstTokens.OutputTokens))
		m.tokens.WithLabelValues(contract, model, "prompt", "repair").Add(float64(ev.RepairTokens.PromptTokens))
		m.tokens.WithLabelValues(contract, model, "output", "repair").Add(float64(ev.RepairTokens.OutputTokens))
	}
	if ev.Cache != "" {
		m.cache.WithLabelValues(ev.Cache).Inc()
	}
}

// contractRoutes registers /contracts, /contracts/:name and
// POST /contracts/:name/validate.
func contractRoutes(g *echo.Group, routes *route.Routes) {
	g.GET("/contracts", func(c echo.Context) error {
		type item struct {
			ID          string   `json:"id"`
			Description string   `json:"description,omitempty"`
			Rules       []string `json:"rules"`
			Fallback    string   `json:"fallback"`
		}
		out := []item{}
		for _, ct := range routes.Registry().List() {
			rules := ct.Rules
			if rules == nil {
				rules = []string{}
			}
			out = append(out, item{ID: ct.ID(), Description: ct.Description, Rules: rules, Fallback: ct.Fallback.Mode})
		}
		return c.JSON(http.StatusOK, map[string]any{"contracts": out})
	})
	g.GET("/contracts/:name", func(c echo.Context) error {
		ct, ok := routes.Registry().Lookup(c.Param("name"))
		if !ok {
			return &apierr.Error{Code: http.StatusNotFound, Msg: fmt.Sprintf("unknown contract %q", c.Param("name"))}
		}
		return c.JSON(http.StatusOK, ct.Describe())
	})
	g.POST("/contracts/:name/validate", func(c echo.Context) error {
		v, ok := routes.Validator(c.Param("name"))
		if !ok {
			return &apierr.Error{Code: http.StatusNotFound, Msg: fmt.Sprintf("unknown contract %q", c.Param("name"))}
		}
		p, err := validators.ParseParams(c.Request().Header.Get("X-Contract-Params"))
		if err != nil {
			return &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error()}
		}
		params, err := v.Params(p)
		if err != nil {
			return &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error()}
		}
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return apierr.BodyRead(err)
		}
		return c.JSON(http.StatusOK, repair.Check(v, string(body), params))
	})
}

// newCache builds the cache stage of cfg: this process's memory, and the
// Redis the replicas share when one is configured. A negative max_bytes
// leaves memory out (Redis alone, or no cache at all). The closer releases
// Redis's connections.
func newCache(cfg config.Cache, logger *slog.Logger, reg *prometheus.Registry) (*middleware.Cache, func(), error) {
	noop := func() {}
	var mem *cache.Memory
	if cfg.MaxBytes >= 0 {
		mem = cache.NewMemory(cache.MemoryConfig{MaxBytes: int64(cfg.MaxBytes), TTL: cfg.TTL})
	}
	var store middleware.CacheStore
	var tiered *cache.Tiered
	var lease *cache.Redis
	closer := noop
	switch {
	case cfg.Redis != "":
		rs, err := cache.NewRedis(cache.RedisConfig{URL: cfg.Redis, Prefix: cfg.RedisPrefix, TTL: cfg.TTL})
		if err != nil {
			return nil, noop, err
		}
		closer = func() { rs.Close() }
		lease = rs
		// One warning per outage; every error is counted.
		tiered = cache.NewTiered(mem, rs, func(err error, degraded bool) {
			if degraded {
				logger.Warn("cache: redis unavailable; answering from memory, and sharing identical requests within this replica only, until it is back", "error", err.Error())
			}
		})
		store = tiered
	case mem != nil:
		store = mem
	default:
		return nil, noop, nil
	}
	stage := middleware.NewCache(store)
	stage.SharedAcrossKeys = cfg.SharedAcrossKeys
	if lease != nil {
		// Identical requests on different replicas share one run too.
		// The lease's Redis is the store's: its outage is the one
		// warning the store logs.
		stage.Lease, stage.LeaseTTL, stage.LeasePoll = lease, cfg.Lease.TTL, cfg.Lease.Poll
		register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gateway_cache_coalesced_remote_total",
			Help: "Guarded runs answered by another replica's run, whose lease in Redis they found taken.",
		}, func() float64 { return float64(stage.RemoteShared()) }))
	}
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gateway_cache_coalesced_total",
		Help: "Guarded requests that shared an identical request's upstream call and ladder.",
	}, func() float64 { return float64(stage.Coalesced()) }))
	if mem != nil {
		register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gateway_cache_stored_bytes",
			Help: "Bytes of validated outputs held in this process's memory cache.",
		}, func() float64 { return float64(mem.Stats().Bytes) }))
		register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gateway_cache_entries",
			Help: "Validated outputs held in this process's memory cache.",
		}, func() float64 { return float64(mem.Stats().Entries) }))
		register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gateway_cache_evictions_total",
			Help: "Entries evicted from the memory cache to stay within its bytes.",
		}, func() float64 { return float64(mem.Stats().Evictions) }))
	}
	if tiered != nil {
		register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gateway_cache_store_errors_total",
			Help: "Errors of the shared (Redis) cache; each request was answered from memory or as a miss.",
		}, func() float64 { return float64(tiered.Errors()) }))
	}
	return stage, closer, nil
}
