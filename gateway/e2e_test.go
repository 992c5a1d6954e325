//go:build unix

package gateway

// End-to-end tests: a real Ollama (internal/ollamatest: v0.17.4 serving the
// stories260K model as "stories"), the whole gateway (Build) in front of it
// on an httptest server, and real clients — raw HTTP, the official Go client
// and, through gateway/testdata/node/clients.mjs, the official npm ollama and
// openai clients.
//
// Each TestE2E… starts its own Ollama with ollamatest.Start and runs its
// cases as subtests against it. Without an ollama binary they skip, unless
// CG_REQUIRE_OLLAMA=1; TestE2ENodeClients also skips without node and the
// installed npm clients (scripts/install-node-clients.sh), unless
// CG_REQUIRE_NODE=1. `make test` sets both.
//
// The model writes children's-story English; under a JSON Schema `format`
// its output is schema-valid (grammar-constrained) JSON with nonsense
// values. With temperature 0 and a fixed seed it is deterministic, so a
// guarded answer is compared with the answer Ollama gives directly to the
// same request, re-serialised the way the gateway answers.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/strictjson"
)

const (
	// e2eStoryRoute is the virtual model guarded by the user contract
	// testdata/e2e/contracts/story, with the schema added as format.
	e2eStoryRoute    = "story-json"
	e2eStoryContract = "story@1"
	// e2eOracleRoute is guarded by the built-in oracle-score contract.
	e2eOracleRoute    = "oracle-json"
	e2eOracleContract = "oracle-score@1"

	e2ePrompt     = "Tell a story"
	e2eNumPredict = 256

	pathGenerate = "/api/generate"
	pathChat     = "/api/chat"
	pathOpenAI   = "/v1/chat/completions"
)

// e2eContractsDir is the user contract directory the gateway loads.
func e2eContractsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "e2e", "contracts"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// e2eConfig is the gateway configuration of the end-to-end tests: upstream
// (Ollama, or a proxy in front of it), the user contracts and two routes.
func e2eConfig(t *testing.T, upstream string) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = upstream
	cfg.ContractsDir = e2eContractsDir(t)
	cfg.Routes = []config.Route{
		{Model: e2eStoryRoute, Upstream: ollamatest.ModelName, Contract: "story", AddFormat: true},
		{Model: e2eOracleRoute, Upstream: ollamatest.ModelName, Contract: "oracle-score", AddFormat: true},
	}
	return cfg
}

// startE2EGateway builds the whole gateway from cfg and serves it on an
// httptest server; it returns the gateway's base URL. The gateway's log is
// shown when the test fails.
func startE2EGateway(t *testing.T, cfg config.Config) string {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &logBuffer{}
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		gw.Close()
		srv.Breaker().CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	return gw.URL
}

