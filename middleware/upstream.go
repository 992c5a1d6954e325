package middleware

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"sync"

	"github.com/contractgateway/gateway/internal/bufpool"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Upstream is the guard's one road to Ollama: the first answer, repair
// calls, partial regeneration, re-runs and the fallback model all go
// through it: an [upstream.Client] or a pool of them (gateway/pool), the pass-through's
// own, so that both share one view of the upstreams' health. A call's
// model is on its context (upstream.WithModel), for a pool to route it.
type Upstream interface {
	// Do sends req to Ollama and returns its answer. req.URL holds the path
	// only: the Upstream knows where Ollama is. An error the client should
	// see as it is (a 503 of an open breaker, with Retry-After) is an
	// *apierr.Error; the request's context ending is its context's error;
	// any other error is the upstream's failure (a timeout 504, anything
	// else an unreachable upstream, 502), as upstream.Send maps it.
	Do(req *http.Request) (*http.Response, error)
}

var _ Upstream = (*upstream.Client)(nil)

// upstreamCall is one request the guard sends upstream.
type upstreamCall struct {
	path string
	body []byte
	// header holds the client's headers to forward (nil for the guard's
	// own calls) and the request id.
	header http.Header
	// onDelta, when set, gets each piece of the answer's text as it is
	// read (a progressive stream's release).
	onDelta func(string)
	model   string // the model asked, for a pool to choose an upstream that has it
}

// errStopped is the cause of the end of a model call whose answer the
// guard had complete: the model's JSON value had closed, and only
// whitespace could follow.
var errStopped = errors.New("answer complete: the call was stopped early")

// readBufferSize is the size of the reads of an upstream answer: a chunk
// of a stream is a token or a few, a whole answer tens of kilobytes.
const readBufferSize = 32 << 10

// readBuffers holds the read buffers of calls: one per call in flight,
// up to a few per core, kept across garbage collections.
var readBuffers = bufpool.New(min(4*runtime.GOMAXPROCS(0), 32), readBufferSize)

