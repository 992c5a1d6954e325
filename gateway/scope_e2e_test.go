package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/internal/ollamatest"
)

// Keys of the scope tests: alpha may use alpha* models, alpha-ops may
// also manage them, ops may do anything.
const (
	alphaSecret    = "cgk_MARKER-alpha-secret"
	alphaOpsSecret = "cgk_MARKER-alpha-ops-secret"
)

func withAlphaKeys(cfg *config.Config) {
	cfg.AdminToken = "admin-token"
	cfg.Access = config.Access{Keys: []config.AccessKey{
		{Name: "alpha", SHA256: access.Hash(alphaSecret), Models: []string{"alpha*"}},
		{Name: "alpha-ops", SHA256: access.Hash(alphaOpsSecret), Models: []string{"alpha*"}, Manage: true},
		{Name: "ops", SHA256: access.Hash(opsSecret), Manage: true},
	}}
}

// TestScopeHoldsOnAliasesAccountAndCreate: a key scoped to alpha* reaches
// no other model through an alias (whatever model member the body also
// carries, which Ollama ignores there), reaches no account endpoint
// without manage, and cannot create a model from one outside its scope;
// none of these requests reaches the upstream.
func TestScopeHoldsOnAliasesAccountAndCreate(t *testing.T) {
	up := &keyUpstream{}
	gw := newAccessGateway(t, up, withAlphaKeys, nil)
	const aliases = "/api/experimental/aliases"
	tests := []struct {
		name   string
		key    string
		method string
		path   string
		body   string
		want   int
	}{
		{"alias to an outside model", alphaSecret, http.MethodPost, aliases, `{"model":"alpha-x","alias":"alpha-x","target":"secret"}`, 403},
		{"alias to an outside model, with manage", alphaOpsSecret, http.MethodPost, aliases, `{"model":"alpha-x","alias":"alpha-x","target":"secret"}`, 403},
		{"repoint the operator's alias", alphaOpsSecret, http.MethodPost, aliases, `{"model":"alpha-x","alias":"prod","target":"alpha-base"}`, 403},
		{"delete the operator's alias", alphaSecret, http.MethodDelete, aliases, `{"model":"alpha-x","alias":"prod"}`, 403},
		{"list the aliases", alphaSecret, http.MethodGet, aliases, ``, 403},
		{"whoami", alphaSecret, http.MethodPost, "/api/me", `{"model":"alpha-x"}`, 403},
		{"sign out", alphaSecret, http.MethodPost, "/api/signout", `{"model":"alpha-x"}`, 403},
		{"delete a user key", alphaSecret, http.MethodDelete, "/api/user/keys/abc", `{"model":"alpha-x"}`, 403},
		{"create from an outside model", alphaOpsSecret, http.MethodPost, "/api/create", `{"model":"alpha-clone","from":"secret"}`, 403},
		{"unknown endpoint", alphaSecret, http.MethodPost, "/api/brand-new", `{"model":"alpha-x"}`, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendRequest(t, gw.URL, tt.method, tt.path, strings.NewReader(tt.body), bearer(tt.key))
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s %s = %d %s, want %d", tt.method, tt.path, tt.body, resp.StatusCode, body, tt.want)
			}
		})
	}
	if calls, _ := up.seen(); len(calls) != 0 {
		t.Errorf("refused requests reached the upstream: %q", calls)
	}

	allowed := []struct {
		name, key, method, path, body string
	}{
		{"alias within the scope", alphaOpsSecret, http.MethodPost, aliases, `{"alias":"alpha-x","target":"alpha-base"}`},
		{"create from an own model", alphaOpsSecret, http.MethodPost, "/api/create", `{"model":"alpha-clone","from":"alpha-base"}`},
		{"sign out with every right", opsSecret, http.MethodPost, "/api/signout", ``},
	}
	for _, tt := range allowed {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sendRequest(t, gw.URL, tt.method, tt.path, strings.NewReader(tt.body), bearer(tt.key))
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s %s = %d %s, want 200", tt.method, tt.path, tt.body, resp.StatusCode, body)
			}
			if calls, _ := up.seen(); !slices.Contains(calls, tt.path) {
				t.Errorf("%s did not reach the upstream: %q", tt.path, calls)
			}
		})
	}
}

