package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware"
)

// WriteError answers the request with err in Ollama's shape,
// {"error": "…"} (or the shape of the path's API), and records it for the
// request's log line: middleware.WriteError renders the gateway's errors
// as it renders the guard's.
func WriteError(c echo.Context, err error) {
	if he := breakerError(err); he != nil {
		err = he
	}
	middleware.WriteError(c, err)
}

// toHTTPError maps the breaker's errors to what the client sees and leaves
// the rest to apierr.From.
func toHTTPError(err error) *apierr.Error {
	if he := breakerError(err); he != nil {
		return he
	}
	return apierr.From(err)
}

// breakerError maps the breaker's errors — a 503 with Retry-After while
// it is open — and returns nil for any other error.
func breakerError(err error) *apierr.Error {
	var (
		he  *apierr.Error
		coe *circuitOpenError
	)
	switch {
	case errors.As(err, &he) && he != nil:
		return he
	case errors.As(err, &coe):
		secs := int(coe.retryAfter.Round(time.Second) / time.Second)
		return &apierr.Error{Code: http.StatusServiceUnavailable, Msg: coe.Error(), Err: err,
			Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}
	case errors.Is(err, ErrCircuitOpen):
		return &apierr.Error{Code: http.StatusServiceUnavailable, Msg: ErrCircuitOpen.Error() + ": the upstream failed repeatedly; try again later", Err: err}
	}
	return nil
}

// httpErrorHandler is echo's central error handler: every error a handler
// or middleware returns, echo's own 404 and 405 and recovered panics leave
// in Ollama's shape.
func httpErrorHandler(err error, c echo.Context) {
	WriteError(c, err)
}
