// Package middleware is the embeddable part of Contract Gateway: an echo
// middleware that guards Ollama's generate and chat responses (and the
// OpenAI-compatible chat completions). Mounted in front of any handler that
// speaks the Ollama API — a reverse proxy, usually — it validates the
// model's answer against a contract, repairs it, and answers in the
// client's own shape, or with 422 and the violation report.
package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// GuardConfig configures the guard. The zero value of every field but
// Resolver means its documented default.
type GuardConfig struct {
	// Skipper skips the guard for a request (echo's convention).
	Skipper echomw.Skipper
	// Resolver decides whether a request is guarded and by which contract.
	// Required.
	Resolver Resolver
	// Model makes the ladder's LLM calls (repair, regeneration); nil limits
	// repair to local fixes and re-runs.
	Model repair.Model
	// RepairGate is the repair breaker (per route and upstream model): it
	// says whether the ladder may go past local repair, and done records
	// whether the request ended without fallback. nil: always allowed.
	RepairGate func(route, model string) (allow bool, done func(success bool))
	// MaxBodyBytes bounds a guarded request body; 0 means 32 MiB, a
	// negative value no limit. Larger bodies get 413.
	MaxBodyBytes int64
	// MaxResponseBytes bounds an upstream answer the guard buffers; 0 means
	// 64 MiB, a negative value no limit. Larger answers get 502.
	MaxResponseBytes int64
	// Deadline bounds all upstream work for one guarded request, re-runs and
	// repair calls included; 0 means 120 s, a negative value none.
	Deadline time.Duration
	// MaxLLMCalls bounds the ladder's model calls per request; 0 means 6, a
	// negative value none (local repair only).
	MaxLLMCalls int
	// Logger receives one line per guarded request; nil means slog.Default.
	Logger *slog.Logger
	// Observe, when set, is called once per guarded request (metrics).
	Observe func(Event)
}

// DefaultGuardConfig holds the defaults; a Resolver must still be set.
var DefaultGuardConfig = GuardConfig{
	Skipper:          echomw.DefaultSkipper,
	MaxBodyBytes:     32 << 20,
	MaxResponseBytes: 64 << 20,
	Deadline:         120 * time.Second,
	MaxLLMCalls:      6,
}

// StatusError is the Event status of a guarded request that ended before
// validation: the upstream failed, or its answer was unreadable or too
// large. The other statuses are repair's (valid, repaired, fallback,
// failed).
const StatusError = "error"

// Event describes one guarded request for logs and metrics (SPEC §10).
// It carries no prompt or output: those may be personal data.
type Event struct {
	RequestID   string
	Route       string
	Contract    string
	Model       string
	Status      string
	Rungs       []string
	LLMCalls    int
	LocalFixes  int
	CodesBefore []string
	CodesAfter  []string
	ParseError  string
	Latency     time.Duration
	CacheHit    bool
}

// ToMiddleware checks the config and returns the middleware.
func (config GuardConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Resolver == nil {
		return nil, errors.New("guard: Resolver is required")
	}
	if config.Skipper == nil {
		config.Skipper = DefaultGuardConfig.Skipper
	}
	if config.MaxBodyBytes == 0 {
		config.MaxBodyBytes = DefaultGuardConfig.MaxBodyBytes
	}
	if config.MaxResponseBytes == 0 {
		config.MaxResponseBytes = DefaultGuardConfig.MaxResponseBytes
	}
	if config.Deadline == 0 {
		config.Deadline = DefaultGuardConfig.Deadline
	}
	if config.MaxLLMCalls == 0 {
		config.MaxLLMCalls = DefaultGuardConfig.MaxLLMCalls
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	g := &guard{GuardConfig: config}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if config.Skipper(c) || c.Request().Method != http.MethodPost {
				return next(c)
			}
			f, ok := flavourOf(c.Request().URL.Path)
			if !ok {
				return next(c)
			}
			return g.serve(c, next, f)
		}
	}, nil
}

type guard struct {
	GuardConfig
}

// errorBody is Ollama's error shape, with the report on contract failures.
type errorBody struct {
	Error    string             `json:"error"`
	Contract *validators.Report `json:"contract,omitempty"`
}

