package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// edgeUpstream is a fake Ollama that counts the requests reaching it and
// keeps the Origin header of the last one.
type edgeUpstream struct {
	mu     sync.Mutex
	calls  int
	origin []string
}

func (u *edgeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	u.calls++
	u.origin = r.Header.Values("Origin")
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/generate":
		io.WriteString(w, `{"model":"m","created_at":"2024-01-01T00:00:00Z","response":"{\"a\":1}","done":true,"done_reason":"stop"}`)
	default:
		io.WriteString(w, `{"models":[]}`)
	}
}

func (u *edgeUpstream) seen() (int, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls, u.origin
}

// newEdgeGateway builds the whole gateway (Build) with listen and edit
// applied, in front of a fresh edgeUpstream. The listen address is only
// configured: the test server listens on loopback whatever it says, as
// the rule reads the configured address.
func newEdgeGateway(t *testing.T, listen string, edit func(*config.Config)) (*httptest.Server, *edgeUpstream) {
	t.Helper()
	up := &edgeUpstream{}
	gw := newGuardedGateway(t, up, func(cfg *config.Config) {
		cfg.Listen = listen
		if edit != nil {
			edit(cfg)
		}
	})
	return gw, up
}

// edgeRequest is one request of the edge tests: a guarded generate call
// (X-Contract: json), or any other path, which is passed through or
// answered by the gateway.
type edgeRequest struct {
	method, path, host string
	header             map[string]string
}

func (r edgeRequest) do(t *testing.T, base string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if r.method == http.MethodPost {
		body = strings.NewReader(`{"model":"m","prompt":"p","stream":false}`)
	}
	req, err := http.NewRequest(r.method, base+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

var (
	guarded     = edgeRequest{method: http.MethodPost, path: "/api/generate", header: map[string]string{"X-Contract": "json"}}
	passThrough = edgeRequest{method: http.MethodGet, path: "/api/tags"}
)

func (r edgeRequest) withHost(h string) edgeRequest { r.host = h; return r }

func (r edgeRequest) with(k, v string) edgeRequest {
	h := map[string]string{k: v}
	for k, v := range r.header {
		h[k] = v
	}
	r.header = h
	return r
}

// TestEdgeHostRule checks Ollama's DNS-rebinding defence at the gateway's
// edge: on a loopback listen address a Host that is not a local name is
// refused before any route (guard, proxy, admin) runs; on another address
// Host is not checked, as Ollama does not check it there.
func TestEdgeHostRule(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	allowGPU := func(c *config.Config) { c.AllowedHosts = []string{"gpu-box.lan"} }
	tests := []struct {
		name     string
		listen   string
		edit     func(*config.Config)
		req      edgeRequest
		want     int
		upstream bool // whether the request reaches the upstream
	}{
		{"rebound name, pass-through", "127.0.0.1:11435", nil, passThrough.withHost("evil.example"), 403, false},
		{"rebound name with port, guarded", "127.0.0.1:11435", nil, guarded.withHost("evil.example:11435"), 403, false},
		{"rebound name, OpenAI path", "127.0.0.1:11435", nil,
			edgeRequest{method: http.MethodPost, path: "/v1/chat/completions", host: "evil.example"}, 403, false},
		{"rebound name, admin route", "127.0.0.1:11435", nil, edgeRequest{method: http.MethodGet, path: "/metrics", host: "evil.example"}, 403, false},
		{"rebound name, healthz", "127.0.0.1:11435", nil, edgeRequest{method: http.MethodGet, path: "/healthz", host: "evil.example"}, 403, false},
		{"rebound name, OPTIONS", "127.0.0.1:11435", nil, edgeRequest{method: http.MethodOptions, path: "/api/tags", host: "evil.example"}, 403, false},
		{"rebound name on ipv6 loopback listen", "[::1]:11435", nil, passThrough.withHost("evil.example"), 403, false},
		{"public address", "127.0.0.1:11435", nil, passThrough.withHost("8.8.8.8:11435"), 403, false},
		{"trailing dot is another name", "127.0.0.1:11435", nil, passThrough.withHost("localhost."), 403, false},
		{"allowed_hosts does not allow others", "127.0.0.1:11435", allowGPU, passThrough.withHost("gpu-box.lan.evil.example"), 403, false},

		{"localhost with port", "127.0.0.1:11435", nil, passThrough.withHost("localhost:11435"), 200, true},
		{"LOCALHOST", "127.0.0.1:11435", nil, passThrough.withHost("LOCALHOST"), 200, true},
		{"127.0.0.1", "127.0.0.1:11435", nil, passThrough.withHost("127.0.0.1"), 200, true},
		{"ipv6 loopback with port", "127.0.0.1:11435", nil, passThrough.withHost("[::1]:11435"), 200, true},
		{"ipv6 loopback", "127.0.0.1:11435", nil, passThrough.withHost("[::1]"), 200, true},
		{"private address", "127.0.0.1:11435", nil, passThrough.withHost("10.0.0.7:11435"), 200, true},
		{"unspecified address", "127.0.0.1:11435", nil, passThrough.withHost("0.0.0.0:11435"), 200, true},
		{".local", "127.0.0.1:11435", nil, passThrough.withHost("myhost.local"), 200, true},
		{".localhost", "127.0.0.1:11435", nil, passThrough.withHost("app.localhost:11435"), 200, true},
		{".internal", "127.0.0.1:11435", nil, passThrough.withHost("host.docker.internal:11435"), 200, true},
		{"machine's hostname", "127.0.0.1:11435", nil, passThrough.withHost(hostname + ":11435"), 200, true},
		{"local name, guarded", "127.0.0.1:11435", nil, guarded.withHost("localhost:11435"), 200, true},
		{"local name, healthz", "127.0.0.1:11435", nil, edgeRequest{method: http.MethodGet, path: "/healthz", host: "localhost"}, 200, false},
		{"local name, OPTIONS answered at the edge", "127.0.0.1:11435", nil,
			edgeRequest{method: http.MethodOptions, path: "/api/tags", host: "localhost"}, 204, false},
		{"allowed_hosts entry", "127.0.0.1:11435", allowGPU, passThrough.withHost("gpu-box.lan:11435"), 200, true},
		{"allowed_hosts entry, any case", "127.0.0.1:11435", allowGPU, guarded.withHost("GPU-Box.LAN"), 200, true},
		{"listen host name is allowed", "gpu-box.lan:11435", nil, passThrough.withHost("gpu-box.lan:11435"), 200, true},
		{"listen host name fails closed", "gpu-box.lan:11435", nil, passThrough.withHost("evil.example"), 403, false},

		{"all interfaces: not checked", "0.0.0.0:11435", nil, passThrough.withHost("evil.example"), 200, true},
		{"empty host: not checked", ":11435", nil, guarded.withHost("evil.example"), 200, true},
		{"lan address: not checked", "10.0.0.7:11435", nil, passThrough.withHost("evil.example"), 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw, up := newEdgeGateway(t, tt.listen, tt.edit)
			resp, body := tt.req.do(t, gw.URL)
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s Host %q = %d %s, want %d", tt.req.method, tt.req.path, tt.req.host, resp.StatusCode, body, tt.want)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(body, "host not allowed") {
				t.Errorf("body = %s, want the host error", body)
			}
			if calls, _ := up.seen(); (calls > 0) != tt.upstream {
				t.Errorf("upstream calls = %d, want reached %v", calls, tt.upstream)
			}
		})
	}
}

