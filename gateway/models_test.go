package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/route"
)

// fakeModels is an Ollama with one model, "stories", that records the
// paths it was asked.
type fakeModels struct {
	mu    sync.Mutex
	paths []string
}

func (f *fakeModels) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

func (f *fakeModels) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch r.URL.Path {
	case "/api/tags":
		w.Write([]byte(`{"models":[{"name":"stories:latest","model":"stories:latest","size":1185,"details":{"family":"llama"}}]}`))
	case "/v1/models":
		w.Write([]byte(`{"object":"list","data":[{"id":"stories:latest","object":"model","created":1,"owned_by":"library"}]}`))
	case "/v1/models/stories", "/v1/models/stories:latest":
		w.Write([]byte(`{"id":"stories","object":"model","created":1,"owned_by":"library"}`))
	case "/api/show":
		if body["model"] != "stories" && body["model"] != "stories:latest" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"model 'x' not found"}`))
			return
		}
		w.Write([]byte(`{"modelfile":"# FROM stories:latest\nFROM /blobs/x\n","details":{"family":"llama"},"capabilities":["completion"]}`))
	default:
		w.Write([]byte(`{"status":"upstream"}`))
	}
}

func TestVirtualModels(t *testing.T) {
	up := &fakeModels{}
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}, {Name: "ghost", Upstream: "absent", Contract: "json@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
		// upstream is what the upstream was asked, in order.
		upstream []string
	}{
		{"tags", "GET", "/api/tags", "", 200,
			`{"models":[{"name":"stories:latest","model":"stories:latest","size":1185,"details":{"family":"llama"}},{"name":"story-json:latest","model":"story-json:latest","size":1185,"details":{"family":"llama"}}]}`,
			[]string{"GET /api/tags"}},
		{"openai list", "GET", "/v1/models", "", 200,
			`{"object":"list","data":[{"id":"stories:latest","object":"model","created":1,"owned_by":"library"},{"id":"story-json:latest","object":"model","created":1,"owned_by":"library"}]}`,
			[]string{"GET /v1/models"}},
		{"openai retrieve", "GET", "/v1/models/story-json", "", 200,
			`{"id":"story-json","object":"model","created":1,"owned_by":"library"}`, []string{"GET /v1/models/stories"}},
		{"openai retrieve passes others", "GET", "/v1/models/stories", "", 200,
			`{"id":"stories","object":"model","created":1,"owned_by":"library"}`, []string{"GET /v1/models/stories"}},
		{"show", "POST", "/api/show", `{"model":"story-json:latest"}`, 200,
			`{"modelfile":"# FROM story-json:latest\nFROM /blobs/x\n","details":{"family":"llama"},"capabilities":["completion"]}`, []string{"POST /api/show"}},
		{"pull", "POST", "/api/pull", `{"model":"story-json"}`, 200, "{\"status\":\"success\"}\n", []string{"POST /api/show"}},
		{"pull no stream", "POST", "/api/pull", `{"name":"story-json","stream":false}`, 200, `{"status":"success"}`, []string{"POST /api/show"}},
		{"pull without upstream model", "POST", "/api/pull", `{"model":"ghost"}`, 404,
			`{"error":"ghost is a virtual model of the gateway over absent, which the upstream does not have: pull it through the gateway with OLLAMA_HOST=http://127.0.0.1:11435 ollama pull absent"}`, []string{"POST /api/show"}},
		{"show without upstream model", "POST", "/api/show", `{"model":"ghost"}`, 404,
			`{"error":"ghost is a virtual model of the gateway over absent, which the upstream does not have: pull it through the gateway with OLLAMA_HOST=http://127.0.0.1:11435 ollama pull absent"}`, []string{"POST /api/show"}},
		{"pull passes others", "POST", "/api/pull", `{"model":"stories"}`, 200, `{"status":"upstream"}`, []string{"POST /api/pull"}},
		{"delete", "DELETE", "/api/delete", `{"model":"story-json"}`, 400,
			`{"error":"story-json is a virtual model of the gateway (contract story@1 over stories): it cannot be deleted, copied or created; change the gateway's routes instead"}`, nil},
		{"copy to", "POST", "/api/copy", `{"source":"stories","destination":"story-json"}`, 400,
			`{"error":"story-json is a virtual model of the gateway (contract story@1 over stories): it cannot be deleted, copied or created; change the gateway's routes instead"}`, nil},
		{"create", "POST", "/api/create", `{"model":"ghost:latest","from":"stories"}`, 400,
			`{"error":"ghost:latest is a virtual model of the gateway (contract json@1 over absent): it cannot be deleted, copied or created; change the gateway's routes instead"}`, nil},
		{"delete passes others", "DELETE", "/api/delete", `{"model":"stories"}`, 200, `{"status":"upstream"}`, []string{"DELETE /api/delete"}},
		{"head tags passes", "HEAD", "/api/tags", "", 200, ``, []string{"HEAD /api/tags"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(up.asked())
			resp, body := f.do(t, tt.method, tt.path, strings.NewReader(tt.body), nil)
			if resp.StatusCode != tt.status || string(body) != tt.want {
				t.Errorf("%s %s = %d %s\nwant %d %s", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.want)
			}
			if diff := cmp.Diff(tt.upstream, up.asked()[before:], cmpEmpty); diff != "" {
				t.Errorf("upstream asked (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// TestModelEndpointsPassThroughWithoutVirtualModels: without virtual
// models the model endpoints are the upstream's, untouched.
func TestModelEndpointsPassThroughWithoutVirtualModels(t *testing.T) {
	up := &fakeModels{}
	f := newProxyFixture(t, up, nil, Options{})
	resp, body := f.do(t, "GET", "/api/tags", nil, nil)
	if want := `{"models":[{"name":"stories:latest","model":"stories:latest","size":1185,"details":{"family":"llama"}}]}`; resp.StatusCode != 200 || string(body) != want {
		t.Errorf("GET /api/tags = %d %s, want the upstream's bytes", resp.StatusCode, body)
	}
}

// TestVirtualModelOllamaNames: the model endpoints know a virtual model
// under every name Ollama gives the same model.
func TestVirtualModelOllamaNames(t *testing.T) {
	up := &fakeModels{}
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
	tests := []modelCall{
		{"pull library", "POST", "/api/pull", `{"model":"library/story-json","stream":false}`, 200, []string{"POST /api/show"}},
		{"pull fully qualified", "POST", "/api/pull", `{"model":"registry.ollama.ai/library/story-json:latest","stream":false}`, 200, []string{"POST /api/show"}},
		{"pull other case", "POST", "/api/pull", `{"model":"Story-JSON","stream":false}`, 200, []string{"POST /api/show"}},
		{"delete library", "DELETE", "/api/delete", `{"model":"library/story-json:latest"}`, 400, nil},
		{"delete fully qualified", "DELETE", "/api/delete", `{"model":"registry.ollama.ai/library/story-json"}`, 400, nil},
		{"copy onto fully qualified", "POST", "/api/copy", `{"source":"stories","destination":"registry.ollama.ai/library/story-json:latest"}`, 400, nil},
		{"show library", "POST", "/api/show", `{"model":"library/story-json"}`, 200, []string{"POST /api/show"}},
		{"delete another namespace passes", "DELETE", "/api/delete", `{"model":"someone/story-json"}`, 200, []string{"DELETE /api/delete"}},
	}
	runModelCalls(t, f, up, tests)
}

// modelCall is one request to a model endpoint: the status it gets and
// the requests the upstream sees because of it (nil: none).
type modelCall struct {
	name, method, path, body string
	status                   int
	upstream                 []string
}

// runModelCalls sends each call through f as a subtest and checks its
// status and what up was asked for it, so that a table of model-endpoint
// requests states only requests and outcomes.
func runModelCalls(t *testing.T, f *proxyFixture, up *fakeModels, tests []modelCall) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(up.asked())
			resp, body := f.do(t, tt.method, tt.path, strings.NewReader(tt.body), nil)
			if resp.StatusCode != tt.status {
				t.Errorf("%s %s %s = %d %s, want %d", tt.method, tt.path, tt.body, resp.StatusCode, body, tt.status)
			}
			if diff := cmp.Diff(tt.upstream, up.asked()[before:], cmpEmpty); diff != "" {
				t.Errorf("upstream asked (-want +got):\n%s", diff)
			}
		})
	}
}

// TestModelEndpointShortBody: a body shorter than its Content-Length on a
// virtual-model endpoint is the client's error, 400 in Ollama's shape.
func TestModelEndpointShortBody(t *testing.T) {
	up := &fakeModels{}
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
	tests := []struct{ method, path string }{
		{"DELETE", "/api/delete"},
		{"POST", "/api/pull"},
		{"POST", "/api/show"},
		{"POST", "/api/copy"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			conn, err := net.Dial("tcp", f.gw.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":", tt.method, tt.path)
			conn.(*net.TCPConn).CloseWrite()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s %s with a short body = %d %s, want 400", tt.method, tt.path, resp.StatusCode, body)
			}
			ollamaError(t, resp, body)
			if got := up.asked(); len(got) != 0 {
				t.Errorf("upstream asked %q, want nothing", got)
			}
		})
	}
}

// TestModelEndpointsLenientBodies: a body the strict parser refuses but
// encoding/json reads as naming a virtual model never reaches the
// upstream.
func TestModelEndpointsLenientBodies(t *testing.T) {
	up := &fakeModels{}
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
	tests := []modelCall{
		{"pull duplicate model", "POST", "/api/pull", `{"model":"stories","model":"story-json"}`, 400, nil},
		{"delete duplicate model", "DELETE", "/api/delete", `{"model":"x","model":"story-json"}`, 400, nil},
		{"copy invalid UTF-8", "POST", "/api/copy", "{\"source\":\"\xff\",\"destination\":\"story-json\"}", 400, nil},
		{"pull duplicate of another model passes", "POST", "/api/pull", `{"model":"x","model":"stories"}`, 200, []string{"POST /api/pull"}},
	}
	runModelCalls(t, f, up, tests)
}
