package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// StatusClientClosedRequest is the status logged when the client went away
// before the answer (nginx's 499). The client never sees it.
const StatusClientClosedRequest = 499

// HTTPError is an error with a status and a message for the client, and an
// internal error for the log. Clients see {"error": Msg}, Ollama's shape;
// Err (which may hold upstream addresses, file paths, parser internals)
// only reaches the request's log line.
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
}

// NewHTTPError returns an HTTPError with the status code, the client's
// message and the internal cause.
func NewHTTPError(code int, msg string, err error) HTTPError {
	return HTTPError{Code: code, Msg: msg, Err: err}
}

func (e HTTPError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%d %s", e.status(), e.message())
	}
	return fmt.Sprintf("%d %s: %v", e.status(), e.message(), e.Err)
}

// Unwrap returns the internal cause.
func (e HTTPError) Unwrap() error { return e.Err }

func (e HTTPError) status() int {
	if e.Code == 0 {
		return http.StatusInternalServerError
	}
	return e.Code
}

func (e HTTPError) message() string {
	if e.Msg == "" {
		return strings.ToLower(http.StatusText(e.status()))
	}
	return e.Msg
}

// errorBody is Ollama's error shape (ollama server/routes.go: gin.H{"error": …}).
type errorBody struct {
	Error string `json:"error"`
}

// ctxKeyError is where WriteError leaves the error for the request log.
const ctxKeyError = "gateway.error"

// WriteError answers the request with err in Ollama's shape,
// {"error": "…"}, and records err for the request's log line.
//
// The status and message come from the first of these that err matches:
// an [HTTPError] (or *HTTPError); an *echo.HTTPError; an *http.MaxBytesError
// (413); [ErrCircuitOpen] (503); context.DeadlineExceeded (504);
// context.Canceled (499, the client left). Anything else is a 500 whose
// message says nothing of the cause.
//
// Once the response is committed, the status can no longer change: when
// the response is an NDJSON stream the error becomes its final line, as
// Ollama does; otherwise it is only logged.
func WriteError(c echo.Context, err error) {
	he := toHTTPError(err)
	c.Set(ctxKeyError, he)
	res := c.Response()
	line, _ := json.Marshal(errorBody{Error: he.message()})
	if res.Committed {
		if strings.HasPrefix(res.Header().Get(echo.HeaderContentType), "application/x-ndjson") {
			_, _ = res.Write(append(line, '\n'))
			res.Flush()
		}
		return
	}
	for k, vs := range he.Header {
		res.Header()[k] = vs
	}
	if he.status() == StatusClientClosedRequest {
		// Nobody is listening; record the status for the log without
		// sending anything.
		res.Status = StatusClientClosedRequest
		return
	}
	writeJSONError(res, c.Request().Method, he.status(), line)
}

// writeJSONError writes an error body with the headers Ollama (gin) uses.
func writeJSONError(w http.ResponseWriter, method string, code int, body []byte) {
	h := w.Header()
	h.Set(echo.HeaderContentType, "application/json; charset=utf-8")
	h.Del(echo.HeaderContentLength)
	h.Del(echo.HeaderContentEncoding)
	w.WriteHeader(code)
	if method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// toHTTPError maps err to what the client sees.
func toHTTPError(err error) HTTPError {
	var (
		he   HTTPError
		phe  *HTTPError
		ehe  *echo.HTTPError
		mbe  *http.MaxBytesError
		coe  *circuitOpenError
		code int
	)
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &phe) && phe != nil:
		return *phe
	case errors.As(err, &ehe):
		code = ehe.Code
		msg := fmt.Sprint(ehe.Message)
		if msg == http.StatusText(code) {
			msg = strings.ToLower(msg)
		}
		return HTTPError{Code: code, Msg: msg, Err: ehe.Internal}
	case errors.As(err, &mbe):
		return HTTPError{Code: http.StatusRequestEntityTooLarge,
			Msg: fmt.Sprintf("request body too large: the limit is %d bytes", mbe.Limit), Err: err}
	case errors.As(err, &coe):
		secs := int(coe.retryAfter.Round(time.Second) / time.Second)
		return HTTPError{Code: http.StatusServiceUnavailable, Msg: coe.Error(), Err: err,
			Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}
	case errors.Is(err, ErrCircuitOpen):
		return HTTPError{Code: http.StatusServiceUnavailable, Msg: ErrCircuitOpen.Error() + ": the upstream failed repeatedly; try again later", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return HTTPError{Code: http.StatusGatewayTimeout, Msg: "deadline exceeded", Err: err}
	case errors.Is(err, context.Canceled):
		return HTTPError{Code: StatusClientClosedRequest, Msg: "client closed request", Err: err}
	}
	return HTTPError{Code: http.StatusInternalServerError, Msg: "internal server error", Err: err}
}

// httpErrorHandler is echo's central error handler: every error a handler
// or middleware returns, echo's own 404 and 405 and recovered panics leave
// in Ollama's shape.
func httpErrorHandler(err error, c echo.Context) {
	WriteError(c, err)
}
