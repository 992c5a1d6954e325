package access

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/modelcall"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// This file is the echo glue of the access check: the edge middleware that
// identifies, authorizes and limits each request, the filter of listings,
// the charge of the tokens each request spent, and the counts by key.

// ctxKeyAccess is where the access check leaves the caller's key name,
// for the request's log line.
const ctxKeyAccess = "contractgateway.access.key"

// KeyName is the name of the key that made the request ("" when access
// control is off, or the request was refused before a key was known), for
// the request's log line and its caller.
func KeyName(c echo.Context) string {
	name, _ := c.Get(ctxKeyAccess).(string)
	return name
}

// SetKeyName records on c the name of the key that made the request,
// which KeyName reads.
func SetKeyName(c echo.Context, name string) { c.Set(ctxKeyAccess, name) }

// Gate is the edge's access check: it identifies the caller by its key,
// checks the key's scope and limits before the guard and the proxy see the
// request, strips the key so that the upstream never gets it, charges the
// tokens the request spent when it ends, and shows a key only its own
// models in listings. A nil *Gate is access control off: every request is
// let through.
type Gate struct {
	checker *Checker
	limiter *Limiter
	maxList int
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

	limiterErrors prometheus.CounterFunc

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

// keyUse is what one request in flight spent, as the guard reports it.
type keyUse struct {
	guarded atomic.Bool
	tokens  atomic.Int64
}

// GateOptions are what a Gate is built with besides its keys.
type GateOptions struct {
	// Limiter counts the keys' requests, tokens and requests in flight.
	Limiter *Limiter
	// MaxListBytes bounds a listing of models held back to be filtered
	// for a key: past it the client gets a 502 instead of a listing cut
	// short.
	MaxListBytes int
	// OnClose, when not nil, releases what the limiter's store holds (its
	// Redis connections).
	OnClose func()
}

// NewGate returns the access check of checker's keys; nil when checker
// has none (every request is let through, as without access control).
func NewGate(checker *Checker, opts GateOptions) *Gate {
	if !checker.Enabled() {
		return nil
	}
	g := &Gate{checker: checker, limiter: opts.Limiter, maxList: opts.MaxListBytes, close: opts.OnClose, stats: map[string]*KeyStats{}}
	if g.close == nil {
		g.close = func() {}
	}
	g.requests = counterVec("gateway_access_requests_total",
		"Requests by API key name (\"anonymous\" without a key, \"\" when no key was recognised) and status.",
		"key", "status")
	g.tokens = counterVec("gateway_access_tokens_total",
		"Prompt and output tokens of every upstream call a key's requests made, repairs included, as charged to its tokens_per_minute.",
		"key")
	g.refusals = counterVec("gateway_access_refusals_total",
		"Requests refused at the edge by key and reason (unauthenticated, model, manage, requests_per_minute, tokens_per_minute, concurrent).",
		"key", "reason")
	g.limiterErrors = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gateway_access_limiter_errors_total",
		Help: "Failures of the shared (Redis) limiter; each request was let through.",
	}, func() float64 { return float64(g.limiter.StoreErrors()) })
	for _, name := range checker.Names() {
		g.tokens.WithLabelValues(name)
	}
	return g
}

// counterVec is a counter vector of name and help, labelled by labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Collectors are the Gate's Prometheus series, for the server's registry.
func (g *Gate) Collectors() []prometheus.Collector {
	if g == nil {
		return nil
	}
	return []prometheus.Collector{g.requests, g.tokens, g.refusals, g.limiterErrors}
}

// Close releases the limiter's Redis connections.
func (g *Gate) Close() {
	if g != nil {
		g.close()
	}
}

// Observe records the guard's Event of a request in flight: its tokens,
// first answer and repairs alike, are what the request is charged.
func (g *Gate) Observe(ev middleware.Event) {
	if g == nil {
		return
	}
	v, ok := g.inflight.Load(ev.RequestID)
	if !ok {
		v, _ = g.renamed.LoadOrStore(ev.RequestID, &keyUse{})
	}
	use := v.(*keyUse)
	use.guarded.Store(true)
	use.tokens.Add(int64(ev.FirstTokens.PromptTokens + ev.FirstTokens.OutputTokens +
		ev.RepairTokens.PromptTokens + ev.RepairTokens.OutputTokens))
}

// Stats returns the counts by key for /admin/stats; nil without access
// control.
func (g *Gate) Stats() map[string]KeyStats {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]KeyStats, len(g.stats))
	for k, s := range g.stats {
		c := *s
		c.ByStatus, c.Refused = maps.Clone(s.ByStatus), maps.Clone(s.Refused)
		out[k] = c
	}
	return out
}

