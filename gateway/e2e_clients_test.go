//go:build unix

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractgateway/gateway/internal/ollamatest"
)

// nodePackages are the npm clients clients.mjs drives
// (scripts/install-node-clients.sh installs them).
var nodePackages = []string{"ollama", "openai", "@anthropic-ai/sdk", "ai", "ollama-ai-provider-v2", "@langchain/ollama", "@langchain/core", "zod"}

// pathRecorder sits between the gateway and Ollama and records every
// request's method and path, so that a test can say what reached Ollama.
type pathRecorder struct {
	URL   string
	mu    sync.Mutex
	paths []string
}

func newPathRecorder(t *testing.T, target string) *pathRecorder {
	t.Helper()
	return newPathRecorderOver(t, target, &http.Transport{})
}

// newPathRecorderOver is newPathRecorder reaching target through tr.
func newPathRecorderOver(t *testing.T, target string, tr http.RoundTripper) *pathRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: tr, FlushInterval: -1}
	p := &pathRecorder{}
	srv := httptest.NewServer(wholeBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.Method+" "+r.URL.Path)
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})))
	t.Cleanup(func() {
		srv.Close()
		if c, ok := tr.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	})
	p.URL = srv.URL
	return p
}

func (p *pathRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.paths)
}

// noPull fails the test when a pull reached Ollama: a pull of a model it
// lacks goes to the internet.
func (p *pathRecorder) noPull(t *testing.T) {
	t.Helper()
	for _, s := range p.seen() {
		if strings.HasSuffix(s, "/api/pull") {
			t.Errorf("a pull reached the upstream: %v", p.seen())
			return
		}
	}
}

// nodeResult is one call's result as clients.mjs prints it, for the
// endpoints beyond Ollama's own.
type nodeResult struct {
	Error        string         `json:"error"`
	Status       *float64       `json:"status"`
	ErrorBody    any            `json:"error_body"`
	Text         *string        `json:"text"`
	Chunks       int            `json:"chunks"`
	FinishReason *string        `json:"finish_reason"`
	StopReason   *string        `json:"stop_reason"`
	RespStatus   *string        `json:"response_status"`
	Parsed       any            `json:"parsed"`
	Contract     map[string]any `json:"contract"`
}

// checkNodeEndpoints checks the calls of clients.mjs beyond the ollama
// client's and the OpenAI chat's: each guarded call answers a document
// of the story schema, in contract, with the API's normal stop; each plain
// call answers the model's text without a contract summary.
func checkNodeEndpoints(t *testing.T, res map[string]json.RawMessage, story *jsonschema.Schema) {
	get := func(t *testing.T, name string) nodeResult {
		t.Helper()
		raw, ok := res[name]
		if !ok {
			t.Fatalf("no result for %s", name)
		}
		var r nodeResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%s: %v in %s", name, err, raw)
		}
		if r.Error != "" {
			t.Fatalf("%s failed: %s (status %v, body %v)", name, r.Error, r.Status, r.ErrorBody)
		}
		if r.Text == nil {
			t.Fatalf("%s: no text in %s", name, raw)
		}
		return r
	}
	contractOK := func(t *testing.T, c map[string]any, id string) {
		t.Helper()
		if c == nil || (id != "" && c["id"] != id) || (c["status"] != "valid" && c["status"] != "repaired") {
			t.Errorf("contract summary = %v, want %s valid or repaired", c, id)
		}
	}
	guarded := []struct {
		name, contract string
		// stop is the normal stop the call must report ("" when the
		// client does not show one).
		stop string
	}{
		{"completions", e2eStoryContract, "stop"},
		{"completions_stream", e2eStoryContract, "stop"},
		{"responses", e2eStoryContract, ""},
		{"responses_stream", e2eStoryContract, ""},
		{"anthropic", e2eStoryContract, "end_turn"},
		{"anthropic_stream", e2eStoryContract, "end_turn"},
		{"openai_parse", "", "stop"},
		{"responses_parse", "", ""},
		{"ai_generate_object", "-", ""},
		{"ai_stream_object", "-", ""},
		{"langchain_structured", "-", ""},
		{"langchain_structured_stream", "-", ""},
	}
	for _, tt := range guarded {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, tt.name)
			checkDoc(t, story, *r.Text)
			if tt.contract != "-" {
				contractOK(t, r.Contract, tt.contract)
			}
			if tt.stop != "" {
				got := ""
				switch {
				case r.FinishReason != nil:
					got = *r.FinishReason
				case r.StopReason != nil:
					got = *r.StopReason
				}
				if got != tt.stop {
					t.Errorf("stop = %q, want %q", got, tt.stop)
				}
			}
			if strings.HasPrefix(tt.name, "responses") && (r.RespStatus == nil || *r.RespStatus != "completed") {
				t.Errorf("response status = %v, want completed", r.RespStatus)
			}
			if strings.HasSuffix(tt.name, "_parse") && r.Parsed == nil {
				t.Error("the client parsed no document")
			}
		})
	}
	for _, name := range []string{"openai_plain", "openai_plain_stream", "completions_plain", "completions_plain_stream",
		"responses_plain", "responses_plain_stream", "anthropic_plain", "anthropic_plain_stream", "ai_plain", "ai_plain_stream",
		"langchain_plain", "langchain_plain_stream"} {
		t.Run(name, func(t *testing.T) {
			r := get(t, name)
			if strings.TrimSpace(*r.Text) == "" {
				t.Error("no text")
			}
			if r.Contract != nil {
				t.Errorf("pass-through answer has a contract summary: %v", r.Contract)
			}
		})
	}
}

