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

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/contracts"
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

// mount builds an echo app with the guard in front of a reverse proxy to
// upstream, as an embedding application would.
func mount(t *testing.T, upstream string, edit func(*GuardConfig)) *httptest.Server {
	t.Helper()
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := NewRoutes(reg, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultGuardConfig
	cfg.Resolver = routes
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if edit != nil {
		edit(&cfg)
	}
	guard, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, FlushInterval: -1}
	e := echo.New()
	e.Use(guard)
	e.Any("/*", echo.WrapHandler(proxy))
	s := httptest.NewServer(e)
	t.Cleanup(s.Close)
	return s
}

func TestToMiddlewareNeedsResolver(t *testing.T) {
	if _, err := (GuardConfig{}).ToMiddleware(); err == nil {
		t.Error("ToMiddleware without Resolver succeeded")
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
			req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/generate", strings.NewReader(tt.body))
			req.Header.Set("X-Contract", "json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
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
	routes, err := NewRoutes(reg, []RouteSpec{{Model: "quiz", Upstream: "llama", Contract: "mcq", Params: map[string]string{"options": "A"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := routes.Resolve(Lookup{Model: "quiz", Params: "question_count=10"})
	if err != nil || r == nil || r.Params["options"] != "A" || r.Params["question_count"] != "10" || r.UpstreamModel != "llama" {
		t.Fatalf("Resolve(quiz) = %+v, %v", r, err)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	a, _ := routes.Resolve(Lookup{Model: "x", Schema: schema})
	b, _ := routes.Resolve(Lookup{Model: "y", Schema: schema})
	if a == nil || b == nil || a.Validator != b.Validator {
		t.Error("the same ad-hoc schema was compiled twice")
	}
	if _, err := routes.Resolve(Lookup{Model: "x", Schema: json.RawMessage(`{"$ref":"file:///etc/passwd"}`)}); err == nil {
		t.Error("a schema with a file:// $ref was accepted")
	}
	if r, err := routes.Resolve(Lookup{Model: "plain"}); r != nil || err != nil {
		t.Errorf("plain request guarded: %+v %v", r, err)
	}
	if _, err := NewRoutes(reg, []RouteSpec{{Model: "bad", Contract: "nope"}, {Model: "bad2", Contract: "mcq", Params: map[string]string{"options": "Z"}}}, false); err == nil ||
		!strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "bad2") {
		t.Errorf("NewRoutes with two bad routes: %v, want both named", err)
	}
}
