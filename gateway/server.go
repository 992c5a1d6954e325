// Package gateway is the Contract Gateway server: an Ollama-compatible
// HTTP endpoint that guards generate and chat responses (through the
// middleware it is given) and passes every other Ollama endpoint through
// unchanged, streaming included, plus health, readiness and metrics.
package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/gateway/edge"
	"github.com/contractgateway/gateway/gateway/models"
	"github.com/contractgateway/gateway/gateway/pool"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/apis"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// Options are the parts of a Server that are built elsewhere.
type Options struct {
	// Logger receives the request log and the server's own events. Nil
	// means slog.Default().
	Logger *slog.Logger

	// Guard builds the middleware that wraps the proxy on the POST routes
	// of the guard's codecs (apis.All), given the upstream it is to ask:
	// the server's one upstream client, built first, so that guarded calls
	// and pass-through share one connection pool and one breaker. Nil
	// means no guarding: those requests are passed through like any other.
	Guard func(up *pool.Pool) (echo.MiddlewareFunc, error)

	// Admin, when not nil, registers extra admin routes (such as
	// /contracts) on a group at the root. They get the admin token check.
	// Their paths must not shadow Ollama's ("/", "/api/…", "/v1/…"): New
	// fails if they do.
	Admin func(*echo.Group)

	// VirtualModels lists the virtual models, which the model endpoints
	// (/api/tags, /api/show, /api/pull, /v1/models, …) answer as models.
	// Nil means none: those endpoints pass through.
	VirtualModels func() []route.VirtualModel

	// Registry receives the gateway's metrics and is served on /metrics.
	// Nil means a new registry with the Go and process collectors.
	Registry *prometheus.Registry

	// OnClose, when not nil, releases what the options hold (the cache's
	// Redis connections) once the server is done: when Serve returns, or
	// on Close.
	OnClose func()
}

// Server is the gateway's HTTP server. Build it with [New]; serve it with
// [Server.Serve] or mount [Server.Handler].
type Server struct {
	cfg       config.Config
	log       *slog.Logger
	echo      *echo.Echo
	base      *http.Transport
	up        *pool.Pool // the one road to Ollama: proxy, guard, model routes, readiness
	proxy     *httputil.ReverseProxy
	registry  *prometheus.Registry
	metrics   *metrics
	adminPath map[string]bool // route patterns that need the admin token
	onClose   func()
	closeOnce sync.Once
	release   *edge.HeapReleaser // returns the memory of large bodies
	models    *models.Models     // the virtual models' endpoints and states; nil without any
	access    *access.Gate       // API keys and their limits; nil: none configured
	// draining is set when a shutdown begins: /readyz answers 503 from
	// then on.
	draining atomic.Bool
	// afterDelay waits out the shutdown delay; time.After but in tests.
	afterDelay func(time.Duration) <-chan time.Time
}

