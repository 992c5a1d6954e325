package middleware

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/strictjson"
)

// ErrorEncoder is implemented by a Codec whose API has an error shape of
// its own that its client libraries parse (OpenAI's
// {"error":{"message","type"}}, Anthropic's
// {"type":"error","error":{"type","message"}}). WriteError uses it for
// every error on the codec's path, the gateway's own included; without it
// errors keep Ollama's {"error": "…"}.
type ErrorEncoder interface {
	// EncodeError returns the error's JSON body: e's status and message,
	// and its report as the "contract" member when there is one. On a
	// stream already started the body is sent as a final event, named
	// after its "type" member when it has one.
	EncodeError(e *apierr.Error) []byte
}

// ctxKeyCodec is where the guard leaves the request's codec, for
// WriteError.
const ctxKeyCodec = "contractgateway.codec"

// errorEncoder returns the ErrorEncoder of the request: the guard's codec
// when the guard saw the request, else the standard codec of its path;
// nil means Ollama's shape.
func errorEncoder(c echo.Context) ErrorEncoder {
	if cd, ok := c.Get(ctxKeyCodec).(Codec); ok {
		ee, _ := cd.(ErrorEncoder)
		return ee
	}
	path := strings.TrimSuffix(c.Request().URL.Path, "/")
	for _, cd := range Codecs() {
		if cd.Path() == path {
			ee, _ := cd.(ErrorEncoder)
			return ee
		}
	}
	return nil
}

// errorBody is the body of an error answer to c.
func errorBody(c echo.Context, he *apierr.Error) []byte {
	if ee := errorEncoder(c); ee != nil {
		return ee.EncodeError(he)
	}
	return he.Body()
}

// sseErrorEvent frames an error body as a server-sent event, named after
// the body's "type" member when it has one (Anthropic's "error" event).
func sseErrorEvent(body []byte) []byte {
	var line []byte
	if v, err := strictjson.Parse(body); err == nil {
		if typ, ok := v.Get("type").AsString(); ok && typ != "" {
			line = append(append(append(line, "event: "...), typ...), '\n')
		}
	}
	line = append(line, "data: "...)
	line = append(line, body...)
	return append(line, "\n\n"...)
}

// withReport adds e's report to obj as its "contract" member.
func withReport(obj *strictjson.Value, e *apierr.Error) *strictjson.Value {
	if e.Report != nil {
		if rep, err := strictjson.Parse(mustJSON(e.Report)); err == nil {
			obj.Set("contract", rep)
		}
	}
	return obj
}

// openAIErrorType is the error type OpenAI's API (and Ollama's
// compatible one) gives a status.
func openAIErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	return "api_error"
}

// openAIErrorBody is e in OpenAI's shape.
func openAIErrorBody(e *apierr.Error) []byte {
	inner := object(
		member("message", strictjson.String(e.Message())),
		member("type", strictjson.String(openAIErrorType(e.Status()))),
		member("param", strictjson.Null()),
		member("code", strictjson.Null()),
	)
	if e.Status() == http.StatusUnprocessableEntity && e.Report != nil {
		inner.Set("code", strictjson.String("contract_violation"))
	}
	return strictjson.Marshal(withReport(object(member("error", inner)), e))
}

// anthropicErrorType is the error type Anthropic's API gives a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	return "api_error"
}

// anthropicErrorBody is e in Anthropic's shape.
func anthropicErrorBody(e *apierr.Error) []byte {
	return strictjson.Marshal(withReport(object(
		member("type", strictjson.String("error")),
		member("error", object(
			member("type", strictjson.String(anthropicErrorType(e.Status()))),
			member("message", strictjson.String(e.Message())),
		)),
	), e))
}

var _ ErrorEncoder = openAIChatCodec{}

// EncodeError writes errors in OpenAI's shape, as Ollama's own
// /v1/chat/completions does, which the OpenAI client libraries parse.
func (openAIChatCodec) EncodeError(e *apierr.Error) []byte { return openAIErrorBody(e) }
