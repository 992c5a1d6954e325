package middleware

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/corrections"
	"github.com/contractgateway/gateway/middleware/modelcall"
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/spans"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// One guarded request goes down once and back once, in stages that read
// top to bottom in serve:
//
//	decode  → the client's request, by the path's codec
//	resolve → the contract, its bound parameters, the upstream request
//	cache   → a stored answer, or an identical request already in flight
//	upstream→ the first answer, through the Upstream
//	ladder  → validation and repair (its model calls through the Upstream)
//	encode  → the client's shape, or an error in Ollama's
//
// Errors of every stage are *apierr.Error, returned to echo's error
// handler (ErrorHandler), the one writer.

// exchange is one guarded request on its way through the stages.
type exchange struct {
	codec codec.Codec
	// client is the request as the client sent it; up the request as the
	// upstream gets it (model, format, temperature and stream edited).
	client *codec.Request
	up     *codec.Request
	route  *route.Route
	// upstreamModel is the model asked upstream; firstScheduled says the
	// first call used the policy's first temperature.
	upstreamModel  string
	firstScheduled bool
	// header is forwarded with every upstream call: the client's headers
	// that are not the gateway's business, and the request id.
	header    http.Header
	requestID string
	// contract is the contract X-Contract names, read once (route.ContractHeader).
	contract string
	// cache says what the client allows of the cache.
	cache cacheControl
	// corrections asks for the corrections in the contract summary.
	corrections bool
	// streamMode is X-Contract-Stream; stream the state of a progressive
	// stream, nil for any other answer; items the release of an item
	// contract's answer as it arrives, nil for any other.
	streamMode string
	stream     *progressiveStream
	items      *itemRelease
	// task is the upstream request's prompt as repair calls quote it,
	// made once (taskMade) by the first that needs it.
	task     string
	taskMade bool
}

// taskPrompt is x's task: the prompt of its upstream request, which the
// run of a stream's items and the ladder after it both quote.
func (x *exchange) taskPrompt() string {
	if !x.taskMade {
		x.task, x.taskMade = x.codec.Prompt(x.up), true
	}
	return x.task
}

// report is what the answer's summary reports beyond the default: the
// corrections when the client or the route asks for them, else "". It
// changes the answer, so the cache keys on it.
func (x *exchange) report() string {
	if x.corrections || x.route.Corrections {
		return route.ReportCorrections
	}
	return ""
}

// result is what the upstream and the ladder made of one exchange: the
// answer to encode, or the error. Coalesced requests share one result, and
// the cache stores the valid ones.
type result struct {
	status   string
	contract string
	repairs  int
	text     string
	// obj is the final answer object: text replaced, contract summary
	// added, the upstream's model name.
	obj *strictjson.Value
	// report is the violation report of a contract failure.
	report *validators.Report
	// bare marks an answer passed on without a contract (a load or unload
	// request has no text).
	bare bool
	err  *apierr.Error
	// outcome is the ladder's, for the log; nil for a cached answer.
	outcome *repair.Outcome
	// tools sums the ladder's runs over an answer's tool-call arguments,
	// for the log; nil for an answer without them.
	tools *repair.Outcome
	// first is the first answer's text and firstTokens its tokens, for the
	// log, the debug store and the corrections report.
	first       string
	firstTokens repair.Usage
	// corrections is the corrections list (an array) of an answer whose
	// request reports them, made once when the answer is made and kept
	// with it in the cache; nil when not asked.
	corrections *strictjson.Value
}

func (r *result) storable() bool {
	return r.err == nil && !r.bare && (r.status == repair.StatusValid || r.status == repair.StatusRepaired)
}