// TestEdgeOriginRule checks Ollama's origin rule (OLLAMA_ORIGINS with
// gin-contrib/cors) at the gateway's edge, on guarded and pass-through
// routes alike, and that the Origin header is not passed upstream.
func TestEdgeOriginRule(t *testing.T) {
	examples := func(c *config.Config) {
		c.AllowedOrigins = []string{"https://*.example.com", "https://exact.example.org"}
	}
	allowAll := func(c *config.Config) { c.AllowedOrigins = []string{"*"} }
	tests := []struct {
		name     string
		edit     func(*config.Config)
		req      edgeRequest
		want     int
		acao     string // Access-Control-Allow-Origin
		upstream bool
	}{
		{"foreign origin, guarded", nil, guarded.with("Origin", "http://evil.example"), 403, "", false},
		{"foreign origin, pass-through", nil, passThrough.with("Origin", "http://evil.example"), 403, "", false},
		{"foreign origin, admin", nil, edgeRequest{method: http.MethodGet, path: "/metrics", header: map[string]string{"Origin": "http://evil.example"}}, 403, "", false},
		{"foreign origin, preflight", nil, edgeRequest{method: http.MethodOptions, path: "/api/generate",
			header: map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}}, 403, "", false},
		{"null origin", nil, passThrough.with("Origin", "null"), 403, "", false},
		{"rebinding page: same origin, foreign host", nil,
			passThrough.withHost("evil.example:11435").with("Origin", "http://evil.example:11435"), 403, "", false},
		{"localhost dev server, pass-through", nil, passThrough.with("Origin", "http://localhost:3000"), 200, "http://localhost:3000", true},
		{"localhost dev server, guarded", nil, guarded.with("Origin", "http://localhost:3000"), 200, "http://localhost:3000", true},
		{"https 127.0.0.1", nil, passThrough.with("Origin", "https://127.0.0.1"), 200, "https://127.0.0.1", true},
		{"desktop app", nil, passThrough.with("Origin", "app://obsidian.md"), 200, "app://obsidian.md", true},
		{"vscode webview", nil, guarded.with("Origin", "vscode-webview://abc"), 200, "vscode-webview://abc", true},
		{"extension not allowed by default", nil, passThrough.with("Origin", "chrome-extension://abc"), 403, "", false},
		{"configured wildcard", examples, guarded.with("Origin", "https://app.example.com"), 200, "https://app.example.com", true},
		{"configured wildcard needs the dot", examples, passThrough.with("Origin", "https://example.com"), 403, "", false},
		{"configured exact", examples, passThrough.with("Origin", "https://exact.example.org"), 200, "https://exact.example.org", true},
		{"configured list keeps the defaults", examples, passThrough.with("Origin", "http://localhost:5173"), 200, "http://localhost:5173", true},
		{"every origin", allowAll, passThrough.with("Origin", "http://evil.example"), 200, "*", true},
		{"every origin keeps the host rule", allowAll, passThrough.withHost("evil.example").with("Origin", "http://evil.example"), 403, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw, up := newEdgeGateway(t, config.DefaultListen, tt.edit)
			resp, body := tt.req.do(t, gw.URL)
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s Origin %q = %d %s, want %d", tt.req.method, tt.req.path, tt.req.header["Origin"], resp.StatusCode, body, tt.want)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.acao {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tt.acao)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(body, "not allowed") {
				t.Errorf("body = %s, want the refusal's error", body)
			}
			calls, origin := up.seen()
			if (calls > 0) != tt.upstream {
				t.Errorf("upstream calls = %d, want reached %v", calls, tt.upstream)
			}
			if len(origin) != 0 {
				t.Errorf("upstream got Origin %q, want none: the edge decides", origin)
			}
			if n := len(resp.Header.Values("Access-Control-Allow-Origin")); n > 1 {
				t.Errorf("Access-Control-Allow-Origin sent %d times", n)
			}
		})
	}
}

