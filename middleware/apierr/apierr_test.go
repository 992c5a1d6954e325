package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/validators"
)

func TestCauseSaysItOnce(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:1: connection refused")
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Msg: "upstream not ready: " + cause.Error(), Err: cause}, "upstream not ready: dial tcp 127.0.0.1:1: connection refused"},
		{&Error{Msg: "upstream unreachable", Err: cause}, "upstream unreachable: dial tcp 127.0.0.1:1: connection refused"},
		{&Error{Msg: "dial tcp", Err: cause}, "dial tcp 127.0.0.1:1: connection refused"},
		{&Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Cause(); got != tt.want {
			t.Errorf("Cause() = %q, want %q", got, tt.want)
		}
	}
}

func TestFrom(t *testing.T) {
	own := &Error{Code: http.StatusTeapot, Msg: "short and stout"}
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantMsg  string
	}{
		{"own error kept", fmt.Errorf("wrapped: %w", own), http.StatusTeapot, "short and stout"},
		{"body over the limit", &http.MaxBytesError{Limit: 10}, http.StatusRequestEntityTooLarge, "request body too large: the limit is 10 bytes"},
		{"client left", fmt.Errorf("read: %w", context.Canceled), StatusClientClosedRequest, "client closed request"},
		{"deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), http.StatusGatewayTimeout, "deadline exceeded"},
		{"anything else says nothing of its cause", errors.New("open /etc/secret: denied"), http.StatusInternalServerError, "internal server error"},
		{"echo's router", echo.ErrMethodNotAllowed, http.StatusMethodNotAllowed, "method not allowed"},
		{"echo's error with its own message", echo.NewHTTPError(http.StatusBadRequest, "bad header"), http.StatusBadRequest, "bad header"},
	}
	for _, tt := range tests {
		got := From(tt.err)
		if got.Status() != tt.wantCode || got.Message() != tt.wantMsg {
			t.Errorf("%s: From(%v) = %d %q, want %d %q", tt.name, tt.err, got.Status(), got.Message(), tt.wantCode, tt.wantMsg)
		}
	}
	if From(nil) != nil {
		t.Errorf("From(nil) = %v, want nil", From(nil))
	}
}

// TestWithContext checks that a network error of a round trip cut by its
// context maps to the context's status, and an error of a live context
// stays what it is.
func TestWithContext(t *testing.T) {
	netErr := errors.New("read tcp: use of closed network connection")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"client left", canceled, netErr, StatusClientClosedRequest},
		{"deadline passed", expired, netErr, http.StatusGatewayTimeout},
		{"live context", context.Background(), netErr, http.StatusInternalServerError},
		{"own error kept", canceled, &Error{Code: http.StatusServiceUnavailable}, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		got := From(WithContext(tt.ctx, tt.err))
		if got.Status() != tt.want {
			t.Errorf("%s: From(WithContext(%v)) = %d, want %d", tt.name, tt.err, got.Status(), tt.want)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("%s: the cause %v is lost", tt.name, tt.err)
		}
	}
}

func TestBodyRead(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"over the limit", &http.MaxBytesError{Limit: 1}, http.StatusRequestEntityTooLarge},
		{"stopped sending", timeoutError{}, http.StatusRequestTimeout},
		{"client left", context.Canceled, StatusClientClosedRequest},
		{"malformed framing", errors.New("invalid byte in chunk length"), http.StatusBadRequest},
	}
	for _, tt := range tests {
		if got := From(BodyRead(tt.err)).Status(); got != tt.want {
			t.Errorf("%s: From(BodyRead(%v)) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string { return "i/o timeout" }
func (timeoutError) Timeout() bool { return true }

// TestContractFailure: a contract failure is a 422 that counts the error
// violations, names the first with its path, and carries the report.
func TestContractFailure(t *testing.T) {
	r := &validators.Report{Contract: "mcq@1", Violations: []validators.Violation{
		{Code: "STYLE", Severity: validators.SeverityWarning},
		{Code: "ANSWER_RANGE", Severity: validators.SeverityError, Path: "/questions/2/answer"},
		{Code: "COUNT", Severity: validators.SeverityError},
	}}
	got := ContractFailure(r)
	want := "model output violates contract mcq@1: 2 violation(s), first ANSWER_RANGE at /questions/2/answer"
	if got.Status() != http.StatusUnprocessableEntity || got.Message() != want || got.Report != r {
		t.Errorf("ContractFailure() = %d %q (report %p), want 422 %q (report %p)", got.Status(), got.Message(), got.Report, want, r)
	}
}
