package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sony/gobreaker/v2"
)

// templateOllama answers as Ollama v0.17.4 does (server/routes.go,
// GenerateHandler): 500 to a generate whose template does not parse, 200
// to the others.
func templateOllama(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if bytes.Contains(body, []byte(`"template"`)) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"template: :1: unexpected \"}\" in operand"}`)
			return
		}
		io.WriteString(w, `{"model":"m","response":"hi","done":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// generateAs sends a generate with body to c as caller and returns the
// status the caller gets: the upstream's, or the mapped error's.
func generateAs(t *testing.T, c *Client, caller, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(WithCaller(context.Background(), caller), http.MethodPost, "/api/generate", strings.NewReader(body))
	resp, err := c.RoundTrip(req)
	if err != nil {
		var he interface{ Status() int }
		if errors.As(err, &he) {
			return he.Status()
		}
		t.Fatalf("RoundTrip: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestBreakerOneKeyCannotOpenItForAnother: a key that sends one broken
// template after another gets Ollama's 500 each time, and the breaker
// stays closed: another key's next request is served, not refused.
func TestBreakerOneKeyCannotOpenItForAnother(t *testing.T) {
	up := templateOllama(t)
	u, _ := url.Parse(up.URL)
	c := New(Options{URL: u, Breaker: BreakerSettings{FailureThreshold: 3}})
	defer c.CloseIdleConnections()
	const broken = `{"model":"m","prompt":"p","template":"{{ .Prompt }"}`
	for i := range 10 {
		if got := generateAs(t, c, "key quiz-app", broken); got != http.StatusInternalServerError {
			t.Fatalf("broken template %d as quiz-app: status %d, want Ollama's 500", i, got)
		}
	}
	if got := c.State(); got != gobreaker.StateClosed {
		t.Errorf("State() = %v after 10 broken templates from one key, want closed", got)
	}
	if got := generateAs(t, c, "key ops", `{"model":"m","prompt":"p"}`); got != http.StatusOK {
		t.Errorf("a good request as ops after quiz-app's broken templates: status %d, want 200", got)
	}
}

// breakerStep is one round trip of a breaker script: after wait, caller
// sends a request the base answers with respond.
type breakerStep struct {
	wait    time.Duration
	caller  string
	respond func(*http.Request) (*http.Response, error)
}

// repeat is n steps of callers in turn, each answered with respond.
func repeat(n int, respond func(*http.Request) (*http.Response, error), callers ...string) []breakerStep {
	out := make([]breakerStep, n)
	for i := range out {
		out[i] = breakerStep{caller: callers[i%len(callers)], respond: respond}
	}
	return out
}

func timedOut(*http.Request) (*http.Response, error) {
	return nil, &url.Error{Op: "Post", URL: "http://upstream/api/generate", Err: timeoutError{}}
}

// TestBreakerCountsWhatSaysTheUpstreamIsUnwell plays scripts of round
// trips on the bubble's clock and checks after how many the breaker
// opens (threshold 3): at once for refused connections, timeouts and a
// proxy's 502 or 504, even from one caller; for other 5xx answers once
// they reached two callers; never for one caller's 500s and 503s,
// whatever else happens between them.
func TestBreakerCountsWhatSaysTheUpstreamIsUnwell(t *testing.T) {
	const threshold = 3
	tests := []struct {
		name     string
		steps    []breakerStep
		wantOpen int // the step (from 1) after which the breaker is open; 0: never
	}{
		{"refused connections from one caller", repeat(5, transportError, "a"), 3},
		{"timeouts from one caller", repeat(5, timedOut, "a"), 3},
		{"refused connections from no named caller", repeat(5, transportError, ""), 3},
		{"500s from one caller", repeat(20, status(500), "a"), 0},
		{"500s and 503s from one caller", append(repeat(5, status(500), "a"), repeat(5, status(503), "a")...), 0},
		{"a proxy's 502s from one caller", repeat(5, status(502), "a"), 3},
		{"a proxy's 504s from one caller", repeat(5, status(504), "a"), 3},
		{"500s from no named caller", repeat(20, status(500), ""), 0},
		{"500s from two callers in turn", repeat(10, status(500), "a", "b"), 4},
		{"500s from three callers in turn", repeat(10, status(500), "a", "b", "c"), 4},
		{"one caller's 500s between another's successes", []breakerStep{
			{0, "a", status(500)}, {0, "b", status(200)}, {0, "a", status(500)}, {0, "b", status(200)},
			{0, "a", status(500)}, {0, "b", status(200)}, {0, "a", status(500)}, {0, "a", status(500)},
		}, 0},
		{"a 500 to another caller long ago", []breakerStep{
			{0, "b", status(500)}, {CallerWindow + time.Second, "a", status(500)},
			{0, "a", status(500)}, {0, "a", status(500)}, {0, "a", status(500)},
		}, 0},
		{"a 500 to another caller within the window", []breakerStep{
			{0, "b", status(500)}, {CallerWindow - time.Second, "a", status(500)},
			{0, "a", status(500)}, {0, "a", status(500)},
		}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &scriptedTransport{}
				bt := NewBreakerTransport(base, BreakerSettings{FailureThreshold: threshold, OpenTimeout: time.Hour})
				opened := 0
				for i, st := range tt.steps {
					time.Sleep(st.wait)
					base.next = st.respond
					req, _ := http.NewRequestWithContext(WithCaller(context.Background(), st.caller), http.MethodPost, "http://upstream/api/generate", nil)
					if resp, err := bt.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
					if opened == 0 && bt.State() == gobreaker.StateOpen {
						opened = i + 1
					}
				}
				if opened != tt.wantOpen {
					t.Errorf("breaker opened after round trip %d, want %d (0: never)", opened, tt.wantOpen)
				}
			})
		})
	}
}

// TestBreakerOpensOnRefusedConnections: an upstream that no longer
// listens opens the breaker within the threshold's requests, all of one
// caller; the next request is refused at once.
func TestBreakerOpensOnRefusedConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	u, _ := url.Parse("http://" + addr)
	c := New(Options{URL: u, Breaker: BreakerSettings{FailureThreshold: 3}})
	for i := range 3 {
		if got := generateAs(t, c, "key quiz-app", `{"model":"m"}`); got != http.StatusBadGateway {
			t.Fatalf("request %d to a closed port: status %d, want 502", i, got)
		}
	}
	req, _ := http.NewRequestWithContext(WithCaller(context.Background(), "key ops"), http.MethodPost, "/api/generate", strings.NewReader(`{}`))
	if _, err := c.RoundTrip(req); !errors.Is(err, ErrCircuitOpen) {
		t.Errorf("after 3 refused connections: %v, want %v", err, ErrCircuitOpen)
	}
}
