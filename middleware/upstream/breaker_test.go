package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
)

// scriptedTransport answers each round trip with the next outcome.
type scriptedTransport struct {
	calls atomic.Int32
	next  func(*http.Request) (*http.Response, error)
}

func (s *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.calls.Add(1)
	return s.next(req)
}

func status(code int) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	}
}

var errRefused = errors.New("dial tcp: connection refused")

func transportError(*http.Request) (*http.Response, error) { return nil, errRefused }

// cancelled is what a transport returns when the client's context ends.
func cancelled(req *http.Request) (*http.Response, error) { return nil, req.Context().Err() }

// TestBreakerTransport walks the breaker's whole cycle — closed, open,
// half-open, closed, open again, half-open, open — on the bubble's fake
// clock: the open timeout passes without waiting.
func TestBreakerTransport(t *testing.T) {
	synctest.Test(t, testBreakerCycle)
}

func testBreakerCycle(t *testing.T) {
	const openTimeout = 30 * time.Second
	var transitions []string
	base := &scriptedTransport{}
	bt := NewBreakerTransport(base, BreakerSettings{
		FailureThreshold: 3,
		OpenTimeout:      openTimeout,
		OnStateChange: func(_ string, from, to gobreaker.State) {
			transitions = append(transitions, from.String()+"→"+to.String())
		},
	})
	steps := []struct {
		name      string
		wait      time.Duration // before the round trip
		caller    string
		respond   func(*http.Request) (*http.Response, error)
		cancel    bool // the client cancels before the round trip ends
		expired   bool // the request's own deadline (the gateway's) has run out
		wantOpen  bool // ErrCircuitOpen without calling the base
		wantState gobreaker.State
	}{
		{"500 to one caller is excluded", 0, "a", status(500), false, false, false, gobreaker.StateClosed},
		{"503 to a second caller counts", 0, "b", status(503), false, false, false, gobreaker.StateClosed},
		{"404 is a success and resets", 0, "a", status(404), false, false, false, gobreaker.StateClosed},
		{"failure 1", 0, "a", transportError, false, false, false, gobreaker.StateClosed},
		{"500 to one caller is excluded", 0, "b", status(500), false, false, false, gobreaker.StateClosed},
		{"failure 2: 500 to a second caller", 0, "a", status(500), false, false, false, gobreaker.StateClosed},
		{"failure 3 opens", 0, "a", transportError, false, false, false, gobreaker.StateOpen},
		{"open: refused at once", 0, "a", status(200), false, false, true, gobreaker.StateOpen},
		{"half-open trial succeeds", openTimeout + time.Second, "a", status(200), false, false, false, gobreaker.StateClosed},
		{"cancel 1 excluded", 0, "a", cancelled, true, false, false, gobreaker.StateClosed},
		{"cancel 2 excluded", 0, "a", cancelled, true, false, false, gobreaker.StateClosed},
		{"cancel 3 excluded", 0, "a", cancelled, true, false, false, gobreaker.StateClosed},
		{"own deadline 1 excluded", 0, "a", cancelled, false, true, false, gobreaker.StateClosed},
		{"own deadline 2 excluded", 0, "a", cancelled, false, true, false, gobreaker.StateClosed},
		{"own deadline 3 excluded", 0, "a", cancelled, false, true, false, gobreaker.StateClosed},
		{"500 to one caller excluded again", 0, "a", status(500), false, false, false, gobreaker.StateClosed},
		{"failure 1 again", 0, "b", status(500), false, false, false, gobreaker.StateClosed},
		{"failure 2 again", 0, "a", status(500), false, false, false, gobreaker.StateClosed},
		{"failure 3 opens again", 0, "b", status(500), false, false, false, gobreaker.StateOpen},
		{"half-open trial fails", openTimeout + time.Second, "a", transportError, false, false, false, gobreaker.StateOpen},
		{"open again", 0, "a", status(200), false, false, true, gobreaker.StateOpen},
	}
	for _, st := range steps {
		time.Sleep(st.wait)
		ctx, cancel := context.WithCancel(WithCaller(context.Background(), st.caller))
		if st.cancel {
			cancel()
		}
		if st.expired {
			ctx, cancel = context.WithDeadline(WithCaller(context.Background(), st.caller), time.Now().Add(-time.Second))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://upstream/api/tags", nil)
		base.next = st.respond
		before := base.calls.Load()
		resp, err := bt.RoundTrip(req)
		cancel()
		if resp != nil {
			resp.Body.Close()
		}
		called := base.calls.Load() != before
		if gotOpen := errors.Is(err, ErrCircuitOpen); gotOpen != st.wantOpen || called == st.wantOpen {
			t.Errorf("%s: RoundTrip error = %v (base called: %v), want ErrCircuitOpen %v", st.name, err, called, st.wantOpen)
		}
		if got := bt.State(); got != st.wantState {
			t.Errorf("%s: State() = %v, want %v", st.name, got, st.wantState)
		}
	}
	want := []string{"closed→open", "open→half-open", "half-open→closed", "closed→open", "open→half-open", "half-open→open"}
	if strings.Join(transitions, " ") != strings.Join(want, " ") {
		t.Errorf("transitions = %v, want %v", transitions, want)
	}
}

func TestBreakerSettingsZeroMeansDefault(t *testing.T) {
	base := &scriptedTransport{next: transportError}
	bt := NewBreakerTransport(base, BreakerSettings{})
	for i := 1; i <= DefaultFailureThreshold; i++ {
		req, _ := http.NewRequest(http.MethodGet, "http://upstream/", nil)
		bt.RoundTrip(req)
		wantOpen := i == DefaultFailureThreshold
		if got := bt.State() == gobreaker.StateOpen; got != wantOpen {
			t.Errorf("after %d failures: open = %v, want %v", i, got, wantOpen)
		}
	}
	if ra := bt.RetryAfter(); ra <= DefaultOpenTimeout-time.Second || ra > DefaultOpenTimeout {
		t.Errorf("RetryAfter() = %v, want about %v", ra, DefaultOpenTimeout)
	}
}

// failingReader fails its first read with err, as the server's reader of
// a malformed or short request body does.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

// TestBreakerExcludesClientBodyErrors: a round trip that failed because
// the client's body could not be read is not the upstream's failure,
// whether the transport returns the body's error or another one of the
// same teardown; with a
// threshold of one, a single count would open the breaker.
func TestBreakerExcludesClientBodyErrors(t *testing.T) {
	tests := []struct {
		name    string
		bodyErr error
		// report maps the body's error to what the transport returns.
		report func(bodyErr error) error
	}{
		{"malformed chunked framing", errors.New("invalid byte in chunk length"), func(err error) error { return err }},
		{"short body", io.ErrUnexpectedEOF, func(err error) error { return err }},
		{"short body, reported as the connection's end", io.ErrUnexpectedEOF, func(error) error { return errors.New("write: broken pipe") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &scriptedTransport{next: func(req *http.Request) (*http.Response, error) {
				_, err := io.ReadAll(req.Body)
				return nil, tt.report(err)
			}}
			bt := NewBreakerTransport(base, BreakerSettings{FailureThreshold: 1})
			for i := range 3 {
				b := &clientBody{ReadCloser: io.NopCloser(failingReader{tt.bodyErr})}
				req, _ := http.NewRequest(http.MethodPost, "http://upstream/api/embed", b)
				if _, err := bt.RoundTrip(req); errors.Is(err, ErrCircuitOpen) {
					t.Fatalf("round trip %d: %v, want the body's error", i, err)
				}
			}
			if got := bt.State(); got != gobreaker.StateClosed {
				t.Errorf("State() = %v after 3 client body errors, want closed", got)
			}
		})
	}
}