func (g *guard) serve(c echo.Context, next echo.HandlerFunc, f flavour) error {
	start := time.Now()
	req := c.Request()
	body := req.Body
	if g.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(c.Response(), body, g.MaxBodyBytes)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return c.JSON(http.StatusRequestEntityTooLarge, errorBody{Error: fmt.Sprintf("request body exceeds %d bytes", g.MaxBodyBytes)})
		}
		return c.JSON(http.StatusBadRequest, errorBody{Error: "reading request body: " + err.Error()})
	}
	restore := func() { req.Body = io.NopCloser(bytes.NewReader(raw)); req.ContentLength = int64(len(raw)) }
	r, perr := parseRequest(f, raw)
	hdrContract := req.Header.Get("X-Contract")
	if perr != nil {
		if hdrContract != "" {
			return c.JSON(http.StatusBadRequest, errorBody{Error: perr.Error()})
		}
		// Not ours to judge: the upstream answers malformed JSON itself.
		restore()
		return next(c)
	}
	route, err := g.Resolver.Resolve(Lookup{Contract: hdrContract, Params: req.Header.Get("X-Contract-Params"), Model: r.Model, Schema: r.Schema})
	if err != nil {
		return c.JSON(http.StatusBadRequest, errorBody{Error: err.Error()})
	}
	if route == nil {
		restore()
		return next(c)
	}
	var (
		ctx    context.Context
		cancel context.CancelFunc
	)
	if g.Deadline > 0 {
		ctx, cancel = context.WithTimeout(req.Context(), g.Deadline)
	} else {
		ctx, cancel = context.WithCancel(req.Context())
	}
	defer cancel()

	clientModel := r.Model

	r.setModel(route.UpstreamModel)
	if route.AddFormat && !r.HasFormat && route.Validator.Contract.SchemaJSON != nil {
		if err := r.setFormat(route.Validator.Contract.SchemaJSON); err != nil {
			return c.JSON(http.StatusInternalServerError, errorBody{Error: "contract schema: " + err.Error()})
		}
	}
	policy := route.Validator.Contract.Policy
	firstScheduled := policy.ScheduleFirst && len(policy.Temperatures) > 0 && !r.hasTemperature()
	if firstScheduled {
		r.setTemperature(policy.Temperatures[0])
	}
	clientStream := r.Stream
	r.setStream(false)

	upstreamModel := r.Model
	if route.UpstreamModel != "" {
		upstreamModel = route.UpstreamModel
	}
	first, hr := g.call(ctx, c, next, r)
	if hr != nil {
		if req.Context().Err() == nil {
			// An upstream failure is a guarded request too: logged and
			// counted, with status "error".
			g.log(Event{RequestID: c.Response().Header().Get(echo.HeaderXRequestID), Route: route.Name,
				Contract: route.Validator.Contract.ID(), Model: upstreamModel, Status: StatusError,
				Rungs: []string{}, CodesBefore: []string{}, CodesAfter: []string{}, Latency: time.Since(start)})
		}
		return hr.write(c)
	}
	if f != flavourOpenAI {
		// A request without prompt or messages loads or unloads the model
		// (`ollama run`, keep_alive calls): Ollama answers one object with
		// no text, even to a stream request, and there is nothing to
		// validate.
		if dr, _ := first.obj.Get("done_reason").AsString(); dr == "load" || dr == "unload" {
			obj := first.obj.Clone()
			if clientModel != "" && obj.Has("model") {
				set(obj, "model", strictjson.String(clientModel))
			}
			return writeClient(c, answer{flavour: f, contentType: first.contentType}, obj, "")
		}
	}
	allow, done := true, func(bool) {}
	if g.RepairGate != nil {
		allow, done = g.RepairGate(route.Name, upstreamModel)
	}
	var model repair.Model
	if g.Model != nil {
		model = modelFor{g.Model, upstreamModel}
	}
	job := repair.Job{
		Validator:      route.Validator,
		Params:         route.Params,
		Text:           first.text,
		Prompt:         r.promptText(),
		Model:          model,
		MaxLLMCalls:    g.MaxLLMCalls,
		FirstScheduled: firstScheduled,
		LocalOnly:      !allow,
		ModelName:      upstreamModel,
		RerunModel: func(ctx context.Context, m string) (repair.Reply, error) {
			text, err := g.again(ctx, c, next, r, func(rr *request) { rr.setModel(m) })
			return repair.Reply{Text: text}, err
		},
		Rerun: func(ctx context.Context, t float64) (repair.Reply, error) {
			text, err := g.again(ctx, c, next, r, func(rr *request) { rr.setTemperature(t) })
			return repair.Reply{Text: text}, err
		},
	}
	out := repair.Run(ctx, job)
	if req.Context().Err() != nil {
		// The client is gone: nothing to answer, and nothing learnt about
		// the model.
		done(true)
		return nil
	}
	done(out.Status == repair.StatusValid || out.Status == repair.StatusRepaired)
	ev := Event{
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID), Route: route.Name, Contract: route.Validator.Contract.ID(),
		Model: upstreamModel, Status: out.Status, Rungs: out.Rungs, LLMCalls: out.LLMCalls, LocalFixes: len(out.Changes),
		CodesBefore: out.Before.Codes(), CodesAfter: out.Report.Codes(), ParseError: parseClass(out.Before),
	}
	defer func() {
		ev.Latency = time.Since(start)
		g.log(ev)
	}()
	h := c.Response().Header()
	h.Set("X-Contract", route.Validator.Contract.ID())
	h.Set("X-Contract-Status", out.Status)
	h.Set("X-Contract-Repairs", strconv.Itoa(len(out.Changes)+out.LLMCalls))
	if out.Doc == nil {
		return c.JSON(http.StatusUnprocessableEntity, errorBody{
			Error:    failureMessage(out.Report),
			Contract: &out.Report,
		})
	}
	mode := route.Validator.Contract.Output
	if route.Output != "" {
		mode = route.Output
	}
	text := render(mode, out.Doc)
	obj := withText(f, first.obj, text)
	if clientModel != "" && obj.Has("model") {
		// The client asked for its (perhaps virtual) model and gets its
		// name back, as from Ollama itself.
		set(obj, "model", strictjson.String(clientModel))
	}
	set(obj, "contract", summary(out))
	return writeClient(c, answer{flavour: f, stream: clientStream, includeUsage: r.IncludeUsage, contentType: first.contentType}, obj, text)
}