func (g *guard) serve(c echo.Context, next echo.HandlerFunc, cd codec.Codec) error {
	start := time.Now()
	setCodec(c, cd)
	x, pass, err := g.decode(c, cd)
	decoded := time.Now()
	if err != nil {
		return err
	}
	if pass {
		return next(c)
	}
	if x.route, err = g.resolve(c, x); err != nil {
		return err
	}
	if x.route == nil {
		x.route = g.toolsRoute(x)
	}
	if x.route == nil {
		restoreBody(c.Request(), x.client.Raw)
		return next(c)
	}
	ctx, span := g.spans.StartRequest(c.Request(), cd.Path(), caller(c.Request().Context()), start, decoded)
	g.prepare(x)
	g.progressive(c, x)
	res, ev := g.hold(c, ctx, x)
	if err := c.Request().Context().Err(); err != nil {
		// The client is gone: nothing to answer; the error handler records
		// the 499 for the request's line.
		g.abandoned(ev, time.Since(start))
		span.End()
		return err
	}
	ev.Latency = time.Since(start)
	g.log(ev)
	setHeader(c.Response(), "X-Cache", ev.Cache)
	_, endEncode := g.spans.Stage(ctx, "encode")
	err = g.encode(c, x, res, ev.Cache)
	endEncode()
	endRequest(span, ev)
	return err
}

// decode reads the client's body and decodes it with the path's codec. A
// body the strict parser refuses is passed through (the upstream answers
// it as it does) unless the request would be guarded: then it is a 400,
// for Ollama's own decoder (encoding/json) may well accept it — duplicate
// keys, invalid UTF-8, a "Model" member — and read another model from it
// than the guard would.
func (g *guard) decode(c echo.Context, cd codec.Codec) (*exchange, bool, error) {
	req := c.Request()
	contract, err := route.ContractHeader(req.Header)
	if err != nil {
		return nil, false, &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error(), Err: err}
	}
	body := req.Body
	if g.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(c.Response(), body, g.MaxBodyBytes)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, false, apierr.BodyRead(err)
	}
	r, err := cd.Decode(raw)
	if err == nil {
		err = foldedModel(r.Body)
	}
	if err != nil {
		if contract != "" || g.guardedLeniently(c, cd, raw) {
			return nil, false, &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error(), Err: err}
		}
		restoreBody(req, raw)
		return nil, true, nil
	}
	x := &exchange{codec: cd, client: r, requestID: requestID(c), contract: contract}
	if x.streamMode, err = release.Mode(req.Header.Get("X-Contract-Stream")); err != nil {
		return nil, false, &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error(), Err: err}
	}
	x.cache = parseCacheControl(req.Header)
	x.corrections = strings.EqualFold(strings.TrimSpace(req.Header.Get("X-Contract-Report")), route.ReportCorrections)
	return x, false, nil
}

// foldedModel refuses a body with a top-level member that encoding/json
// (Ollama's decoder, which matches member names case-insensitively) takes
// for "model" but the guard does not, such as "Model".
func foldedModel(body *strictjson.Value) error {
	for _, m := range body.Members {
		if m.Key != "model" && strings.EqualFold(m.Key, "model") {
			return fmt.Errorf("%w: member %q: Ollama reads it as \"model\"; send \"model\" once", codec.ErrBadRequest, m.Key)
		}
	}
	return nil
}

// guardedLeniently reports whether a body the strict parser refused would
// be guarded as Ollama reads it: decoded as encoding/json decodes it (the
// last of duplicate members, invalid UTF-8 replaced, member names matched
// case-insensitively), is its model virtual, its format a schema the guard
// takes, or its tools checked? A body encoding/json refuses too is
// Ollama's to refuse.
func (g *guard) guardedLeniently(c echo.Context, cd codec.Codec, raw []byte) bool {
	var (
		tree  any
		model struct {
			Model json.RawMessage `json:"model"`
		}
	)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&tree) != nil || json.Unmarshal(raw, &model) != nil {
		return false
	}
	var name string
	_ = json.Unmarshal(model.Model, &name)
	x := &exchange{codec: cd, client: &codec.Request{Model: name}}
	if clean, err := json.Marshal(tree); err == nil {
		if r, err := cd.Decode(clean); err == nil {
			r.Model = name
			x.client = r
		}
	}
	route, err := g.resolve(c, x)
	return err != nil || route != nil || g.toolsRoute(x) != nil
}