// e2eRequest is the body of a generate, chat or OpenAI chat completion
// request with deterministic sampling. A non-nil format is sent as Ollama
// `format` (native) or as response_format.json_schema (OpenAI).
func e2eRequest(path, model, prompt string, stream bool, format json.RawMessage, numPredict int) string {
	m := map[string]any{"model": model, "stream": stream}
	if path == pathGenerate {
		m["prompt"] = prompt
	} else {
		m["messages"] = []any{map[string]any{"role": "user", "content": prompt}}
	}
	if path == pathOpenAI {
		m["max_tokens"], m["temperature"], m["seed"] = numPredict, 0, 42
		if format != nil {
			m["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "e2e", "schema": format}}
		}
	} else {
		m["options"] = map[string]any{"num_predict": numPredict, "temperature": 0, "seed": 42}
		if format != nil {
			m["format"] = format
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// textOfReply returns the model's text of a non-stream answer object.
func textOfReply(t *testing.T, path string, m map[string]any) string {
	t.Helper()
	var s any
	switch path {
	case pathGenerate:
		s = m["response"]
	case pathChat:
		msg, _ := m["message"].(map[string]any)
		s = msg["content"]
	case pathOpenAI:
		choices, _ := m["choices"].([]any)
		if len(choices) > 0 {
			c, _ := choices[0].(map[string]any)
			msg, _ := c["message"].(map[string]any)
			s = msg["content"]
		}
	}
	text, ok := s.(string)
	if !ok {
		t.Fatalf("%s answer has no text: %v", path, m)
	}
	return text
}

// directText asks Ollama itself (non-stream) and returns the model's text.
func directText(t *testing.T, ollamaURL, path, body string) string {
	t.Helper()
	resp, b := post(t, ollamaURL+path, body, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("direct %s: %d %s", path, resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("direct %s: %v in %s", path, err, b)
	}
	return textOfReply(t, path, m)
}

// compileE2ESchema compiles a schema for the test's own checks.
func compileE2ESchema(t *testing.T, name string, raw []byte) *jsonschema.Schema {
	t.Helper()
	s, err := contracts.CompileSchema(name, raw)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func readE2EFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// schemaError returns why text is not one strict JSON document valid against
// s, or nil.
func schemaError(s *jsonschema.Schema, text string) error {
	if _, err := strictjson.Parse([]byte(text)); err != nil {
		return fmt.Errorf("not strict JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// checkDoc asserts that text is a strict JSON document in the gateway's
// canonical form and valid against s.
func checkDoc(t *testing.T, s *jsonschema.Schema, text string) {
	t.Helper()
	if err := schemaError(s, text); err != nil {
		t.Fatalf("text %q: %v", text, err)
	}
	if c := canonical(t, text); c != text {
		t.Errorf("text is not in canonical form:\n got %s\nwant %s", text, c)
	}
}

// reference is the canonical form of what Ollama answers directly to a
// non-stream generate with format, checked against s: the premise of the
// guarded tests (the model satisfies the schema under format).
func reference(t *testing.T, ollamaURL string, s *jsonschema.Schema, format json.RawMessage, prompt string) string {
	t.Helper()
	raw := directText(t, ollamaURL, pathGenerate, e2eRequest(pathGenerate, ollamatest.ModelName, prompt, false, format, e2eNumPredict))
	if err := schemaError(s, strings.TrimSpace(raw)); err != nil {
		t.Fatalf("premise: the model's own answer under format is not schema-valid: %v\n%q", err, raw)
	}
	return canonical(t, raw)
}

// guardedReply is a guarded answer read back in the client's shape.
type guardedReply struct {
	text    string
	summary map[string]any // the `contract` member
	final   map[string]any // the answer object, the done chunk or the finish chunk
	chunks  int
}

// readReply reads a 200 answer of path in the shape the client asked for:
// one JSON object, Ollama NDJSON ending with the done chunk, or SSE ending
// with data: [DONE].
func readReply(t *testing.T, path string, stream bool, resp *http.Response, body []byte) guardedReply {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
	}
	ct := resp.Header.Get("Content-Type")
	var r guardedReply
	switch {
	case !stream:
		if !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		if err := json.Unmarshal(body, &r.final); err != nil {
			t.Fatalf("answer is not one JSON object: %v\n%s", err, body)
		}
		r.text, r.chunks = textOfReply(t, path, r.final), 1
		if path == pathOpenAI {
			if r.final["object"] != "chat.completion" {
				t.Errorf("object = %v, want chat.completion", r.final["object"])
			}
		} else if r.final["done"] != true {
			t.Errorf("done = %v, want true", r.final["done"])
		}
	case path == pathOpenAI:
		if !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Content-Type = %q, want text/event-stream", ct)
		}
		events := strings.Split(strings.TrimRight(string(body), "\n"), "\n\n")
		if last := events[len(events)-1]; last != "data: [DONE]" {
			t.Fatalf("stream does not end with data: [DONE]: last event %q", last)
		}
		var text strings.Builder
		for i, ev := range events[:len(events)-1] {
			data, ok := strings.CutPrefix(ev, "data: ")
			if !ok || strings.Contains(data, "\n") {
				t.Fatalf("event %d is not one data line: %q", i, ev)
			}
			var ch map[string]any
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				t.Fatalf("event %d: %v in %q", i, err, data)
			}
			if ch["object"] != "chat.completion.chunk" {
				t.Errorf("event %d object = %v, want chat.completion.chunk", i, ch["object"])
			}
			choices, _ := ch["choices"].([]any)
			if len(choices) != 1 {
				t.Fatalf("event %d choices = %v", i, ch["choices"])
			}
			c, _ := choices[0].(map[string]any)
			delta, _ := c["delta"].(map[string]any)
			if s, ok := delta["content"].(string); ok {
				text.WriteString(s)
			}
			if c["finish_reason"] != nil {
				if r.final != nil {
					t.Errorf("event %d: a second chunk with finish_reason", i)
				}
				r.final = ch
			}
			r.chunks++
		}
		if r.final == nil {
			t.Fatal("no chunk with finish_reason")
		}
		r.text = text.String()
	default:
		if ct != "application/x-ndjson" {
			t.Errorf("Content-Type = %q, want application/x-ndjson", ct)
		}
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		var text strings.Builder
		for sc.Scan() {
			if r.final != nil {
				t.Fatalf("line after the done chunk: %q", sc.Text())
			}
			var ch map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ch); err != nil {
				t.Fatalf("line %d: %v in %q", r.chunks, err, sc.Text())
			}
			text.WriteString(textOfReply(t, path, ch))
			if ch["done"] == true {
				r.final = ch
			} else if ch["done"] != false {
				t.Errorf("line %d done = %v", r.chunks, ch["done"])
			}
			r.chunks++
		}
		if r.final == nil {
			t.Fatalf("stream has no done chunk:\n%s", body)
		}
		r.text = text.String()
	}
	if path != pathOpenAI {
		// The done object keeps the upstream's counters.
		if n, _ := r.final["eval_count"].(float64); n <= 0 {
			t.Errorf("final object eval_count = %v, want the upstream's count", r.final["eval_count"])
		}
		if r.final["done_reason"] == nil {
			t.Errorf("final object has no done_reason: %v", r.final)
		}
	} else if !stream && r.final["usage"] == nil {
		t.Errorf("completion has no usage: %v", r.final)
	}
	r.summary, _ = r.final["contract"].(map[string]any)
	if r.summary == nil {
		t.Fatalf("final object has no contract summary: %v", r.final)
	}
	return r
}

// checkGuarded checks the contract headers of a guarded 200 answer against
// its summary. contract is the expected X-Contract, or a prefix ending in
// "@". It returns the status.
func checkGuarded(t *testing.T, resp *http.Response, r guardedReply, contract string) string {
	t.Helper()
	h := resp.Header
	id := h.Get("X-Contract")
	if strings.HasSuffix(contract, "@") && !strings.HasPrefix(id, contract) || !strings.HasSuffix(contract, "@") && id != contract {
		t.Errorf("X-Contract = %q, want %q", id, contract)
	}
	if h.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	status := h.Get("X-Contract-Status")
	if status != "valid" && status != "repaired" {
		t.Errorf("X-Contract-Status = %q, want valid or repaired", status)
	}
	repairs, err := strconv.Atoi(h.Get("X-Contract-Repairs"))
	if err != nil || repairs < 0 {
		t.Errorf("X-Contract-Repairs = %q, want a count", h.Get("X-Contract-Repairs"))
	}
	s := r.summary
	if s["status"] != status || s["id"] != id {
		t.Errorf("summary status/id = %v/%v, headers say %q/%q", s["status"], s["id"], status, id)
	}
	llm, ok1 := s["llm_calls"].(float64)
	fixes, ok2 := s["local_fixes"].(float64)
	if !ok1 || !ok2 || int(llm+fixes) != repairs {
		t.Errorf("summary llm_calls %v + local_fixes %v, X-Contract-Repairs %d", s["llm_calls"], s["local_fixes"], repairs)
	}
	if after, ok := s["violations_after"].([]any); !ok || len(after) != 0 {
		t.Errorf("summary violations_after = %v, want []", s["violations_after"])
	}
	if _, ok := s["violations_before"].([]any); !ok {
		t.Errorf("summary violations_before = %v, want an array", s["violations_before"])
	}
	if status == "valid" && (llm != 0 || fixes != 0) {
		t.Errorf("status valid with llm_calls %v, local_fixes %v", llm, fixes)
	}
	return status
}

var e2eCalls = []struct {
	path   string
	stream bool
}{
	{pathGenerate, false}, {pathGenerate, true},
	{pathChat, false}, {pathChat, true},
	{pathOpenAI, false}, {pathOpenAI, true},
}

func callName(path string, stream bool) string {
	name := map[string]string{pathGenerate: "generate", pathChat: "chat", pathOpenAI: "openai"}[path]
	if stream {
		return name + "_stream"
	}
	return name
}

func TestE2EPassThrough(t *testing.T) {
	o := ollamatest.Start(t)
	gw := startE2EGateway(t, e2eConfig(t, o.URL))
	noRoutes := e2eConfig(t, o.URL)
	noRoutes.Routes = nil
	gwPlain := startE2EGateway(t, noRoutes)

	// Each endpoint is asked directly and through the gateway; status,
	// Content-Type and body must agree (modulo what Ollama changes per call).
	// The model lists are the upstream's bytes on a gateway without virtual
	// models, and the upstream's entries with the virtual models after them
	// on one with.
	cases := []struct {
		name, method, path, body string
		same                     func(t *testing.T, direct, via []byte)
		// plain asks the gateway without virtual models.
		plain bool
	}{
		{"version", http.MethodGet, "/api/version", "", func(t *testing.T, direct, via []byte) {
			sameBytes(t, direct, via)
			var v struct{ Version string }
			if err := json.Unmarshal(via, &v); err != nil || v.Version != ollamatest.Version {
				t.Errorf("version = %s, want %s", via, ollamatest.Version)
			}
		}, false},
		{"tags", http.MethodGet, "/api/tags", "", func(t *testing.T, direct, via []byte) {
			sameBytes(t, direct, via)
			var l api.ListResponse
			if err := json.Unmarshal(via, &l); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(l.Models, func(m api.ListModelResponse) bool { return m.Name == ollamatest.ModelName+":latest" }) {
				t.Errorf("tags do not list %s:latest: %s", ollamatest.ModelName, via)
			}
		}, true},
		{"tags with virtual models", http.MethodGet, "/api/tags", "", sameListPlusVirtual("models", "name", "model"), false},
		{"show", http.MethodPost, "/api/show", `{"model":"stories"}`, sameShow, false},
		{"embed", http.MethodPost, "/api/embed", `{"model":"stories","input":"hello"}`, sameEmbed, false},
		{"v1 models", http.MethodGet, "/v1/models", "", sameBytes, true},
		{"v1 models with virtual models", http.MethodGet, "/v1/models", "", sameListPlusVirtual("data", "id"), false},
		{"root", http.MethodGet, "/", "", func(t *testing.T, direct, via []byte) {
			sameBytes(t, direct, via)
			if string(via) != "Ollama is running" {
				t.Errorf("GET / = %q", via)
			}
		}, false},
		{"head root", http.MethodHead, "/", "", func(t *testing.T, direct, via []byte) {
			if len(via) != 0 || len(direct) != 0 {
				t.Errorf("HEAD / bodies %q %q, want none", direct, via)
			}
		}, false},
		// Ollama's own error, relayed as it wrote it. The body is cut
		// rather than naming a model Ollama lacks: no test asks for one.
		{"upstream error", http.MethodPost, pathGenerate, `{"model":"stories","prompt":"hi","stream":false`, func(t *testing.T, direct, via []byte) {
			sameBytes(t, direct, via)
			var e struct{ Error string }
			if json.Unmarshal(via, &e) != nil || e.Error == "" {
				t.Errorf("answer to a cut body = %s, want Ollama's {\"error\": …}", via)
			}
		}, false},
		{"unknown endpoint", http.MethodGet, "/api/no-such-endpoint", "", sameBytes, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			dr, db := sendRequest(t, o.URL, tc.method, tc.path, body, nil)
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			base := gw
			if tc.plain {
				base = gwPlain
			}
			vr, vb := sendRequest(t, base, tc.method, tc.path, body, nil)
			if vr.StatusCode != dr.StatusCode {
				t.Fatalf("status %d through the gateway, %d direct: %s", vr.StatusCode, dr.StatusCode, vb)
			}
			for _, k := range []string{"Content-Type", "Content-Length"} {
				if k == "Content-Length" && (tc.name == "show" || tc.name == "embed" || strings.HasSuffix(tc.name, "with virtual models")) {
					continue // chunked, or durations of varying width
				}
				if vr.Header.Get(k) != dr.Header.Get(k) {
					t.Errorf("%s = %q through the gateway, %q direct", k, vr.Header.Get(k), dr.Header.Get(k))
				}
			}
			for _, k := range []string{"X-Contract", "X-Contract-Status", "X-Contract-Repairs"} {
				if v := vr.Header.Get(k); v != "" {
					t.Errorf("pass-through answer has %s: %q", k, v)
				}
			}
			tc.same(t, db, vb)
		})
	}

	// Generation without a format and without a route is passed through:
	// same text, and a stream stays a stream, token by token.
	for _, path := range []string{pathGenerate, pathChat, pathOpenAI} {
		for _, stream := range []bool{false, true} {
			t.Run("plain "+callName(path, stream), func(t *testing.T) {
				body := e2eRequest(path, ollamatest.ModelName, "Once upon a time", stream, nil, 32)
				dr, db := post(t, o.URL+path, body, nil)
				vr, vb := post(t, gw+path, body, nil)
				if vr.StatusCode != http.StatusOK || dr.StatusCode != http.StatusOK {
					t.Fatalf("status %d through the gateway, %d direct: %s", vr.StatusCode, dr.StatusCode, vb)
				}
				if vr.Header.Get("X-Contract-Status") != "" {
					t.Errorf("plain request was guarded: X-Contract-Status %q", vr.Header.Get("X-Contract-Status"))
				}
				if vr.Header.Get("Content-Type") != dr.Header.Get("Content-Type") {
					t.Errorf("Content-Type %q through the gateway, %q direct", vr.Header.Get("Content-Type"), dr.Header.Get("Content-Type"))
				}
				dp, vp := streamPieces(t, path, stream, db), streamPieces(t, path, stream, vb)
				if diff := cmp.Diff(dp, vp); diff != "" {
					t.Errorf("text pieces differ (-direct +gateway):\n%s", diff)
				}
				if strings.Join(vp, "") == "" {
					t.Error("empty text")
				}
			})
		}
	}
}

// streamPieces returns the text of each chunk of an answer (one piece for a
// non-stream answer); it ignores fields that change per call.
func streamPieces(t *testing.T, path string, stream bool, body []byte) []string {
	t.Helper()
	if !stream {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%v in %s", err, body)
		}
		return []string{textOfReply(t, path, m)}
	}
	var pieces []string
	for _, line := range strings.Split(string(body), "\n") {
		if path == pathOpenAI {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var ch struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				t.Fatalf("%v in %q", err, data)
			}
			for _, c := range ch.Choices {
				pieces = append(pieces, c.Delta.Content)
			}
			continue
		}
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		pieces = append(pieces, textOfReply(t, path, m))
	}
	return pieces
}

func sameBytes(t *testing.T, direct, via []byte) {
	t.Helper()
	if !bytes.Equal(direct, via) {
		t.Errorf("body through the gateway differs from Ollama's:\n direct %.400s\ngateway %.400s", direct, via)
	}
}

// sameShow compares two /api/show answers. Ollama writes the model's
// parameters from a map, in a different order from call to call, so the
// lines of "parameters" and "modelfile" are compared as sets.
func sameShow(t *testing.T, direct, via []byte) {
	t.Helper()
	norm := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%v in %.200s", err, b)
		}
		for _, k := range []string{"parameters", "modelfile"} {
			if s, ok := m[k].(string); ok {
				lines := strings.Split(s, "\n")
				sort.Strings(lines)
				m[k] = lines
			}
		}
		return m
	}
	d, v := norm(direct), norm(via)
	if diff := cmp.Diff(d, v); diff != "" {
		t.Errorf("show differs (-direct +gateway):\n%s", diff)
	}
	if v["details"] == nil || v["model_info"] == nil {
		t.Errorf("show answer lacks details or model_info: %.300s", via)
	}
}

