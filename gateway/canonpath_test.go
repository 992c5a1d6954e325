package gateway

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/middleware"
)

func TestCanonicalPath(t *testing.T) {
	tests := []struct {
		in, decoded, canon string
		encSlash, bad      bool
	}{
		{"", "/", "/", false, false},
		{"/", "/", "/", false, false},
		{"/api/generate", "/api/generate", "/api/generate", false, false},
		{"/api/%67enerate", "/api/generate", "/api/generate", false, false},
		{"/v1/chat/%63ompletions", "/v1/chat/completions", "/v1/chat/completions", false, false},
		{"//api//generate", "/api/generate", "/api/generate", false, false},
		{"/api/./generate", "/api/generate", "/api/generate", false, false},
		{"/x/../api/generate", "/api/generate", "/api/generate", false, false},
		{"/../../api/generate", "/api/generate", "/api/generate", false, false},
		{"/api/%2e%2e/api/%2E/generate", "/api/generate", "/api/generate", false, false},
		{"/api/generate/", "/api/generate/", "/api/generate/", false, false},
		{"/api/generate/.", "/api/generate", "/api/generate", false, false},
		{"/api/..", "/", "/", false, false},
		{"/api/gen%2565rate", "/api/gen%65rate", "/api/gen%2565rate", false, false},
		{"/v1/models/a%20b:latest", "/v1/models/a b:latest", "/v1/models/a%20b:latest", false, false},
		{"/admin/requests/a%2Fb", "/admin/requests/a/b", "/admin/requests/a%2Fb", true, false},
		{"/api%2fgenerate", "/api/generate", "/api%2Fgenerate", true, false},
		{"/api/generate%00", "", "", false, true},
		{"/api/%0agenerate", "", "", false, true},
		{"/api/%7f", "", "", false, true},
		{"/api/%zz", "", "", false, true},
		{"api/generate", "", "", false, true},
	}
	for _, tt := range tests {
		decoded, canon, encSlash, err := canonicalPath(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrBadPath) {
				t.Errorf("canonicalPath(%q) error = %v, want ErrBadPath", tt.in, err)
			}
			continue
		}
		if err != nil || decoded != tt.decoded || canon != tt.canon || encSlash != tt.encSlash {
			t.Errorf("canonicalPath(%q) = %q, %q, %v, %v; want %q, %q, %v", tt.in, decoded, canon, encSlash, err, tt.decoded, tt.canon, tt.encSlash)
		}
	}
}

// guardedRouteOf is the routing decision that matters for the guard and
// the virtual-model handling: which of their routes a decoded path is, or
// "" for pass-through.
func guardedRouteOf(p string) string {
	for _, cd := range middleware.Codecs() {
		if p == cd.Path() {
			return cd.Path()
		}
	}
	switch p {
	case "/api/tags", "/v1/models", "/api/show", "/api/pull", "/api/delete", "/api/copy", "/api/create":
		return p
	}
	if strings.HasPrefix(p, "/v1/models/") {
		return "/v1/models/*"
	}
	return ""
}

// cleanDecoded is Go's path.Clean of the decoded path, with ServeMux's
// trailing slash: the reference the canonical path is checked against.
func cleanDecoded(p string) string {
	np := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/", "/api/generate", "/api/%67enerate", "//api//generate", "/x/../api/generate",
		"/api/%2e%2e/generate", "/api%2Fgenerate", "/api/generate%00", "/v1/chat/%63ompletions/", "/a/b/../../..",
		"/api/gen%2565rate", "/v1/models/a%20b:latest", "/%2e/%2E%2e/./api/pull"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		decoded, canon, encSlash, err := canonicalPath(p)
		if err != nil {
			return
		}
		d2, c2, s2, err := canonicalPath(canon)
		if err != nil || d2 != decoded || c2 != canon || s2 != encSlash {
			t.Fatalf("canonicalPath(%q) = %q, %q; again = %q, %q, %v: not idempotent", p, decoded, canon, d2, c2, err)
		}
		if strings.Contains(canon, "//") || !strings.HasPrefix(canon, "/") {
			t.Fatalf("canonicalPath(%q) = %q: empty segment or no leading /", p, canon)
		}
		for _, seg := range strings.Split(canon, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("canonicalPath(%q) = %q: dot segment", p, canon)
			}
		}
		if un, err := url.PathUnescape(canon); err != nil || un != decoded {
			t.Fatalf("canonicalPath(%q): %q decodes to %q (%v), want %q", p, canon, un, err, decoded)
		}
		if encSlash {
			return
		}
		un, err := url.PathUnescape(p)
		if err != nil {
			t.Fatalf("canonicalPath(%q) accepted a path url.PathUnescape refuses: %v", p, err)
		}
		if ref := cleanDecoded(un); decoded != ref || guardedRouteOf(decoded) != guardedRouteOf(ref) {
			t.Fatalf("canonicalPath(%q) = %q (route %q), cleaned decoded path %q (route %q)", p, decoded, guardedRouteOf(decoded), ref, guardedRouteOf(ref))
		}
	})
}

