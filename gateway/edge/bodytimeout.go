package edge

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// ErrBodyTimeout is a request body whose next bytes did not come within
// the body read timeout. The client gets 408 (apierr.From knows it as a
// body read that timed out).
var ErrBodyTimeout error = bodyTimeoutError{}

type bodyTimeoutError struct{}

func (bodyTimeoutError) Error() string { return "request body timeout: the client stopped sending" }
func (bodyTimeoutError) Timeout() bool { return true }

// BodyReadTimeout puts a read deadline of d on every read of a request
// body, renewed before each read and lifted at its end (nginx's
// client_body_timeout): a client that stops sending holds a connection no
// longer, an upload that keeps flowing is never cut. The end matters: once
// a body is read, net/http reads on in the background to notice a client
// that leaves, and a deadline left behind would end a long streamed answer
// as if the client had gone. A d of zero or less is no deadline.
func BodyReadTimeout(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if d <= 0 {
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
