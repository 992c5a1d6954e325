package middleware

import (
	"bytes"
	"context"
	"net/http"

	"github.com/contractgateway/gateway/apierr"
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

// send makes one upstream call and returns the answer's body, read whole
// within MaxResponseBytes; its errors are upstream.Send's.
func (g *guard) send(ctx context.Context, call upstreamCall) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.path, bytes.NewReader(call.body))
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusInternalServerError, Err: err}
	}
	for k, vs := range call.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	g.inject(ctx, req.Header)
	reply, err := upstream.Send(g.Upstream, req, g.MaxResponseBytes)
	return reply.Body, err
}
