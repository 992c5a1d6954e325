package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/middleware/codec/ollama"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// firstAnswerProxy answers the first /api/generate call itself, with a
// document of the test's choosing, and passes every later call to the real
// Ollama, keeping each request body and Ollama's answer. The first answer
// is what the test needs broken in one known place; everything after it is
// Ollama's own.
type firstAnswerProxy struct {
	URL   string
	first string

	mu    sync.Mutex
	calls []proxiedCall
}

type proxiedCall struct {
	body   []byte
	status int
	answer []byte
}

func newFirstAnswerProxy(t *testing.T, target, first string) *firstAnswerProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &firstAnswerProxy{first: first}
	tr := &http.Transport{}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: tr}
	srv := httptest.NewServer(wholeBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != pathGenerate {
			rp.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		n := len(p.calls)
		p.calls = append(p.calls, proxiedCall{body: body})
		p.mu.Unlock()
		if n == 0 {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			answer, _ := json.Marshal(map[string]any{"model": ollamatest.ModelName, "created_at": time.Now().UTC(), "response": p.first,
				"done": true, "done_reason": "stop", "prompt_eval_count": 12, "eval_count": 900})
			w.Write(answer)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		p.mu.Lock()
		p.calls[n].status, p.calls[n].answer = rec.Code, rec.Body.Bytes()
		p.mu.Unlock()
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})))
	p.URL = srv.URL
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return p
}

func (p *firstAnswerProxy) generateCalls() []proxiedCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxiedCall(nil), p.calls...)
}

// TestE2EScopedRepair sends a 10-question quiz whose fourth answer indexes
// past its options through the mcq contract, and lets the real Ollama
// answer the one repair call the budget allows. That call is item-scoped:
// the LLM-repair system prompt, a payload of questions[3] alone, and as format
// an object of that one key whose schema is the contract's question (with
// its $defs). Ollama takes that format and answers within it; whatever the
// tiny model writes, only questions[3] can change, so every error the
// gateway reports sits there.
func TestE2EScopedRepair(t *testing.T) {
	o := ollamatest.Start(t)
	valid := readE2EFile(t, "..", "contracts", "builtin", "mcq", "testdata", "valid_python_basics_en.json")
	doc, err := strictjson.Parse(valid)
	if err != nil {
		t.Fatal(err)
	}
	broken, err := strictjson.Replace(doc, "/questions/3/answer", strictjson.Int(9))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFirstAnswerProxy(t, o.URL, "```json\n"+string(strictjson.MarshalIndent(broken, "  "))+"\n```")

	cfg := e2eConfig(t, proxy.URL)
	cfg.Routes = append(cfg.Routes, config.Route{Model: "quiz", Upstream: ollamatest.ModelName, Contract: "mcq", AddFormat: true})
	cfg.MaxLLMCalls = 1
	gw := startE2EGateway(t, cfg)
	resp, b := post(t, gw+pathGenerate, e2eRequest(pathGenerate, "quiz", "Write a quiz about Python basics", false, nil, 64), nil)

	calls := proxy.generateCalls()
	if len(calls) != 2 {
		t.Fatalf("%d generate calls reached the upstream, want the first answer and one repair call", len(calls))
	}
	var sent struct {
		System  string          `json:"system"`
		Prompt  string          `json:"prompt"`
		Format  json.RawMessage `json:"format"`
		Options struct {
			Temperature float64 `json:"temperature"`
			NumPredict  int     `json:"num_predict"`
		} `json:"options"`
	}
	if err := json.Unmarshal(calls[1].body, &sent); err != nil {
		t.Fatalf("repair call body: %v", err)
	}
	if sent.System != repair.RepairSystemPrompt {
		t.Errorf("repair call's system prompt is not the LLM-repair prompt: %.80q", sent.System)
	}
	if !strings.HasPrefix(sent.Prompt, repair.ScopedInstruction("questions", []int{3})) {
		t.Errorf("repair call is not scoped to questions[3]: %.200q", sent.Prompt)
	}
	for _, other := range []string{`"questions[2]"`, `"questions[4]"`, `"meta"`} {
		if strings.Contains(sent.Prompt, other) {
			t.Errorf("scoped payload shows %s", other)
		}
	}
	var format struct {
		Required []string                   `json:"required"`
		Props    map[string]json.RawMessage `json:"properties"`
		Defs     map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(sent.Format, &format); err != nil || len(format.Required) != 1 || format.Required[0] != "questions[3]" || format.Defs["question"] == nil {
		t.Errorf("scoped format = %.300s, want an object of questions[3] with the contract's $defs", sent.Format)
	}
	if sent.Options.Temperature != 0 || sent.Options.NumPredict <= 0 {
		t.Errorf("repair options = %+v, want temperature 0 and a num_predict", sent.Options)
	}

	// Ollama took the format and answered within it.
	if calls[1].status != http.StatusOK {
		t.Fatalf("Ollama answered the scoped call %d: %s", calls[1].status, calls[1].answer)
	}
	// The guard streams its calls: the recorded answer is Ollama's stream.
	answer, err := ollama.Generate{}.ReadAnswer(bytes.Clone(calls[1].answer))
	if err != nil || answer.OutputTokens == 0 {
		t.Fatalf("Ollama's answer to the scoped call: %s (%v)", calls[1].answer, err)
	}
	t.Logf("scoped reply (%s, %d tokens): %.300s", answer.DoneReason, answer.OutputTokens, answer.Text)
	if answer.DoneReason == "stop" {
		var reply map[string]json.RawMessage
		if err := json.Unmarshal([]byte(answer.Text), &reply); err != nil || len(reply) != 1 || reply["questions[3]"] == nil {
			t.Errorf("a complete scoped reply is not an object of questions[3] alone: %v", err)
		}
	}

	// Only questions[3] could change: every error left sits there.
	switch resp.StatusCode {
	case http.StatusOK:
		if st := resp.Header.Get("X-Contract-Status"); st != "repaired" {
			t.Errorf("X-Contract-Status = %q, want repaired", st)
		}
	case http.StatusUnprocessableEntity:
		var semantic []string
		for code, class := range validators.Codes {
			if class == validators.ClassSemantic {
				semantic = append(semantic, code)
			}
		}
		report := checkFailure(t, resp, b, "mcq@1", semantic)
		vs, _ := report["violations"].([]any)
		for _, x := range vs {
			v, _ := x.(map[string]any)
			if p, _ := v["path"].(string); v["severity"] == "error" && !strings.HasPrefix(p, "questions[3]") {
				t.Errorf("error outside the repaired item: %v", v)
			}
		}
	default:
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
}
