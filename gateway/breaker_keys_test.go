package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/internal/ollamatest"
)

// Secrets of the breaker tests' two keys, neither scoped.
const (
	appASecret = "cgk_MARKER-app-a-secret"
	appBSecret = "cgk_MARKER-app-b-secret"
)

// twoKeys configures two unscoped keys, app-a and app-b.
func twoKeys(c *config.Config) {
	c.AdminToken = "admin-token"
	c.Access = config.Access{Keys: []config.AccessKey{
		{Name: "app-a", SHA256: access.Hash(appASecret)},
		{Name: "app-b", SHA256: access.Hash(appBSecret)},
	}}
}

// brokenTemplateOllama answers as Ollama v0.17.4 does (server/routes.go,
// GenerateHandler): 500 to a generate whose template does not parse, and
// a generated answer to the others.
type brokenTemplateOllama struct{ calls atomic.Int32 }

func (o *brokenTemplateOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if bytes.Contains(body, []byte(`"template"`)) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"template: :1: unexpected \"}\" in operand"}`)
		return
	}
	io.WriteString(w, `{"model":"m","created_at":"2024-01-01T00:00:00Z","response":"hi","done":true,"done_reason":"stop"}`)
}

const (
	brokenTemplateBody = `{"model":"m","prompt":"p","stream":false,"template":"{{ .Prompt }"}`
	goodGenerateBody   = `{"model":"m","prompt":"p","stream":false}`
)

// TestBreakerOneKeyCannotOpenItForAnother: a client that sends broken
// templates, ten in a row, gets Ollama's 500 each time (more than the
// breaker's threshold of five), and another client's next request is
// still served: by key, and without keys, where one client address is one
// caller.
func TestBreakerOneKeyCannotOpenItForAnother(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*config.Config)
		bad, good http.Header
	}{
		{"two keys", twoKeys, bearer(appASecret), bearer(appBSecret)},
		{"no keys, one address", func(*config.Config) {}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &brokenTemplateOllama{}
			gw := newAccessGateway(t, up, tt.edit, nil)
			for i := range 10 {
				resp, body := sendRequest(t, gw.URL, http.MethodPost, "/api/generate", strings.NewReader(brokenTemplateBody), tt.bad)
				if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "template:") {
					t.Fatalf("broken template %d: %d %s, want Ollama's 500", i, resp.StatusCode, body)
				}
			}
			resp, body := sendRequest(t, gw.URL, http.MethodPost, "/api/generate", strings.NewReader(goodGenerateBody), tt.good)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("good request after another client's broken templates: %d %s, want 200", resp.StatusCode, body)
			}
			if n := up.calls.Load(); n != 11 {
				t.Errorf("upstream called %d times, want 11", n)
			}
		})
	}
}

// TestBreakerOpensForAnUnwellUpstream: an upstream that answers 500 to
// every key, that no longer listens, or whose proxy answers 502 opens the
// breaker within a few requests (threshold 2), and every key then gets
// 503 at once.
func TestBreakerOpensForAnUnwellUpstream(t *testing.T) {
	down := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"llama runner process has terminated: exit status 2"}`)
	})
	proxy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>502 Bad Gateway</html>")
	})
	tests := []struct {
		name    string
		up      http.Handler
		refused bool
		keys    []http.Header // the senders in turn
		failed  int           // requests answered before the breaker opens
		code    int           // their status
	}{
		{"500s to two keys", down, false, []http.Header{bearer(appASecret), bearer(appBSecret)}, 3, http.StatusInternalServerError},
		{"refused connections, one key", down, true, []http.Header{bearer(appASecret)}, 2, http.StatusBadGateway},
		{"a proxy's 502s, one key", proxy, false, []http.Header{bearer(appASecret)}, 2, http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := newAccessGateway(t, tt.up, func(c *config.Config) {
				twoKeys(c)
				c.Breaker = config.Breaker{FailureThreshold: 2}
				if tt.refused {
					c.Upstream = "http://" + closedLoopbackAddr(t)
				}
			}, nil)
			for i := range tt.failed {
				resp, body := sendRequest(t, gw.URL, http.MethodPost, "/api/generate", strings.NewReader(goodGenerateBody), tt.keys[i%len(tt.keys)])
				if resp.StatusCode != tt.code {
					t.Fatalf("request %d: %d %s, want %d", i, resp.StatusCode, body, tt.code)
				}
			}
			for _, key := range []http.Header{bearer(appASecret), bearer(appBSecret)} {
				resp, body := sendRequest(t, gw.URL, http.MethodPost, "/api/generate", strings.NewReader(goodGenerateBody), key)
				if msg := ollamaError(t, resp, body); resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(msg, "upstream circuit open") {
					t.Errorf("after %d failures: %d %s, want 503 upstream circuit open", tt.failed, resp.StatusCode, body)
				}
			}
		})
	}
}

// TestCallerOf: a request with a key is that key's; one without, its
// connection's address (an IPv6 host by its /64), whatever headers say.
func TestCallerOf(t *testing.T) {
	tests := []struct {
		key, remote, forwarded string
		want                   string
	}{
		{"app-a", "10.0.0.1:5000", "", "key app-a"},
		{access.AnonymousName, "10.0.0.1:5000", "", "address 10.0.0.1"},
		{"", "10.0.0.2:6000", "203.0.113.9", "address 10.0.0.2"},
		{"", "[::ffff:10.0.0.3]:6000", "", "address 10.0.0.3"},
		{"", "[2001:db8:1:2:3:4:5:6]:443", "", "address 2001:db8:1:2::/64"},
		{"", "[2001:db8:1:2:ffff::1]:443", "", "address 2001:db8:1:2::/64"},
		{"", "pipe", "", "address pipe"},
	}
	e := echo.New()
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/api/tags", nil)
		req.RemoteAddr = tt.remote
		if tt.forwarded != "" {
			req.Header.Set("X-Forwarded-For", tt.forwarded)
		}
		c := e.NewContext(req, httptest.NewRecorder())
		if tt.key != "" {
			access.SetKeyName(c, tt.key)
		}
		if got := callerOf(c); got != tt.want {
			t.Errorf("callerOf(key %q, %q) = %q, want %q", tt.key, tt.remote, got, tt.want)
		}
	}
}

// TestE2EBrokenTemplatesDoNotOpenTheBreaker: the real Ollama answers 500
// to a generate whose template does not parse; one key sending more of
// them than the breaker's threshold leaves it closed, and another key's
// next generate is served.
func TestE2EBrokenTemplatesDoNotOpenTheBreaker(t *testing.T) {
	o := ollamatest.Start(t)
	cfg := e2eConfig(t, o.URL)
	twoKeys(&cfg)
	cfg.Breaker.FailureThreshold = 2
	gw := startE2EGateway(t, cfg)
	broken := `{"model":"` + o.Model + `","prompt":"p","stream":false,"template":"{{ .Prompt }","options":{"num_predict":1}}`
	for i := range 4 {
		resp, body := sendRequest(t, gw, http.MethodPost, "/api/generate", strings.NewReader(broken), bearer(appASecret))
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "template") {
			t.Fatalf("broken template %d: %d %s, want Ollama's 500", i, resp.StatusCode, body)
		}
	}
	good := `{"model":"` + o.Model + `","prompt":"Once upon a time","stream":false,"options":{"num_predict":4,"temperature":0}}`
	resp, body := sendRequest(t, gw, http.MethodPost, "/api/generate", strings.NewReader(good), bearer(appBSecret))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("another key's generate after the broken templates: %d %s, want 200", resp.StatusCode, body)
	}
}
