package gateway

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/middleware/route"
)

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
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
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