// New validates cfg and builds a Server from it and opts. It starts
// nothing: no goroutine runs until Serve or the first request.
func New(cfg config.Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var members []pool.Member
	for _, u := range cfg.UpstreamList() {
		parsed, err := config.ValidUpstream(u.URL)
		if err != nil {
			return nil, err
		}
		members = append(members, pool.Member{URL: parsed, Weight: u.Weight})
	}
	s := &Server{
		cfg:        cfg,
		log:        opts.Logger,
		registry:   opts.Registry,
		adminPath:  map[string]bool{},
		release:    edge.NewHeapReleaser(),
		afterDelay: time.After,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
	}
	s.metrics = newMetrics(s.registry, func() float64 { return float64(s.up.State()) })

	s.base = newUpstreamTransport(cfg)
	s.up = pool.New(pool.Options{
		Members: members, HealthInterval: cfg.UpstreamHealthInterval, Logger: s.log, RequestModel: access.RequestModel,
		Transport: s.base,
		Breaker: upstream.BreakerSettings{
			FailureThreshold:    cfg.Breaker.FailureThreshold,
			OpenTimeout:         cfg.Breaker.OpenTimeout,
			HalfOpenMaxRequests: cfg.Breaker.HalfOpenMaxRequests,
			OnStateChange: func(name string, from, to gobreaker.State) {
				s.log.Warn("upstream breaker", "upstream", name, "from", from.String(), "to", to.String())
				s.metrics.breakerTransitions.WithLabelValues(to.String()).Inc()
			},
		},
	})
	register(s.registry, s.up.Collector())
	s.proxy = s.newProxy()
	s.models = models.New(s.up, opts.VirtualModels, s.log, cfg.Listen)
	var err error
	if s.access, err = newAccessGate(cfg, s.log, s.registry); err != nil {
		return nil, err
	}

	s.onClose = opts.OnClose
	if err := s.routes(opts); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultUpstreamMaxConns bounds the connections open to the upstream at
// once when the config's upstream_max_conns is zero. It is the size of the
// idle pool, and far more than the requests one Ollama runs in parallel
// (the rest wait in its queue anyway): only a crowd is held back.
const DefaultUpstreamMaxConns = 256

// newUpstreamTransport is the connection pool to the upstream.
func newUpstreamTransport(cfg config.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// The client's Accept-Encoding decides compression: a transport that
	// asked for gzip on its own would decode it and change the bytes.
	t.DisableCompression = true
	// Many clients stream at once to one upstream; the default of 2 idle
	// connections per host would close and redial most of them.
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	// A pass-through request holds its upstream connection as long as its
	// client takes to send the body and read the answer: without a bound,
	// a crowd of slow clients opens as many upstream connections. Beyond
	// the bound a request waits for a connection, or for its client to
	// leave.
	switch {
	case cfg.UpstreamMaxConns == 0:
		t.MaxConnsPerHost = DefaultUpstreamMaxConns
	case cfg.UpstreamMaxConns > 0:
		t.MaxConnsPerHost = cfg.UpstreamMaxConns
	}
	t.ResponseHeaderTimeout = cfg.UpstreamTimeout
	return t
}

func (s *Server) routes(opts Options) error {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(logWriter{s.log})
	e.HTTPErrorHandler = middleware.ErrorHandler // the one writer of every error, the guard's and the gateway's
	s.echo = e

	e.Pre(dropBadRequestID, edge.CanonicalizePath)
	e.Use(
		echomw.RequestIDWithConfig(echomw.RequestIDConfig{
			Generator: middleware.NewRequestID,
			// The upstream gets the id too, so its logs can be matched.
			RequestIDHandler: func(c echo.Context, id string) {
				c.Request().Header.Set(echo.HeaderXRequestID, id)
			},
		}),
		s.logRequests,
		edge.NewPolicy(s.cfg.Listen, s.cfg.AllowedHosts, s.cfg.AllowedOrigins).Middleware, // Ollama's Origin and Host rules, before any route
		echomw.RecoverWithConfig(echomw.RecoverConfig{
			LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
				return &apierr.Error{Code: http.StatusInternalServerError, Msg: "internal server error",
					Err: fmt.Errorf("panic: %w\n%s", err, stack)}
			},
		}),
		edge.CheckPath,
		edge.BodyReadTimeout(timeoutOr(s.cfg.BodyReadTimeout, DefaultBodyReadTimeout)),
		s.limitBody,
		s.release.Middleware,
		s.requireAdminToken,
		s.access.Middleware(func(route string) bool { return s.adminPath[route] }), // API keys: after the body's bounds, before the guard and the proxy
		markCaller, // who sent it, for the upstream breakers: after the access check names the key
	)

	pass := s.proxyHandler
	if opts.Guard != nil {
		guard, err := opts.Guard(s.up)
		if err != nil {
			return err
		}
		for _, cd := range apis.All() {
			e.POST(cd.Path(), pass, guard)
		}
	}
	s.models.Routes(e, pass)
	e.Any("/*", pass)

	return s.adminRoutes(opts.Admin)
}

// Handler returns the gateway's HTTP handler.
func (s *Server) Handler() http.Handler { return s.echo }

