// Package errwrite writes every error answer of the gateway — the guard's
// and the gateway's own — in the shape of the request's API: Ollama's
// {"error": …} on its paths and every other, OpenAI's and Anthropic's
// error objects on theirs, as the final line or event of a stream that
// already began. It is the one place errors are rendered.
package errwrite

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
)

// fromEcho maps echo's own errors (its router's 404 and 405, a bound
// body's 400) to the request path's error type, and leaves every other
// error to apierr.From, the one mapper.
func fromEcho(err error) *apierr.Error {
	var ehe *echo.HTTPError
	if errors.As(err, &ehe) && !errors.As(err, new(*apierr.Error)) {
		msg := fmt.Sprint(ehe.Message)
		if msg == http.StatusText(ehe.Code) {
			msg = strings.ToLower(msg)
		}
		return &apierr.Error{Code: ehe.Code, Msg: msg, Err: ehe.Internal}
	}
	return apierr.From(err)
}

// ctxKeyCodec is where the guard leaves the request's codec (SetCodec),
// for Write.
const ctxKeyCodec = "contractgateway.codec"

// SetCodec tells Write the codec of c's request: its errors then take that
// API's shape, whatever the path.
func SetCodec(c echo.Context, cd codec.Codec) { c.Set(ctxKeyCodec, cd) }

// errorBody is the body of an error answer to c, in the shape of the
// request's codec: the guard's when the guard saw the request, else the
// standard codec of its path; Ollama's shape on every other path.
func errorBody(c echo.Context, he *apierr.Error) []byte {
	cd, ok := c.Get(ctxKeyCodec).(codec.Codec)
	if !ok {
		cd = codec.ForPath(c.Request().URL.Path)
	}
	if cd == nil {
		return he.Body()
	}
	return cd.EncodeError(he)
}

// ctxKeyError is where Write leaves the error for the request's log line
// (see Logged).
const ctxKeyError = "contractgateway.error"

// Logged returns the error Write answered the request with, for the
// request's log line; nil when there was none.
func Logged(c echo.Context) *apierr.Error {
	he, _ := c.Get(ctxKeyError).(*apierr.Error)
	return he
}

// Write answers the request with err in the shape of the path's
// codec, Ollama's on every other path — the one place errors are
// rendered, for the guard and for the gateway alike — and records err for
// the request's log line.
//
// Once the response is committed the status can no longer change: an
// NDJSON stream gets the error as its final line and an SSE stream as a
// final event, as Ollama does; anything else is only logged.
func Write(c echo.Context, err error) {
	he := fromEcho(err)
	c.Set(ctxKeyError, he)
	res := c.Response()
	if res.Committed {
		ct := res.Header().Get(echo.HeaderContentType)
		var line []byte
		switch {
		case strings.HasPrefix(ct, "application/x-ndjson"):
			line = frame.NDJSONErrorLine(he.Body())
		case strings.HasPrefix(ct, "text/event-stream"):
			line = frame.SSEErrorEvent(errorBody(c, he))
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
	if he.Status() == apierr.StatusClientClosedRequest {
		// Nobody is listening; record the status for the log without
		// sending anything.
		res.Status = apierr.StatusClientClosedRequest
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