// sameEmbed compares two /api/embed answers: same members, model and
// embedding (to float precision); the durations change per call.
func sameEmbed(t *testing.T, direct, via []byte) {
	t.Helper()
	var d, v map[string]json.RawMessage
	if err := json.Unmarshal(direct, &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(via, &v); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if diff := cmp.Diff(keys(d), keys(v)); diff != "" {
		t.Errorf("embed members differ (-direct +gateway):\n%s", diff)
	}
	if !bytes.Equal(d["model"], v["model"]) {
		t.Errorf("model %s through the gateway, %s direct", v["model"], d["model"])
	}
	var de, ve [][]float64
	if err := json.Unmarshal(d["embeddings"], &de); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v["embeddings"], &ve); err != nil {
		t.Fatal(err)
	}
	if len(ve) != 1 || len(de) != 1 || len(ve[0]) == 0 || len(ve[0]) != len(de[0]) {
		t.Fatalf("embedding shapes: %d×%d through the gateway, %d×%d direct", len(ve), lenFirst(ve), len(de), lenFirst(de))
	}
	for i := range ve[0] {
		if math.Abs(ve[0][i]-de[0][i]) > 1e-6 {
			t.Fatalf("embedding[%d] = %v through the gateway, %v direct", i, ve[0][i], de[0][i])
		}
	}
}

