package middleware

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// upstreamAnswering is a fake Ollama /api/generate that answers text.
func upstreamAnswering(t *testing.T, text string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"model": "m", "response": text, "done": true, "eval_count": 3})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// builtinRoutes resolves the built-in contracts by header and ad-hoc
// schemas, with no virtual model.
func builtinRoutes(t *testing.T) *route.Routes {
	t.Helper()
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := route.NewRoutes(reg, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

// mount builds an echo app with the guard in front of a reverse proxy to
// upstreamURL, as an embedding application would.
func mount(t *testing.T, upstreamURL string, edit func(*GuardConfig)) *httptest.Server {
	t.Helper()
	routes := builtinRoutes(t)
	u, _ := url.Parse(upstreamURL)
	cfg := DefaultGuardConfig
	cfg.Resolver = routes
	cfg.Upstream = upstream.New(upstream.Options{URL: u})
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if edit != nil {
		edit(&cfg)
	}
	guard, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, FlushInterval: -1}
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler
	e.Use(guard)
	e.Any("/*", echo.WrapHandler(proxy))
	s := httptest.NewServer(e)
	t.Cleanup(s.Close)
	return s
}

// postJSONContract posts body to url guarded by the json contract and
// returns the response with its whole body.
func postJSONContract(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("X-Contract", "json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

func TestToMiddlewareNeedsResolver(t *testing.T) {
	if _, err := (GuardConfig{}).ToMiddleware(); err == nil {
		t.Error("ToMiddleware without Resolver succeeded")
	}
	reg, _ := contracts.LoadRegistry("")
	routes, _ := route.NewRoutes(reg, nil, false)
	if _, err := (GuardConfig{Resolver: routes}).ToMiddleware(); err == nil {
		t.Error("ToMiddleware without Upstream succeeded")
	}
}

func TestEmbeddedGuard(t *testing.T) {
	tests := []struct {
		name     string
		answer   string
		edit     func(*GuardConfig)
		body     string
		status   int
		contract string
		response string
	}{
		{"repairs syntax", "Here:\n```json\n{\"a\": 1,}\n```", nil, `{"model":"m","prompt":"p","stream":false}`, 200, "repaired", `{"a":1}`},
		{"valid as is", `{"a":[1,2]}`, nil, `{"model":"m","prompt":"p","stream":false}`, 200, "valid", `{"a":[1,2]}`},
		{"skipper passes through", "not json", func(c *GuardConfig) { c.Skipper = func(echo.Context) bool { return true } }, `{"model":"m","prompt":"p","stream":false}`, 200, "", "not json"},
		{"no JSON at all", "Once upon a time", nil, `{"model":"m","prompt":"p","stream":false}`, 422, "failed", ""},
		{"response over the limit", strings.Repeat("x", 2048), func(c *GuardConfig) { c.MaxResponseBytes = 1024 }, `{"model":"m","prompt":"p","stream":false}`, 502, "", ""},
		{"body over the limit", `{}`, func(c *GuardConfig) { c.MaxBodyBytes = 16 }, `{"model":"m","prompt":"a long prompt here","stream":false}`, 413, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := upstreamAnswering(t, tt.answer)
			gw := mount(t, up.URL, tt.edit)
			resp, b := postJSONContract(t, gw.URL+"/api/generate", tt.body)
			if resp.StatusCode != tt.status || resp.Header.Get("X-Contract-Status") != tt.contract {
				t.Fatalf("got %d %q %s; want %d %q", resp.StatusCode, resp.Header.Get("X-Contract-Status"), b, tt.status, tt.contract)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("body %s: %v", b, err)
			}
			if tt.status != 200 {
				if _, ok := m["error"].(string); !ok {
					t.Errorf("error body %s lacks \"error\"", b)
				}
				return
			}
			if m["response"] != tt.response {
				t.Errorf("response = %v, want %s", m["response"], tt.response)
			}
		})
	}
}

func TestParseParamsHeaderAndAdHocCache(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := route.NewRoutes(reg, []route.Spec{{Model: "quiz", Upstream: "llama", Contract: "mcq", Params: map[string]string{"options": "A"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := routes.Resolve(route.Lookup{Model: "quiz", Params: "question_count=10"})
	if err != nil || r == nil || r.Params["options"] != "A" || r.Params["question_count"] != "10" || r.UpstreamModel != "llama" {
		t.Fatalf("Resolve(quiz) = %+v, %v", r, err)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	a, _ := routes.Resolve(route.Lookup{Model: "x", Schema: schema})
	b, _ := routes.Resolve(route.Lookup{Model: "y", Schema: schema})
	if a == nil || b == nil || a.Validator != b.Validator {
		t.Error("the same ad-hoc schema was compiled twice")
	}
	if _, err := routes.Resolve(route.Lookup{Model: "x", Schema: json.RawMessage(`{"$ref":"file:///etc/passwd"}`)}); err == nil {
		t.Error("a schema with a file:// $ref was accepted")
	}
	if r, err := routes.Resolve(route.Lookup{Model: "plain"}); r != nil || err != nil {
		t.Errorf("plain request guarded: %+v %v", r, err)
	}
	if _, err := route.NewRoutes(reg, []route.Spec{{Model: "bad", Contract: "nope"}, {Model: "bad2", Contract: "mcq", Params: map[string]string{"options": "Z"}}}, false); err == nil ||
		!strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "bad2") {
		t.Errorf("route.NewRoutes with two bad routes: %v, want both named", err)
	}
}

// upstreamObject is a fake Ollama that answers every request with the
// non-stream object obj (the guard always asks for one).
func upstreamObject(t *testing.T, obj string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, obj)
	}))
	t.Cleanup(s.Close)
	return s
}

// streamEvents splits a guarded stream into its JSON objects: NDJSON lines,
// or the data of SSE events (without the final [DONE]).
func streamEvents(t *testing.T, body string, sse bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	sep := "\n"
	if sse {
		sep = "\n\n"
		if !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Fatalf("SSE stream does not end with data: [DONE]: %q", body)
		}
		body = strings.TrimSuffix(body, "data: [DONE]\n\n")
	}
	for _, ev := range strings.Split(strings.TrimSpace(body), sep) {
		if sse {
			var ok bool
			if ev, ok = strings.CutPrefix(ev, "data: "); !ok {
				t.Fatalf("event %q is not a data line", ev)
			}
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ev), &m); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		out = append(out, m)
	}
	return out
}