// callOnce makes one upstream call, asked with stream true, and reads the
// answer as it arrives with a StreamReader of cd, within MaxResponseBytes.
// When stopEarly is set (the call carries a schema format, so the answer
// is one JSON value by grammar) the answer is complete as soon as that
// value has closed with only whitespace after it: a model that goes on
// writing whitespace until its token limit (Ollama issues #2577, #2623)
// no longer holds the request. The answer is the text read, its output
// tokens the chunks read; its prompt (Ollama sends its counters only in
// the final chunk) is estimated from the request's text and noted in the
// request's spent (see withSpent), as is what a call that failed once it
// was sent (the client left, the upstream broke off) cost. The rest of
// the call is drained in the background rather than cut, for cutting it
// may block the model in Ollama (see upstream.Stream.Drain): the drain
// holds a place of the caller in flight and is charged its chunks
// (Background). Errors are the upstream client's
// (upstream.Open and Stream.Read), and a 502 for an answer the codec
// cannot read.
func (g *guard) callOnce(ctx context.Context, call upstreamCall, cd codec.Codec, stopEarly bool) (a *codec.Answer, err error) {
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	if stopEarly {
		// The call may outlive the request (see Drain): it ends with the
		// request's context only until the answer is complete.
		ctx, cancel = context.WithCancelCause(context.WithoutCancel(parent))
		stop := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
		defer stop()
	}
	detached := false
	defer func() {
		if !detached {
			cancel(nil)
		}
	}()
	req, err := http.NewRequestWithContext(upstream.WithModel(ctx, call.model), http.MethodPost, call.path, bytes.NewReader(call.body))
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusInternalServerError, Err: err}
	}
	for k, vs := range call.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	g.spans.Inject(ctx, req.Header)
	sp := spentOf(ctx)
	num := sp.begin()
	defer sp.end()
	alive := ctx.Err() == nil
	s, err := upstream.Open(g.Upstream, req, g.MaxResponseBytes)
	if err != nil {
		if alive && ctx.Err() != nil {
			// Sent, and left while Ollama read the prompt.
			sp.add(num, promptEstimate(call.body), 0)
		}
		return nil, err
	}
	defer func() {
		if !detached {
			s.Close()
		}
	}()
	defer func() {
		if a == nil {
			sp.add(num, promptEstimate(call.body), s.Frames())
		}
	}()
	rd := cd.NewStreamReader()
	var end *strictjson.ValueEnd
	if stopEarly {
		end = &strictjson.ValueEnd{}
	}
	buf := readBuffers.Get()
	if cap(buf) < readBufferSize {
		buf = make([]byte, readBufferSize)
	}
	buf = buf[:readBufferSize]
	defer readBuffers.Put(buf)
	for {
		n, rerr := s.Read(buf)
		if n > 0 {
			delta, err := rd.Feed(buf[:n])
			if err != nil {
				return nil, unreadable(err)
			}
			if call.onDelta != nil && delta != "" {
				call.onDelta(delta)
			}
			if end != nil && end.Feed(delta) {
				a, err := rd.Stop()
				if err != nil {
					return nil, unreadable(err)
				}
				if a.PromptTokens == 0 {
					sp.add(num, promptEstimate(call.body), 0)
				}
				detached = true
				release, read := backgroundOf(ctx)(), s.Frames()
				go func() {
					s.Drain(func() { cancel(errStopped) })
					release(s.Frames() - read)
				}()
				return a, nil
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
	}
	a, err = rd.Close()
	if err != nil {
		return nil, unreadable(err)
	}
	return a, nil
}

// Background holds the caller's place for work the guard goes on with
// after its answer (the rest of an early-stopped call, read so that
// Ollama does not block the model; see upstream.Stream.Drain): the work
// counts against the caller's limits while it runs, and done charges the
// tokens it read. The gateway's access check gives each request one
// (WithBackground).
type Background func() (done func(tokens int))

type ctxKeyBackground struct{}

// WithBackground gives ctx the Background of the request's caller.
func WithBackground(ctx context.Context, b Background) context.Context {
	return context.WithValue(ctx, ctxKeyBackground{}, b)
}

// backgroundOf is ctx's Background, one that holds nothing when there is
// none.
func backgroundOf(ctx context.Context) Background {
	if b, ok := ctx.Value(ctxKeyBackground{}).(Background); ok && b != nil {
		return b
	}
	return func() func(int) { return func(int) {} }
}

// promptEstimate is the prompt tokens of a request body by its text, for
// a call whose counters never came (upstream.PromptMeter).
func promptEstimate(body []byte) int {
	var m upstream.PromptMeter
	m.Write(body)
	return m.Tokens()
}

// spent is what a request's upstream calls cost beyond the counters of
// their answers: the calls that brought no answer (the client left, the
// upstream broke off), their prompt estimated from its text and their
// output counted from the chunks read, and the prompt of the calls the
// guard stopped early, which never got Ollama's counters. The answers
// report their own counted tokens (codec.Answer); these would otherwise
// be charged to no one. The request's first call is the first answer's,
// the others the repairs'.
type spent struct {
	mu            sync.Mutex
	calls         int
	first, repair repair.Usage
	// inflight counts the calls under way; ended is signalled as each
	// ends.
	inflight int
	ended    *sync.Cond
}

type ctxKeySpent struct{}

// withSpent gives ctx a spent for the calls made under it.
func withSpent(ctx context.Context) (context.Context, *spent) {
	sp := &spent{}
	sp.ended = sync.NewCond(&sp.mu)
	return context.WithValue(ctx, ctxKeySpent{}, sp), sp
}

// spentOf is ctx's spent; nil (which notes nothing) when there is none.
func spentOf(ctx context.Context) *spent {
	sp, _ := ctx.Value(ctxKeySpent{}).(*spent)
	return sp
}

// begin numbers a call of the request, from 0.
func (sp *spent) begin() int {
	if sp == nil {
		return 0
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.calls++
	sp.inflight++
	return sp.calls - 1
}

// end notes the end of a call begun.
func (sp *spent) end() {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.inflight--
	sp.ended.Broadcast()
}

// wait waits for the calls under way to end. A request whose client left
// may return before the run it started (a run shared by identical
// requests goes on for the others, and ends with its context when none is
// left): its Event then waits for what its calls cost.
func (sp *spent) wait() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for sp.inflight > 0 {
		sp.ended.Wait()
	}
}

// add notes what call (numbered by begin) cost beyond its answer.
func (sp *spent) add(call, prompt, output int) {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	u := &sp.repair
	if call == 0 {
		u = &sp.first
	}
	u.PromptTokens += prompt
	u.OutputTokens += output
}

// charge adds to ev's tokens what sp noted.
func (sp *spent) charge(ev *Event) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	ev.FirstTokens.PromptTokens += sp.first.PromptTokens
	ev.FirstTokens.OutputTokens += sp.first.OutputTokens
	ev.RepairTokens.PromptTokens += sp.repair.PromptTokens
	ev.RepairTokens.OutputTokens += sp.repair.OutputTokens
}

// call is callOnce, sent once more when its answer broke off before its
// end on a pool of several upstreams: no byte of it reached the client,
// and the pool sends it to another upstream than the one that broke.
func (g *guard) call(ctx context.Context, call upstreamCall, cd codec.Codec, stopEarly bool) (*codec.Answer, error) {
	a, err := g.callOnce(ctx, call, cd, stopEarly)
	if p, ok := g.Upstream.(interface{ Failover() bool }); ok && p.Failover() && errors.Is(err, upstream.ErrIncomplete) && ctx.Err() == nil {
		return g.callOnce(upstream.Again(ctx), call, cd, stopEarly)
	}
	return a, err
}

// unreadable is the error of an answer the codec could not read: a 502,
// saying whether it was cut short.
func unreadable(err error) error {
	if errors.Is(err, codec.ErrIncomplete) {
		return &apierr.Error{Code: http.StatusBadGateway, Msg: codec.ErrIncomplete.Error(), Err: err}
	}
	return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream answer unreadable", Err: err}
}
