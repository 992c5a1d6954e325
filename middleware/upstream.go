package middleware

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/upstream"
)

// Upstream is the guard's one road to Ollama: the first answer, repair
// calls, partial regeneration, re-runs and the fallback model all go
// through it. An [upstream.Client] is one; the gateway passes the one its
// pass-through uses, so that both share one view of the upstream's health.
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
}

// errStopped is the cause of a model call the guard ended itself: the
// model's JSON value had closed, and only whitespace could follow.
var errStopped = errors.New("answer complete: the call was stopped early")

// readBufferSize is the size of the reads of an upstream answer: a chunk
// of a stream is a token or a few, a whole answer tens of kilobytes.
const readBufferSize = 32 << 10

// call makes one upstream call, asked with stream true, and reads the
// answer as it arrives with a StreamReader of cd, within MaxResponseBytes.
// When stopEarly is set (the call carries a schema format, so the answer
// is one JSON value by grammar) the call is cancelled as soon as that
// value has closed with only whitespace after it: a model that goes on
// writing whitespace until its token limit (Ollama issues #2577, #2623)
// costs nothing more, and the answer is the text read, its tokens counted
// from the chunks. onDelta, when set, sees the text as it grows. Errors
// are the upstream client's (upstream.Open and Stream.Read), and a 502
// for an answer the codec cannot read.
func (g *guard) call(ctx context.Context, call upstreamCall, cd codec.Codec, stopEarly bool) (*codec.Answer, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.path, bytes.NewReader(call.body))
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusInternalServerError, Err: err}
	}
	for k, vs := range call.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	g.inject(ctx, req.Header)
	s, err := upstream.Open(g.Upstream, req, g.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rd := cd.NewStreamReader()
	var end *valueEnd
	if stopEarly {
		end = &valueEnd{}
	}
	buf := make([]byte, readBufferSize)
	for {
		n, rerr := s.Read(buf)
		if n > 0 {
			delta, err := rd.Feed(buf[:n])
			if err != nil {
				return nil, unreadable(err)
			}
			if end != nil && end.feed(delta) {
				cancel(errStopped)
				a, err := rd.Stop()
				if err != nil {
					return nil, unreadable(err)
				}
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

// unreadable is the error of an answer the codec could not read: a 502,
// saying whether it was cut short.
func unreadable(err error) error {
	if errors.Is(err, codec.ErrIncomplete) {
		return &apierr.Error{Code: http.StatusBadGateway, Msg: codec.ErrIncomplete.Error(), Err: err}
	}
	return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream answer unreadable", Err: err}
}