// CloseIdleConnections closes the idle upstream connections. Serve does it
// when it returns; a caller that mounted Handler elsewhere calls it once
// done serving.
func (s *Server) CloseIdleConnections() { s.up.CloseIdleConnections() }

// Close releases the server's resources once it is done serving: idle
// upstream connections and what Options.OnClose releases. Serve calls it
// when it returns; a caller that mounted Handler elsewhere calls it.
func (s *Server) Close() {
	s.up.Close()
	s.release.Stop()
	s.closeOnce.Do(func() {
		s.access.Close()
		if s.onClose != nil {
			s.onClose()
		}
	})
}

// RouteStates reads the upstream's model list (within readyTimeout, as
// /readyz asks: /admin/stats must stay quick with the upstream down) and
// returns every route's state; when the upstream does not answer, the
// states it last gave.
func (s *Server) RouteStates(ctx context.Context) []models.RouteState {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return s.models.States(ctx)
}

// Breaker returns the upstream breaker, for guarded requests to check its
// state.
func (s *Server) Breaker() *upstream.BreakerTransport { return s.up.Breaker() }

// DefaultShutdownGrace is how long in-flight requests may finish after a
// shutdown signal when the config's shutdown_grace is zero.
const DefaultShutdownGrace = 10 * time.Second

// DefaultShutdownDelay is how long a gateway keeps serving, not ready,
// after a shutdown signal when the config's shutdown_delay is zero: a
// load balancer checking /readyz every 2s takes it out of rotation within
// it, even after a missed check.
const DefaultShutdownDelay = 5 * time.Second

// readHeaderTimeout bounds how long a client may take to send its request
// headers (slowloris). A body is bounded by the time between two of its
// reads (body_read_timeout), never as a whole: uploads and streams are
// long by nature.
const readHeaderTimeout = 30 * time.Second

// Serve serves on ln until ctx is done, then shuts down gracefully: it
// reports not ready on /readyz and keeps serving, new connections
// included, for cfg.ShutdownDelay, so that a load balancer takes it out
// of rotation before anything is refused; then it stops accepting, lets
// in-flight requests finish for up to cfg.ShutdownGrace, then cancels the
// ones still running and closes their connections. It returns nil after a
// shutdown, or the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// Requests derive from base, not ctx: ctx ends when shutdown begins,
	// and in-flight requests must get their grace period.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	var inflight sync.WaitGroup
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inflight.Add(1)
			defer inflight.Done()
			if s.draining.Load() {
				// Each answer now closes its connection, so that a
				// client's next request opens a new one, which the
				// balancer sends elsewhere.
				w.Header().Set("Connection", "close")
			}
			s.echo.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       timeoutOr(s.cfg.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	checked := s.models.CheckAtStart(base, ln.Addr().String())

	select {
	case err := <-errc:
		cancelBase()
		<-checked
		s.Close()
		return err
	case <-ctx.Done():
	}

	s.draining.Store(true)
	delay := timeoutOr(s.cfg.ShutdownDelay, DefaultShutdownDelay)
	if delay > 0 {
		// Idle connections stay open until the delay ends: closing them
		// now (SetKeepAlivesEnabled) races a balancer that still sees
		// the gateway ready and sends a request on one, whose client
		// then gets an empty answer.
		s.log.Info("shutting down: not ready, still serving until the delay ends", "delay", delay)
		select {
		case <-s.afterDelay(delay):
		case err := <-errc:
			// The listener failed: nothing more to wait for.
			errc <- err
		}
	}

	graceTime := s.cfg.ShutdownGrace
	switch {
	case graceTime == 0:
		graceTime = DefaultShutdownGrace
	case graceTime < 0:
		graceTime = 0
	}
	s.log.Info("shutting down", "grace", graceTime)
	grace, cancel := context.WithTimeout(context.Background(), graceTime)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		s.log.Warn("shutdown grace expired; cancelling in-flight requests", "grace", graceTime)
		cancelBase()
		srv.Close()
	}
	<-errc // http.ErrServerClosed
	waitTimeout(&inflight, 5*time.Second)
	cancelBase()
	<-checked
	s.Close()
	return nil
}

