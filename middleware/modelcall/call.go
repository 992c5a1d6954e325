// Package modelcall makes the guard's calls to the model: one streamed
// call read as it arrives with the API's codec, stopped once its JSON value
// closed, sent again to another upstream of a pool when it broke off, and
// counted against the request that made it (Spent, Background); and the
// repair ladder's Model on top of it. It is kept apart from the pipeline
// because it knows nothing of contracts or routes: a request body and the
// codec that reads its answer.
package modelcall

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
	"github.com/contractgateway/gateway/validators/extract"
)

// Call is one request the guard sends upstream.
type Call struct {
	Path string
	Body []byte
	// Header holds the headers to send (the request id); the client's own
	// are not forwarded.
	Header http.Header
	// OnDelta, when set, gets each piece of the answer's text as it is
	// read (a progressive stream's release).
	OnDelta func(string)
	Model   string // the model asked, for a pool to choose an upstream that has it
}

// Caller makes calls to the model through its Upstream.
type Caller struct {
	// Upstream is where calls go: an upstream.Client or a pool of them.
	Upstream upstream.Doer
	// MaxResponseBytes bounds an answer read, in bytes; a larger one is a
	// 502 (see upstream.Open).
	MaxResponseBytes int64
	// Inject, when set, adds the trace context of ctx to a call's header.
	Inject func(ctx context.Context, h http.Header)
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

// once makes one upstream call, asked with stream true, and reads the
// answer as it arrives with a StreamReader of cd, within MaxResponseBytes.
// When stopEarly is set (the call carries a schema format, so the answer
// is one JSON value by grammar) the answer is complete as soon as that
// value has closed with only whitespace after it: a model that goes on
// writing whitespace until its token limit (Ollama issues #2577, #2623)
// no longer holds the request. The answer is the text read, its output
// tokens the chunks read; its prompt (Ollama sends its counters only in
// the final chunk) is estimated from the request's text and noted in the
// request's Spent (see WithSpent), as is what a call that failed once it
// was sent (the client left, the upstream broke off) cost. The rest of
// the call is drained in the background rather than cut, for cutting it
// may block the model in Ollama (see upstream.Stream.Drain): the drain
// holds a place of the caller in flight and is charged its chunks
// (Background). Errors are the upstream client's
// (upstream.Open and Stream.Read), and a 502 for an answer the codec
// cannot read.
func (c *Caller) once(ctx context.Context, call Call, cd codec.Codec, stopEarly bool) (a *codec.Answer, err error) {
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
	req, err := http.NewRequestWithContext(upstream.WithModel(ctx, call.Model), http.MethodPost, call.Path, bytes.NewReader(call.Body))
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusInternalServerError, Err: err}
	}
	for k, vs := range call.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Inject != nil {
		c.Inject(ctx, req.Header)
	}
	sp := spentOf(ctx)
	num := sp.begin()
	defer sp.end()
	alive := ctx.Err() == nil
	s, err := upstream.Open(c.Upstream, req, c.MaxResponseBytes)
	if err != nil {
		if alive && ctx.Err() != nil {
			// Sent, and left while Ollama read the prompt.
			sp.add(num, promptEstimate(call.Body), 0)
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
			sp.add(num, promptEstimate(call.Body), s.Frames())
		}
	}()
	rd := cd.NewStreamReader()
	var end *extract.ValueEnd
	if stopEarly {
		end = &extract.ValueEnd{}
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
			if call.OnDelta != nil && delta != "" {
				call.OnDelta(delta)
			}
			if end != nil && end.Feed(delta) {
				a, err := rd.Stop()
				if err != nil {
					return nil, unreadable(err)
				}
				if a.PromptTokens == 0 {
					sp.add(num, promptEstimate(call.Body), 0)
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

// Spent is what a request's upstream calls cost beyond the counters of
// their answers: the calls that brought no answer (the client left, the
// upstream broke off), their prompt estimated from its text and their
// output counted from the chunks read, and the prompt of the calls the
// guard stopped early, which never got Ollama's counters. The answers
// report their own counted tokens (codec.Answer); these would otherwise
// be charged to no one. The request's first call is the first answer's,
// the others the repairs'.
type Spent struct {
	mu            sync.Mutex
	calls         int
	first, repair repair.Usage
	// inflight counts the calls under way; ended is signalled as each
	// ends.
	inflight int
	ended    *sync.Cond
}

type ctxKeySpent struct{}

// WithSpent gives ctx a Spent for the calls made under it.
func WithSpent(ctx context.Context) (context.Context, *Spent) {
	sp := &Spent{}
	sp.ended = sync.NewCond(&sp.mu)
	return context.WithValue(ctx, ctxKeySpent{}, sp), sp
}

// spentOf is ctx's Spent; nil (which notes nothing) when there is none.
func spentOf(ctx context.Context) *Spent {
	sp, _ := ctx.Value(ctxKeySpent{}).(*Spent)
	return sp
}

// begin numbers a call of the request, from 0.
func (sp *Spent) begin() int {
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
func (sp *Spent) end() {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.inflight--
	sp.ended.Broadcast()
}

// Wait waits for the calls under way to end. A request whose client left
// may return before the run it started (a run shared by identical
// requests goes on for the others, and ends with its context when none is
// left): its Event then waits for what its calls cost.
func (sp *Spent) Wait() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for sp.inflight > 0 {
		sp.ended.Wait()
	}
}

// add notes what call (numbered by begin) cost beyond its answer.
func (sp *Spent) add(call, prompt, output int) {
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

// Tokens returns what sp noted: of the first answer's call, and of the
// repair calls.
func (sp *Spent) Tokens() (first, repairs repair.Usage) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.first, sp.repair
}

// Do makes one call, asked with stream true, and reads the answer as it
// arrives with a StreamReader of cd, within MaxResponseBytes (see once).
// It sends the call once more when its answer broke off before its end on
// a pool of several upstreams: no byte of it reached the client, and the
// pool sends it to another upstream than the one that broke.
func (c *Caller) Do(ctx context.Context, call Call, cd codec.Codec, stopEarly bool) (*codec.Answer, error) {
	a, err := c.once(ctx, call, cd, stopEarly)
	if p, ok := c.Upstream.(interface{ Failover() bool }); ok && p.Failover() && errors.Is(err, upstream.ErrIncomplete) && ctx.Err() == nil {
		return c.once(upstream.Again(ctx), call, cd, stopEarly)
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
