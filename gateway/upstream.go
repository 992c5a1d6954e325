package gateway

import (
	"net/http"
	"net/url"

	"github.com/contractgateway/gateway/middleware"
)

// Upstream is the gateway's road to Ollama for the guard: the upstream's
// URL over the same connection pool and breaker as the pass-through, so
// that guarded calls and pass-through share one view of the upstream's
// health.
type Upstream struct {
	url     *url.URL
	breaker *BreakerTransport
}

var _ middleware.Upstream = (*Upstream)(nil)

// Do implements middleware.Upstream. Round-trip errors come back as the
// *apierr.Error the client sees: 503 with Retry-After while the breaker is
// open, 504 for an upstream timeout, 502 for an unreachable upstream.
func (u *Upstream) Do(req *http.Request) (*http.Response, error) {
	middleware.ResolveURL(req, u.url)
	resp, err := u.breaker.RoundTrip(req)
	if err != nil {
		return nil, upstreamError(req, err)
	}
	return resp, nil
}

// Breaker returns the upstream breaker: while it is open, the ladder stops
// after local repair, as every model call would fail at once.
func (u *Upstream) Breaker() *BreakerTransport { return u.breaker }
