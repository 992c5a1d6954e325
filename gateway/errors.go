package gateway

import (
	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware"
)

// WriteError answers the request with err in Ollama's shape,
// {"error": "…"} (or the shape of the path's API), and records it for the
// request's log line: middleware.WriteError renders the gateway's errors
// as it renders the guard's, and apierr.From maps them all.
func WriteError(c echo.Context, err error) {
	middleware.WriteError(c, err)
}

// httpErrorHandler is echo's central error handler: every error a handler
// or middleware returns, echo's own 404 and 405 and recovered panics leave
// in Ollama's shape.
func httpErrorHandler(err error, c echo.Context) {
	WriteError(c, err)
}
