// Package upstream is the gateway's one client of Ollama. The guard's
// calls (first answer, repairs, regenerations, re-runs, the fallback
// model), the pass-through proxy, the model-listing routes and /readyz
// all reach Ollama through a [Client]: one place knows where Ollama is,
// one connection pool and one breaker see its health, one function maps
// a failed round trip to the client's error, and one reads Ollama's error
// body. A pool of Ollama servers can take the Client's place behind the
// same methods.
package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// Defaults of [Options]; each is the value of a zero field.
const (
	// DefaultURL is where Ollama listens unless told otherwise.
	DefaultURL = "http://127.0.0.1:11434"
	// DefaultMaxResponseBytes bounds an answer [Client.Get] and
	// [Client.Post] read whole.
	DefaultMaxResponseBytes = 64 << 20
)

// Options configure a [Client]. The zero value is usable: every zero
// field means its documented default.
type Options struct {
	// URL is Ollama's base URL: scheme, host and an optional path prefix
	// (a reverse proxy's /ollama). Nil means DefaultURL.
	URL *url.URL

	// Transport is the connection pool every request goes through. Nil
	// means http.DefaultTransport; the gateway passes its own, tuned for
	// many concurrent streams to one host.
	Transport http.RoundTripper

	// Breaker configures the circuit breaker in front of Transport; its
	// zero value means the breaker's defaults. An empty Name means the
	// URL's host.
	Breaker BreakerSettings

	// MaxResponseBytes bounds the answers Get and Post read whole, in
	// bytes; a larger answer is a 502. Zero means DefaultMaxResponseBytes
	// (64 MiB), negative no limit. The guard bounds its own calls (see
	// [Send]); streamed pass-through answers are never bounded.
	MaxResponseBytes int64
}

// Client is the one client of Ollama. It is an http.RoundTripper (the
// pass-through proxy's Transport) and a [Doer] (the guard's Upstream): a
// request carries a path only, and the Client points it at Ollama, sends
// it through the breaker, and maps a failed round trip to the client's
// error. Its methods are safe for concurrent use.
type Client struct {
	base        *url.URL
	breaker     *BreakerTransport
	maxResponse int64
}

var (
	_ http.RoundTripper = (*Client)(nil)
	_ Doer              = (*Client)(nil)
)

// New returns a Client configured by opts.
func New(opts Options) *Client {
	base := opts.URL
	if base == nil {
		base, _ = url.Parse(DefaultURL)
	}
	settings := opts.Breaker
	if settings.Name == "" {
		settings.Name = base.Host
	}
	maxResponse := opts.MaxResponseBytes
	if maxResponse == 0 {
		maxResponse = DefaultMaxResponseBytes
	}
	return &Client{base: base, breaker: NewBreakerTransport(opts.Transport, settings), maxResponse: maxResponse}
}

// RoundTrip implements http.RoundTripper: it sends req, whose URL holds
// a path (and query) only, to Ollama, and returns its answer whatever the
// status. The request is not modified; the one sent has Ollama's URL
// (the base path as a prefix) and Host, as Ollama refuses other hosts
// when it listens on loopback.
//
// A round trip that fails comes back as an error of the request path,
// for apierr.From to map: an *apierr.Error (503 with Retry-After while the
// breaker is open, 502 for an unreachable upstream, 504 for an upstream
// timeout, 400 or 408 for a client body that broke), or, when req's
// context ended or the client's body went over its limit, the error that
// apierr.From knows.
func (c *Client) RoundTrip(req *http.Request) (*http.Response, error) {
	out := c.resolve(req)
	if out.Body != nil && out.Body != http.NoBody && out.GetBody == nil {
		// A body that cannot be replayed is a client's, streamed as it
		// arrives: its failures are the client's, not the upstream's.
		out.Body = &clientBody{ReadCloser: out.Body}
	}
	resp, err := c.breaker.RoundTrip(out)
	if err != nil {
		return nil, RoundTripError(out, err)
	}
	return resp, nil
}