func lenFirst(e [][]float64) int {
	if len(e) == 0 {
		return 0
	}
	return len(e[0])
}

func TestE2EGuarded(t *testing.T) {
	o := ollamatest.Start(t)
	cfg := e2eConfig(t, o.URL)
	gw := startE2EGateway(t, cfg)

	storyRaw := readE2EFile(t, e2eContractsDir(t), "story", "schema.json")
	story := compileE2ESchema(t, "story", storyRaw)
	want := reference(t, o.URL, story, storyRaw, e2ePrompt)
	t.Logf("reference answer: %s", want)

	// check runs one guarded request and compares its text with want.
	check := func(t *testing.T, path string, stream bool, body string, hdr map[string]string, s *jsonschema.Schema, contract, want string) {
		t.Helper()
		resp, b := post(t, gw+path, body, hdr)
		r := readReply(t, path, stream, resp, b)
		checkGuarded(t, resp, r, contract)
		checkDoc(t, s, r.text)
		if r.text != want {
			t.Errorf("text differs from Ollama's own answer to the same request:\n got %s\nwant %s", r.text, want)
		}
		if stream && r.chunks < 2 {
			t.Errorf("stream has %d chunks, want the text and the final chunk", r.chunks)
		}
	}

	// A virtual model: the gateway asks the upstream model with the
	// contract's schema as format.
	for _, c := range e2eCalls {
		t.Run("route/"+callName(c.path, c.stream), func(t *testing.T) {
			check(t, c.path, c.stream, e2eRequest(c.path, e2eStoryRoute, e2ePrompt, c.stream, nil, e2eNumPredict), nil, story, e2eStoryContract, want)
		})
	}

	// The X-Contract header on the upstream model; the client passes the
	// schema as format itself.
	for _, c := range e2eCalls {
		t.Run("header/"+callName(c.path, c.stream), func(t *testing.T) {
			check(t, c.path, c.stream, e2eRequest(c.path, ollamatest.ModelName, e2ePrompt, c.stream, storyRaw, e2eNumPredict),
				map[string]string{"X-Contract": "story"}, story, e2eStoryContract, want)
		})
	}

	// The X-Contract header without format: the model writes prose. The
	// request ends either repaired (by the ladder's model calls, which pass
	// the schema as format) or with 422 and the report — never with prose
	// presented as valid.
	t.Run("header/no format", func(t *testing.T) {
		proxy := newCountingProxy(t, o.URL)
		gw := startE2EGateway(t, e2eConfig(t, proxy.URL))
		resp, b := post(t, gw+pathGenerate, e2eRequest(pathGenerate, ollamatest.ModelName, e2ePrompt, false, nil, 64), map[string]string{"X-Contract": "story"})
		calls := proxy.modelCalls()
		t.Logf("status %d %s, X-Contract-Repairs %s, upstream model calls %v", resp.StatusCode, resp.Header.Get("X-Contract-Status"), resp.Header.Get("X-Contract-Repairs"), calls)
		if len(calls) < 1 || len(calls) > 1+middleware.DefaultMaxLLMCalls {
			t.Errorf("%d upstream model calls, want 1..%d", len(calls), 1+middleware.DefaultMaxLLMCalls)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			r := readReply(t, pathGenerate, false, resp, b)
			if st := checkGuarded(t, resp, r, e2eStoryContract); st != "repaired" {
				t.Errorf("status %q for prose, want repaired", st)
			}
			if llm, _ := r.summary["llm_calls"].(float64); llm < 1 || int(llm) != len(calls)-1 {
				t.Errorf("summary llm_calls = %v, upstream saw %d calls after the first", r.summary["llm_calls"], len(calls)-1)
			}
			// What the repair cost is what Ollama counted for the calls
			// after the first answer, read from its replies — or, for a
			// call the guard stopped once its JSON closed (the repair
			// calls carry a format), the chunks it read: no more than the
			// proxy passed on.
			want := proxy.tokensAfter(1)
			got, _ := r.summary["repair_tokens"].(map[string]any)
			gotPrompt, _ := got["prompt"].(float64)
			gotOutput, _ := got["output"].(float64)
			if want.OutputTokens == 0 || gotOutput <= 0 || gotPrompt > float64(want.PromptTokens) || gotOutput > float64(want.OutputTokens) {
				t.Errorf("summary repair_tokens = %v, Ollama counted (or the proxy passed) prompt %d, output %d for the repair calls", got, want.PromptTokens, want.OutputTokens)
			}
			checkDoc(t, story, r.text)
		case http.StatusUnprocessableEntity:
			checkFailure(t, resp, b, e2eStoryContract, nil)
		default:
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	})

	// A JSON Schema as format with no route and no header: guarded by an
	// ad-hoc schema-only contract.
	person := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":20},` +
		`"age":{"type":"integer","minimum":1,"maximum":120},"friends":{"type":"array","items":{"type":"string","maxLength":12},"maxItems":2}},` +
		`"required":["name","age","friends"],"additionalProperties":false}`)
	personSchema := compileE2ESchema(t, "person", person)
	wantPerson := reference(t, o.URL, personSchema, person, "Describe a person")
	for _, c := range e2eCalls {
		t.Run("ad hoc/"+callName(c.path, c.stream), func(t *testing.T) {
			check(t, c.path, c.stream, e2eRequest(c.path, ollamatest.ModelName, "Describe a person", c.stream, person, e2eNumPredict), nil, personSchema, "schema@", wantPerson)
		})
	}

	// With ad-hoc schemas switched off the same request passes through as
	// Ollama answers it.
	t.Run("ad hoc off", func(t *testing.T) {
		off := cfg
		off.AdHocSchemas = false
		gwOff := startE2EGateway(t, off)
		body := e2eRequest(pathGenerate, ollamatest.ModelName, "Describe a person", false, person, e2eNumPredict)
		resp, b := post(t, gwOff+pathGenerate, body, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		if v := resp.Header.Get("X-Contract-Status"); v != "" {
			t.Errorf("X-Contract-Status = %q with ad-hoc schemas off", v)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["contract"]; ok {
			t.Errorf("pass-through answer has a contract member: %s", b)
		}
		got := textOfReply(t, pathGenerate, m)
		if direct := directText(t, o.URL, pathGenerate, body); got != direct {
			t.Errorf("text %q, Ollama answers %q", got, direct)
		}
	})
}

// checkCodes asserts that every violation of report has a code the
// contract can report: parse and extraction codes, schema codes, and the
// codes of its rule packs (semantic).
func checkCodes(t *testing.T, report map[string]any, semantic []string) {
	t.Helper()
	vs, ok := report["violations"].([]any)
	if !ok {
		t.Fatalf("report has no violations array: %v", report)
	}
	for _, x := range vs {
		v, _ := x.(map[string]any)
		code, _ := v["code"].(string)
		class, _ := v["class"].(string)
		ok := false
		switch class {
		case "JSON_PARSE":
			ok = slices.Contains([]string{"JSON_SYNTAX", "JSON_TRUNCATED", "NO_JSON_BLOCK", "MULTIPLE_JSON_BLOCKS"}, code)
		case "SCHEMA":
			ok = strings.HasPrefix(code, "SCHEMA_") || strings.HasPrefix(code, "SHAPE_")
		case "SEMANTIC":
			ok = slices.Contains(semantic, code)
		}
		if !ok {
			t.Errorf("violation %s/%s is not one the contract defines: %v", class, code, v)
		}
	}
}

// checkFailure checks a 422 answer: Ollama's error shape with a one-line
// message and the contract's report. It returns the report.
func checkFailure(t *testing.T, resp *http.Response, body []byte, contract string, semantic []string) map[string]any {
	t.Helper()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422: %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Contract-Status"); got != "failed" {
		t.Errorf("X-Contract-Status = %q, want failed", got)
	}
	if got := resp.Header.Get("X-Contract"); got != contract {
		t.Errorf("X-Contract = %q, want %q", got, contract)
	}
	// The error is Ollama's string, or OpenAI's object on the OpenAI
	// paths.
	var e struct {
		Error    json.RawMessage `json:"error"`
		Contract map[string]any  `json:"contract"`
		msg      string
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("422 body: %v in %s", err, body)
	}
	var oai struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal(e.Error, &e.msg) != nil {
		if err := json.Unmarshal(e.Error, &oai); err != nil || oai.Type == "" {
			t.Errorf("error = %s, want a string or OpenAI's {message, type}", e.Error)
		}
		e.msg = oai.Message
	}
	if e.msg == "" || strings.Contains(e.msg, "\n") {
		t.Errorf("error = %q, want one line", e.msg)
	}
	if e.Contract == nil || e.Contract["contract"] != contract || e.Contract["valid"] != false {
		t.Fatalf("report = %v, want the invalid report of %s", e.Contract, contract)
	}
	errs := 0
	for _, x := range e.Contract["violations"].([]any) {
		if v, _ := x.(map[string]any); v["severity"] == "error" {
			errs++
		}
	}
	if errs == 0 {
		t.Errorf("failed report without an error violation: %v", e.Contract)
	}
	checkCodes(t, e.Contract, semantic)
	return e.Contract
}

// countingProxy sits between the gateway and Ollama and counts model calls,
// whoever makes them (the guard's first call and re-runs go through the
// gateway's proxy, the ladder's repair calls through its model client; both
// use the configured upstream).
type countingProxy struct {
	URL   string
	mu    sync.Mutex
	calls []string
	// tokens are Ollama's own prompt_eval_count and eval_count of each
	// non-streamed model answer, by call.
	tokens []repair.Usage
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	p := &countingProxy{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport:     tr,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			i, ok := resp.Request.Context().Value(callIndex{}).(int)
			if ok && resp.Header.Get("Content-Type") == "application/x-ndjson" {
				// The guard streams its calls: count the chunks as they
				// pass, and take Ollama's counts from the done chunk if
				// the call was not stopped before it.
				resp.Body = &chunkCounter{ReadCloser: resp.Body, record: func(u repair.Usage) {
					p.mu.Lock()
					p.tokens[i] = u
					p.mu.Unlock()
				}}
				return nil
			}
			if !ok || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
			var counts struct {
				Prompt int `json:"prompt_eval_count"`
				Eval   int `json:"eval_count"`
			}
			if json.Unmarshal(b, &counts) == nil {
				p.mu.Lock()
				p.tokens[i] = repair.Usage{PromptTokens: counts.Prompt, OutputTokens: counts.Eval}
				p.mu.Unlock()
			}
			return nil
		},
	}
	srv := httptest.NewServer(wholeBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Counted before the call is forwarded, so that a call is counted
		// by the time its answer reaches the gateway.
		i := -1
		if r.Method == http.MethodPost {
			switch r.URL.Path {
			case pathGenerate, pathChat, pathOpenAI, "/v1/completions":
				p.mu.Lock()
				i = len(p.calls)
				p.calls = append(p.calls, r.URL.Path)
				p.tokens = append(p.tokens, repair.Usage{})
				p.mu.Unlock()
				r = r.WithContext(context.WithValue(r.Context(), callIndex{}, i))
			}
		}
		start := time.Now()
		rp.ServeHTTP(w, r)
		if i >= 0 {
			p.mu.Lock()
			p.calls[i] += fmt.Sprintf(" (%s)", time.Since(start).Round(time.Millisecond))
			p.mu.Unlock()
		}
	})))
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	p.URL = srv.URL
	return p
}