// TestEncodedPathsAreGuarded: a path that Ollama decodes to a guarded
// endpoint is guarded, whatever its encoding; one the gateway cannot route
// as Ollama would is a 400 that never reaches the upstream.
func TestEncodedPathsAreGuarded(t *testing.T) {
	tests := []struct {
		name, path, body string
	}{
		{"encoded generate", "/api/%67enerate", `{"model":"m","prompt":"p","stream":false}`},
		{"encoded chat completions", "/v1/chat/%63ompletions", `{"model":"m","messages":[{"role":"user","content":"p"}]}`},
		{"double slash", "//api//generate", `{"model":"m","prompt":"p","stream":false}`},
		{"dot segments", "/api/./x/../generate", `{"model":"m","prompt":"p","stream":false}`},
		{"encoded dot segments", "/api/%2e%2e/api/chat", `{"model":"m","messages":[{"role":"user","content":"p"}],"stream":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{"Once upon a time"}}
			gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxLLMCalls = -1 })
			resp, body := post(t, gw.URL+tt.path, tt.body, map[string]string{"X-Contract": "json"})
			if resp.Header.Get("X-Contract-Status") == "" {
				t.Errorf("POST %s = %d %s without X-Contract-Status: not guarded", tt.path, resp.StatusCode, body)
			}
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "Once upon a time") {
				t.Errorf("POST %s = 200 with the upstream's invalid text: %s", tt.path, body)
			}
		})
	}
}

// uriRecorder is an upstream that records the request line's path.
type uriRecorder struct {
	mu   sync.Mutex
	uris []string
}

func (p *uriRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.uris = append(p.uris, r.RequestURI)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{}`))
}

func (p *uriRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.uris...)
}

// TestProxyForwardsCanonicalPath: the pass-through sends the path the
// gateway routed on, and refuses what it cannot route as Ollama would.
func TestProxyForwardsCanonicalPath(t *testing.T) {
	tests := []struct {
		path   string
		status int
		want   string // the upstream's request URI; "" when it must not be asked
	}{
		{"/api/%74ags", 200, "/api/tags"},
		{"//api/version?x=1", 200, "/api/version?x=1"},
		{"/api/x/../ps", 200, "/api/ps"},
		{"/api/gen%2565rate", 200, "/api/gen%2565rate"},
		{"/api%2Fgenerate", 400, ""},
		{"/api/%2f/generate", 400, ""},
		{"/api/generate%00", 400, ""},
		{"/v1/models/%0a", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			up := &uriRecorder{}
			f := newProxyFixture(t, up, nil, Options{})
			resp, body := f.do(t, http.MethodGet, tt.path, nil, nil)
			if resp.StatusCode != tt.status {
				t.Fatalf("GET %s = %d %s, want %d", tt.path, resp.StatusCode, body, tt.status)
			}
			if tt.status != 200 {
				ollamaError(t, resp, body)
			}
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if got := up.seen(); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("upstream asked %q, want %q", got, want)
			}
		})
	}
}

// TestEncodedModelPaths: the virtual-model endpoints answer encoded paths
// as they answer plain ones.
func TestEncodedModelPaths(t *testing.T) {
	up := &fakeModels{}
	vms := []middleware.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []middleware.VirtualModel { return vms }})
	tests := []struct {
		name, method, path, body string
		status                   int
		upstream                 []string
	}{
		{"pull", "POST", "/api/%70ull", `{"model":"story-json","stream":false}`, 200, []string{"POST /api/show"}},
		{"delete", "DELETE", "/api/%64elete", `{"model":"story-json"}`, 400, nil},
		{"copy", "POST", "/api/%63opy", `{"source":"stories","destination":"story-json"}`, 400, nil},
		{"create", "POST", "//api/./create", `{"model":"story-json","from":"stories"}`, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(up.asked())
			resp, body := f.do(t, tt.method, tt.path, strings.NewReader(tt.body), nil)
			if resp.StatusCode != tt.status {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, body, tt.status)
			}
			if got := up.asked()[before:]; strings.Join(got, ",") != strings.Join(tt.upstream, ",") {
				t.Errorf("upstream asked %q, want %q", got, tt.upstream)
			}
		})
	}
}
