package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/gateway/pool"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/modelcall"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// ctxKeyAccess is where the access check leaves the caller's key name,
// for the request's log line.
const ctxKeyAccess = "contractgateway.access.key"

// accessKeyName is the name of the key that made the request ("" when
// access control is off, or the request was refused before a key was
// known).
func accessKeyName(c echo.Context) string {
	name, _ := c.Get(ctxKeyAccess).(string)
	return name
}

// accessGate is the edge's access check: it identifies the caller by its
// key, checks the key's scope and limits before the guard and the proxy
// see the request, strips the key so that the upstream never gets it,
// charges the tokens the request spent when it ends, and shows a key only
// its own models in listings.
type accessGate struct {
	checker *access.Checker
	limiter *access.Limiter
	close   func()

	// inflight maps the request id of each request in flight to its use,
	// for the guard's Event (which carries the id) to charge. An Event
	// whose id is not there — the debug store gave the request a fresh id
	// after the access check — waits in renamed until its request ends.
	inflight sync.Map
	renamed  sync.Map

	requests *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	refusals *prometheus.CounterVec

	mu    sync.Mutex
	stats map[string]*KeyStats
}

// KeyStats are one key's counts since start, in /admin/stats.
type KeyStats struct {
	Requests int            `json:"requests"`
	ByStatus map[string]int `json:"by_status"`
	Refused  map[string]int `json:"refused"`
	Tokens   int            `json:"tokens"`
}

// accessUse is what one request in flight spent, as the guard reports it.
type accessUse struct {
	guarded atomic.Bool
	tokens  atomic.Int64
}

// newAccessGate builds the access check of cfg; nil when cfg has no keys
// (every request is let through, as before). Limits are counted in
// cfg.Cache.Redis when set, shared by the replicas, else in memory.
func newAccessGate(cfg config.Config, logger *slog.Logger, reg *prometheus.Registry) (*accessGate, error) {
	ac := access.Config{AllowAnonymous: cfg.Access.AllowAnonymous}
	for _, k := range cfg.Access.Keys {
		ac.Keys = append(ac.Keys, access.Key{Name: k.Name, SHA256: k.SHA256,
			Scope:  access.Scope{Models: k.Models, Manage: k.Manage},
			Limits: access.Limits{RequestsPerMinute: k.Limits.RequestsPerMinute, TokensPerMinute: k.Limits.TokensPerMinute, Concurrent: k.Limits.Concurrent}})
	}
	if a := cfg.Access.Anonymous; a != nil {
		ac.Anonymous = &access.Scope{Models: a.Models, Manage: a.Manage}
	}
	checker, err := access.New(ac)
	if err != nil {
		return nil, fmt.Errorf("access: %w", err)
	}
	if !checker.Enabled() {
		return nil, nil
	}
	g := &accessGate{checker: checker, close: func() {}, stats: map[string]*KeyStats{}}
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
		g.close = func() { client.Close() }
	}
	g.limiter = access.NewLimiter(opts)

	g.requests = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_access_requests_total",
		Help: "Requests by API key name (\"anonymous\" without a key, \"\" when no key was recognised) and status.",
	}, []string{"key", "status"}))
	g.tokens = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_access_tokens_total",
		Help: "Prompt and output tokens of every upstream call a key's requests made, repairs included, as charged to its tokens_per_minute.",
	}, []string{"key"}))
	g.refusals = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_access_refusals_total",
		Help: "Requests refused at the edge by key and reason (unauthenticated, model, manage, requests_per_minute, tokens_per_minute, concurrent).",
	}, []string{"key", "reason"}))
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gateway_access_limiter_errors_total",
		Help: "Failures of the shared (Redis) limiter; each request was let through.",
	}, func() float64 { return float64(g.limiter.StoreErrors()) }))
	for _, name := range checker.Names() {
		g.tokens.WithLabelValues(name)
	}
	return g, nil
}

// Close releases the limiter's Redis connections.
func (g *accessGate) Close() {
	if g != nil {
		g.close()
	}
}

// observe records the guard's Event of a request in flight: its tokens,
// first answer and repairs alike, are what the request is charged.
func (g *accessGate) observe(ev middleware.Event) {
	if g == nil {
		return
	}
	v, ok := g.inflight.Load(ev.RequestID)
	if !ok {
		v, _ = g.renamed.LoadOrStore(ev.RequestID, &accessUse{})
	}
	use := v.(*accessUse)
	use.guarded.Store(true)
	use.tokens.Add(int64(ev.FirstTokens.PromptTokens + ev.FirstTokens.OutputTokens +
		ev.RepairTokens.PromptTokens + ev.RepairTokens.OutputTokens))
}

