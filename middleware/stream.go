package middleware

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/progressive"
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/strictjson"
)

// streamWriter is the client's stream as its codec writes it: the first
// Text sends the headers (unless keep-alives sent them) and the stream's
// opening frames, End the final frames with the answer object as Encode
// gets it (text is every delta), Fail the API's own error event.
type streamWriter interface {
	Text(delta string) error
	End(obj *strictjson.Value, text string) error
	Fail(e *apierr.Error) error
}

// progressiveStream is the state of a stream whose items are released as
// they validate. The request's goroutine writes (w, wrote); the run sets
// rel, and released, tail and gate (the repair gate its model asked) when
// it released items, and signals ready once rel has deltas.
type progressiveStream struct {
	w               streamWriter
	ready           chan struct{}
	rel             *release.Run
	wrote, released bool
	tail            string
	gate            *repairs
}

// progressive decides whether x's answer is released item by item: the
// client asked for a stream, the contract has an item array and bare
// output, the request declares no tools, and neither the route nor the
// header asks for a buffered stream.
func (g *guard) progressive(c echo.Context, x *exchange) {
	if cmp.Or(x.streamMode, x.route.Stream) == release.Buffered || !x.client.Stream || x.route.toolsOnly ||
		x.route.Validator.Contract.ItemArray == "" || x.route.output() != "bare" {
		return
	}
	if tc, ok := x.codec.(codec.ToolCodec); ok && len(tc.Tools(x.client)) > 0 {
		return
	}
	x.stream = &progressiveStream{w: g.newStreamWriter(x.codec, heldWriter{c.Response()}, x.client), ready: make(chan struct{}, 1)}
}

// gatedModel asks the repair gate at its first call. A stream's run calls
// the model only after it released items; a run that gives up before
// goes to the ladder, which asks the gate itself, so the gate is asked
// once either way.
type gatedModel struct {
	repair.Model
	g *guard
	x *exchange
}

func (m gatedModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	s := m.x.stream
	if s.gate == nil {
		s.gate = m.g.startRepairs(m.x)
	}
	if !s.gate.allow {
		return repair.Reply{}, errors.New("repair gate closed: local repair only")
	}
	return m.Model.Complete(ctx, req)
}

// startRelease starts the run that reads the first answer as it arrives.
func (g *guard) startRelease(ctx context.Context, x *exchange) {
	if x.stream == nil {
		return
	}
	job := repair.Job{Validator: x.route.Validator, Params: x.route.Params, ModelName: x.upstreamModel,
		Model: gatedModel{Model: g.model(x), g: g, x: x}, MaxLLMCalls: g.MaxLLMCalls}
	if rel, err := release.Start(ctx, job, x.stream.ready); err == nil {
		x.stream.rel = rel
	}
}

// finishRelease ends the run once the first answer is complete, and
// returns the result of a stream that released items; nil when it
// released none and the answer goes through the ladder as a whole.
func (g *guard) finishRelease(x *exchange, first *codec.Answer, err error) *result {
	s := x.stream
	if s == nil || s.rel == nil {
		return nil
	}
	rr := s.rel.Finish()
	if !rr.Released {
		return nil
	}
	s.released, s.tail = true, rr.Tail
	out := rr.Outcome
	if s.gate != nil {
		s.gate.done(out.Status == repair.StatusValid || out.Status == repair.StatusRepaired)
	}
	if err != nil {
		return &result{err: apierr.From(err)}
	}
	return g.settle(x, first, &out)
}

// flushReleased writes the deltas the run released, in order.
func (g *guard) flushReleased(c echo.Context, x *exchange) {
	s := x.stream
	if s == nil || s.rel == nil {
		return
	}
	for _, d := range s.rel.Take() {
		if !c.Response().Committed {
			c.Response().Header().Set("X-Contract", x.route.Validator.Contract.ID())
		}
		_ = s.w.Text(d) // a client gone is the run's business: its context ends it
		s.wrote = true
	}
}

// endStream ends a stream that released items: the last delta and the
// answer object, or the API's error event with the contract failure
// (never a silent pass) or the upstream's error.
func (g *guard) endStream(c echo.Context, x *exchange, res *result, cacheStatus string) error {
	s := x.stream
	if res.err != nil {
		_ = s.w.Fail(res.err)
		return nil
	}
	resp := c.Response()
	setHeader(resp, "X-Contract-Status", res.status)
	setHeader(resp, "X-Contract-Repairs", fmt.Sprint(res.repairs))
	if res.report != nil {
		_ = s.w.Fail(&apierr.Error{Code: http.StatusUnprocessableEntity, Msg: failureMessage(*res.report), Report: res.report})
		return nil
	}
	if err := s.w.Text(s.tail); err != nil {
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
