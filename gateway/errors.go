package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware"
)

// HTTPError is the request path's one error type (defined by the guard,
// which embedding applications use without the gateway): a status and a
// message for the client, the cause for the log.
type HTTPError = middleware.HTTPError

// StatusClientClosedRequest is the status logged when the client went away
// before the answer (nginx's 499). The client never sees it.
const StatusClientClosedRequest = middleware.StatusClientClosedRequest

// NewHTTPError returns an HTTPError with the status code, the client's
// message and the internal cause.
func NewHTTPError(code int, msg string, err error) *HTTPError {
	return middleware.NewHTTPError(code, msg, err)
}

// WriteError answers the request with err in Ollama's shape,
// {"error": "…"}, and records it for the request's log line. The gateway's
// own errors are mapped first — [ErrCircuitOpen] is a 503 with
// Retry-After — then middleware.WriteError renders it, as it renders the
// guard's.
func WriteError(c echo.Context, err error) {
	middleware.WriteError(c, toHTTPError(err))
}

// toHTTPError maps the gateway's own errors to what the client sees and
// leaves the rest to middleware.AsHTTPError.
func toHTTPError(err error) *HTTPError {
	var (
		he  *HTTPError
		coe *circuitOpenError
	)
	switch {
	case errors.As(err, &he) && he != nil:
		return he
	case errors.As(err, &coe):
		secs := int(coe.retryAfter.Round(time.Second) / time.Second)
		return &HTTPError{Code: http.StatusServiceUnavailable, Msg: coe.Error(), Err: err,
			Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}
	case errors.Is(err, ErrCircuitOpen):
		return &HTTPError{Code: http.StatusServiceUnavailable, Msg: ErrCircuitOpen.Error() + ": the upstream failed repeatedly; try again later", Err: err}
	}
	return middleware.AsHTTPError(err)
}

// httpErrorHandler is echo's central error handler: every error a handler
// or middleware returns, echo's own 404 and 405 and recovered panics leave
// in Ollama's shape.
func httpErrorHandler(err error, c echo.Context) {
	WriteError(c, err)
}