// TestEdgePreflight checks that an allowed origin's preflight is answered
// at the edge with gin-contrib/cors's headers for Ollama's config, and
// never reaches the upstream.
func TestEdgePreflight(t *testing.T) {
	gw, up := newEdgeGateway(t, config.DefaultListen, nil)
	resp, body := edgeRequest{method: http.MethodOptions, path: "/api/chat", header: map[string]string{
		"Origin":                         "http://localhost:3000",
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "content-type,x-contract",
	}}.do(t, gw.URL)
	if resp.StatusCode != http.StatusNoContent || body != "" {
		t.Fatalf("preflight = %d %q, want 204 and no body", resp.StatusCode, body)
	}
	want := map[string]string{
		"Access-Control-Allow-Origin":  "http://localhost:3000",
		"Access-Control-Allow-Methods": "GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS",
		"Access-Control-Max-Age":       "43200",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	allow := strings.Split(resp.Header.Get("Access-Control-Allow-Headers"), ",")
	for _, h := range []string{"Authorization", "Content-Type", "Openai-Beta", "X-Stainless-Timeout", "X-Contract"} {
		if !slices.Contains(allow, h) {
			t.Errorf("Access-Control-Allow-Headers = %q, want %s in it", allow, h)
		}
	}
	if got := resp.Header.Values("Vary"); !slices.Contains(got, "Origin") || !slices.Contains(got, "Access-Control-Request-Method") {
		t.Errorf("Vary = %q, want Origin and Access-Control-Request-Method", got)
	}
	if calls, _ := up.seen(); calls != 0 {
		t.Errorf("upstream calls = %d, want 0", calls)
	}
}

// TestEdgeSameOrigin checks that a page served by the gateway itself (the
// dashboard), whose Origin is the gateway's own, passes without CORS
// headers, as gin-contrib/cors lets it.
func TestEdgeSameOrigin(t *testing.T) {
	gw, up := newEdgeGateway(t, config.DefaultListen, nil)
	resp, body := passThrough.with("Origin", gw.URL).do(t, gw.URL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("same origin = %d %s, want 200", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
	}
	if _, origin := up.seen(); len(origin) != 0 {
		t.Errorf("upstream got Origin %q, want none", origin)
	}
}