// restoreBody gives the request its body back for the next handler.
func restoreBody(req *http.Request, raw []byte) {
	req.Body = io.NopCloser(bytes.NewReader(raw))
	req.ContentLength = int64(len(raw))
}

// NewRequestID returns a fresh request id: 32 random hex digits. The
// gateway gives it to requests that came without an X-Request-Id, and the
// debug store to requests whose id another request already holds.
func NewRequestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

func requestID(c echo.Context) string {
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		return id
	}
	return c.Request().Header.Get(echo.HeaderXRequestID)
}

// resolve finds the route: nil when the request is not guarded.
func (g *guard) resolve(c echo.Context, x *exchange) (*route.Route, error) {
	if err := c.Request().Context().Err(); err != nil {
		return nil, apierr.From(err) // gone already: compile no schema for no one
	}
	route, err := g.Resolver.Resolve(route.Lookup{Contract: x.contract, Params: c.Request().Header.Get("X-Contract-Params"),
		Model: x.client.Model, Schema: x.client.Schema})
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error(), Err: err}
	}
	return route, nil
}

// prepare builds the upstream request: the route's model, the contract's
// schema as format where asked, the schedule's first temperature, and a
// stream, whatever the client asked, read as it arrives.
func (g *guard) prepare(x *exchange) {
	up := x.client.Clone()
	rt := x.route
	up.SetModel(rt.UpstreamModel)
	x.upstreamModel = up.Model
	// A client's plain JSON mode ("json", json_object) asks less than the
	// contract's schema, which is JSON too: the schema takes its place.
	if rt.AddFormat && x.client.Schema == nil && rt.Schema != nil {
		x.codec.SetFormat(up, rt.Schema) // read-only from here on: shared, not copied
	}
	policy := rt.Validator.Contract.Policy
	if policy.ScheduleFirst && len(policy.Temperatures) > 0 && !x.codec.Temperature(up) {
		x.codec.SetTemperature(up, policy.Temperatures[0])
		x.firstScheduled = true
	}
	up.SetStream(true)
	x.up = up
	x.header = forwardHeader(x.requestID)
}

// forwardHeader is the header of every upstream call the guard makes. The
// client's own headers are not forwarded: the guard's calls are its own
// (the client's Expect, encodings and lengths describe another body), and
// the request id ties them to the client's request in the upstream's logs.
func forwardHeader(requestID string) http.Header {
	h := http.Header{}
	if requestID != "" {
		h.Set(echo.HeaderXRequestID, requestID)
	}
	return h
}

// answer runs the cache stage and, on a miss, the upstream and the ladder;
// it returns the result and the request's log event.
func (g *guard) answer(ctx context.Context, x *exchange) (*result, Event) {
	ev := Event{RequestID: x.requestID, Route: x.route.Name, Contract: x.route.Validator.Contract.ID(),
		Model: route.ModelName(x.upstreamModel), Cache: cacheBypass}
	ev.Key = caller(ctx)
	var res *result
	if g.Cache == nil {
		res = g.run(ctx, x, nil)
	} else {
		cctx, end := g.spans.Stage(ctx, "cache")
		res = g.Cache.answer(cctx, x, g.run, &ev)
		end()
	}
	fillEvent(&ev, res)
	ev.Upstream = upstream.Served(ctx)
	return res, ev
}

func fillEvent(ev *Event, res *result) {
	ev.CacheHit = ev.Cache == cacheHit
	ev.Rungs, ev.CodesBefore, ev.CodesAfter = []string{}, []string{}, []string{}
	switch {
	case res.err != nil:
		ev.Status, ev.Error = StatusError, res.err.Cause()
	case res.bare:
		ev.Status = repair.StatusValid
	default:
		ev.Status = res.status
	}
	out := res.outcome
	if out == nil {
		out = res.tools
	}
	if out != nil && !ev.Coalesced {
		ev.Rungs, ev.LLMCalls, ev.LocalFixes = out.Rungs, out.LLMCalls, len(out.Changes)
		ev.CodesBefore, ev.CodesAfter, ev.ParseError = out.Before.Codes(), out.Report.Codes(), out.Before.ParseCode()
		ev.RepairTokens = out.Tokens
	}
	if !ev.Coalesced && ev.Cache != cacheHit {
		ev.FirstTokens = res.firstTokens
	}
}

