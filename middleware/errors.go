package middleware

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/apis"
	"github.com/contractgateway/gateway/middleware/codec/frame"
)

// ctxKeyCodec is where the guard leaves the request's codec (setCodec),
// for Write.
const ctxKeyCodec = "contractgateway.codec"

// setCodec tells ErrorHandler the codec of c's request: its errors then take that
// API's shape, whatever the path.
func setCodec(c echo.Context, cd codec.Codec) { c.Set(ctxKeyCodec, cd) }

// codecOf is the codec of c's request: the guard's when the guard saw the
// request, else the standard codec of its path; nil on every other path.
func codecOf(c echo.Context) codec.Codec {
	if cd, ok := c.Get(ctxKeyCodec).(codec.Codec); ok {
		return cd
	}
	return apis.ForPath(c.Request().URL.Path)
}

// errorBody is the body of an error answer to c, in the shape of the
// request's codec (codecOf); Ollama's shape on every other path.
func errorBody(c echo.Context, he *apierr.Error) []byte {
	cd := codecOf(c)
	if cd == nil {
		return he.Body()
	}
	return cd.EncodeError(he)
}

// ctxKeyStream is where the guard leaves the writer of a stream it
// releases piece by piece (setStream), for ErrorHandler.
const ctxKeyStream = "contractgateway.stream"

// setStream tells ErrorHandler the writer of c's guarded stream: an error
// after its first frame ends it with the writer's Fail, the API's error
// frame in the stream's own sequence.
func setStream(c echo.Context, w codec.StreamWriter) { c.Set(ctxKeyStream, w) }

// streamError returns the frame that ends c's started stream with he: the
// codec's (see codec.Codec.StreamError) on a guarded API's path, else
// Ollama's NDJSON line or a data-only event by the stream's content type;
// nil for an answer that is no stream, which can only be logged.
func streamError(c echo.Context, he *apierr.Error) []byte {
	ct := c.Response().Header().Get(echo.HeaderContentType)
	ndjson, sse := strings.HasPrefix(ct, "application/x-ndjson"), strings.HasPrefix(ct, "text/event-stream")
	if !ndjson && !sse {
		return nil
	}
	cd := codecOf(c)
	switch {
	case cd != nil:
		return cd.StreamError(he)
	case ndjson:
		return frame.NDJSONErrorLine(he.Body())
	default:
		return frame.SSEErrorEvent(he.Body())
	}
}

// ctxKeyError is where ErrorHandler leaves the error for the request's log line
// (see LoggedError).
const ctxKeyError = "contractgateway.error"

// LoggedError returns the error ErrorHandler answered the request with, for the
// request's log line; nil when there was none.
func LoggedError(c echo.Context) *apierr.Error {
	he, _ := c.Get(ctxKeyError).(*apierr.Error)
	return he
}

// ErrorHandler is the echo error handler, the one place errors are
// rendered: it answers the request with err in the shape of the request's
// API — Ollama's {"error": …} on its paths and every other, OpenAI's and
// Anthropic's error objects on theirs — for the guard and for the gateway
// alike, and records err for the request's log line. The guard returns its
// errors rather than writing them, so an application that mounts it
// installs it: e.HTTPErrorHandler = middleware.ErrorHandler.
//
// Once the response is committed the status can no longer change: a
// stream gets the API's error frame (Ollama's final NDJSON line, an SSE
// API's error event), as Ollama does; anything else, and an error of a
// client that left, is only logged.
func ErrorHandler(err error, c echo.Context) {
	he := apierr.From(err)
	c.Set(ctxKeyError, he)
	res := c.Response()
	if res.Committed {
		if he.Status() == apierr.StatusClientClosedRequest {
			return // nobody is listening
		}
		if w, ok := c.Get(ctxKeyStream).(codec.StreamWriter); ok {
			_ = w.Fail(he) // the guard's stream, in its own sequence
			return
		}
		if line := streamError(c, he); line != nil {
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
