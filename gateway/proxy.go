package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"
)

// ctxKeyEcho carries the echo.Context of a proxied request into the
// ReverseProxy's ErrorHandler, so that proxy errors go through WriteError
// and reach the request's log line.
type ctxKeyEcho struct{}

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
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &latchedBody{ReadCloser: req.Body}
	}
	req = req.WithContext(context.WithValue(req.Context(), ctxKeyEcho{}, c))
	s.proxy.ServeHTTP(c.Response(), req)
	return nil
}

// latchedBody is a request body that answers io.EOF once it has returned
// it, without reading the underlying body again.
//
// After sending Content-Length bytes, the upstream transport reads the
// body once more to check that it is not longer. By then the upstream may
// have answered and the proxy written the response headers, at which point
// an HTTP/1 server closes the request body; the late read then fails, the
// transport drops the upstream connection and a stream already on its way
// is cut (golang/go#40747). A read after the server closed the body is
// also taken as its end: the server only does so once it has consumed it.
// (ResponseController.EnableFullDuplex avoids the close, but with it
// net/http panics with "invalid concurrent Body.Read call" on the next
// request of a connection whose upstream was unreachable.)
type latchedBody struct {
	io.ReadCloser
	eof bool
}

func (b *latchedBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF || errors.Is(err, http.ErrBodyReadAfterClose) {
		b.eof, err = true, io.EOF
	}
	return n, err
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
	_, _ = w.Write(append([]byte(`{"error":`), strconv.Quote(he.Message())+"}"...))
}

// upstreamError maps a round trip's error to the client's answer: a plain
// message, and the cause for the log.
func upstreamError(r *http.Request, err error) *HTTPError {
	var (
		mbe *http.MaxBytesError
		ne  net.Error
	)
	switch {
	case errors.As(err, &mbe), errors.Is(err, ErrCircuitOpen):
		return toHTTPError(err)
	case errors.Is(err, ErrBodyTimeout):
		return &HTTPError{Code: http.StatusRequestTimeout, Msg: ErrBodyTimeout.Error(), Err: err}
	case errors.Is(r.Context().Err(), context.Canceled):
		return &HTTPError{Code: StatusClientClosedRequest, Msg: "client closed request", Err: err}
	case errors.Is(r.Context().Err(), context.DeadlineExceeded):
		return &HTTPError{Code: http.StatusGatewayTimeout, Msg: "deadline exceeded", Err: err}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &HTTPError{Code: http.StatusGatewayTimeout, Msg: "upstream timed out", Err: err}
	}
	// The cause (addresses, ports, the dialer's words) goes to the log line
	// with the request id; the client learns what it can act on.
	return &HTTPError{Code: http.StatusBadGateway, Msg: "upstream unreachable", Err: err}
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