// call sends r upstream through next and captures the whole answer. A
// non-2xx answer, an oversize one or an unreadable one comes back as the
// httpResult to pass to the client.
func (g *guard) call(ctx context.Context, c echo.Context, next echo.HandlerFunc, r *request) (*response, *httpResult) {
	body := r.bytes()
	orig := c.Request()
	up := orig.Clone(ctx)
	up.Body = io.NopCloser(bytes.NewReader(body))
	up.ContentLength = int64(len(body))
	up.Header.Set("Content-Length", strconv.Itoa(len(body)))
	up.Header.Del("Accept-Encoding") // the guard must read the answer
	up.Header.Del("X-Contract")
	up.Header.Del("X-Contract-Params")
	rec := newRecorder(g.MaxResponseBytes)
	origResp := c.Response()
	c.SetRequest(up)
	c.SetResponse(echo.NewResponse(rec, c.Echo()))
	err := callNext(next, c)
	c.SetRequest(orig)
	c.SetResponse(origResp)
	if rec.overflow {
		return nil, &httpResult{status: http.StatusBadGateway, body: errorBody{Error: fmt.Sprintf("upstream response exceeds %d bytes", g.MaxResponseBytes)}}
	}
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return nil, &httpResult{status: he.Code, body: errorBody{Error: fmt.Sprint(he.Message)}}
		}
		return nil, &httpResult{status: http.StatusBadGateway, body: errorBody{Error: "upstream: " + err.Error()}}
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if status < 200 || status > 299 {
		return nil, &httpResult{status: status, raw: rec.buf.Bytes(), header: rec.header}
	}
	resp, err := parseResponse(r.flavour, rec.buf.Bytes())
	if err != nil {
		return nil, &httpResult{status: http.StatusBadGateway, body: errorBody{Error: err.Error()}}
	}
	// A non-stream answer keeps the upstream's own Content-Type (Ollama's
	// native API says charset=utf-8, its OpenAI API does not).
	if ct := rec.header.Get("Content-Type"); strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		resp.contentType = ct
	}
	return resp, nil
}

// again asks the upstream the original request once more, changed by edit
// (another temperature, another model), and returns the model's text.
func (g *guard) again(ctx context.Context, c echo.Context, next echo.HandlerFunc, r *request, edit func(*request)) (string, error) {
	rr := r.clone()
	edit(rr)
	resp, hr := g.call(ctx, c, next, rr)
	if hr != nil {
		return "", hr
	}
	return resp.text, nil
}

// callNext runs the upstream handler. httputil.ReverseProxy aborts with
// http.ErrAbortHandler when writing the answer fails — here, when the answer
// outgrows the recorder — so that panic becomes an error the guard answers.
func callNext(next echo.HandlerFunc, c echo.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			err = errOverflow
		}
	}()
	return next(c)
}

// httpResult is an answer the guard passes on instead of a guarded one:
// the upstream's own error, or the guard's error in Ollama's shape.
type httpResult struct {
	status int
	body   errorBody
	raw    []byte
	header http.Header
}

func (h *httpResult) Error() string {
	if h.raw != nil {
		return fmt.Sprintf("upstream status %d: %s", h.status, bytes.TrimSpace(h.raw))
	}
	return h.body.Error
}

func (h *httpResult) write(c echo.Context) error {
	if h.raw != nil {
		// The upstream's headers (Retry-After on a 503, …) go with its
		// answer; the gateway's own (X-Request-Id) stay.
		dst := c.Response().Header()
		for k, vs := range h.header {
			switch k {
			case "Content-Length", "Content-Type", "Connection", "Transfer-Encoding", "Keep-Alive", "Trailer", "Date":
				continue
			}
			if _, ok := dst[k]; !ok {
				dst[k] = vs
			}
		}
		ct := h.header.Get("Content-Type")
		if ct == "" {
			ct = echo.MIMEApplicationJSON
		}
		return c.Blob(h.status, ct, h.raw)
	}
	return c.JSON(h.status, h.body)
}

// recorder buffers an upstream answer up to a limit (none when not
// positive).
type recorder struct {
	header   http.Header
	status   int
	buf      bytes.Buffer
	limit    int64
	overflow bool
}

func newRecorder(limit int64) *recorder { return &recorder{header: http.Header{}, limit: limit} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Flush() {}

var errOverflow = errors.New("upstream response too large")

func (r *recorder) Write(p []byte) (int, error) {
	if r.limit > 0 && int64(r.buf.Len()+len(p)) > r.limit {
		r.overflow = true
		return 0, errOverflow
	}
	return r.buf.Write(p)
}

// modelFor sends the ladder's calls to the request's upstream model unless
// the ladder names another (a fallback model).
type modelFor struct {
	repair.Model
	model string
}

func (m modelFor) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	if req.Model == "" {
		req.Model = m.model
	}
	return m.Model.Complete(ctx, req)
}

// render writes the validated document as the contract's output mode asks.
func render(mode string, doc *strictjson.Value) string {
	if mode == "fenced" {
		return "```json\n" + string(strictjson.MarshalIndent(doc, "  ")) + "\n```"
	}
	return string(strictjson.Marshal(doc))
}

// summary is the `contract` member added to the final response object.
func summary(out repair.Outcome) *strictjson.Value {
	codes := func(cs []string) *strictjson.Value {
		items := make([]*strictjson.Value, len(cs))
		for i, c := range cs {
			items[i] = strictjson.String(c)
		}
		return strictjson.Array(items...)
	}
	return object(
		member("id", strictjson.String(out.Report.Contract)),
		member("status", strictjson.String(out.Status)),
		member("llm_calls", strictjson.Int(int64(out.LLMCalls))),
		member("local_fixes", strictjson.Int(int64(len(out.Changes)))),
		member("violations_before", codes(out.Before.Codes())),
		member("violations_after", codes(out.Report.Codes())),
	)
}

func failureMessage(r validators.Report) string {
	n := 0
	first := ""
	for _, v := range r.Violations {
		if v.Severity == validators.SeverityError {
			if n == 0 {
				first = v.Code
				if v.Path != "" {
					first += " at " + v.Path
				}
			}
			n++
		}
	}
	return fmt.Sprintf("model output violates contract %s: %d violation(s), first %s", r.Contract, n, first)
}

func parseClass(r validators.Report) string {
	for _, v := range r.Violations {
		if v.Class == validators.ClassParse {
			return v.Code
		}
	}
	return ""
}

func (g *guard) log(ev Event) {
	g.Logger.Info("guarded request",
		"request_id", ev.RequestID, "route", ev.Route, "contract", ev.Contract, "model", ev.Model,
		"status", ev.Status, "rungs", ev.Rungs, "llm_calls", ev.LLMCalls, "local_fixes", ev.LocalFixes,
		"violations_before", ev.CodesBefore, "violations_after", ev.CodesAfter, "parse_error", ev.ParseError,
		"latency_ms", float64(ev.Latency.Microseconds())/1000, "cache_hit", ev.CacheHit)
	if g.Observe != nil {
		g.Observe(ev)
	}
}
