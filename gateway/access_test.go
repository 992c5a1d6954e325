package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/internal/redistest"
)

// Keys of the access tests. The secrets are marker strings: no log line,
// metric or stats answer may hold them.
const (
	quizSecret = "cgk_MARKER-quiz-secret"
	opsSecret  = "cgk_MARKER-ops-secret"
)

// keyUpstream is a fake Ollama that records the credentials it was sent.
type keyUpstream struct {
	mu    sync.Mutex
	calls []string // paths
	creds []string // Authorization and x-api-key values seen
}

func (u *keyUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	u.calls = append(u.calls, r.URL.Path)
	u.creds = append(u.creds, r.Header.Values("Authorization")...)
	u.creds = append(u.creds, r.Header.Values("X-Api-Key")...)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/generate":
		if r.Header.Get("X-Test-Stream") != "" {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"model":"quiz","response":"a","done":false}`+"\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, `{"model":"quiz","response":"","done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":70}`+"\n")
			return
		}
		io.WriteString(w, `{"model":"quiz","created_at":"2024-01-01T00:00:00Z","response":"{\"a\":1}","done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":70}`)
	case "/v1/chat/completions":
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"quiz","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`)
	case "/api/chat":
		io.WriteString(w, `{"model":"quiz","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"hi"},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2}`)
	case "/v1/messages":
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"quiz","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}`)
	case "/api/tags":
		const meta = `"modified_at":"2024-01-01T00:00:00Z","size":1,"digest":"0123456789abcdef0123456789abcdef"`
		io.WriteString(w, `{"models":[{"name":"quiz:latest","model":"quiz:latest",`+meta+`},{"name":"mistral:latest","model":"mistral:latest",`+meta+`},{"name":"llama3.2:3b","model":"llama3.2:3b",`+meta+`}]}`)
	case "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"quiz:latest","object":"model"},{"id":"mistral:latest","object":"model"}]}`)
	default:
		io.WriteString(w, `{"status":"success"}`)
	}
}

func (u *keyUpstream) seen() ([]string, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...), append([]string(nil), u.creds...)
}

func withKeys(limits config.AccessLimits, anonymous *config.AccessScope) func(*config.Config) {
	return func(cfg *config.Config) {
		cfg.AdminToken = "admin-token"
		cfg.Access = config.Access{
			Keys: []config.AccessKey{
				{Name: "quiz-app", SHA256: access.Hash(quizSecret), Models: []string{"quiz", "llama3.2*"}, Limits: limits},
				{Name: "ops", SHA256: access.Hash(opsSecret), Manage: true},
			},
			Anonymous: anonymous,
		}
	}
}

// newAccessGateway builds the whole gateway with edit, logging to logs.
func newAccessGateway(t *testing.T, up http.Handler, edit func(*config.Config), logs io.Writer) *httptest.Server {
	t.Helper()
	gw, _ := newAccessServer(t, up, edit, logs)
	return gw
}