// Pending lists the ids of the requests whose use the Gate still holds:
// in flight, or an Event waiting for its request, renamed after the
// check, to end. Once every request has ended it is empty.
func (g *Gate) Pending() []string {
	var ids []string
	if g == nil {
		return ids
	}
	for _, m := range []*sync.Map{&g.inflight, &g.renamed} {
		m.Range(func(id, _ any) bool { ids = append(ids, id.(string)); return true })
	}
	return ids
}

// count records one request of key: its status, its refusal reason if
// any, the tokens charged.
func (g *Gate) count(key string, status int, reason string, tokens int) {
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
func (g *Gate) charged(key string, tokens int) {
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

// Middleware is the edge middleware of the access check (see Gate);
// admin tells the admin routes, which keep the admin token. /healthz and
// the dashboard's files stay open; every other request — the guard's and
// the proxy's — needs a key, or the anonymous policy, when keys are
// configured. A refused request never reaches the upstream. A nil Gate's
// middleware lets everything through.
func (g *Gate) Middleware(admin func(route string) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if g == nil {
			return next
		}
		return g.check(admin, next)
	}
}

// check is the middleware of a Gate with keys, before next.
func (g *Gate) check(admin func(route string) bool, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if admin(c.Path()) || slices.Contains(openPaths, c.Path()) {
			return next(c)
		}
		req := c.Request()
		p, err := g.checker.Identify(req.Header)
		StripKey(req.Header)
		if err != nil {
			g.count("", http.StatusUnauthorized, ReasonOf(err), 0)
			return err
		}
		SetKeyName(c, p.Name)
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
		ep := Classify(req.Method, req.URL.Path)
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
			g.count(p.Name, apierr.From(err).Status(), ReasonOf(err), 0)
			return err
		}
		done, err := g.limiter.Admit(req.Context(), p)
		if err != nil {
			g.count(p.Name, apierr.From(err).Status(), ReasonOf(err), 0)
			return err
		}

		id := g.uniqueRequestID(c)
		use := &keyUse{}
		g.inflight.Store(id, use)
		w := &gateWriter{ResponseWriter: c.Response().Writer, principal: p, max: g.maxList}
		// The prompt's text is measured as the body goes upstream: the
		// estimate of a request whose answer has no counters.
		meter := MeterOf(req.URL.Path)
		var prompt lockedMeter
		if meter.Use != UseCounters && req.Body != nil && req.Body != http.NoBody {
			if raw != nil {
				prompt.Write(raw)
			} else {
				req.Body = teeBody{req.Body, io.TeeReader(req.Body, &prompt)}
			}
		}
		if ep.List != ListNone && !p.AllModels() && req.Method == http.MethodGet {
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
					use = v.(*keyUse)
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
func (g *Gate) uniqueRequestID(c echo.Context) string {
	id := c.Response().Header().Get(echo.HeaderXRequestID)
	if _, taken := g.inflight.Load(id); taken || id == "" {
		id = middleware.NewRequestID()
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		c.Request().Header.Set(echo.HeaderXRequestID, id)
	}
	return id
}

// gateWriter sits under echo's Response for a request with a key: it
// keeps the end of the answer, whose token counters a pass-through request
// is charged, and holds a listing of models back to filter it.
type gateWriter struct {
	http.ResponseWriter
	principal *Principal
	tail      Tail
	frames    upstream.FrameCounter

	list   List
	status int
	buf    bytes.Buffer
	// max bounds a listing held back (GateOptions.MaxListBytes); over is
	// set when one went past it: the rest is not buffered, and the client
	// gets a 502 instead of a listing cut short.
	max  int
	over bool
}

func (w *gateWriter) WriteHeader(code int) {
	if w.list != ListNone {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *gateWriter) Write(p []byte) (int, error) {
	if w.list != ListNone {
		if w.over || w.buf.Len()+len(p) > w.max {
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
func (w *gateWriter) Flush() {
	if w.list == ListNone {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (w *gateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a listing held back, filtered down to the caller's
// models. A listing that cannot be read is not sent — it could list
// models the key may not see — and nothing of it has gone out: finish
// returns a 502 for the one error writer instead, its cause for the log.
func (w *gateWriter) finish() error {
	if w.list == ListNone {
		return nil
	}
	kind := w.list
	w.list = ListNone
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
			err = fmt.Errorf("the listing is longer than %d bytes", w.max)
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