// waitTimeout waits for wg, at most d: a handler that ignores its
// cancelled context must not hold the process forever.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// logRequests writes one log line per request, and its metrics. It never
// logs bodies or query strings (prompts are personal data).
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		c.SetRequest(c.Request().WithContext(upstream.Track(c.Request().Context())))
		aborted := true
		defer func() {
			// Reached by a panic only for http.ErrAbortHandler (the
			// recover middleware handles the rest): a stream cut short.
			// Log it, then let net/http drop the connection.
			s.logRequest(c, start, aborted)
		}()
		if err := next(c); err != nil {
			c.Error(err)
		}
		aborted = false
		return nil
	}
}

func (s *Server) logRequest(c echo.Context, start time.Time, aborted bool) {
	req, res := c.Request(), c.Response()
	elapsed := time.Since(start)
	status := res.Status
	route := c.Path()
	level := slog.LevelInfo
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs,
		slog.String("method", req.Method),
		slog.String("path", req.URL.Path),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("latency_ms", float64(elapsed.Microseconds())/1000),
		slog.Int64("bytes", res.Size),
		slog.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
	)
	if up := upstream.Served(req.Context()); up != "" {
		attrs = append(attrs, slog.String("upstream", up))
	}
	if key := access.KeyName(c); key != "" {
		attrs = append(attrs, slog.String("key", key))
	}
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
		// A client that leaves mid-stream is routine; an upstream that
		// breaks one is worth a look.
		if req.Context().Err() == nil {
			level = slog.LevelWarn
		}
	}
	if he := middleware.LoggedError(c); he != nil {
		attrs = append(attrs, slog.String("error", he.Cause()))
		if he.Status() >= 500 {
			level = slog.LevelWarn
		}
	}
	// The record goes to the handler directly: Logger.LogAttrs would walk
	// the stack for the caller's address on every request, which the
	// line never shows (it is always this function's).
	if h := s.log.Handler(); h.Enabled(req.Context(), level) {
		r := slog.NewRecord(time.Now(), level, "request", 0)
		r.AddAttrs(attrs...)
		_ = h.Handle(req.Context(), r)
	}
	s.metrics.observe(route, req.Method, status, elapsed)
}

// limitBody bounds request bodies to cfg.MaxBodyBytes: 413 at once when the
// declared length is over, and a MaxBytesReader for bodies of unknown
// length, whose error becomes 413 wherever it is read (proxy or guard).
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	limit := int64(s.cfg.MaxBodyBytes)
	switch {
	case limit == 0:
		limit = middleware.DefaultMaxBodyBytes
	case limit < 0:
		return next
	}
	return func(c echo.Context) error {
		req := c.Request()
		// Blob uploads (ollama create) are model files of gigabytes,
		// streamed through and never buffered.
		if req.Body == nil || req.Body == http.NoBody || strings.HasPrefix(req.URL.Path, "/api/blobs/") {
			return next(c)
		}
		if req.ContentLength > limit {
			return &http.MaxBytesError{Limit: limit}
		}
		req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, limit)
		return next(c)
	}
}

// logWriter sends echo's own log lines (rare: a write after commit) to
// slog.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Warn("echo", "msg", strings.TrimSpace(string(p)))
	return len(p), nil
}

var _ io.Writer = logWriter{}

// maxRequestIDLen bounds a client-sent X-Request-Id, which ends up in
// every log line of the request.
const maxRequestIDLen = 128

// dropBadRequestID removes a client-sent X-Request-Id that is too long or
// not visible ASCII, so that a fresh one is generated in its place.
func dropBadRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		if id := h.Get(echo.HeaderXRequestID); id != "" && !validRequestID(id) {
			h.Del(echo.HeaderXRequestID)
		}
		return next(c)
	}
}

func validRequestID(id string) bool {
	if len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}
