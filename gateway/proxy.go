package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/apierr"
)

// ctxKeyEcho carries the echo.Context of a proxied request into the
// ReverseProxy's ErrorHandler, so that proxy errors go through WriteError
// and reach the request's log line.
type ctxKeyEcho struct{}

// ctxKeyClientBody carries a proxied request's *clientBody to the breaker
// and the ErrorHandler, which get the ReverseProxy's outgoing request: its
// Body is the proxy's own wrapper of the client's.
type ctxKeyClientBody struct{}

// newProxy is the pass-through: the client's request, bytes and headers
// as they came (hop-by-hop headers aside), to the upstream, and the
// upstream's answer back, flushed after every write so that NDJSON and SSE
// chunks reach the client as the model produces them.
func (s *Server) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// SetURL also sets the Host header to the upstream's: Ollama
			// refuses requests whose Host is not its own (or loopback)
			// when it listens on loopback. The client's Host travels in
			// X-Forwarded-Host.
			pr.SetURL(s.upstream)
			pr.SetXForwarded()
			// The client's Expect: 100-continue is answered by this
			// server when the body is read. Passed on, the upstream's 100
			// would be relayed as the answer's first status: the proxy's
			// own error (a 504, a 413) could then no longer be sent, and
			// the client would get an empty 200.
			pr.Out.Header.Del("Expect")
		},
		Transport:     s.breaker,
		FlushInterval: -1,
		BufferPool:    &bufferPool{},
		ErrorHandler:  s.proxyError,
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// proxyHandler passes the request through. On guarded routes it is the
// handler the guard wraps, and c's request and response may be the
// guard's.
func (s *Server) proxyHandler(c echo.Context) error {
	req := c.Request()
	ctx := context.WithValue(req.Context(), ctxKeyEcho{}, c)
	if req.Body != nil && req.Body != http.NoBody {
		b := &clientBody{ReadCloser: req.Body}
		req.Body = b
		ctx = context.WithValue(ctx, ctxKeyClientBody{}, b)
	}
	req = req.WithContext(ctx)
	s.proxy.ServeHTTP(c.Response(), req)
	return nil
}

// clientBody is the client's request body on its way to the upstream. It
// keeps the first error of reading it, so that a round trip that failed
// because of the client's body (malformed chunked framing, a body shorter
// than announced, a client that stopped sending or left) is answered as
// the client's error and never counted against the upstream, which did
// not even get the request whole. The transport returns such an error as
// the round trip's, but may report a cancellation instead when the same
// read also ended the request's context (a client that half-closes after
// a short body), hence the record.
//
// It also answers io.EOF once it has returned it, without reading the
// underlying body again. After sending Content-Length bytes, the upstream
// transport reads the body once more to check that it is not longer. By
// then the upstream may have answered and the proxy written the response
// headers, at which point an HTTP/1 server closes the request body; the
// late read then fails, the transport drops the upstream connection and a
// stream already on its way is cut (golang/go#40747). A read after the
// server closed the body is also taken as its end: the server only does
// so once it has consumed it. (ResponseController.EnableFullDuplex avoids
// the close, but with it net/http panics with "invalid concurrent
// Body.Read call" on the next request of a connection whose upstream was
// unreachable.)
type clientBody struct {
	io.ReadCloser
	eof bool
	// failed is read by the handler's goroutine while the transport's
	// goroutine may still be reading the body.
	failed atomic.Pointer[clientBodyError]
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case err == io.EOF || errors.Is(err, http.ErrBodyReadAfterClose):
		b.eof, err = true, io.EOF
	default:
		cbe := &clientBodyError{err: err}
		b.failed.CompareAndSwap(nil, cbe)
		err = cbe
	}
	return n, err
}

// clientBodyError is an error reading the client's request body: the
// client's doing, never the upstream's.
type clientBodyError struct{ err error }

func (e *clientBodyError) Error() string {
	return "reading the client's request body: " + e.err.Error()
}
func (e *clientBodyError) Unwrap() error { return e.err }

// clientBodyFailure returns the error of reading req's client body, as
// the round trip's err says or as the body recorded it; nil when the body
// was read without error (or is not the client's).
func clientBodyFailure(req *http.Request, err error) *clientBodyError {
	var cbe *clientBodyError
	if errors.As(err, &cbe) {
		return cbe
	}
	if b, ok := req.Context().Value(ctxKeyClientBody{}).(*clientBody); ok {
		return b.failed.Load()
	}
	return nil
}

// clientBodyHTTPError maps an error of reading the client's body to the
// client's answer, as the guard answers the same body on its routes
// (apierr.BodyRead): 413 over the limit, 408 when it stopped
// sending, 400 for malformed framing or a body shorter than announced —
// even when that short read also ended the request's context, since a
// client that half-closed is still waiting for the answer. A connection
// that broke (reset) is the client gone: 499, logged and not sent.
func clientBodyHTTPError(cbe *clientBodyError) *apierr.Error {
	var ne net.Error
	if errors.As(cbe.err, &ne) && !ne.Timeout() {
		return &apierr.Error{Code: apierr.StatusClientClosedRequest, Msg: "client closed request", Err: cbe}
	}
	return toHTTPError(apierr.BodyRead(cbe))
}

// proxyError answers a failed round trip (nothing was written yet).
func (s *Server) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	he := upstreamError(r, err)
	if c, ok := r.Context().Value(ctxKeyEcho{}).(echo.Context); ok {
		WriteError(c, he)
		return
	}
	// Not reached through proxyHandler: answer without the request log.
	w.Header().Set(echo.HeaderContentType, "application/json; charset=utf-8")
	w.WriteHeader(he.Status())
	_, _ = w.Write(he.Body())
}

// upstreamError maps a round trip's error to the client's answer: a plain
// message, and the cause for the log.
func upstreamError(r *http.Request, err error) *apierr.Error {
	var (
		mbe *http.MaxBytesError
		ne  net.Error
	)
	if cbe := clientBodyFailure(r, err); cbe != nil {
		return clientBodyHTTPError(cbe)
	}
	switch {
	case errors.As(err, &mbe), errors.Is(err, ErrCircuitOpen):
		return toHTTPError(err)
	case errors.Is(err, ErrBodyTimeout):
		return &apierr.Error{Code: http.StatusRequestTimeout, Msg: ErrBodyTimeout.Error(), Err: err}
	case r.Context().Err() != nil:
		return apierr.From(apierr.WithContext(r.Context(), err))
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &apierr.Error{Code: http.StatusGatewayTimeout, Msg: "upstream timed out", Err: err}
	}
	// The cause (addresses, ports, the dialer's words) goes to the log line
	// with the request id; the client learns what it can act on.
	return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream unreachable", Err: err}
}

// bufferPool reuses the proxy's copy buffers (32 KiB each) across
// requests.
type bufferPool struct{ p sync.Pool }

var _ httputil.BufferPool = (*bufferPool)(nil)

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }
