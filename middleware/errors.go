package middleware

import (
	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/errwrite"
)

// LoggedError returns the error WriteError answered the request with, for
// the request's log line; nil when there was none.
func LoggedError(c echo.Context) *apierr.Error { return errwrite.Logged(c) }

// ErrorHandler is the echo error handler that renders every error a
// handler or middleware returns — the guard's included — with WriteError.
// The guard returns its errors rather than writing them, so an
// application that mounts it installs ErrorHandler (or calls WriteError
// from its own handler): e.HTTPErrorHandler = middleware.ErrorHandler.
func ErrorHandler(err error, c echo.Context) { errwrite.Write(c, err) }

// WriteError answers the request with err in the shape of its API (see
// errwrite.Write), and records err for the request's log line.
func WriteError(c echo.Context, err error) { errwrite.Write(c, err) }