// run asks the upstream and brings its answer into contract, within the
// request's deadline. feed, when not nil, is the feed the answer's items
// go to, which the requests sharing the answer follow already.
func (g *guard) run(ctx context.Context, x *exchange, feed *release.Feed) *result {
	ctx, cancel := g.deadline(ctx)
	defer cancel()
	uctx, end := g.spans.Stage(ctx, "upstream")
	g.startRelease(ctx, x, feed)
	first, err := g.ask(uctx, x, x.up, "first")
	end()
	res := g.finishRelease(x, first, err)
	if res == nil && err != nil {
		return &result{err: apierr.From(err)}
	}
	if res == nil {
		res = g.runAnswer(ctx, x, first)
	}
	if first != nil {
		res.first = first.Text
		res.firstTokens = repair.Usage{PromptTokens: first.PromptTokens, OutputTokens: first.OutputTokens}
	}
	var list []Correction // made once, for the summary and the debug record alike
	if res.outcome != nil && (g.Record != nil || x.report() == route.ReportCorrections) {
		list = corrections.List(res.outcome)
	}
	if x.report() == route.ReportCorrections && res.err == nil && res.report == nil && !res.bare {
		res.corrections = corrections.Value(list)
	}
	if res.outcome != nil && g.Record != nil {
		g.record(x, res, list)
	}
	return res
}

// runAnswer validates and repairs the first answer.
func (g *guard) runAnswer(ctx context.Context, x *exchange, first *codec.Answer) *result {
	// A request without prompt or messages loads or unloads the model
	// (`ollama run`, keep_alive calls): Ollama answers one object with no
	// text, even to a stream request, and there is nothing to validate.
	if first.DoneReason == "load" || first.DoneReason == "unload" {
		return &result{bare: true, obj: first.Obj}
	}
	if tc, calls := g.toolCalls(x, first); len(calls) > 0 {
		return g.runTools(ctx, x, first, tc, calls)
	}
	if x.route.ToolsOnly {
		return &result{status: repair.StatusValid, contract: RouteTools, text: first.Text, obj: first.Obj}
	}
	out := g.ladder(ctx, x, first)
	if out == nil {
		return &result{err: apierr.From(ctx.Err())}
	}
	return g.settle(x, first, out)
}

func (g *guard) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.Deadline > 0 {
		return context.WithTimeout(ctx, g.Deadline)
	}
	return context.WithCancel(ctx)
}

// ask sends r upstream and reads the answer, as it arrives, with the
// exchange's codec.
func (g *guard) ask(ctx context.Context, x *exchange, r *codec.Request, phase string) (a *codec.Answer, err error) {
	ctx, done := g.spans.ModelCall(ctx, spans.Operation(x.codec.Path()), r.Model, phase)
	defer func() {
		if a != nil {
			done(a.PromptTokens, a.OutputTokens, nil)
		} else {
			done(0, 0, err)
		}
	}()
	call := modelcall.Call{Path: x.codec.Path(), Body: r.Bytes(), Header: x.header, Model: r.Model}
	if phase == "first" && x.items != nil && x.items.rel != nil {
		call.OnDelta = x.items.rel.Feed
	}
	return g.caller.Do(ctx, call, x.codec, r.FormatSchema)
}

