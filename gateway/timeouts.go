package gateway

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Defaults of the server's timeouts; in the config, zero means these and a
// negative value means none.
const (
	// DefaultIdleTimeout closes a keep-alive connection that carries no
	// request for this long.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultBodyReadTimeout bounds the wait for the next bytes of a
	// request body (nginx's client_body_timeout): a client that stops
	// sending holds a connection no longer; an upload that keeps flowing
	// (a model blob of gigabytes) is never cut.
	DefaultBodyReadTimeout = 60 * time.Second
)

// timeoutOr maps a config duration: zero is def, negative none (0).
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// ErrBodyTimeout is a request body whose next bytes did not come within
// the body read timeout. The client gets 408 (apierr.From knows
// it as a body read that timed out).
var ErrBodyTimeout error = bodyTimeoutError{}

type bodyTimeoutError struct{}

func (bodyTimeoutError) Error() string { return "request body timeout: the client stopped sending" }
func (bodyTimeoutError) Timeout() bool { return true }

// bodyReadTimeout puts a read deadline on every read of a request body,
// renewed before each read and lifted at its end. The end matters: once a
// body is read, net/http reads on in the background to notice a client
// that leaves, and a deadline left behind would end a long streamed answer
// as if the client had gone.
func (s *Server) bodyReadTimeout(next echo.HandlerFunc) echo.HandlerFunc {
	d := timeoutOr(s.cfg.BodyReadTimeout, DefaultBodyReadTimeout)
	if d == 0 {
		return next
	}
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body != nil && req.Body != http.NoBody {
			req.Body = &deadlineBody{ReadCloser: req.Body, rc: http.NewResponseController(c.Response().Writer), d: d}
		}
		return next(c)
	}
}

type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	d    time.Duration
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	// A writer that cannot take deadlines (a test recorder) is read
	// without one.
	_ = b.rc.SetReadDeadline(time.Now().Add(b.d))
	n, err := b.ReadCloser.Read(p)
	var ne net.Error
	switch {
	case err == nil:
	case errors.As(err, &ne) && ne.Timeout():
		// The deadline stays, passed: net/http's drain of the rest of
		// the body after the answer fails at once, and the connection
		// closes instead of waiting for a client that stopped.
		b.done = true
		return n, ErrBodyTimeout
	default:
		b.lift()
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	b.lift()
	return b.ReadCloser.Close()
}

func (b *deadlineBody) lift() {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}
