// Package apierr is the request path's one error type and its one mapper.
// Every layer that can fail a request — the edge rules, the guard, the
// upstream client, the proxy, the admin routes — returns errors; [From]
// turns any of them into what the client sees, so that a status such as
// 499 (the client left) or 504 (the deadline passed) is decided in one
// place, and the HTTP layer only renders the result.
package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// StatusClientClosedRequest is the status logged when the client went away
// before the answer (nginx's 499). The client never sees it.
const StatusClientClosedRequest = 499

// Error is a status and a message for the client, and the cause for the
// log. Clients see Ollama's shape, {"error": Msg} (plus "contract":
// Report on a contract failure), or their API's own shape; Err — which may
// hold upstream addresses, file paths, parser internals — reaches only the
// request's log line (Tailscale's tsweb.HTTPError).
type Error struct {
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

// New returns an Error with the status code, the client's message and the
// internal cause.
func New(code int, msg string, err error) *Error {
	return &Error{Code: code, Msg: msg, Err: err}
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%d %s", e.Status(), e.Message())
	}
	return fmt.Sprintf("%d %s: %v", e.Status(), e.Message(), e.Err)
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// Status is the HTTP status the client gets.
func (e *Error) Status() int {
	if e.Code == 0 {
		return http.StatusInternalServerError
	}
	return e.Code
}

// Message is the message the client gets.
func (e *Error) Message() string {
	if e.Msg == "" {
		return strings.ToLower(http.StatusText(e.Status()))
	}
	return e.Msg
}

// Cause is what the log line says of the error: the cause alone when the
// message is part of it already, so that a line never repeats itself.
func (e *Error) Cause() string {
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

// Body is the error in Ollama's shape, {"error": "…"}, with the report as
// its "contract" member when there is one.
func (e *Error) Body() []byte {
	return strictjson.Marshal(e.WithReport(strictjson.Object(
		strictjson.Member{Key: "error", KeyOffset: -1, Value: strictjson.String(e.Message())})))
}

// WithReport adds e's report to obj as its "contract" member, for the
// error shapes of every API alike, and returns obj.
func (e *Error) WithReport(obj *strictjson.Value) *strictjson.Value {
	if e.Report == nil {
		return obj
	}
	b, err := json.Marshal(e.Report)
	if err != nil {
		return obj
	}
	if rep, err := strictjson.Parse(b); err == nil {
		obj.Set("contract", rep)
	}
	return obj
}

// From maps any error of the request path to what the client sees: an
// *Error as it is; echo's own errors (its router's 404 and 405, a bound
// body's 400) by their status and message; an *http.MaxBytesError as 413; context.Canceled as 499
// (the client left); context.DeadlineExceeded as 504. Anything else is a
// 500 whose message says nothing of the cause. It is the one place these
// statuses are decided: layers below wrap the context's error rather than
// choosing a status for it.
func From(err error) *Error {
	var (
		e   *Error
		ehe *echo.HTTPError
		mbe *http.MaxBytesError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e) && e != nil:
		return e
	case errors.As(err, &ehe):
		msg := fmt.Sprint(ehe.Message)
		if msg == http.StatusText(ehe.Code) {
			msg = strings.ToLower(msg)
		}
		return &Error{Code: ehe.Code, Msg: msg, Err: ehe.Internal}
	case errors.As(err, &mbe):
		return &Error{Code: http.StatusRequestEntityTooLarge,
			Msg: fmt.Sprintf("request body too large: the limit is %d bytes", mbe.Limit), Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: StatusClientClosedRequest, Msg: "client closed request", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: http.StatusGatewayTimeout, Msg: "deadline exceeded", Err: err}
	}
	return &Error{Code: http.StatusInternalServerError, Msg: "internal server error", Err: err}
}

// WithContext returns err wrapped with ctx's error once ctx is done, so
// that [From] tells a client that left (499) and a deadline that passed
// (504) from the failure they caused: a round trip cut by its context
// reports a network error that does not say why.
func WithContext(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ctx.Err()) {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%w: %w", context.Cause(ctx), err)
}

// BodyRead maps a failure to read a request body to what the client sees:
// a body over the limit stays an *http.MaxBytesError (From makes it the
// one 413), a client that stopped sending is 408, a client that left is
// 499, anything else 400. Every reader of a client's body answers the same
// way, whether it reads the body whole or streams it on.
func BodyRead(err error) error {
	var (
		mbe *http.MaxBytesError
		te  interface{ Timeout() bool }
	)
	switch {
	case errors.As(err, &mbe), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &te) && te.Timeout():
		return &Error{Code: http.StatusRequestTimeout, Msg: "request body timeout: the client stopped sending", Err: err}
	}
	return &Error{Code: http.StatusBadRequest, Msg: "reading request body failed", Err: err}
}

// ContractFailure is the answer to a guarded request whose answer the
// ladder could not bring into contract: a 422 that counts the error
// violations of r and names the first, with r as the "contract" member of
// the body, never a silent pass.
func ContractFailure(r *validators.Report) *Error {
	n, first := 0, ""
	for _, v := range r.Violations {
		if v.Severity != validators.SeverityError {
			continue
		}
		if n == 0 {
			first = v.Code
			if v.Path != "" {
				first += " at " + v.Path
			}
		}
		n++
	}
	msg := fmt.Sprintf("model output violates contract %s: %d violation(s), first %s", r.Contract, n, first)
	return &Error{Code: http.StatusUnprocessableEntity, Msg: msg, Report: r}
}