// repairs is a request's one use of the repair ladder, whatever it
// repairs — the answer's text or the arguments of its tool calls: the
// repair gate is asked once, the budget of model calls (max_llm_calls) is
// the request's and not each run's, and the counts of every run add up to
// what the request's Event, its log line and its summary say.
type repairs struct {
	allow bool
	done  func(success bool)
	// left is the model calls the request may still make.
	left int
	// spent sums the runs: rungs, model calls, local changes, tokens and
	// the violations found before repair.
	spent repair.Outcome
}

// startRepairs asks the repair gate for the request's route and model.
func (g *guard) startRepairs(x *exchange) *repairs {
	rp := &repairs{allow: true, done: func(bool) {}, left: g.MaxLLMCalls}
	switch {
	case rp.left == 0:
		rp.left = repair.DefaultMaxLLMCalls
	case rp.left < 0:
		rp.left = 0
	}
	if g.RepairGate != nil {
		rp.allow, rp.done = g.RepairGate(x.route.Name, x.upstreamModel)
	}
	return rp
}

// run runs job on the ladder within the gate and what is left of the
// budget, and adds its counts to the request's.
func (rp *repairs) run(ctx context.Context, job repair.Job) repair.Outcome {
	job.LocalOnly = job.LocalOnly || !rp.allow
	job.MaxLLMCalls = rp.left
	if rp.left == 0 {
		job.MaxLLMCalls = -1 // none: 0 would mean the default
	}
	out := repair.Run(ctx, job)
	rp.left = max(0, rp.left-out.LLMCalls)
	s := &rp.spent
	s.AddCalls(out)
	s.Changes = append(s.Changes, out.Changes...)
	s.Before.Violations = append(s.Before.Violations, out.Before.Violations...)
	return out
}

// model is the ladder's model for the exchange: the upstream model, with
// the request id and a span per call.
func (g *guard) model(x *exchange) repair.Model {
	return modelcall.Model{Caller: g.caller, Name: x.upstreamModel, Header: x.header, Span: g.spans.ModelCall}
}

// repairModel is the model of x's repair and regeneration calls: the
// route's repair_model, else its contract's, else the route's model.
func (x *exchange) repairModel() string {
	return cmp.Or(x.route.RepairModel, x.route.Validator.Contract.Policy.RepairModel, x.upstreamModel)
}

// ladder runs the repair ladder on the first answer. It returns nil when
// the caller went away: nothing was learnt about the model.
func (g *guard) ladder(ctx context.Context, x *exchange, first *codec.Answer) *repair.Outcome {
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil // the client left during the first answer: validate nothing
	}
	rt := x.route
	rp := g.ladderRepairs(x)
	again := func(edit func(*codec.Request)) func(ctx context.Context) (repair.Reply, error) {
		return func(ctx context.Context) (repair.Reply, error) {
			r := x.up.Clone()
			edit(r)
			a, err := g.ask(ctx, x, r, "repair")
			if err != nil {
				return repair.Reply{}, err
			}
			return repair.Reply{Text: a.Text, PromptTokens: a.PromptTokens, OutputTokens: a.OutputTokens}, nil
		}
	}
	job := repair.Job{
		Validator:      rt.Validator,
		Params:         rt.Params,
		Text:           first.Text,
		Prompt:         x.taskPrompt(),
		Model:          g.model(x),
		ModelName:      x.repairModel(),
		FirstScheduled: x.firstScheduled,
		Spent:          x.items.spentCalls(),
		RerunModel: func(ctx context.Context, m string) (repair.Reply, error) {
			return again(func(r *codec.Request) { r.SetModel(m) })(ctx)
		},
		Rerun: func(ctx context.Context, t float64) (repair.Reply, error) {
			return again(func(r *codec.Request) { x.codec.SetTemperature(r, t) })(ctx)
		},
	}
	lctx, end := g.spans.Stage(ctx, "ladder")
	out := rp.run(lctx, job)
	x.items.addSpent(&out)
	end()
	if errors.Is(ctx.Err(), context.Canceled) {
		rp.done(true)
		return nil
	}
	rp.done(out.Status == repair.StatusValid || out.Status == repair.StatusRepaired)
	return &out
}