// Probe sends req past the breaker: a pool's health check is how an open
// breaker's member is seen to be back, and its failures must not count
// twice. Its errors are RoundTrip's.
func (c *Client) Probe(req *http.Request) (*http.Response, error) {
	out := c.resolve(req)
	resp, err := c.breaker.base.RoundTrip(out)
	if err != nil {
		return nil, RoundTripError(out, err)
	}
	return resp, nil
}

// Do is RoundTrip, for callers that read the answer themselves (the
// guard's Upstream seam).
func (c *Client) Do(req *http.Request) (*http.Response, error) { return c.RoundTrip(req) }

// Get asks Ollama for path and returns its 2xx answer, read whole; header
// holds extra request headers (the request id) and may be nil. Errors are
// those of [Send]: an error status is the upstream's error, as the client
// would have seen it.
func (c *Client) Get(ctx context.Context, path string, header http.Header) (Reply, error) {
	return c.call(ctx, http.MethodGet, path, nil, header)
}

// Post sends body, JSON, to path and returns the 2xx answer, read whole,
// as [Client.Get] does.
func (c *Client) Post(ctx context.Context, path string, body []byte, header http.Header) (Reply, error) {
	return c.call(ctx, http.MethodPost, path, body, header)
}

func (c *Client) call(ctx context.Context, method, path string, body []byte, header http.Header) (Reply, error) {
	return SendWhole(ctx, c, method, path, body, header, c.maxResponse)
}

// SendWhole sends one request of a Get or Post through d (a Client or a
// Pool) and reads its answer whole, at most limit bytes: a JSON body when
// there is one, header's headers beside it.
func SendWhole(ctx context.Context, d Doer, method, path string, body []byte, header http.Header, limit int64) (Reply, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, r)
	if err != nil {
		return Reply{}, &apierr.Error{Code: http.StatusInternalServerError, Err: err}
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return Send(d, req, limit)
}

// Breaker returns the client's breaker: its state is the upstream's
// health as the client sees it (while it is open, every model call would
// fail at once).
func (c *Client) Breaker() *BreakerTransport { return c.breaker }

// State returns the breaker's state.
func (c *Client) State() gobreaker.State { return c.breaker.State() }

// CloseIdleConnections closes the transport's idle connections.
func (c *Client) CloseIdleConnections() { c.breaker.CloseIdleConnections() }

// resolve returns a shallow copy of req pointed at the base URL: its
// scheme and host, its path as a prefix of req's (escaped paths kept
// escaped, as httputil.ProxyRequest.SetURL joins them), and req's query.
func (c *Client) resolve(req *http.Request) *http.Request {
	out := new(http.Request)
	*out = *req
	u := *c.base
	u.Path, u.RawPath = joinURLPath(c.base, req.URL)
	switch {
	case c.base.RawQuery == "" || req.URL.RawQuery == "":
		u.RawQuery = c.base.RawQuery + req.URL.RawQuery
	default:
		u.RawQuery = c.base.RawQuery + "&" + req.URL.RawQuery
	}
	u.Fragment, u.RawFragment = "", ""
	out.URL = &u
	out.Host = u.Host
	return out
}

// joinURLPath joins a's path and b's with one slash between them, and
// their escaped forms when either has one.
func joinURLPath(a, b *url.URL) (path, rawpath string) {
	if a.RawPath == "" && b.RawPath == "" {
		return singleJoiningSlash(a.Path, b.Path), ""
	}
	apath, bpath := a.EscapedPath(), b.EscapedPath()
	aslash, bslash := strings.HasSuffix(apath, "/"), strings.HasPrefix(bpath, "/")
	switch {
	case aslash && bslash:
		return a.Path + b.Path[1:], apath + bpath[1:]
	case !aslash && !bslash:
		return a.Path + "/" + b.Path, apath + "/" + bpath
	}
	return a.Path + b.Path, apath + bpath
}

func singleJoiningSlash(a, b string) string {
	aslash, bslash := strings.HasSuffix(a, "/"), strings.HasPrefix(b, "/")
	switch {
	case aslash && bslash:
		return a + b[1:]
	case !aslash && !bslash:
		return a + "/" + b
	}
	return a + b
}