// keyStats returns the counts by key for /admin/stats.
func (g *accessGate) keyStats() map[string]KeyStats {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]KeyStats, len(g.stats))
	for k, s := range g.stats {
		c := *s
		c.ByStatus, c.Refused = maps(s.ByStatus), maps(s.Refused)
		out[k] = c
	}
	return out
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// count records one request of key: its status, its refusal reason if
// any, the tokens charged.
func (g *accessGate) count(key string, status int, reason string, tokens int) {
	code := strconv.Itoa(status)
	g.requests.WithLabelValues(key, code).Inc()
	if reason != "" {
		g.refusals.WithLabelValues(key, reason).Inc()
	}
	if tokens > 0 {
		g.tokens.WithLabelValues(key).Add(float64(tokens))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.stats[key]
	if !ok {
		s = &KeyStats{ByStatus: map[string]int{}, Refused: map[string]int{}}
		g.stats[key] = s
	}
	s.Requests++
	s.ByStatus[code]++
	if reason != "" {
		s.Refused[reason]++
	}
	s.Tokens += tokens
}

// charged adds tokens spent by key's work after its request ended to its
// counts.
func (g *accessGate) charged(key string, tokens int) {
	if tokens <= 0 {
		return
	}
	g.tokens.WithLabelValues(key).Add(float64(tokens))
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.stats[key]; ok {
		s.Tokens += tokens
	}
}

// openPaths are the routes every caller reaches without a key: health,
// and the dashboard's static files (its data comes from admin routes).
var openPaths = []string{"/healthz", "/ui", "/ui/*"}

// checkAccess is the edge middleware of the access check (see
// accessGate). Admin routes keep the admin token and /healthz stays open;
// every other request — the guard's and the proxy's — needs a key, or the
// anonymous policy, when keys are configured. A refused request never
// reaches the upstream.
func (s *Server) checkAccess(next echo.HandlerFunc) echo.HandlerFunc {
	g := s.access
	if g == nil {
		return next
	}
	return func(c echo.Context) error {
		if s.adminPath[c.Path()] || slices.Contains(openPaths, c.Path()) {
			return next(c)
		}
		req := c.Request()
		p, err := g.checker.Identify(req.Header)
		access.StripKey(req.Header)
		if err != nil {
			g.count("", http.StatusUnauthorized, access.ReasonOf(err), 0)
			return err
		}
		c.Set(ctxKeyAccess, p.Name)
		ctx := middleware.WithCaller(req.Context(), p.Name)
		// The guard's work after its answer (the drain of an early-stopped
		// call) holds a place of the key in flight and is charged.
		ctx = modelcall.WithBackground(ctx, func() func(int) {
			done := g.limiter.Hold(ctx, p)
			return func(tokens int) {
				done(tokens)
				g.charged(p.Name, tokens)
			}
		})
		req = req.WithContext(ctx)
		c.SetRequest(req)
		ep := access.Classify(req.Method, req.URL.Path)
		var raw []byte
		if ep.Members != nil && !p.AllModels() && req.Body != nil && req.Body != http.NoBody {
			if raw, err = io.ReadAll(req.Body); err != nil {
				return apierr.BodyRead(err)
			}
			req.Body = io.NopCloser(bytes.NewReader(raw))
		}
		need, err := ep.Need(raw)
		if err != nil {
			return &apierr.Error{Code: http.StatusBadRequest, Msg: "invalid JSON body: the request's model cannot be read", Err: err}
		}
		if err := p.Authorize(need); err != nil {
			g.count(p.Name, apierr.From(err).Status(), access.ReasonOf(err), 0)
			return err
		}
		done, err := g.limiter.Admit(req.Context(), p)
		if err != nil {
			g.count(p.Name, apierr.From(err).Status(), access.ReasonOf(err), 0)
			return err
		}

		id := s.uniqueRequestID(c)
		use := &accessUse{}
		g.inflight.Store(id, use)
		w := &accessWriter{ResponseWriter: c.Response().Writer, principal: p}
		// The prompt's text is measured as the body goes upstream: the
		// estimate of a request whose answer has no counters.
		meter := access.MeterOf(req.URL.Path)
		var prompt lockedMeter
		if meter.Use != access.UseCounters && req.Body != nil && req.Body != http.NoBody {
			if raw != nil {
				prompt.Write(raw)
			} else {
				req.Body = teeBody{req.Body, io.TeeReader(req.Body, &prompt)}
			}
		}
		if ep.List != access.ListNone && !p.AllModels() && req.Method == http.MethodGet {
			w.list = ep.List
			// The list is read to be filtered: ask for it uncompressed.
			req.Header.Del(echo.HeaderAcceptEncoding)
		}
		c.Response().Writer = w
		defer func() {
			// Deferred: a pass-through stream the client cut ends in
			// net/http's abort panic, and its tokens are charged all the
			// same.
			c.Response().Writer = w.ResponseWriter
			g.inflight.Delete(id)
			if final := c.Response().Header().Get(echo.HeaderXRequestID); final != id {
				if v, ok := g.renamed.LoadAndDelete(final); ok {
					use = v.(*accessUse)
				}
			}
			var tokens int
			if use.guarded.Load() {
				tokens = int(use.tokens.Load())
			} else {
				tokens = w.tail.Charge(meter, prompt.Tokens(), w.frames.Frames())
			}
			done(tokens)
			g.count(p.Name, c.Response().Status, "", tokens)
		}()
		if err := next(c); err != nil {
			c.Error(err)
		}
		if err := w.finish(); err != nil {
			// Echo took the held-back listing's status as written, but
			// none of it went out: the answer is still the error
			// writer's.
			res := c.Response()
			res.Committed, res.Size = false, 0
			c.Error(err)
		}
		if c.Response().Committed {
			// The client has its whole answer before the tokens are
			// charged: a shared limiter's round trip is not its wait.
			http.NewResponseController(w.ResponseWriter).Flush()
		}
		return nil
	}
}

// lockedMeter is a PromptMeter that the transport's goroutine, which
// sends the body upstream, writes and the request's reads.
type lockedMeter struct {
	mu sync.Mutex
	m  upstream.PromptMeter
}

func (l *lockedMeter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.Write(p)
}

func (l *lockedMeter) Tokens() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.Tokens()
}

