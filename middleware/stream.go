package middleware

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/progressive"
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/repair"
)

// progressiveStream is the state of a stream whose items are written as
// they validate. follow is its place in the feed of the run that releases
// them — its own request's, or the one of an identical request in flight
// whose answer it shares — set once it is known, and ready is signalled
// when the feed has deltas for it. The request's goroutine writes (w,
// sent, wrote).
type progressiveStream struct {
	w      codec.StreamWriter
	ready  chan struct{}
	follow atomic.Pointer[release.Follower]
	// sent is the answer's text written so far.
	sent  strings.Builder
	wrote bool
}

// itemRelease is the progressive release of an answer whose contract has
// an item array, for stream clients and the others alike: items are
// checked, and repaired in flight, while the model writes. feed is what
// the run releases, rel the run, gate the repair gate its model asked
// (nil until it calls), and spent what a run whose feed was retracted
// spent, which the ladder's outcome adds; calls is the repair and
// regeneration calls among them, which the ladder's job does not make
// again. The run's goroutine writes them.
type itemRelease struct {
	feed  *release.Feed
	rel   *release.Run
	gate  *repairs
	spent *repair.Outcome
	calls repair.Spent
}

// progressive decides how x's answer is released: item by item as they
// validate when the contract has an item array and bare output and the
// request declares no tools; to the client as they go when it asked for
// a stream and neither the route nor the header asks for a buffered one.
// Other clients get the run's checks as the model writes; an item that
// needs the model waits for the ladder, after the answer, where one call
// repairs every broken item (the run does not call for a feed nobody
// follows).
func (g *guard) progressive(c echo.Context, x *exchange) {
	if x.route.ToolsOnly || x.route.Validator.Contract.ItemArray == "" || x.route.OutputMode() != "bare" {
		return
	}
	if tc, ok := x.codec.(codec.ToolCodec); ok && len(tc.Tools(x.client)) > 0 {
		return
	}
	x.items = &itemRelease{}
	if x.client.Stream && cmp.Or(x.streamMode, x.route.Stream) != release.Buffered {
		x.stream = &progressiveStream{w: g.newStreamWriter(x.codec, heldWriter{c.Response()}, x.client), ready: make(chan struct{}, 1)}
		setStream(c, x.stream.w)
	}
}

