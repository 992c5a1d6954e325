package middleware

import (
	"errors"
	"testing"
)

func TestHTTPErrorCauseSaysItOnce(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:1: connection refused")
	tests := []struct {
		err  *HTTPError
		want string
	}{
		{&HTTPError{Msg: "upstream not ready: " + cause.Error(), Err: cause}, "upstream not ready: dial tcp 127.0.0.1:1: connection refused"},
		{&HTTPError{Msg: "upstream unreachable", Err: cause}, "upstream unreachable: dial tcp 127.0.0.1:1: connection refused"},
		{&HTTPError{Msg: "dial tcp", Err: cause}, "dial tcp 127.0.0.1:1: connection refused"},
		{&HTTPError{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Cause(); got != tt.want {
			t.Errorf("Cause() = %q, want %q", got, tt.want)
		}
	}
}
