package middleware

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/middleware/modelcall"
)

// hold answers x as answer does; while it works on a client that asked
// for a stream, it writes the API's keep-alive every StreamKeepAlive, so
// that a stream held for validation and repair never goes silent for
// longer than that (nginx and most load balancers cut an idle upstream
// at 60 s; a local model writing a long document takes minutes). The
// stream starts — status 200, the stream's content type, X-Contract —
// with the first keep-alive: an answer ready sooner keeps its own status
// and headers.
//
// A progressive stream's released items are written here too, as they
// come: once the first went out, the keep-alives are frames its clients
// skip anywhere in a stream (see midStreamKeepAlive), so that a stream
// waiting on an item's repair call does not go silent either.
//
// The Event's tokens include those of the calls that brought no answer
// (see modelcall.Spent): a client that leaves is charged what the model did.
func (g *guard) hold(c echo.Context, ctx context.Context, x *exchange) (*result, Event) {
	ctx, sp := modelcall.WithSpent(ctx)
	answer := func() (*result, Event) {
		res, ev := g.answer(ctx, x)
		if c.Request().Context().Err() != nil {
			sp.Wait()
		}
		first, repairs := sp.Tokens()
		ev.FirstTokens.PromptTokens += first.PromptTokens
		ev.FirstTokens.OutputTokens += first.OutputTokens
		ev.RepairTokens.PromptTokens += repairs.PromptTokens
		ev.RepairTokens.OutputTokens += repairs.OutputTokens
		return res, ev
	}
	keepAlive := x.client.Stream && g.StreamKeepAlive > 0
	if !keepAlive && x.stream == nil {
		return answer()
	}
	type answered struct {
		res *result
		ev  Event
	}
	done := make(chan answered, 1)
	go func() {
		res, ev := answer()
		done <- answered{res, ev}
	}()
	var tick <-chan time.Time
	if keepAlive {
		t := time.NewTicker(g.StreamKeepAlive)
		defer t.Stop()
		tick = t.C
	}
	var ready <-chan struct{}
	if x.stream != nil {
		ready = x.stream.ready
	}
	for n := 0; ; {
		select {
		case a := <-done:
			g.flushReleased(c, x)
			return a.res, a.ev
		case <-ready:
			g.flushReleased(c, x)
		case <-tick:
			if x.stream != nil && x.stream.wrote {
				midStreamKeepAlive(c.Response(), x)
				continue
			}
			g.keepAlive(c.Response(), x, n)
			n++
		}
	}
}

// keepAlive writes the n-th keep-alive, starting the stream with the
// first. A client gone is the answer's business: its context ends it.
func (g *guard) keepAlive(w *echo.Response, x *exchange, n int) {
	contentType, frame := x.codec.KeepAlive(x.client, n)
	if !w.Committed {
		h := w.Header()
		h.Set(echo.HeaderContentType, contentType)
		if contentType == "text/event-stream" {
			h.Set("Cache-Control", "no-cache")
		}
		h.Set("X-Contract", x.route.Validator.Contract.ID())
		w.WriteHeader(http.StatusOK)
	}
	_, _ = w.Write(frame)
	w.Flush()
}

// midStreamKeepAlive keeps a progressive stream alive while a released
// item's successor is repaired: the codec's stream has begun, so the
// frame must be one its clients skip anywhere in a stream. An SSE
// comment is that for every SSE API (the Responses API's in-progress
// event is not: its clients take it as the whole response so far, with
// no output); Ollama's keep-alive chunk, empty content and done false,
// is that for NDJSON.
func midStreamKeepAlive(w *echo.Response, x *exchange) {
	contentType, f := x.codec.KeepAlive(x.client, 0)
	if contentType == frame.SSEType {
		f = frame.KeepAliveComment
	}
	_, _ = w.Write(f)
	w.Flush()
}

// heldWriter is the writer of an answer whose stream the keep-alives
// may have started: once they did, its headers are sent already, so a
// codec's header edits and status go nowhere, and its events follow the
// keep-alives. Until then it is the response itself: a progressive
// stream's writer is made before anyone knows whether a keep-alive or
// its first item starts the stream.
type heldWriter struct{ w *echo.Response }

func (h heldWriter) Header() http.Header {
	if h.w.Committed {
		return http.Header{}
	}
	return h.w.Header()
}

func (h heldWriter) WriteHeader(code int) {
	if !h.w.Committed {
		h.w.WriteHeader(code)
	}
}

func (h heldWriter) Write(b []byte) (int, error) { return h.w.Write(b) }
func (h heldWriter) Flush()                      { h.w.Flush() }

// setHeader sets a response header of w, as a trailer once the stream
// started (the X-Contract-* and X-Cache of a held stream).
func setHeader(w *echo.Response, key, value string) {
	if w.Committed {
		key = http.TrailerPrefix + key
	}
	w.Header().Set(key, value)
}

// abandoned logs a guarded request whose client left before its answer,
// for its outcome record and its key's tokens: the upstream worked for it
// all the same (what it did is in ev, see modelcall.Spent).
func (g *guard) abandoned(ev Event, latency time.Duration) {
	ev.Latency = latency
	if ev.Status == StatusError {
		ev.Error = "client closed the request"
	}
	g.log(ev)
}
