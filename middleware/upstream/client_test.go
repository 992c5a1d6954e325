package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// seen is what a fake Ollama received.
type seen struct {
	RequestURI, Host, ContentType, RequestID string
}

// recorder is a fake Ollama that records each request and answers
// {"version": …}.
func recorder(t *testing.T) (*httptest.Server, <-chan seen) {
	t.Helper()
	got := make(chan seen, 8)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.RequestURI, r.Host, r.Header.Get("Content-Type"), r.Header.Get("X-Request-Id")}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"version":"0.17.4"}`)
	}))
	t.Cleanup(s.Close)
	return s, got
}

// TestClientResolvesURL: a request carries a path (and query) only; the
// client sends it to Ollama's URL, the base path as a prefix, escaped
// paths kept escaped, with Ollama's Host, and leaves the caller's request
// as it was.
func TestClientResolvesURL(t *testing.T) {
	tests := []struct {
		name, prefix, target, wantURI string
	}{
		{"path", "", "/api/tags", "/api/tags"},
		{"query", "", "/api/tags?x=1&y=2", "/api/tags?x=1&y=2"},
		{"base path prefix", "/ollama", "/api/version", "/ollama/api/version"},
		{"base path with a slash", "/ollama/", "/api/version", "/ollama/api/version"},
		{"escaped path kept escaped", "", "/v1/models/library%2Fqwen", "/v1/models/library%2Fqwen"},
		{"escaped path under a prefix", "/ollama", "/v1/models/a%2Fb", "/ollama/v1/models/a%2Fb"},
		{"absolute URL taken as its path", "", "http://elsewhere.example:1/api/ps", "/api/ps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := recorder(t)
			base, _ := url.Parse(srv.URL + tt.prefix)
			c := New(Options{URL: base})
			req, err := http.NewRequest(http.MethodGet, tt.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "gateway.example"
			before := req.URL.String()
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("Do(%s) = %v", tt.target, err)
			}
			resp.Body.Close()
			want := seen{RequestURI: tt.wantURI, Host: base.Host}
			if diff := cmp.Diff(want, <-got); diff != "" {
				t.Errorf("Do(%s): upstream saw (-want +got):\n%s", tt.target, diff)
			}
			if req.URL.String() != before || req.Host != "gateway.example" {
				t.Errorf("Do(%s) changed the caller's request to %s, Host %s", tt.target, req.URL, req.Host)
			}
		})
	}
}

// TestClientZeroOptions: the zero Options are the documented defaults:
// Ollama's own address, the breaker's defaults named after it, and the
// 64 MiB bound of answers read whole.
func TestClientZeroOptions(t *testing.T) {
	c := New(Options{})
	if got := c.base.String(); got != DefaultURL {
		t.Errorf("URL = %s, want %s", got, DefaultURL)
	}
	if c.maxResponse != DefaultMaxResponseBytes {
		t.Errorf("MaxResponseBytes = %d, want %d", c.maxResponse, DefaultMaxResponseBytes)
	}
	if c.breaker.openTimeout != DefaultOpenTimeout {
		t.Errorf("breaker open timeout = %v, want %v", c.breaker.openTimeout, DefaultOpenTimeout)
	}
}

// timeoutError is a net.Error that timed out, as a transport's response
// header timeout or a server's read deadline reports.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// readBody is a transport that reads the request's body and fails with
// what report makes of the read's error.
func readBody(report func(bodyErr error) error) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		_, err := io.ReadAll(req.Body)
		return nil, report(err)
	}
}

// TestClientErrors: every failed round trip comes back as what the client
// is to see, through apierr.From: the upstream's failures as 502, 503 or
// 504, the client's body as 400, 408 or 413, the client leaving as 499 and
// the request's deadline as 504; and none of the client's failures counts
// against the upstream.
func TestClientErrors(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	tests := []struct {
		name      string
		body      io.Reader // nil: no body; a client's stream otherwise
		ctx       func() (context.Context, context.CancelFunc)
		respond   func(*http.Request) (*http.Response, error)
		wantCode  int
		wantMsg   string // a prefix of the client's message
		wantCount bool   // counted by the breaker as a failure
	}{
		{"refused", nil, nil, transportError, 502, "upstream unreachable", true},
		{"upstream timeout", nil, nil, func(*http.Request) (*http.Response, error) { return nil, timeoutError{} }, 504, "upstream timed out", true},
		{"client left", nil, cancelledCtx, cancelled, 499, "client closed request", false},
		{"request deadline", nil, expiredCtx, cancelled, 504, "deadline exceeded", false},
		{"short client body", failingReader{io.ErrUnexpectedEOF}, nil, readBody(func(err error) error { return err }), 400, "reading request body failed", false},
		{"short body, reported as a broken pipe", failingReader{io.ErrUnexpectedEOF}, nil, readBody(func(error) error { return errors.New("write: broken pipe") }), 400, "reading request body failed", false},
		{"client stopped sending", failingReader{timeoutError{}}, nil, readBody(func(err error) error { return err }), 408, "request body timeout", false},
		{"client body over the limit", failingReader{&http.MaxBytesError{Limit: 10}}, nil, readBody(func(err error) error { return err }), 413, "request body too large", false},
		{"client connection reset", failingReader{reset}, nil, readBody(func(err error) error { return err }), 499, "client closed request", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Options{Transport: &scriptedTransport{next: tt.respond}, Breaker: BreakerSettings{FailureThreshold: 1}})
			ctx, cancel := context.WithCancel(context.Background())
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			var body io.Reader
			if tt.body != nil {
				body = io.NopCloser(tt.body) // not replayable: a client's stream
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/api/generate", body)
			resp, err := c.RoundTrip(req)
			if resp != nil {
				t.Fatalf("RoundTrip = %d, want an error", resp.StatusCode)
			}
			he := apierr.From(err)
			if he.Status() != tt.wantCode || !strings.HasPrefix(he.Message(), tt.wantMsg) {
				t.Errorf("RoundTrip error = %d %q, want %d %q…", he.Status(), he.Message(), tt.wantCode, tt.wantMsg)
			}
			if opened := c.State().String() == "open"; opened != tt.wantCount {
				t.Errorf("breaker open = %v after one round trip, want %v", opened, tt.wantCount)
			}
		})
	}
}

func cancelledCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx, cancel
}

func expiredCtx() (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
}

// TestClientBreakerOpen: while the breaker is open, a round trip is a 503
// with Retry-After in whole seconds, errors.Is finds ErrCircuitOpen, and
// the upstream is not called.
func TestClientBreakerOpen(t *testing.T) {
	base := &scriptedTransport{next: transportError}
	c := New(Options{Transport: base, Breaker: BreakerSettings{FailureThreshold: 1, OpenTimeout: 20 * time.Second}})
	req, _ := http.NewRequest(http.MethodGet, "/api/tags", nil)
	if _, err := c.Do(req); errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("first round trip = %v, want the upstream's failure", err)
	}
	_, err := c.Do(req)
	var he *apierr.Error
	if !errors.As(err, &he) || he.Status() != http.StatusServiceUnavailable || !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("round trip with the breaker open = %v, want a 503 *apierr.Error wrapping ErrCircuitOpen", err)
	}
	if ra, err := strconv.Atoi(he.Header.Get("Retry-After")); err != nil || ra < 19 || ra > 20 {
		t.Errorf("Retry-After = %q, want the seconds left of the open timeout", he.Header.Get("Retry-After"))
	}
	if n := base.calls.Load(); n != 1 {
		t.Errorf("upstream called %d times, want 1 (none while open)", n)
	}
}

// TestClientGetPost: the helper of the model routes and /readyz sends the
// caller's headers, marks a body as JSON, and returns the answer's body
// and headers.
func TestClientGetPost(t *testing.T) {
	srv, got := recorder(t)
	base, _ := url.Parse(srv.URL)
	c := New(Options{URL: base})
	h := http.Header{"X-Request-Id": {"req-1"}}
	tests := []struct {
		name string
		call func() (Reply, error)
		want seen
	}{
		{"get", func() (Reply, error) { return c.Get(context.Background(), "/api/version", h) },
			seen{RequestURI: "/api/version", Host: base.Host, RequestID: "req-1"}},
		{"post", func() (Reply, error) { return c.Post(context.Background(), "/api/show", []byte(`{"model":"m"}`), h) },
			seen{RequestURI: "/api/show", Host: base.Host, ContentType: "application/json", RequestID: "req-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, <-got); diff != "" {
				t.Errorf("upstream saw (-want +got):\n%s", diff)
			}
			if string(reply.Body) != `{"version":"0.17.4"}` || reply.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("reply = %s %q, want the upstream's body and Content-Type", reply.Body, reply.Header.Get("Content-Type"))
			}
		})
	}
}
