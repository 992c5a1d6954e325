package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/strictjson"
	"github.com/contractgateway/gateway/validators"
)

// StatusClientClosedRequest is the status logged when the client went away
// before the answer (nginx's 499). The client never sees it.
const StatusClientClosedRequest = 499

// HTTPError is the one error type of the request path: a status and a
// message for the client, and the cause for the log. Clients see Ollama's
// shape, {"error": Msg} (plus "contract": Report on a contract failure);
// Err — which may hold upstream addresses, file paths, parser internals —
// reaches only the request's log line (Tailscale's tsweb.HTTPError).
type HTTPError struct {
	// Code is the HTTP status. Zero means 500.
	Code int
	// Msg is the one-line message the client sees. Empty means the status
	// text, in lower case.
	Msg string
	// Err is the cause, logged and never sent. May be nil.
	Err error
	// Header holds extra response headers, such as Retry-After. May be nil.
	Header http.Header
	// Report is the violation report of a contract failure (422), sent as
	// the "contract" member. Nil otherwise.
	Report *validators.Report
}

// NewHTTPError returns an HTTPError with the status code, the client's
// message and the internal cause.
func NewHTTPError(code int, msg string, err error) *HTTPError {
	return &HTTPError{Code: code, Msg: msg, Err: err}
}

func (e *HTTPError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%d %s", e.Status(), e.Message())
	}
	return fmt.Sprintf("%d %s: %v", e.Status(), e.Message(), e.Err)
}

// Unwrap returns the internal cause.
func (e *HTTPError) Unwrap() error { return e.Err }

// Status is the HTTP status the client gets.
func (e *HTTPError) Status() int {
	if e.Code == 0 {
		return http.StatusInternalServerError
	}
	return e.Code
}

// Message is the message the client gets.
func (e *HTTPError) Message() string {
	if e.Msg == "" {
		return strings.ToLower(http.StatusText(e.Status()))
	}
	return e.Msg
}

// Cause is what the log line says of the error: the cause alone when the
// message is part of it already, so that a line never repeats itself.
func (e *HTTPError) Cause() string {
	if e.Err == nil {
		return e.Message()
	}
	cause := e.Err.Error()
	switch msg := e.Message(); {
	case strings.Contains(cause, msg):
		return cause
	case strings.Contains(msg, cause):
		return msg
	}
	return e.Message() + ": " + cause
}

// body is the JSON the client gets.
func (e *HTTPError) body() []byte {
	obj := object(member("error", strictjson.String(e.Message())))
	if e.Report != nil {
		rep, err := strictjson.Parse(mustJSON(e.Report))
		if err == nil {
			obj.Set("contract", rep)
		}
	}
	return strictjson.Marshal(obj)
}

// AsHTTPError maps any error of the request path to what the client sees:
// an *HTTPError as it is; an *echo.HTTPError with its code and message; an
// *http.MaxBytesError as 413; context.DeadlineExceeded as 504;
// context.Canceled as 499 (the client left). Anything else is a 500 whose
// message says nothing of the cause.
func AsHTTPError(err error) *HTTPError {
	var (
		he  *HTTPError
		ehe *echo.HTTPError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.As(err, &he) && he != nil:
		return he
	case errors.As(err, &ehe):
		msg := fmt.Sprint(ehe.Message)
		if msg == http.StatusText(ehe.Code) {
			msg = strings.ToLower(msg)
		}
		return &HTTPError{Code: ehe.Code, Msg: msg, Err: ehe.Internal}
	case errors.As(err, &mbe):
		return &HTTPError{Code: http.StatusRequestEntityTooLarge,
			Msg: fmt.Sprintf("request body too large: the limit is %d bytes", mbe.Limit), Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &HTTPError{Code: http.StatusGatewayTimeout, Msg: "deadline exceeded", Err: err}
	case errors.Is(err, context.Canceled):
		return &HTTPError{Code: StatusClientClosedRequest, Msg: "client closed request", Err: err}
	}
	return &HTTPError{Code: http.StatusInternalServerError, Msg: "internal server error", Err: err}
}

// BodyReadError maps a failure to read a request body to what the client
// sees: a body over the limit stays an *http.MaxBytesError (AsHTTPError
// makes it the one 413), a client that stopped sending is 408, anything
// else 400. Every handler that reads a body whole answers the same way.
func BodyReadError(err error) error {
	var (
		mbe *http.MaxBytesError
		te  interface{ Timeout() bool }
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &te) && te.Timeout():
		return &HTTPError{Code: http.StatusRequestTimeout, Msg: "request body timeout: the client stopped sending", Err: err}
	}
	return &HTTPError{Code: http.StatusBadRequest, Msg: "reading request body failed", Err: err}
}

// ctxKeyError is where WriteError leaves the error for the request's log
// line (see LoggedError).
const ctxKeyError = "contractgateway.error"

// LoggedError returns the error WriteError answered the request with, for
// the request's log line; nil when there was none.
func LoggedError(c echo.Context) *HTTPError {
	he, _ := c.Get(ctxKeyError).(*HTTPError)
	return he
}

// WriteError answers the request with err in Ollama's shape, or in the
// shape of the path's codec when it is an ErrorEncoder — the one place
// errors are rendered, for the guard and for the gateway alike — and
// records err for the request's log line.
//
// Once the response is committed the status can no longer change: an
// NDJSON stream gets the error as its final line and an SSE stream as a
// final event, as Ollama does; anything else is only logged.
func WriteError(c echo.Context, err error) {
	he := AsHTTPError(err)
	c.Set(ctxKeyError, he)
	res := c.Response()
	if res.Committed {
		ct := res.Header().Get(echo.HeaderContentType)
		var line []byte
		switch {
		case strings.HasPrefix(ct, "application/x-ndjson"):
			line = append(he.body(), '\n')
		case strings.HasPrefix(ct, "text/event-stream"):
			line = sseErrorEvent(errorBody(c, he))
		}
		if line != nil {
			_, _ = res.Write(line)
			res.Flush()
		}
		return
	}
	for k, vs := range he.Header {
		res.Header()[k] = vs
	}
	if he.Status() == StatusClientClosedRequest {
		// Nobody is listening; record the status for the log without
		// sending anything.
		res.Status = StatusClientClosedRequest
		return
	}
	h := res.Header()
	h.Set(echo.HeaderContentType, "application/json; charset=utf-8")
	h.Del(echo.HeaderContentLength)
	h.Del(echo.HeaderContentEncoding)
	res.WriteHeader(he.Status())
	if c.Request().Method != http.MethodHead {
		_, _ = res.Write(errorBody(c, he))
	}
}