// follow makes x's stream follow feed: the deltas released so far go out
// at once, the rest as they come.
func (x *exchange) follow(feed *release.Feed) {
	s := x.stream
	if s == nil {
		return
	}
	s.follow.Store(feed.Follow(s.ready))
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// gatedModel asks the repair gate at its first call. A run calls the
// model only after it released items; a run that gives up before goes to
// the ladder, which takes the gate the run asked or asks it itself, so
// the gate is asked once either way.
type gatedModel struct {
	repair.Model
	g *guard
	x *exchange
}

// ReportsStart implements repair.StartReporter for the model it gates.
func (m gatedModel) ReportsStart() bool {
	sr, ok := m.Model.(repair.StartReporter)
	return ok && sr.ReportsStart()
}

func (m gatedModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	it := m.x.items
	if it.gate == nil {
		it.gate = m.g.startRepairs(m.x)
	}
	if !it.gate.allow {
		return repair.Reply{}, errors.New("repair gate closed: local repair only")
	}
	return m.Model.Complete(ctx, req)
}

// startRelease starts the run that reads the first answer as it arrives,
// into feed: the one coalesced requests follow, or a new one.
func (g *guard) startRelease(ctx context.Context, x *exchange, feed *release.Feed) {
	it := x.items
	if it == nil {
		return
	}
	if it.feed = feed; feed == nil {
		it.feed = release.NewFeed()
		x.follow(it.feed)
	}
	job := repair.Job{Validator: x.route.Validator, Params: x.route.Params, ModelName: x.repairModel(),
		Prompt: x.taskPrompt(), Model: gatedModel{Model: g.model(x), g: g, x: x}, MaxLLMCalls: g.MaxLLMCalls}
	if rel, err := release.Start(ctx, job, it.feed); err == nil {
		it.rel = rel
	}
}

// finishRelease ends the run once the first answer is complete, and
// returns the result of a run that released items; nil when the answer
// goes through the ladder as a whole, as it would without the run: the
// run released nothing, or nobody took an item and the run either called
// no model (it is abandoned: its checks are the ladder's) or failed (the
// ladder can do more with the whole answer).
func (g *guard) finishRelease(x *exchange, first *codec.Answer, err error) *result {
	it := x.items
	if it == nil || it.rel == nil {
		return nil
	}
	if x.stream == nil && it.rel.Abandon() {
		return nil
	}
	rr := it.rel.Finish()
	if !rr.Released {
		return nil
	}
	out := rr.Outcome
	ok := out.Status == repair.StatusValid || out.Status == repair.StatusRepaired
	// A failure nobody saw an item of goes through the ladder; a valid
	// answer nobody streams goes out whole, in the model's member order.
	// A stream keeps the order it releases in, which a replay can cut.
	if err == nil && (!ok || x.stream == nil) && it.feed.Retract() {
		if !ok {
			it.spent, it.calls = &out, rr.Spent
			return nil
		}
		out.Doc = rr.Whole
	}
	if it.gate != nil {
		it.gate.done(ok)
	}
	if err != nil {
		return &result{err: apierr.From(err)}
	}
	return g.settle(x, first, &out)
}

// ladderRepairs is the repairs of x's ladder: the gate its run asked,
// with what the run spent taken from the budget, or a new one.
func (g *guard) ladderRepairs(x *exchange) *repairs {
	it := x.items
	if it == nil || it.gate == nil {
		return g.startRepairs(x)
	}
	if it.spent != nil {
		it.gate.left = max(0, it.gate.left-it.spent.LLMCalls)
	}
	return it.gate
}

// spentCalls is the repair and regeneration calls a run whose feed was
// retracted made on the answer: the ladder's job has only the rest.
func (it *itemRelease) spentCalls() repair.Spent {
	if it == nil {
		return repair.Spent{}
	}
	return it.calls
}

// addSpent adds to out the model calls and tokens of a run whose feed was
// retracted: they were made for this answer, though the ladder made it.
func (it *itemRelease) addSpent(out *repair.Outcome) {
	if it == nil || it.spent == nil {
		return
	}
	// The run's calls came first: its rungs lead.
	all := *it.spent
	all.Rungs = slices.Clone(all.Rungs)
	all.AddCalls(*out)
	out.LLMCalls, out.Tokens, out.Rungs = all.LLMCalls, all.Tokens, all.Rungs
}

// flushReleased writes the deltas of the feed the stream follows, in
// order.
func (g *guard) flushReleased(c echo.Context, x *exchange) {
	s := x.stream
	if s == nil {
		return
	}
	fl := s.follow.Load()
	if fl == nil {
		return
	}
	for _, d := range fl.Take() {
		if !c.Response().Committed {
			c.Response().Header().Set("X-Contract", x.route.Validator.Contract.ID())
		}
		_ = s.w.Text(d) // a client gone is the run's business: its context ends it
		s.sent.WriteString(d)
		s.wrote = true
	}
}

// endStream ends a stream that wrote items: the rest of the answer's text
// and the answer object, or it returns the contract failure (never a
// silent pass) or the upstream's error, which ErrorHandler writes as the
// API's error event through the stream's writer.
func (g *guard) endStream(c echo.Context, x *exchange, res *result, cacheStatus string) error {
	s := x.stream
	if res.err != nil {
		return res.err
	}
	resp := c.Response()
	setHeader(resp, "X-Contract-Status", res.status)
	setHeader(resp, "X-Contract-Repairs", fmt.Sprint(res.repairs))
	if res.report != nil {
		return apierr.ContractFailure(res.report)
	}
	rest, ok := strings.CutPrefix(res.text, s.sent.String())
	if !ok {
		// Cannot happen while a fed run answers whatever ends it; if it
		// did, the items sent are not the answer's, and a failure says so.
		return &apierr.Error{Code: http.StatusBadGateway, Msg: "the answer does not continue the items sent"}
	}
	if err := s.w.Text(rest); err != nil {
		return nil
	}
	_ = s.w.End(g.finalObj(x, res, cacheStatus), res.text)
	return nil
}

// replay releases a whole answer — a cache hit, a coalesced request's,
// or one the ladder made whole before any item was released — item by
// item through the stream's writer, as a live stream would, so that a
// client of an item contract sees the same stream whatever answered it.
// False when the text cannot be cut so; it then goes out as one piece.
func (g *guard) replay(x *exchange, res *result, cacheStatus string) bool {
	deltas, err := progressive.Replay(x.route.Validator.Contract.ItemArray, res.text)
	if err != nil {
		return false
	}
	for _, d := range deltas {
		if x.stream.w.Text(d) != nil {
			return true // the client left
		}
	}
	_ = x.stream.w.End(g.finalObj(x, res, cacheStatus), res.text)
	return true
}