// chunkCounter counts the chunks of an NDJSON stream that carry text as
// they pass, and records them — or Ollama's own counts, once the done
// chunk passes — with each line.
type chunkCounter struct {
	io.ReadCloser
	record  func(repair.Usage)
	partial []byte
	chunks  int
}

func (c *chunkCounter) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.partial = append(c.partial, p[:n]...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		var chunk struct {
			Response string `json:"response"`
			Done     bool   `json:"done"`
			Prompt   int    `json:"prompt_eval_count"`
			Eval     int    `json:"eval_count"`
		}
		if json.Unmarshal(c.partial[:i], &chunk) == nil {
			if chunk.Response != "" {
				c.chunks++
			}
			u := repair.Usage{OutputTokens: c.chunks}
			if chunk.Done {
				u = repair.Usage{PromptTokens: chunk.Prompt, OutputTokens: chunk.Eval}
			}
			c.record(u)
		}
		c.partial = c.partial[i+1:]
	}
	return n, err
}

// callIndex is the context key of a model call's index in countingProxy.
type callIndex struct{}

// tokensAfter adds up Ollama's token counts of the model calls after the
// first n.
func (p *countingProxy) tokensAfter(n int) repair.Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum repair.Usage
	for _, u := range p.tokens[min(n, len(p.tokens)):] {
		sum.PromptTokens += u.PromptTokens
		sum.OutputTokens += u.OutputTokens
	}
	return sum
}