// TestE2EOllamaCLI drives the real ollama CLI (the binary internal/
// ollamatest runs) with OLLAMA_HOST at the gateway: list, show, pull and
// run of a virtual model, run of a plain one. No pull reaches Ollama.
func TestE2EOllamaCLI(t *testing.T) {
	o := ollamatest.Start(t)
	bin, err := ollamatest.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	rec := newPathRecorder(t, o.URL)
	gw := startE2EGateway(t, e2eConfig(t, rec.URL))
	storyRaw := readE2EFile(t, e2eContractsDir(t), "story", "schema.json")
	story := compileE2ESchema(t, "story", storyRaw)
	cli := func(t *testing.T, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "OLLAMA_HOST="+gw, "HOME="+t.TempDir(), "OLLAMA_NOHISTORY=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("ollama %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	t.Run("list", func(t *testing.T) {
		out := cli(t, "list")
		if !strings.Contains(out, e2eStoryRoute+":latest") || !strings.Contains(out, ollamatest.ModelName+":latest") {
			t.Errorf("ollama list:\n%s\nwant %s:latest and %s:latest", out, e2eStoryRoute, ollamatest.ModelName)
		}
	})
	t.Run("show", func(t *testing.T) {
		out := cli(t, "show", e2eStoryRoute)
		if !strings.Contains(out, "architecture") {
			t.Errorf("ollama show %s:\n%s", e2eStoryRoute, out)
		}
	})
	t.Run("pull", func(t *testing.T) {
		cli(t, "pull", e2eStoryRoute)
	})
	t.Run("run_guarded", func(t *testing.T) {
		out := strings.TrimSpace(cli(t, "run", e2eStoryRoute, e2ePrompt))
		checkDoc(t, story, out)
	})
	t.Run("run_guarded_format", func(t *testing.T) {
		out := strings.TrimSpace(cli(t, "run", "--format", "json", e2eStoryRoute, e2ePrompt))
		checkDoc(t, story, out)
	})
	t.Run("run_plain", func(t *testing.T) {
		out := strings.TrimSpace(cli(t, "run", ollamatest.ModelName, "Once upon a time"))
		if out == "" {
			t.Error("no text")
		}
	})
	rec.noPull(t)
}

// sameListPlusVirtual compares a model list through a gateway with the
// e2e routes with Ollama's own: the same entries, then one per virtual
// model, a copy of its upstream model's entry under its name (in each of
// nameKeys).
func sameListPlusVirtual(listKey string, nameKeys ...string) func(t *testing.T, direct, via []byte) {
	return func(t *testing.T, direct, via []byte) {
		t.Helper()
		var d, v map[string]any
		if err := json.Unmarshal(direct, &d); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(via, &v); err != nil {
			t.Fatal(err)
		}
		entries, _ := d[listKey].([]any)
		var upstream map[string]any
		for _, e := range entries {
			if m, _ := e.(map[string]any); m[nameKeys[0]] == ollamatest.ModelName+":latest" {
				upstream = m
			}
		}
		if upstream == nil {
			t.Fatalf("Ollama does not list %s: %s", ollamatest.ModelName, direct)
		}
		for _, vm := range []string{e2eStoryRoute, e2eOracleRoute} {
			e := map[string]any{}
			for k, val := range upstream {
				e[k] = val
			}
			for _, k := range nameKeys {
				e[k] = vm + ":latest"
			}
			entries = append(entries, e)
		}
		d[listKey] = entries
		if diff := cmp.Diff(d, v); diff != "" {
			t.Errorf("list through the gateway (-want +got):\n%s", diff)
		}
	}
}