// TestStreamReEmitKeepsMessageFields: a guarded stream carries what the
// upstream's answer carries besides the text — thinking, tool calls,
// reasoning — in its chunks, the way Ollama streams them: in the content
// chunks, not in (or lost from) the final chunk. OpenAI usage comes only
// when the client asked for it with stream_options.include_usage, in a
// chunk of its own with no choices.
func TestStreamReEmitKeepsMessageFields(t *testing.T) {
	toolCalls := `[{"id":"call_1","function":{"index":0,"name":"f","arguments":{"x":1}}}]`
	oaToolCalls := `[{"id":"call_1","index":0,"type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]`
	tests := []struct {
		name, path, upstream, body string
		sse                        bool
		want                       []string // JSON of every chunk, in order
	}{
		{"generate thinking", "/api/generate",
			`{"model":"m","created_at":"t","response":"{\"a\":1}","thinking":"hmm","done":true,"done_reason":"stop","eval_count":3}`,
			`{"model":"m","prompt":"p","think":true}`, false, []string{
				`{"model":"m","created_at":"t","response":"{\"a\":1}","thinking":"hmm","done":false}`,
				`{"model":"m","created_at":"t","response":"","done":true,"done_reason":"stop","eval_count":3,"contract":"*"}`,
			}},
		{"chat thinking and tool calls", "/api/chat",
			`{"model":"m","created_at":"t","message":{"role":"assistant","content":"{\"a\":1}","thinking":"hmm","tool_calls":` + toolCalls + `},"done":true,"done_reason":"stop","eval_count":3}`,
			`{"model":"m","messages":[{"role":"user","content":"p"}],"think":true}`, false, []string{
				`{"model":"m","created_at":"t","message":{"role":"assistant","content":"{\"a\":1}","thinking":"hmm","tool_calls":` + toolCalls + `},"done":false}`,
				`{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":3,"contract":"*"}`,
			}},
		{"openai reasoning and tool calls", "/v1/chat/completions",
			`{"id":"c1","object":"chat.completion","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}","reasoning":"hmm","tool_calls":` + oaToolCalls + `},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
			`{"model":"m","messages":[{"role":"user","content":"p"}],"stream":true}`, true, []string{
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"a\":1}","reasoning":"hmm","tool_calls":` + oaToolCalls + `},"finish_reason":null}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}],"contract":"*"}`,
			}},
		{"openai include_usage", "/v1/chat/completions",
			`{"id":"c1","object":"chat.completion","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
			`{"model":"m","messages":[{"role":"user","content":"p"}],"stream":true,"stream_options":{"include_usage":true}}`, true, []string{
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":null}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}],"contract":"*"}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := upstreamObject(t, tt.upstream)
			gw := mount(t, up.URL, nil)
			resp, b := postJSONContract(t, gw.URL+tt.path, tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			got := streamEvents(t, string(b), tt.sse)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d chunks, want %d:\n%s", len(got), len(tt.want), b)
			}
			for i, w := range tt.want {
				var want map[string]any
				if err := json.Unmarshal([]byte(w), &want); err != nil {
					t.Fatal(err)
				}
				if want["contract"] == "*" {
					if _, ok := got[i]["contract"].(map[string]any); !ok {
						t.Errorf("chunk %d has no contract summary: %v", i, got[i])
					}
					want["contract"] = got[i]["contract"]
				}
				if diff := cmp.Diff(want, got[i]); diff != "" {
					t.Errorf("chunk %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestResolveModelLatestTag: as in Ollama, a model name without a tag is
// the same model as name:latest, for virtual models too.
func TestResolveModelLatestTag(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := route.NewRoutes(reg, []route.Spec{{Model: "quiz", Contract: "mcq"}, {Model: "ns/scorer:latest", Contract: "json"}, {Model: "tagged:v2", Contract: "json"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model, want string // want: the route's name, "" for none
	}{
		{"quiz", "quiz"},
		{"quiz:latest", "quiz"},
		{"ns/scorer", "ns/scorer:latest"},
		{"ns/scorer:latest", "ns/scorer:latest"},
		{"tagged:v2", "tagged:v2"},
		{"tagged", ""},
		{"quiz:v2", ""},
	}
	for _, tt := range tests {
		r, err := routes.Resolve(route.Lookup{Model: tt.model})
		got := ""
		if r != nil {
			got = r.Name
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.model, got, err, tt.want)
		}
	}
	if _, err := route.NewRoutes(reg, []route.Spec{{Model: "quiz", Contract: "mcq"}, {Model: "quiz:latest", Contract: "json"}}, false); err == nil {
		t.Error("route.NewRoutes accepted quiz and quiz:latest, the same model twice")
	}
}