func (p *countingProxy) modelCalls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// oracleMismatch returns |score − weighted breakdown| of an oracle-score
// document, and whether the document has the members to compute it.
func oracleMismatch(text string) (float64, bool) {
	var d struct {
		Score     *float64
		Breakdown map[string]float64 `json:"scoreBreakdown"`
	}
	if json.Unmarshal([]byte(text), &d) != nil || d.Score == nil {
		return 0, false
	}
	b := d.Breakdown
	for _, k := range []string{"activity", "maturity", "diversity", "riskBehavior", "surveyMatch"} {
		if _, ok := b[k]; !ok {
			return 0, false
		}
	}
	want := b["activity"]*2 + b["maturity"]*2 + b["diversity"]*2 + b["riskBehavior"]*2.5 + b["surveyMatch"]*1.5
	return math.Abs(*d.Score - want), true
}

// TestE2ERepairBudget sends oracle-score requests whose answers violate
// SCORE_MISMATCH (the model's numbers are nonsense) and checks that each
// ends within its budget: at most 1 + max_llm_calls model calls upstream,
// within the deadline, with a status, a report and headers that agree with
// the calls made. It asserts bounds, not a particular rung sequence.
func TestE2ERepairBudget(t *testing.T) {
	o := ollamatest.Start(t)

	oracleRaw := readE2EFile(t, "..", "contracts", "builtin", "oracle-score", "schema.json")
	oracle := compileE2ESchema(t, "oracle", oracleRaw)
	// A tighter schema a client may send as format: bounded strings and
	// arrays let the model close the document, so that its first answer
	// is complete and violates only the contract's rule.
	var tight map[string]any
	if err := json.Unmarshal(oracleRaw, &tight); err != nil {
		t.Fatal(err)
	}
	props := tight["properties"].(map[string]any)
	props["reasoning"].(map[string]any)["maxLength"] = 60
	for _, k := range []string{"risk_factors", "strengths"} {
		props[k] = map[string]any{"type": "array", "maxItems": 2, "items": map[string]any{"type": "string", "maxLength": 20}}
	}
	tight["additionalProperties"] = false
	tightRaw, err := json.Marshal(tight)
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "Score this wallet"
	first := strings.TrimSpace(directText(t, o.URL, pathGenerate, e2eRequest(pathGenerate, ollamatest.ModelName, prompt, false, tightRaw, 480)))
	if err := schemaError(oracle, first); err != nil {
		t.Fatalf("premise: the model's answer under the tight format is not schema-valid: %v\n%s", err, first)
	}
	if d, ok := oracleMismatch(first); !ok || d <= 20 {
		t.Fatalf("premise: the model's answer does not violate SCORE_MISMATCH (|score − expected| = %v): %s", d, first)
	}

	cases := []struct {
		name   string
		budget int
		path   string
		stream bool
		format json.RawMessage // nil: the route adds the contract's schema
		num    int
		// deadline overrides the 60 s deadline of the other cases.
		deadline time.Duration
	}{
		{"default budget/generate", middleware.DefaultMaxLLMCalls, pathGenerate, false, tightRaw, 480, 0},
		{"default budget/chat stream", middleware.DefaultMaxLLMCalls, pathChat, true, tightRaw, 480, 0},
		{"default budget/openai", middleware.DefaultMaxLLMCalls, pathOpenAI, false, tightRaw, 480, 0},
		// The contract's own schema as format: the model never closes the
		// arrays, so the answer is cut at num_predict as well.
		{"default budget/route format", middleware.DefaultMaxLLMCalls, pathGenerate, false, nil, 128, 0},
		{"budget 2", 2, pathGenerate, false, tightRaw, 480, 0},
		// A negative budget means local repair only: the first call and
		// nothing more.
		{"budget none", -1, pathGenerate, false, tightRaw, 480, 0},
		// A deadline shorter than the ladder (each call generates 480
		// tokens, about 0.6 s here): the deadline, not max_llm_calls, ends
		// the request.
		{"deadline 1.5s", middleware.DefaultMaxLLMCalls, pathGenerate, false, nil, 480, 1500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proxy := newCountingProxy(t, o.URL)
			cfg := e2eConfig(t, proxy.URL)
			cfg.MaxLLMCalls = tc.budget
			cfg.Deadline = 60 * time.Second
			if tc.deadline > 0 {
				cfg.Deadline = tc.deadline
			}
			gw := startE2EGateway(t, cfg)

			start := time.Now()
			resp, b := post(t, gw+tc.path, e2eRequest(tc.path, e2eOracleRoute, prompt, tc.stream, tc.format, tc.num), nil)
			elapsed := time.Since(start)
			calls := proxy.modelCalls()
			t.Logf("status %d %s, %d upstream model calls %v, %s", resp.StatusCode, resp.Header.Get("X-Contract-Status"), len(calls), calls, elapsed.Round(time.Millisecond))

			if len(calls) < 1 || len(calls) > 1+max(tc.budget, 0) {
				t.Errorf("%d upstream model calls with max_llm_calls %d, want 1..%d (the first call + at most max_llm_calls)", len(calls), tc.budget, 1+max(tc.budget, 0))
			}
			if elapsed > cfg.Deadline+2*time.Second {
				t.Errorf("request took %s, deadline %s", elapsed, cfg.Deadline)
			}
			switch resp.StatusCode {
			case http.StatusOK:
				r := readReply(t, tc.path, tc.stream, resp, b)
				checkGuarded(t, resp, r, e2eOracleContract)
				checkDoc(t, oracle, r.text)
				if d, ok := oracleMismatch(r.text); !ok || d > 20 {
					t.Errorf("accepted answer has |score − expected| = %v: %s", d, r.text)
				}
				if llm, _ := r.summary["llm_calls"].(float64); int(llm) != len(calls)-1 {
					t.Errorf("summary llm_calls = %v, but the upstream saw %d calls after the first", r.summary["llm_calls"], len(calls)-1)
				}
			case http.StatusUnprocessableEntity:
				report := checkFailure(t, resp, b, e2eOracleContract, []string{"SCORE_MISMATCH"})
				if tc.format != nil && len(calls) == 1 && !hasCode(report, "SCORE_MISMATCH") {
					t.Errorf("report of the first answer lacks SCORE_MISMATCH: %v", report)
				}
				repairs, err := strconv.Atoi(resp.Header.Get("X-Contract-Repairs"))
				if err != nil {
					t.Errorf("X-Contract-Repairs = %q, want a count", resp.Header.Get("X-Contract-Repairs"))
				}
				if repairs < len(calls)-1 {
					t.Errorf("X-Contract-Repairs = %d, but the upstream saw %d calls after the first", repairs, len(calls)-1)
				}
			case http.StatusBadGateway, http.StatusGatewayTimeout:
				// Only the first call, cut by the deadline on a slow
				// machine, may end in an upstream error: once an answer is
				// in, the ladder falls back instead.
				if tc.deadline == 0 || len(calls) != 1 {
					t.Fatalf("status %d after %d calls: %s", resp.StatusCode, len(calls), b)
				}
				ollamaError(t, resp, b)
			default:
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		})
	}
}