// newAccessServer is newAccessGateway, with the Server.
func newAccessServer(t *testing.T, up http.Handler, edit func(*config.Config), logs io.Writer) (*httptest.Server, *Server) {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	cfg := config.Default()
	cfg.Upstream = ups.URL
	edit(&cfg)
	if logs == nil {
		logs = io.Discard
	}
	srv, err := Build(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(srv.Close)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw, srv
}

func bearer(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }

// errorMessage reads the error of an answer in the shape of its API:
// OpenAI's {"error":{"message","type"}}, Anthropic's {"type":"error",
// "error":{"type","message"}}, Ollama's {"error":"…"}.
func errorMessage(t *testing.T, path string, body []byte) (msg, typ string) {
	t.Helper()
	var e struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	var inner struct{ Message, Type string }
	switch {
	case path == "/v1/messages":
		if e.Type != "error" || json.Unmarshal(e.Error, &inner) != nil {
			t.Fatalf("%s error = %s, want Anthropic's shape", path, body)
		}
		return inner.Message, inner.Type
	case strings.HasPrefix(path, "/v1/chat"), strings.HasPrefix(path, "/v1/completions"), strings.HasPrefix(path, "/v1/responses"):
		if json.Unmarshal(e.Error, &inner) != nil || inner.Message == "" {
			t.Fatalf("%s error = %s, want OpenAI's shape", path, body)
		}
		return inner.Message, inner.Type
	}
	if json.Unmarshal(e.Error, &msg) != nil {
		t.Fatalf("%s error = %s, want Ollama's shape", path, body)
	}
	return msg, ""
}

func TestAccessAnswers(t *testing.T) {
	gen := `{"model":"quiz","prompt":"p","stream":false}`
	tests := []struct {
		name     string
		header   http.Header
		method   string
		path     string
		body     string
		want     int
		wantType string // the API's error type, where it has one
		reached  bool
	}{
		{"no key", nil, "POST", "/api/generate", gen, 401, "", false},
		{"no key, OpenAI", nil, "POST", "/v1/chat/completions", `{"model":"quiz","messages":[]}`, 401, "api_error", false},
		{"no key, Anthropic", nil, "POST", "/v1/messages", `{"model":"quiz","max_tokens":5,"messages":[]}`, 401, "authentication_error", false},
		{"wrong key", bearer("cgk_wrong"), "POST", "/api/generate", gen, 401, "", false},
		{"key in the query is ignored", nil, "POST", "/api/generate?key=" + quizSecret, gen, 401, "", false},
		{"huge key header", bearer(strings.Repeat("k", 64<<10)), "POST", "/api/generate", gen, 401, "", false},
		{"key header twice", http.Header{"Authorization": {"Bearer " + quizSecret, "Bearer " + quizSecret}}, "POST", "/api/generate", gen, 401, "", false},
		{"bearer key", bearer(quizSecret), "POST", "/api/generate", gen, 200, "", true},
		{"x-api-key", http.Header{"X-Api-Key": {quizSecret}}, "POST", "/v1/messages", `{"model":"quiz","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 200, "", true},
		{"model outside the globs", bearer(quizSecret), "POST", "/api/generate", `{"model":"mistral","prompt":"p"}`, 403, "", false},
		{"model outside, OpenAI", bearer(quizSecret), "POST", "/v1/chat/completions", `{"model":"mistral","messages":[]}`, 403, "api_error", false},
		{"model outside, Anthropic", bearer(quizSecret), "POST", "/v1/messages", `{"model":"mistral","max_tokens":5,"messages":[]}`, 403, "permission_error", false},
		{"pull without manage", bearer(quizSecret), "POST", "/api/pull", `{"model":"quiz"}`, 403, "", false},
		{"delete without manage", bearer(quizSecret), "DELETE", "/api/delete", `{"model":"quiz"}`, 403, "", false},
		{"blob without manage", bearer(quizSecret), "POST", "/api/blobs/sha256:00", `x`, 403, "", false},
		{"pull with manage", bearer(opsSecret), "POST", "/api/pull", `{"model":"mistral","stream":false}`, 200, "", true},
		{"version with any key", bearer(quizSecret), "GET", "/api/version", ``, 200, "", true},
		{"bad body", bearer(quizSecret), "POST", "/api/generate", `{"model":`, 400, "", false},
		{"healthz open", nil, "GET", "/healthz", ``, 200, "", false},
		{"admin route needs the admin token, not a key", bearer(opsSecret), "GET", "/metrics", ``, 401, "", false},
		{"admin route with the admin token", bearer("admin-token"), "GET", "/admin/stats", ``, 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &keyUpstream{}
			gw := newAccessGateway(t, up, withKeys(config.AccessLimits{}, nil), nil)
			resp, body := sendRequest(t, gw.URL, tt.method, tt.path, strings.NewReader(tt.body), tt.header)
			if resp.StatusCode != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, body, tt.want)
			}
			if tt.want >= 400 {
				_, typ := errorMessage(t, tt.path, body)
				if typ != tt.wantType {
					t.Errorf("error type = %q, want %q", typ, tt.wantType)
				}
			}
			if tt.want == 401 && !strings.HasPrefix(tt.path, "/metrics") && resp.Header.Get("Www-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			calls, creds := up.seen()
			if (len(calls) > 0) != tt.reached {
				t.Errorf("upstream calls %q, want reached %v", calls, tt.reached)
			}
			if len(creds) > 0 {
				t.Errorf("upstream saw credentials %q", creds)
			}
		})
	}
}

// TestAccessAnonymous checks the anonymous policy: a request without a key
// gets what it allows, a wrong key still 401.
func TestAccessAnonymous(t *testing.T) {
	up := &keyUpstream{}
	gw := newAccessGateway(t, up, withKeys(config.AccessLimits{}, &config.AccessScope{Models: []string{"tiny*"}}), nil)
	for _, tt := range []struct {
		header http.Header
		body   string
		want   int
	}{
		{nil, `{"model":"tinyllama","prompt":"p","stream":false}`, 200},
		{nil, `{"model":"quiz","prompt":"p","stream":false}`, 403},
		{bearer("cgk_wrong"), `{"model":"tinyllama","prompt":"p","stream":false}`, 401},
	} {
		resp, body := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(tt.body), tt.header)
		if resp.StatusCode != tt.want {
			t.Errorf("%v %s = %d %s, want %d", tt.header, tt.body, resp.StatusCode, body, tt.want)
		}
	}
}

// TestAccessListsFiltered checks that /api/tags and /v1/models show a
// key only its models, and a key for every model all of them.
func TestAccessListsFiltered(t *testing.T) {
	gw := newAccessGateway(t, &keyUpstream{}, withKeys(config.AccessLimits{}, nil), nil)
	tests := []struct {
		path string
		key  string
		want []string
	}{
		{"/api/tags", quizSecret, []string{"quiz:latest", "llama3.2:3b"}},
		{"/api/tags", opsSecret, []string{"quiz:latest", "mistral:latest", "llama3.2:3b"}},
		{"/v1/models", quizSecret, []string{"quiz:latest"}},
	}
	for _, tt := range tests {
		resp, body := sendRequest(t, gw.URL, "GET", tt.path, nil, bearer(tt.key))
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", tt.path, resp.StatusCode, body)
		}
		var list struct {
			Models []struct{ Name string }
			Data   []struct{ ID string }
		}
		if err := json.Unmarshal(body, &list); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range list.Models {
			got = append(got, m.Name)
		}
		for _, m := range list.Data {
			got = append(got, m.ID)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("GET %s = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestAccessTokenLimit charges pass-through answers by their counters and
// guarded ones by the guard's tokens, and refuses the key once it is over
// its tokens per minute, with Retry-After, before the upstream sees it.
func TestAccessTokenLimit(t *testing.T) {
	tests := []struct {
		name       string
		header     http.Header
		debugStore bool
	}{
		{"pass-through", bearer(quizSecret), false},
		{"pass-through stream", http.Header{"Authorization": {"Bearer " + quizSecret}, "X-Test-Stream": {"1"}}, false},
		{"guarded", http.Header{"Authorization": {"Bearer " + quizSecret}, "X-Contract": {"json"}}, false},
		// The debug store gives a request whose id it keeps a fresh one,
		// after the access check: the guard's tokens still reach the key.
		{"guarded, id renamed by the debug store", http.Header{"Authorization": {"Bearer " + quizSecret}, "X-Contract": {"json"}, "X-Request-Id": {"same"}, "Cache-Control": {"no-cache"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &keyUpstream{}
			gw, srv := newAccessServer(t, up, func(cfg *config.Config) {
				withKeys(config.AccessLimits{TokensPerMinute: 60}, nil)(cfg)
				cfg.DebugStore = tt.debugStore
			}, nil)
			defer func() {
				// Every request's use is picked up when it ends, renamed or not.
				if ids := srv.access.Pending(); len(ids) > 0 {
					t.Errorf("uses of requests %q left behind, in flight or renamed", ids)
				}
			}()
			gen := `{"model":"quiz","prompt":"p","stream":false}`
			if tt.debugStore {
				// Another key's guarded request has the debug store keep the id.
				resp, body := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(gen),
					http.Header{"X-Api-Key": {opsSecret}, "X-Contract": {"json"}, "X-Request-Id": {"same"}})
				if resp.StatusCode != 200 {
					t.Fatalf("ops = %d %s", resp.StatusCode, body)
				}
			}
			resp, body := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(gen), tt.header)
			if resp.StatusCode != 200 {
				t.Fatalf("first = %d %s", resp.StatusCode, body)
			}
			if tt.debugStore && resp.Header.Get("X-Request-Id") == "same" {
				t.Fatalf("the debug store kept the id; the test needs it renamed")
			}
			resp, body = sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(gen), tt.header)
			// 100 tokens charged of 60 a minute: 40 in debt, 40s to wait.
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "40" {
				t.Fatalf("second = %d Retry-After %q %s, want 429 with Retry-After 40", resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
			if calls, _ := up.seen(); len(calls) != 1 && !tt.debugStore {
				t.Errorf("upstream calls = %q, want the first only", calls)
			}
			resp, body = sendRequest(t, gw.URL, "GET", "/admin/stats", nil, bearer("admin-token"))
			var stats StatsReport
			if err := json.Unmarshal(body, &stats); err != nil || resp.StatusCode != 200 {
				t.Fatalf("stats = %d %s", resp.StatusCode, body)
			}
			k := stats.Keys["quiz-app"]
			if k.Requests != 2 || k.Tokens != 100 || k.Refused[access.ReasonTokens] != 1 || k.ByStatus["429"] != 1 {
				t.Errorf("stats of quiz-app = %+v, want 2 requests, 100 tokens, one refusal over tokens", k)
			}
		})
	}
}

// TestAccessLogsNoSecret checks that the request log line names the key
// and that no log line, metric or stats answer holds its secret.
func TestAccessLogsNoSecret(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) })
	gw := newAccessGateway(t, &keyUpstream{}, withKeys(config.AccessLimits{RequestsPerMinute: 100}, nil), w)
	sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(`{"model":"quiz","prompt":"p","stream":false}`), bearer(quizSecret))
	sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(`{"model":"mistral","prompt":"p"}`), http.Header{"X-Api-Key": {quizSecret}})
	sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(`{}`), bearer(quizSecret+"-typo"))
	_, metrics := sendRequest(t, gw.URL, "GET", "/metrics", nil, bearer("admin-token"))
	_, stats := sendRequest(t, gw.URL, "GET", "/admin/stats", nil, bearer("admin-token"))
	mu.Lock()
	all := logs.String()
	mu.Unlock()
	for name, text := range map[string]string{"logs": all, "metrics": string(metrics), "stats": string(stats)} {
		if strings.Contains(text, "MARKER") {
			t.Errorf("%s hold a key's secret:\n%s", name, text)
		}
	}
	if !strings.Contains(all, `"key":"quiz-app"`) {
		t.Errorf("log has no key name:\n%s", all)
	}
	for _, want := range []string{`gateway_access_requests_total{key="quiz-app",status="200"} 1`, `gateway_access_refusals_total{key="quiz-app",reason="model"} 1`,
		`gateway_access_refusals_total{key="",reason="unauthenticated"} 1`, `gateway_access_tokens_total{key="quiz-app"} 100`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestAccessReplicasShareRedis runs two whole gateways on one real Redis:
// a key's requests per minute hold across both; Redis stopped lets
// requests through.
func TestAccessReplicasShareRedis(t *testing.T) {
	rs := redistest.Start(t)
	edit := func(cfg *config.Config) {
		withKeys(config.AccessLimits{RequestsPerMinute: 2}, nil)(cfg)
		cfg.Cache.Redis = rs.URL
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	a := newAccessGateway(t, &keyUpstream{}, edit, writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }))
	b := newAccessGateway(t, &keyUpstream{}, edit, nil)
	gen := `{"model":"quiz","prompt":"p","stream":false}`
	var got []int
	for _, gw := range []*httptest.Server{a, b, a, b} {
		resp, _ := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(gen), bearer(quizSecret))
		got = append(got, resp.StatusCode)
	}
	if want := []int{200, 200, 429, 429}; !equalInts(got, want) {
		t.Errorf("statuses across replicas = %v, want %v", got, want)
	}
	rs.Stop()
	for range 3 {
		resp, body := sendRequest(t, a.URL, "POST", "/api/generate", strings.NewReader(gen), bearer(quizSecret))
		if resp.StatusCode != 200 {
			t.Errorf("redis down = %d %s, want 200 (the limiter fails open)", resp.StatusCode, body)
		}
	}
	mu.Lock()
	warnings := strings.Count(logs.String(), "access: redis unavailable")
	mu.Unlock()
	if warnings != 1 {
		t.Errorf("%d warnings for one outage, want 1", warnings)
	}
	_, metrics := sendRequest(t, a.URL, "GET", "/metrics", nil, bearer("admin-token"))
	if !strings.Contains(string(metrics), "gateway_access_limiter_errors_total 3") {
		t.Errorf("metrics lack the limiter's 3 errors")
	}
}

// TestAccessVirtualModels checks that a key limited to a virtual model
// sees it, and only it, in the gateway's own listing, and may use it
// though its upstream model is outside the key's globs.
func TestAccessVirtualModels(t *testing.T) {
	up := &keyUpstream{}
	gw := newAccessGateway(t, up, func(cfg *config.Config) {
		withKeys(config.AccessLimits{}, nil)(cfg)
		cfg.Access.Keys[0].Models = []string{"story"}
		cfg.Routes = []config.Route{{Model: "story", Upstream: "mistral", Contract: "json"}}
	}, nil)
	resp, body := sendRequest(t, gw.URL, "GET", "/api/tags", nil, bearer(quizSecret))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"story`) || strings.Contains(string(body), "mistral") || strings.Contains(string(body), "quiz") {
		t.Errorf("GET /api/tags = %d %s, want the virtual model alone", resp.StatusCode, body)
	}
	resp, body = sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(`{"model":"story","prompt":"p","stream":false}`), bearer(quizSecret))
	if resp.StatusCode != 200 {
		t.Errorf("generate on the virtual model = %d %s", resp.StatusCode, body)
	}
	resp, body = sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(`{"model":"mistral","prompt":"p","stream":false}`), bearer(quizSecret))
	if resp.StatusCode != 403 {
		t.Errorf("generate on its upstream model = %d %s, want 403", resp.StatusCode, body)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