// TestE2EScopedKeyCannotAliasOutsideModel: on the real Ollama, a key
// scoped to alpha* cannot make an alias alpha-x to the server's model
// (outside its scope) and then generate with it. The operator's own
// alias, made with a key that may do anything, still works — Ollama
// reads the alias and target members the check reads.
func TestE2EScopedKeyCannotAliasOutsideModel(t *testing.T) {
	ollama := ollamatest.Start(t)
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = ollama.URL
	withAlphaKeys(&cfg)
	gw := startE2EGateway(t, cfg)
	const aliases = "/api/experimental/aliases"
	generate := `{"model":%q,"prompt":"Once upon a time","stream":false,"options":{"num_predict":4,"temperature":0}}`
	ollamaAliases := func() []string {
		resp, body := sendRequest(t, ollama.URL, http.MethodGet, aliases, nil, nil)
		var list struct {
			Aliases []struct{ Alias, Target string }
		}
		if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("Ollama's aliases = %d %s (%v)", resp.StatusCode, body, err)
		}
		var out []string
		for _, a := range list.Aliases {
			out = append(out, a.Alias+"→"+a.Target)
		}
		return out
	}

	for _, key := range []string{alphaSecret, alphaOpsSecret} {
		body := `{"model":"alpha-x","alias":"alpha-x","target":"` + ollama.Model + `"}`
		resp, answer := sendRequest(t, gw, http.MethodPost, aliases, strings.NewReader(body), bearer(key))
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s %s = %d %s, want 403", aliases, body, resp.StatusCode, answer)
		}
	}
	if got := ollamaAliases(); len(got) != 0 {
		t.Errorf("Ollama's aliases = %q, want none", got)
		// The alias is there: show what it let the key do.
		resp, answer := sendRequest(t, gw, http.MethodPost, "/api/generate", strings.NewReader(strings.Replace(generate, "%q", `"alpha-x"`, 1)), bearer(alphaSecret))
		t.Errorf("generate with alpha-x through the alias = %d %s", resp.StatusCode, answer)
	}

	body := `{"alias":"alpha-operator","target":"` + ollama.Model + `"}`
	if resp, answer := sendRequest(t, gw, http.MethodPost, aliases, strings.NewReader(body), bearer(opsSecret)); resp.StatusCode != http.StatusOK {
		t.Fatalf("the operator's POST %s %s = %d %s, want 200", aliases, body, resp.StatusCode, answer)
	}
	if got := ollamaAliases(); len(got) != 1 || !strings.HasPrefix(got[0], "alpha-operator") {
		t.Fatalf("Ollama's aliases = %q, want the operator's alpha-operator", got)
	}
	// The list shows a key the aliases whose name and target are its own.
	for _, tt := range []struct {
		key  string
		want string
	}{{alphaOpsSecret, `{"aliases":[]}`}, {opsSecret, `"alias":"alpha-operator"`}} {
		resp, answer := sendRequest(t, gw, http.MethodGet, aliases, nil, bearer(tt.key))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), tt.want) {
			t.Errorf("GET %s = %d %s, want 200 with %s", aliases, resp.StatusCode, answer, tt.want)
		}
	}
	resp, answer := sendRequest(t, gw, http.MethodPost, "/api/generate", strings.NewReader(strings.Replace(generate, "%q", `"alpha-operator"`, 1)), bearer(alphaSecret))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"done":true`) {
		t.Errorf("generate with the operator's alias = %d %s, want Ollama's answer", resp.StatusCode, answer)
	}
	resp, answer = sendRequest(t, gw, http.MethodPost, "/api/generate", strings.NewReader(strings.Replace(generate, "%q", `"`+ollama.Model+`"`, 1)), bearer(alphaSecret))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("generate with %s itself = %d %s, want 403", ollama.Model, resp.StatusCode, answer)
	}
}

// TestE2EScopedKeyCannotCreateFromOutsideModel: on the real Ollama, a key
// that may manage alpha* models cannot create alpha-clone from the
// server's model (outside its scope), whose system prompt and template it
// would then read with /api/show; from a model of its own it can.
func TestE2EScopedKeyCannotCreateFromOutsideModel(t *testing.T) {
	ollama := ollamatest.Start(t)
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = ollama.URL
	withAlphaKeys(&cfg)
	gw := startE2EGateway(t, cfg)
	tags := func() string {
		_, body := sendRequest(t, ollama.URL, http.MethodGet, "/api/tags", nil, nil)
		return string(body)
	}

	body := `{"model":"alpha-clone","from":"` + ollama.Model + `","stream":false}`
	resp, answer := sendRequest(t, gw, http.MethodPost, "/api/create", strings.NewReader(body), bearer(alphaOpsSecret))
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/create %s = %d %s, want 403", body, resp.StatusCode, answer)
	}
	if got := tags(); strings.Contains(got, "alpha-clone") {
		t.Errorf("Ollama's tags = %s, want no alpha-clone", got)
		resp, answer := sendRequest(t, gw, http.MethodPost, "/api/show", strings.NewReader(`{"model":"alpha-clone"}`), bearer(alphaSecret))
		t.Errorf("show alpha-clone = %d %s", resp.StatusCode, answer)
	}

	// A model of the key's own, made by the operator, it may copy.
	body = `{"model":"alpha-base","from":"` + ollama.Model + `","stream":false}`
	if resp, answer := sendRequest(t, gw, http.MethodPost, "/api/create", strings.NewReader(body), bearer(opsSecret)); resp.StatusCode != http.StatusOK {
		t.Fatalf("the operator's POST /api/create %s = %d %s, want 200", body, resp.StatusCode, answer)
	}
	body = `{"model":"alpha-clone","from":"alpha-base","stream":false}`
	if resp, answer := sendRequest(t, gw, http.MethodPost, "/api/create", strings.NewReader(body), bearer(alphaOpsSecret)); resp.StatusCode != http.StatusOK {
		t.Errorf("POST /api/create %s = %d %s, want 200", body, resp.StatusCode, answer)
	}
	if got := tags(); !strings.Contains(got, "alpha-clone") {
		t.Errorf("Ollama's tags = %s, want alpha-clone", got)
	}
}