func hasCode(report map[string]any, code string) bool {
	vs, _ := report["violations"].([]any)
	for _, x := range vs {
		if v, _ := x.(map[string]any); v["code"] == code {
			return true
		}
	}
	return false
}

// TestE2EGoClient points the official Go client, unchanged, at the gateway.
func TestE2EGoClient(t *testing.T) {
	o := ollamatest.Start(t)
	gw := startE2EGateway(t, e2eConfig(t, o.URL))
	storyRaw := readE2EFile(t, e2eContractsDir(t), "story", "schema.json")
	story := compileE2ESchema(t, "story", storyRaw)
	want := reference(t, o.URL, story, storyRaw, e2ePrompt)

	client := func(base string) *api.Client {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		return api.NewClient(u, http.DefaultClient)
	}
	viaGW, direct := client(gw), client(o.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := func(n int) map[string]any { return map[string]any{"num_predict": n, "temperature": 0, "seed": 42} }

	generate := func(t *testing.T, c *api.Client, model, prompt string, stream bool, n int) (string, int, api.GenerateResponse) {
		t.Helper()
		var text strings.Builder
		var last api.GenerateResponse
		chunks := 0
		err := c.Generate(ctx, &api.GenerateRequest{Model: model, Prompt: prompt, Stream: &stream, Options: opts(n)}, func(r api.GenerateResponse) error {
			text.WriteString(r.Response)
			chunks++
			last = r
			return nil
		})
		if err != nil {
			t.Fatalf("Generate(%s, stream %v): %v", model, stream, err)
		}
		return text.String(), chunks, last
	}
	chat := func(t *testing.T, c *api.Client, model, prompt string, stream bool, n int) (string, int, api.ChatResponse) {
		t.Helper()
		var text strings.Builder
		var last api.ChatResponse
		chunks := 0
		req := &api.ChatRequest{Model: model, Messages: []api.Message{{Role: "user", Content: prompt}}, Stream: &stream, Options: opts(n)}
		err := c.Chat(ctx, req, func(r api.ChatResponse) error {
			text.WriteString(r.Message.Content)
			chunks++
			last = r
			return nil
		})
		if err != nil {
			t.Fatalf("Chat(%s, stream %v): %v", model, stream, err)
		}
		return text.String(), chunks, last
	}

	// checkGuarded asserts what every guarded answer must be: the reference
	// text, schema-valid, ending with a done response that keeps Ollama's
	// counters, in several chunks when streamed.
	checkGuarded := func(t *testing.T, text string, chunks int, stream bool, done bool, reason string, evalCount int) {
		t.Helper()
		checkDoc(t, story, text)
		if text != want {
			t.Errorf("text = %s, want %s", text, want)
		}
		if !done || reason == "" || evalCount == 0 || (stream && chunks < 2) {
			t.Errorf("last response done=%v reason=%q eval_count=%d after %d chunks", done, reason, evalCount, chunks)
		}
	}

	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("generate guarded stream=%v", stream), func(t *testing.T) {
			text, chunks, last := generate(t, viaGW, e2eStoryRoute, e2ePrompt, stream, e2eNumPredict)
			checkGuarded(t, text, chunks, stream, last.Done, last.DoneReason, last.EvalCount)
		})
		t.Run(fmt.Sprintf("chat guarded stream=%v", stream), func(t *testing.T) {
			text, chunks, last := chat(t, viaGW, e2eStoryRoute, e2ePrompt, stream, e2eNumPredict)
			checkGuarded(t, text, chunks, stream, last.Done, last.DoneReason, last.EvalCount)
		})
		t.Run(fmt.Sprintf("generate plain stream=%v", stream), func(t *testing.T) {
			got, gotChunks, _ := generate(t, viaGW, ollamatest.ModelName, "Once upon a time", stream, 32)
			exp, expChunks, _ := generate(t, direct, ollamatest.ModelName, "Once upon a time", stream, 32)
			if got != exp || gotChunks != expChunks {
				t.Errorf("through the gateway %q in %d chunks, direct %q in %d chunks", got, gotChunks, exp, expChunks)
			}
		})
		t.Run(fmt.Sprintf("chat plain stream=%v", stream), func(t *testing.T) {
			got, gotChunks, _ := chat(t, viaGW, ollamatest.ModelName, "Once upon a time", stream, 32)
			exp, expChunks, _ := chat(t, direct, ollamatest.ModelName, "Once upon a time", stream, 32)
			if got != exp || gotChunks != expChunks {
				t.Errorf("through the gateway %q in %d chunks, direct %q in %d chunks", got, gotChunks, exp, expChunks)
			}
		})
	}

	t.Run("list", func(t *testing.T) {
		got, err := viaGW.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := direct.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The gateway lists Ollama's models, then its virtual models.
		for _, vm := range []string{e2eStoryRoute, e2eOracleRoute} {
			for _, m := range exp.Models {
				if m.Name == ollamatest.ModelName+":latest" {
					m.Name, m.Model = vm+":latest", vm+":latest"
					exp.Models = append(exp.Models, m)
					break
				}
			}
		}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("List differs (-direct and the virtual models +gateway):\n%s", diff)
		}
		if !slices.ContainsFunc(got.Models, func(m api.ListModelResponse) bool { return m.Name == ollamatest.ModelName+":latest" }) {
			t.Errorf("List = %+v, want %s:latest", got.Models, ollamatest.ModelName)
		}
	})
	t.Run("show", func(t *testing.T) {
		got, err := viaGW.Show(ctx, &api.ShowRequest{Model: ollamatest.ModelName})
		if err != nil {
			t.Fatal(err)
		}
		exp, err := direct.Show(ctx, &api.ShowRequest{Model: ollamatest.ModelName})
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(got)
		eb, _ := json.Marshal(exp)
		sameShow(t, eb, gb)
		if got.Details.Family == "" {
			t.Errorf("Show details = %+v", got.Details)
		}
	})
	t.Run("version", func(t *testing.T) {
		v, err := viaGW.Version(ctx)
		if err != nil || v != ollamatest.Version {
			t.Errorf("Version = %q, %v; want %s", v, err, ollamatest.Version)
		}
	})
}

