package middleware

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/internal/bufpool"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/strictjson"
	"github.com/contractgateway/gateway/upstream"
)

// Upstream is the guard's one road to Ollama: the first answer, repair
// calls, partial regeneration, re-runs and the fallback model all go
// through it: an [upstream.Client] or [upstream.Pool], the pass-through's
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

var _, _ Upstream = (*upstream.Client)(nil), (*upstream.Pool)(nil)

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

// call makes one upstream call, asked with stream true, and reads the
// answer as it arrives with a StreamReader of cd, within MaxResponseBytes.
// When stopEarly is set (the call carries a schema format, so the answer
// is one JSON value by grammar) the answer is complete as soon as that
// value has closed with only whitespace after it: a model that goes on
// writing whitespace until its token limit (Ollama issues #2577, #2623)
// no longer holds the request, the answer is the text read, its tokens
// counted from the chunks, and the rest of the call is drained in the
// background (see upstream.Stream.Drain). Errors
// are the upstream client's (upstream.Open and Stream.Read), and a 502
// for an answer the codec cannot read.
func (g *guard) callOnce(ctx context.Context, call upstreamCall, cd codec.Codec, stopEarly bool) (*codec.Answer, error) {
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
	s, err := upstream.Open(g.Upstream, req, g.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	defer func() {
		if !detached {
			s.Close()
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
				detached = true
				go s.Drain(func() { cancel(errStopped) })
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
	a, err := rd.Close()
	if err != nil {
		return nil, unreadable(err)
	}
	return a, nil
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