// teeBody is a request body read through a reader that measures it, and
// closed as the body.
type teeBody struct {
	io.Closer
	io.Reader
}

// uniqueRequestID returns the request's id, made unique among the
// requests in flight: the guard's Event names its request by id, and a
// client that sends one id twice at once must not have one request's
// tokens charged to the other.
func (s *Server) uniqueRequestID(c echo.Context) string {
	id := c.Response().Header().Get(echo.HeaderXRequestID)
	if _, taken := s.access.inflight.Load(id); taken || id == "" {
		id = middleware.NewRequestID()
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		c.Request().Header.Set(echo.HeaderXRequestID, id)
	}
	return id
}

// accessWriter sits under echo's Response for a request with a key: it
// keeps the end of the answer, whose token counters a pass-through request
// is charged, and holds a listing of models back to filter it.
type accessWriter struct {
	http.ResponseWriter
	principal *access.Principal
	tail      access.Tail
	frames    upstream.FrameCounter

	list   access.List
	status int
	buf    bytes.Buffer
	// over is set when a listing held back went past
	// pool.MaxMemberAnswerBytes: the rest is not buffered, and the
	// client gets a 502 instead of a listing cut short.
	over bool
}

func (w *accessWriter) WriteHeader(code int) {
	if w.list != access.ListNone {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *accessWriter) Write(p []byte) (int, error) {
	if w.list != access.ListNone {
		if w.over || w.buf.Len()+len(p) > pool.MaxMemberAnswerBytes {
			w.over = true
			w.buf.Reset()
			return len(p), nil
		}
		return w.buf.Write(p)
	}
	w.tail.Write(p)
	w.frames.Write(p)
	return w.ResponseWriter.Write(p)
}

// Flush flushes the answer, except a listing held back.
func (w *accessWriter) Flush() {
	if w.list == access.ListNone {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (w *accessWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a listing held back, filtered down to the caller's
// models. A listing that cannot be read is not sent — it could list
// models the key may not see — and nothing of it has gone out: finish
// returns a 502 for the one error writer instead, its cause for the log.
func (w *accessWriter) finish() error {
	if w.list == access.ListNone {
		return nil
	}
	kind := w.list
	w.list = access.ListNone
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	body := w.buf.Bytes()
	h := w.Header()
	if status == http.StatusOK {
		filtered, err := w.principal.FilterList(kind, body)
		switch {
		case w.over:
			err = fmt.Errorf("the listing is longer than %d bytes", pool.MaxMemberAnswerBytes)
		case h.Get(echo.HeaderContentEncoding) != "":
			err = fmt.Errorf("the listing is encoded (%s)", h.Get(echo.HeaderContentEncoding))
		}
		if err != nil {
			w.buf.Reset()
			return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream model list unreadable", Err: err}
		}
		body = filtered
	}
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(status)
	w.ResponseWriter.Write(body)
	return nil
}

// CheckProtected is the protected mode: it refuses a configuration that
// listens on an address other than loopback with no access keys, unless
// access.allow_anonymous says so (see access.CheckProtected), and one
// that guards its models with keys there but leaves the admin surface
// open: without admin_token, /admin/requests/{id} (the debug store's
// texts), /admin/stats, /admin/outcomes and /metrics would answer anyone
// on the network. The command calls it before it starts serving.
func CheckProtected(cfg config.Config) error {
	ac := access.Config{AllowAnonymous: cfg.Access.AllowAnonymous}
	for _, k := range cfg.Access.Keys {
		ac.Keys = append(ac.Keys, access.Key{Name: k.Name})
	}
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