// settle turns the ladder's outcome into the result to encode.
func (g *guard) settle(x *exchange, first *codec.Answer, out *repair.Outcome) *result {
	res := &result{status: out.Status, contract: x.route.Validator.Contract.ID(),
		repairs: len(out.Changes) + out.LLMCalls, outcome: out}
	if out.Doc == nil {
		res.report = &out.Report
		return res
	}
	res.text = render(x.route.OutputMode(), out.Doc, first.Text)
	res.obj = x.codec.WithText(first.Obj, res.text)
	sum := out.Summary()
	// An answer brought into contract is whole, however the model's own
	// text ended: the client gets the API's normal stop, and the summary
	// keeps the upstream's reason when it was another.
	if up := x.codec.NormalStop(res.obj); up != "" {
		sum.Set("done_reason_upstream", strictjson.String(up))
	}
	res.obj.Set("contract", sum)
	return res
}

// encode answers the client: the error, the bare answer, the contract
// failure (422 with the report), or the guarded answer in the client's
// shape, streamed or not, its summary saying where it came from (cache
// hit, miss or bypass).
func (g *guard) encode(c echo.Context, x *exchange, res *result, cacheStatus string) error {
	if x.stream != nil && x.stream.wrote {
		return g.endStream(c, x, res, cacheStatus)
	}
	if res.err != nil {
		return res.err
	}
	resp := c.Response()
	w := heldWriter{resp}
	if res.bare {
		r := *x.client
		r.Stream = false
		return x.codec.Encode(w, &r, withModel(shallow(res.obj), x.client.Model), "")
	}
	setHeader(resp, "X-Contract", res.contract)
	setHeader(resp, "X-Contract-Status", res.status)
	setHeader(resp, "X-Contract-Repairs", strconv.Itoa(res.repairs))
	if res.report != nil {
		return apierr.ContractFailure(res.report)
	}
	if x.stream != nil && g.replay(x, res, cacheStatus) {
		return nil
	}
	return x.codec.Encode(w, x.client, g.finalObj(x, res, cacheStatus), res.text)
}

// finalObj is the answer object of res for x: the summary says where it
// came from (cache hit, miss or bypass) and holds the corrections when
// asked, and the model is the client's.
func (g *guard) finalObj(x *exchange, res *result, cacheStatus string) *strictjson.Value {
	// res is shared (by coalesced requests, with the cache): a shallow
	// copy of the top level and of the summary is all this answer edits.
	obj := shallow(res.obj)
	if sum := obj.Get("contract"); sum != nil && sum.Kind == strictjson.KindObject {
		sum = shallow(sum)
		sum.Set("cache", strictjson.String(cacheStatus))
		if x.report() == route.ReportCorrections {
			// Made with the answer (a cache hit has no outcome to make
			// them from); an empty list only if none were made.
			list := res.corrections
			if list == nil {
				list = strictjson.Array()
			}
			sum.Set("corrections", list)
		}
		obj.Set("contract", sum)
	}
	return withModel(obj, x.client.Model)
}

// shallow copies an object's member list, not its values.
func shallow(obj *strictjson.Value) *strictjson.Value {
	out := *obj
	out.Members = slices.Clone(obj.Members)
	return &out
}

// withModel returns obj with the client's model name: the client asked for
// its (perhaps virtual) model and gets its name back, as from Ollama.
func withModel(obj *strictjson.Value, model string) *strictjson.Value {
	if model != "" && obj.Has("model") {
		obj.Set("model", strictjson.String(model))
	}
	return obj
}

// render writes the validated document as the contract's output mode asks.
func render(mode string, doc *strictjson.Value, first string) string {
	if mode == "fenced" {
		return "```json\n" + string(strictjson.MarshalIndent(doc, "  ")) + "\n```"
	}
	// A model that wrote the document canonically gets its own text back,
	// with no copy made.
	return strictjson.MarshalLike(doc, strings.TrimSpace(first))
}
