//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/ollamatest"
)

// TestE2ENodeClientsAccess runs the real npm clients (openai, the
// Anthropic SDK, ollama, the AI SDK's Ollama provider, LangChain's
// ChatOllama) against a gateway
// with keys, each passing its key the way its users do: with it the call
// succeeds, without it the library raises its own authentication error
// for the 401, and the upstream never sees a key.
func TestE2ENodeClientsAccess(t *testing.T) {
	node, dir := nodeClientsDir(t)
	up := &keyUpstream{}
	gw := newAccessGateway(t, up, withKeys(config.AccessLimits{}, nil), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "access.mjs"))
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "CG_GATEWAY_URL="+gw.URL, "CG_KEY="+quizSecret, "CG_MODEL=quiz")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("access.mjs: %v\n%s", err, out)
	}
	type result struct {
		OK      bool     `json:"ok"`
		Class   string   `json:"class"`
		Status  *float64 `json:"status"`
		Message string   `json:"message"`
	}
	var res map[string]result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("access.mjs printed %s: %v", out, err)
	}
	tests := []struct {
		name  string
		ok    bool
		class string // the library's error class for a 401
	}{
		{"openai_with_key", true, ""},
		{"anthropic_with_key", true, ""},
		{"ollama_with_key", true, ""},
		{"ai_with_key", true, ""},
		{"langchain_with_key", true, ""},
		{"openai_without_key", false, "AuthenticationError"},
		{"anthropic_without_key", false, "AuthenticationError"},
		{"ollama_without_key", false, "ResponseError"},
		{"ai_without_key", false, "APICallError"},
		{"langchain_without_key", false, "ResponseError"},
	}
	for _, tt := range tests {
		r, ok := res[tt.name]
		if !ok {
			t.Errorf("%s: no result in %s", tt.name, out)
			continue
		}
		if r.OK != tt.ok || r.Class != tt.class || (!tt.ok && (r.Status == nil || *r.Status != 401)) {
			t.Errorf("%s = %+v, want ok %v, class %q, status 401 when refused", tt.name, r, tt.ok, tt.class)
		}
	}
	if _, creds := up.seen(); len(creds) > 0 {
		t.Errorf("upstream saw credentials %q", creds)
	}
}

// TestE2EOllamaCLIAccess drives the real ollama CLI, which sends no key,
// through the anonymous policy: list shows the policy's models only, pull
// is refused without reaching the upstream; with no anonymous policy list
// is refused.
func TestE2EOllamaCLIAccess(t *testing.T) {
	bin, err := ollamatest.FindBinary()
	if err != nil {
		t.Skip(err)
	}
	cli := func(t *testing.T, host string, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(cmd.Environ(), "OLLAMA_HOST="+host, "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	up := &keyUpstream{}
	anon := newAccessGateway(t, up, withKeys(config.AccessLimits{}, &config.AccessScope{Models: []string{"quiz"}}), nil)
	out, err := cli(t, anon.URL, "list")
	if err != nil || !strings.Contains(out, "quiz:latest") || strings.Contains(out, "mistral") || strings.Contains(out, "llama3.2") {
		t.Errorf("ollama list through the anonymous policy = %v\n%s\nwant quiz alone", err, out)
	}
	out, err = cli(t, anon.URL, "pull", "quiz")
	if err == nil || !strings.Contains(out, "may not manage models") {
		t.Errorf("ollama pull = %v\n%s\nwant the management refusal", err, out)
	}
	for _, p := range func() []string { c, _ := up.seen(); return c }() {
		if p == "/api/pull" {
			t.Errorf("a pull reached the upstream")
		}
	}
	closed := newAccessGateway(t, &keyUpstream{}, withKeys(config.AccessLimits{}, nil), nil)
	// The CLI takes a 401 for ollama.com's sign-in (api.AuthorizationError)
	// and says only that something went wrong: it fails, listing nothing.
	out, err = cli(t, closed.URL, "list")
	if err == nil || strings.Contains(out, "quiz") {
		t.Errorf("ollama list with no anonymous policy = %v\n%s\nwant a failure", err, out)
	}
}