// nodeClientsDir returns node and gateway/testdata/node with the npm
// clients installed, or skips (fails with CG_REQUIRE_NODE=1).
func nodeClientsDir(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CG_REQUIRE_NODE") == "1" {
			t.Fatalf("%s (CG_REQUIRE_NODE=1; run bash scripts/install-node-clients.sh)", msg)
		}
		t.Skipf("%s; skipping (run bash scripts/install-node-clients.sh, or set CG_REQUIRE_NODE=1 to fail instead)", msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found on $PATH")
	}
	dir, err = filepath.Abs(filepath.Join("testdata", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range nodePackages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			missing("npm package %s is not installed in %s", pkg, dir)
		}
	}
	return node, dir
}

// nodeStep is one call's result as clients.mjs prints it.
type nodeStep struct {
	Error        string         `json:"error"`
	Text         *string        `json:"text"`
	Chunks       int            `json:"chunks"`
	Done         bool           `json:"done"`
	DoneReason   *string        `json:"done_reason"`
	EvalCount    *float64       `json:"eval_count"`
	FinishReason *string        `json:"finish_reason"`
	Object       string         `json:"object"`
	Contract     map[string]any `json:"contract"`
	Models       []string       `json:"models"`
}

// TestE2ENodeClients runs the official npm ollama and openai clients,
// unchanged, against the gateway (gateway/testdata/node/clients.mjs).
func TestE2ENodeClients(t *testing.T) {
	node, dir := nodeClientsDir(t)
	o := ollamatest.Start(t)
	rec := newPathRecorder(t, o.URL)
	gw := startE2EGateway(t, e2eConfig(t, rec.URL))
	storyRaw := readE2EFile(t, e2eContractsDir(t), "story", "schema.json")
	story := compileE2ESchema(t, "story", storyRaw)
	want := reference(t, o.URL, story, storyRaw, e2ePrompt)
	plain := directText(t, o.URL, pathGenerate, e2eRequest(pathGenerate, ollamatest.ModelName, "Once upon a time", false, nil, 48))
	plainChat := directText(t, o.URL, pathChat, e2eRequest(pathChat, ollamatest.ModelName, "Once upon a time", false, nil, 48))

	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "clients.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"CG_GATEWAY_URL="+gw,
		"CG_GUARDED_MODEL="+e2eStoryRoute,
		"CG_PLAIN_MODEL="+ollamatest.ModelName,
		"CG_PROMPT="+e2ePrompt,
		"CG_STORY_SCHEMA="+filepath.Join(e2eContractsDir(t), "story", "schema.json"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node clients.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("node stderr: %s", stderr.String())
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("clients.mjs output is not one JSON object: %v\n%s", err, stdout.String())
	}
	t.Logf("clients: %s", res["clients"])

	step := func(t *testing.T, name string) nodeStep {
		t.Helper()
		raw, ok := res[name]
		if !ok {
			t.Fatalf("no result for %s", name)
		}
		var s nodeStep
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: %v in %s", name, err, raw)
		}
		if s.Error != "" {
			t.Fatalf("%s failed: %s", name, s.Error)
		}
		return s
	}
	for _, name := range []string{"generate", "generate_stream", "chat", "chat_stream", "openai", "openai_stream"} {
		t.Run(name, func(t *testing.T) {
			s := step(t, name)
			if s.Text == nil {
				t.Fatal("no text")
			}
			checkDoc(t, story, *s.Text)
			if *s.Text != want {
				t.Errorf("text = %s, want %s", *s.Text, want)
			}
			if s.Contract == nil || s.Contract["id"] != e2eStoryContract || (s.Contract["status"] != "valid" && s.Contract["status"] != "repaired") {
				t.Errorf("contract summary = %v", s.Contract)
			}
			stream := strings.HasSuffix(name, "_stream")
			if stream && s.Chunks < 1 {
				t.Errorf("%d stream chunks", s.Chunks)
			}
			if strings.HasPrefix(name, "openai") {
				if s.FinishReason == nil || *s.FinishReason == "" {
					t.Error("no finish_reason")
				}
				if !stream && s.Object != "chat.completion" {
					t.Errorf("object = %q", s.Object)
				}
			} else if !s.Done || s.DoneReason == nil || s.EvalCount == nil || *s.EvalCount <= 0 {
				t.Errorf("done=%v done_reason=%v eval_count=%v", s.Done, s.DoneReason, s.EvalCount)
			}
		})
	}
	// Pass-through, native API: the text Ollama answers directly, streamed
	// or not, and no contract summary.
	for name, direct := range map[string]string{"plain_generate": plain, "plain_generate_stream": plain, "plain_chat": plainChat, "plain_chat_stream": plainChat} {
		t.Run(name, func(t *testing.T) {
			s := step(t, name)
			if s.Text == nil || *s.Text != direct {
				t.Errorf("text = %v, Ollama answers %q", s.Text, direct)
			}
			if s.Contract != nil {
				t.Errorf("pass-through answer has a contract summary: %v", s.Contract)
			}
			if strings.HasSuffix(name, "_stream") && (s.Chunks < 2 || !s.Done) {
				t.Errorf("stream of %d chunks, done=%v: want the upstream's chunks and its final one", s.Chunks, s.Done)
			}
		})
	}
	t.Run("list", func(t *testing.T) {
		s := step(t, "list")
		if !slices.Contains(s.Models, ollamatest.ModelName+":latest") {
			t.Errorf("list = %v, want %s:latest", s.Models, ollamatest.ModelName)
		}
		if !slices.Contains(s.Models, e2eStoryRoute+":latest") {
			t.Errorf("list = %v, want the virtual model %s:latest", s.Models, e2eStoryRoute)
		}
	})
	checkNodeEndpoints(t, res, story)
	rec.noPull(t)
}
