package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"sync"

	"github.com/labstack/echo/v4"
)

// ctxKeyProxyError carries where the ReverseProxy's ErrorHandler leaves a
// failed round trip's error, for proxyHandler to return it to the one
// error writer like any handler's.
type ctxKeyProxyError struct{}

// newProxy is the pass-through: the client's request, bytes and headers
// as they came (hop-by-hop headers aside), to the upstream, and the
// upstream's answer back, flushed after every write so that NDJSON and SSE
// chunks reach the client as the model produces them.
func (s *Server) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The URL keeps the client's path and query: the upstream
			// client points it at Ollama and sets the Host header to
			// Ollama's, as Ollama refuses requests whose Host is not its
			// own (or loopback) when it listens on loopback. The client's
			// Host travels in X-Forwarded-Host.
			pr.SetXForwarded()
			// The client's Expect: 100-continue is answered by this
			// server when the body is read. Passed on, the upstream's 100
			// would be relayed as the answer's first status: the proxy's
			// own error (a 504, a 413) could then no longer be sent, and
			// the client would get an empty 200.
			pr.Out.Header.Del("Expect")
		},
		Transport:     s.up,
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
	var failed error
	req := c.Request()
	req = req.WithContext(context.WithValue(req.Context(), ctxKeyProxyError{}, &failed))
	s.proxy.ServeHTTP(c.Response(), req)
	return failed
}

// proxyError takes a failed round trip (nothing was written yet) back to
// proxyHandler, which returns it to the one error writer. The proxy is
// served only by proxyHandler, so the request always says where to leave
// the error; writing it here would be a second writer, without the
// request's log line.
func (s *Server) proxyError(_ http.ResponseWriter, r *http.Request, err error) {
	*r.Context().Value(ctxKeyProxyError{}).(*error) = err
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
