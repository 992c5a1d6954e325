package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// scriptedUpstream is a fake Ollama that answers generate, chat and
// OpenAI chat completions with scripted texts, in the shape and streaming
// mode each request asks for, and records every request body.
type scriptedUpstream struct {
	mu      sync.Mutex
	answers []string // answered in order; the last one repeats
	bodies  []map[string]any
	paths   []string
	status  int // non-zero: answer with this status and an Ollama error
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.paths = append(u.paths, r.URL.Path)
	n := len(u.bodies) - 1
	if n >= len(u.answers) {
		n = len(u.answers) - 1
	}
	text, status := u.answers[n], u.status
	u.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"error":"model runner crashed"}`)
		return
	}
	stream := r.URL.Path != "/v1/chat/completions"
	if s, ok := body["stream"].(bool); ok {
		stream = s
	}
	model, _ := body["model"].(string)
	enc := func(v any) []byte { b, _ := json.Marshal(v); return b }
	counters := map[string]any{"total_duration": 1234, "eval_count": 42, "prompt_eval_count": 7}
	switch r.URL.Path {
	case "/api/generate", "/api/chat":
		chunk := func(s string, done bool) map[string]any {
			m := map[string]any{"model": model, "created_at": "2026-11-22T00:00:00Z", "done": done}
			if r.URL.Path == "/api/generate" {
				m["response"] = s
			} else {
				m["message"] = map[string]any{"role": "assistant", "content": s}
			}
			if done {
				m["done_reason"] = "stop"
				for k, v := range counters {
					m[k] = v
				}
			}
			return m
		}
		if !stream {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(enc(chunk(text, true)))
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		half := len(text) / 2
		for _, part := range []string{text[:half], text[half:]} {
			w.Write(append(enc(chunk(part, false)), '\n'))
		}
		w.Write(append(enc(chunk("", true)), '\n'))
	case "/v1/chat/completions":
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			w.Write(enc(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
				"usage":   map[string]any{"prompt_tokens": 7, "completion_tokens": 42, "total_tokens": 49}}))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{text[:len(text)/2], text[len(text)/2:]} {
			io.WriteString(w, "data: "+string(enc(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}, "finish_reason": nil}}}))+"\n\n")
		}
		io.WriteString(w, "data: "+string(enc(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}}))+"\n\ndata: [DONE]\n\n")
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"models":[]}`)
	}
}

func (u *scriptedUpstream) requests() []map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.bodies...)
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/guard/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newGuardedGateway runs Build (the whole wiring) in front of up.
func newGuardedGateway(t *testing.T, up http.Handler, edit func(*config.Config)) *httptest.Server {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	cfg := config.Default()
	cfg.Upstream = ups.URL
	if edit != nil {
		edit(&cfg)
	}
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(srv.Close)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw
}

func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// canonical re-serialises a JSON text the way the gateway answers.
func canonical(t *testing.T, s string) string {
	t.Helper()
	v, err := strictjson.Parse([]byte(strings.TrimSpace(s)))
	if err != nil {
		t.Fatalf("canonical: %v", err)
	}
	return string(strictjson.Marshal(v))
}

func TestGuardNonStreamShapes(t *testing.T) {
	valid := readFixture(t, "mcq_valid.json")
	tests := []struct {
		name, path, body string
		text             func(map[string]any) string
	}{
		{"generate", "/api/generate", `{"model":"m","prompt":"quiz","stream":false}`,
			func(m map[string]any) string { return m["response"].(string) }},
		{"chat", "/api/chat", `{"model":"m","messages":[{"role":"user","content":"quiz"}],"stream":false}`,
			func(m map[string]any) string { return m["message"].(map[string]any)["content"].(string) }},
		{"openai", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"quiz"}]}`,
			func(m map[string]any) string {
				return m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_derivable.txt")}}
			gw := newGuardedGateway(t, up, nil)
			resp, body := post(t, gw.URL+tt.path, tt.body, map[string]string{"X-Contract": "mcq"})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("X-Contract-Status"); got != "repaired" {
				t.Errorf("X-Contract-Status = %q, want repaired", got)
			}
			if got := resp.Header.Get("X-Contract"); got != "mcq@1" {
				t.Errorf("X-Contract = %q, want mcq@1", got)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canonical(t, valid), tt.text(m)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			summary := m["contract"].(map[string]any)
			if summary["status"] != "repaired" || summary["llm_calls"].(float64) != 0 || summary["local_fixes"].(float64) == 0 {
				t.Errorf("contract summary = %v", summary)
			}
			if n := len(up.requests()); n != 1 {
				t.Errorf("upstream calls = %d, want 1 (local repair only)", n)
			}
			if s, ok := up.requests()[0]["stream"].(bool); !ok || !s {
				t.Errorf("upstream stream = %v, want true (every guarded call is streamed)", up.requests()[0]["stream"])
			}
		})
	}
}

// TestGuardStreamsReEmitted checks a guarded stream of an item contract
// as a client reads it: the items come as deltas of their own, the
// deltas concatenate to the contract-valid document (the item array
// first, the members derived from it after, RFC 8259 §4), and the final
// chunk carries the upstream's counters and the contract summary.
func TestGuardStreamsReEmitted(t *testing.T) {
	valid := readFixture(t, "mcq_valid.json")
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_derivable.txt")}}
	gw := newGuardedGateway(t, up, nil)

	t.Run("ndjson", func(t *testing.T) {
		resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz"}`, map[string]string{"X-Contract": "mcq"})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var lines []map[string]any
		sc := bufio.NewScanner(strings.NewReader(string(body)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			lines = append(lines, m)
		}
		var text strings.Builder
		deltas := 0
		for _, l := range lines {
			if s, _ := l["response"].(string); s != "" {
				text.WriteString(s)
				deltas++
			}
		}
		if deltas < 3 {
			t.Errorf("%d text deltas, want one per question and the close", deltas)
		}
		sameJSON(t, valid, text.String())
		last := lines[len(lines)-1]
		if last["done"] != true || last["eval_count"].(float64) != 42 || last["contract"] == nil {
			t.Errorf("final chunk = %v, want done with upstream counters and contract", last)
		}
	})
	t.Run("sse", func(t *testing.T) {
		resp, body := post(t, gw.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}`, map[string]string{"X-Contract": "mcq"})
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var text strings.Builder
		events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
		if events[len(events)-1] != "data: [DONE]" {
			t.Fatalf("last event %q, want [DONE]", events[len(events)-1])
		}
		deltas := 0
		for _, ev := range events[:len(events)-1] {
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &m); err != nil {
				t.Fatalf("event %q: %v", ev, err)
			}
			if c, ok := m["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["content"].(string); ok && c != "" {
				text.WriteString(c)
				deltas++
			}
		}
		if deltas < 3 {
			t.Errorf("%d content deltas, want one per question and the close", deltas)
		}
		sameJSON(t, valid, text.String())
	})
}

// sameJSON fails t unless got is one JSON document equal to want as a
// value: member order aside, as RFC 8259 §4 has it.
func sameJSON(t *testing.T, want, got string) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("streamed text %q: %v", got, err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("streamed document (-want +got):\n%s", diff)
	}
}

func TestGuardContentFaultIs422WithReport(t *testing.T) {
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_content_fault.json")}}
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxLLMCalls = 1 })
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz"}`, map[string]string{"X-Contract": "mcq"})
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422: %s", resp.StatusCode, body)
	}
	var got struct {
		Error    string `json:"error"`
		Contract struct {
			Valid      bool `json:"valid"`
			Violations []struct {
				Code string `json:"code"`
				Path string `json:"path"`
			} `json:"violations"`
		} `json:"contract"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Error == "" || got.Contract.Valid || len(got.Contract.Violations) == 0 ||
		got.Contract.Violations[0].Code != "ANSWER_RANGE" || got.Contract.Violations[0].Path != "questions[0].answer" {
		t.Errorf("422 body = %s", body)
	}
	if s := resp.Header.Get("X-Contract-Status"); s != "failed" {
		t.Errorf("X-Contract-Status = %q, want failed", s)
	}
}

func TestGuardBadRequests(t *testing.T) {
	up := &scriptedUpstream{answers: []string{`{}`}}
	gw := newGuardedGateway(t, up, nil)
	tests := []struct {
		name, body string
		hdr        map[string]string
		status     int
		errHas     string
	}{
		{"unknown contract", `{"model":"m","prompt":"p"}`, map[string]string{"X-Contract": "nope"}, 400, "known: "},
		{"malformed body", `{"model":"m",`, map[string]string{"X-Contract": "mcq"}, 400, "invalid JSON body"},
		{"bad params", `{"model":"m","prompt":"p"}`, map[string]string{"X-Contract": "mcq", "X-Contract-Params": "options=Z"}, 400, "options"},
		{"params without equals", `{"model":"m","prompt":"p"}`, map[string]string{"X-Contract": "mcq", "X-Contract-Params": "options"}, 400, "key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, gw.URL+"/api/generate", tt.body, tt.hdr)
			var e map[string]any
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("body %q is not JSON: %v", body, err)
			}
			msg, _ := e["error"].(string)
			if resp.StatusCode != tt.status || !strings.Contains(msg, tt.errHas) {
				t.Errorf("got %d %s, want %d with %q", resp.StatusCode, body, tt.status, tt.errHas)
			}
		})
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream saw %d requests, want 0", n)
	}
}

func TestGuardUpstreamErrorPassesThrough(t *testing.T) {
	up := &scriptedUpstream{answers: []string{`{}`}, status: http.StatusInternalServerError}
	gw := newGuardedGateway(t, up, nil)
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p"}`, map[string]string{"X-Contract": "mcq"})
	if resp.StatusCode != http.StatusInternalServerError || string(body) != `{"error":"model runner crashed"}` {
		t.Errorf("got %d %s, want the upstream's 500 as is", resp.StatusCode, body)
	}
}

func TestGuardVirtualModelAddsFormat(t *testing.T) {
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}}
	gw := newGuardedGateway(t, up, func(c *config.Config) {
		c.Routes = []config.Route{{Model: "quiz", Upstream: "deepseek-r1:7b", Contract: "mcq", AddFormat: true, Params: map[string]string{"options": "A"}}}
	})
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"quiz","prompt":"p","stream":false,"keep_alive":"5m","unknown_field":[1,2]}`, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "valid" {
		t.Fatalf("got %d %s %s", resp.StatusCode, resp.Header.Get("X-Contract-Status"), body)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil || got["model"] != "quiz" {
		t.Errorf("answer names model %v, want the client's quiz (err %v)", got["model"], err)
	}
	sent := up.requests()[0]
	if sent["model"] != "deepseek-r1:7b" {
		t.Errorf("upstream model = %v, want deepseek-r1:7b", sent["model"])
	}
	if f, ok := sent["format"].(map[string]any); !ok || f["type"] != "object" {
		t.Errorf("upstream format = %v, want the mcq schema", sent["format"])
	}
	if sent["keep_alive"] != "5m" || sent["unknown_field"] == nil {
		t.Errorf("other members not kept: %v", sent)
	}
}

func TestGuardAdHocSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`
	tests := []struct {
		name, answer, status, want string
		code                       int
	}{
		{"valid", `{"name":"Ann","age":3}`, "valid", `{"name":"Ann","age":3}`, 200},
		{"repaired locally", "Sure:\n```json\n{\"name\": \"Ann\", \"age\": \"3\",}\n```", "repaired", `{"name":"Ann","age":3}`, 200},
		{"best effort", `{"name":"Ann"}`, "fallback", `{"name":"Ann"}`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{tt.answer}}
			gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxLLMCalls = 1 })
			resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p","stream":false,"format":`+schema+`}`, nil)
			if resp.StatusCode != tt.code || resp.Header.Get("X-Contract-Status") != tt.status {
				t.Fatalf("got %d %q %s", resp.StatusCode, resp.Header.Get("X-Contract-Status"), body)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if m["response"] != tt.want {
				t.Errorf("response = %v, want %s", m["response"], tt.want)
			}
		})
	}
}

func TestGuardOffForPlainRequests(t *testing.T) {
	up := &scriptedUpstream{answers: []string{"Once upon a time"}}
	gw := newGuardedGateway(t, up, nil)
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p"}`, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Contract-Status") != "" {
		t.Fatalf("got %d %q", resp.StatusCode, resp.Header.Get("X-Contract-Status"))
	}
	if n := strings.Count(string(body), "\n"); n != 3 {
		t.Errorf("stream has %d lines, want the upstream's 3 unchanged: %s", n, body)
	}
	if s, ok := up.requests()[0]["stream"]; ok {
		t.Errorf("pass-through request was edited: stream = %v", s)
	}
}

func TestAdminContracts(t *testing.T) {
	up := &scriptedUpstream{answers: []string{`{}`}}
	gw := newGuardedGateway(t, up, nil)
	resp, err := http.Get(gw.URL + "/contracts")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"mcq@1"`) {
		t.Errorf("/contracts = %d %s", resp.StatusCode, b)
	}
	resp, err = http.Get(gw.URL + "/contracts/mcq")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"questions"`) {
		t.Errorf("/contracts/mcq = %d %.200s", resp.StatusCode, b)
	}
	r2, body := post(t, gw.URL+"/contracts/mcq/validate", readFixture(t, "mcq_content_fault.json"), nil)
	if r2.StatusCode != 200 || !strings.Contains(string(body), `"ANSWER_RANGE"`) {
		t.Errorf("validate = %d %.300s", r2.StatusCode, body)
	}
	// A syntax error that local repair fixes is reported fixable.
	r4, body := post(t, gw.URL+"/contracts/json/validate", `{"a": 1,}`, nil)
	if r4.StatusCode != 200 || !strings.Contains(string(body), `"code":"JSON_SYNTAX"`) || !strings.Contains(string(body), `"fixable":true`) {
		t.Errorf("validate of a trailing comma = %d %s, want JSON_SYNTAX fixable", r4.StatusCode, body)
	}
	r3, body := post(t, gw.URL+"/contracts/nope/validate", "{}", nil)
	if r3.StatusCode != 404 || !strings.Contains(string(body), `"error"`) {
		t.Errorf("unknown contract = %d %s", r3.StatusCode, body)
	}
}

// TestAdminValidateBodyLimit: a body over max_body_bytes sent to the
// validate route gets the one 413 whether its length was declared or it
// came chunked.
func TestAdminValidateBodyLimit(t *testing.T) {
	up := &scriptedUpstream{answers: []string{`{}`}}
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxBodyBytes = 1000 })
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(strings.Repeat(" ", 5000) + "{}")
		if chunked {
			body = io.MultiReader(body) // no length: sent chunked
		}
		resp, err := http.Post(gw.URL+"/contracts/json/validate", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := `{"error":"request body too large: the limit is 1000 bytes"}`; resp.StatusCode != http.StatusRequestEntityTooLarge || strings.TrimSpace(string(b)) != want {
			t.Errorf("chunked %v: %d %s, want 413 %s", chunked, resp.StatusCode, b, want)
		}
	}
}

// TestGuardNegativeBudgetMeansLocalOnly: a negative max_llm_calls in the
// config allows no model call at all; the content fault ends in 422 after
// the one upstream answer.
func TestGuardNegativeBudgetMeansLocalOnly(t *testing.T) {
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_content_fault.json")}}
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxLLMCalls = -1 })
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz","stream":false}`, map[string]string{"X-Contract": "mcq"})
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("upstream calls = %d, want 1", n)
	}
}

// TestGuardRepairsThroughTheModel: a content fault is repaired by an LLM
// repair call (item-scoped, for mcq) that goes to the same upstream with
// the repair prompt, a schema as format and temperature 0.
func TestGuardRepairsThroughTheModel(t *testing.T) {
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_content_fault.json"), readFixture(t, "mcq_valid.json")}}
	gw := newGuardedGateway(t, up, nil)
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz","stream":false}`, map[string]string{"X-Contract": "mcq"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "repaired" {
		t.Fatalf("got %d %q %s", resp.StatusCode, resp.Header.Get("X-Contract-Status"), body)
	}
	reqs := up.requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream calls = %d, want 2", len(reqs))
	}
	repairCall := reqs[1]
	sys, _ := repairCall["system"].(string)
	prompt, _ := repairCall["prompt"].(string)
	opts, _ := repairCall["options"].(map[string]any)
	if !strings.HasPrefix(sys, "You are a JSON repair engine.") || !strings.Contains(prompt, "VIOLATION_REPORT:\n") ||
		!strings.Contains(prompt, "ANSWER_RANGE") || repairCall["model"] != "m" || repairCall["format"] == nil || opts["temperature"] != float64(0) {
		t.Errorf("repair call = model %v, system %.40q, prompt %.60q, format %v, options %v", repairCall["model"], sys, prompt, repairCall["format"] != nil, opts)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if c := m["contract"].(map[string]any); c["llm_calls"].(float64) != 1 {
		t.Errorf("contract summary = %v, want llm_calls 1", c)
	}
}

// TestGuardClientDisconnectCancelsUpstream: a client that goes away while
// the guard waits for the model cancels the upstream request at once.
func TestGuardClientDisconnectCancelsUpstream(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Like Ollama, read the request first: net/http notices a closed
		// connection only once the body is consumed.
		io.Copy(io.Discard, r.Body)
		close(started)
		<-r.Context().Done()
		close(cancelled)
	})
	gw := newGuardedGateway(t, up, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/api/generate", strings.NewReader(`{"model":"m","prompt":"p"}`))
	req.Header.Set("X-Contract", "mcq")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request not cancelled 5 s after the client left")
	}
	if err := <-errc; err == nil {
		t.Error("client request succeeded after cancel")
	}
}

// TestGuardSkipsModelWhileUpstreamBreakerOpen: a failed repair call (the
// upstream drops the connection) opens the upstream breaker (threshold 1);
// from then on guarded requests get 503 in Ollama's shape at once and no
// call reaches the upstream.
func TestGuardSkipsModelWhileUpstreamBreakerOpen(t *testing.T) {
	var calls atomic.Int32
	content := readFixture(t, "mcq_content_fault.json")
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			panic(http.ErrAbortHandler)
		}
		b, _ := json.Marshal(map[string]any{"model": "m", "response": content, "done": true})
		w.Write(b)
	})
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.Breaker.FailureThreshold = 1 })
	// The first request's repair call fails, which opens the breaker.
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p","stream":false}`, map[string]string{"X-Contract": "mcq"})
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("first request: %d %s", resp.StatusCode, body)
	}
	n := calls.Load()
	// The second request is refused by the open breaker before any model
	// call: 503 in Ollama's shape.
	resp, body = post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p","stream":false}`, map[string]string{"X-Contract": "mcq"})
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"error"`) {
		t.Errorf("second request: %d %s, want 503", resp.StatusCode, body)
	}
	if calls.Load() != n {
		t.Errorf("upstream saw %d more calls while the breaker was open", calls.Load()-n)
	}
}

// TestGuardNegativeLimitsMeanNone: max_body_bytes and max_response_bytes -1
// mean no limit (config), on guarded routes too: a body and an answer
// over the guard's own defaults (32 MiB, 64 MiB) go through.
func TestGuardNegativeLimitsMeanNone(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about 100 MiB")
	}
	big := strings.Repeat("x", 65<<20)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"model":"m","response":"{\"a\":\"`+big+`\"}","done":true}`)
	})
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxBodyBytes, c.MaxResponseBytes = -1, -1 })
	body := `{"model":"m","stream":false,"prompt":"` + strings.Repeat("p", 33<<20) + `"}`
	resp, b := post(t, gw.URL+"/api/generate", body, map[string]string{"X-Contract": "json"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "valid" {
		t.Fatalf("got %d %q %.200s, want 200 valid", resp.StatusCode, resp.Header.Get("X-Contract-Status"), b)
	}
}

// TestGuardLogLine: every guarded request leaves one log line — one that
// ends in an upstream error too — with its request id, route, contract,
// model, status, rungs, LLM calls, local fixes, violations before and
// after, parse error, latency and cache hit, and no prompt or model
// output; the upstream's error keeps its headers.
func TestGuardLogLine(t *testing.T) {
	const secretPrompt, secretAnswer = "PROMPT-SECRET", "ANSWER-SECRET"
	tests := []struct {
		name   string
		status int // the upstream's; 0 answers the text
		want   int
		result string
	}{
		{"repaired", 0, http.StatusOK, "repaired"},
		{"upstream error", http.StatusServiceUnavailable, http.StatusServiceUnavailable, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if tt.status != 0 {
					w.Header().Set("Retry-After", "7")
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
					w.WriteHeader(tt.status)
					io.WriteString(w, `{"error":"server busy, please try again.  maximum pending requests exceeded"}`)
					return
				}
				b, _ := json.Marshal(map[string]any{"model": "m", "response": "```json\n{\"answer\": \"" + secretAnswer + "\",}\n```", "done": true})
				w.Write(b)
			})
			ups := httptest.NewServer(up)
			defer ups.Close()
			logs := &logBuffer{}
			cfg := config.Default()
			cfg.Upstream = ups.URL
			srv, err := Build(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			gw := httptest.NewServer(srv.Handler())
			defer gw.Close()
			resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"`+secretPrompt+`"}`, map[string]string{"X-Contract": "json"})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tt.want)
			}
			if tt.status != 0 && resp.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After = %q, want the upstream's 7", resp.Header.Get("Retry-After"))
			}
			// The guard logs when its handler returns, which may be just
			// after the client has the whole answer.
			logs.waitFor(t, `"guarded request"`)
			var lines []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if strings.Contains(l, secretPrompt) || strings.Contains(l, secretAnswer) {
					t.Errorf("log line holds the prompt or the output: %s", l)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				if m["msg"] == "guarded request" {
					lines = append(lines, m)
				}
			}
			if len(lines) != 1 {
				t.Fatalf("%d guarded-request log lines, want 1:\n%s", len(lines), logs.String())
			}
			l := lines[0]
			for _, k := range []string{"request_id", "route", "contract", "model", "status", "rungs", "llm_calls", "local_fixes",
				"violations_before", "violations_after", "parse_error", "latency_ms", "cache_hit"} {
				if _, ok := l[k]; !ok {
					t.Errorf("log line lacks %q: %v", k, l)
				}
			}
			if l["status"] != tt.result || l["request_id"] != resp.Header.Get("X-Request-Id") || l["contract"] != "json@1" {
				t.Errorf("log line = %v, want status %q, the response's request id, contract json@1", l, tt.result)
			}
		})
	}
}

// TestGuardMetricLabelsBounded: metric labels take no value a client
// chooses freely — every ad-hoc schema counts under contract "schema", and
// a model the upstream refused is not a label value.
func TestGuardMetricLabelsBounded(t *testing.T) {
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["model"] != "m" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"model not found"}`)
			return
		}
		io.WriteString(w, `{"model":"m","response":"{\"a\":1}","done":true}`)
	})
	gw := newGuardedGateway(t, up, nil)
	for i, body := range []string{
		`{"model":"m","stream":false,"prompt":"p","format":{"type":"object","title":"one"}}`,
		`{"model":"m","stream":false,"prompt":"p","format":{"type":"object","title":"two"}}`,
		`{"model":"random-7f3a","stream":false,"prompt":"p","format":{"type":"object"}}`,
	} {
		if resp, b := post(t, gw.URL+"/api/generate", body, nil); resp.StatusCode != 200 && i < 2 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
		}
	}
	resp, err := http.Get(gw.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "gateway_guarded_requests_total{") {
			got = append(got, l[:strings.LastIndex(l, " ")])
		}
	}
	want := []string{
		`gateway_guarded_requests_total{contract="schema",model="",status="error"}`,
		`gateway_guarded_requests_total{contract="schema",model="m",status="valid"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

// TestGuardLoadAndUnload: a request with no prompt (generate) or no
// messages (chat) loads or unloads the model, as `ollama run` and the
// clients' keep_alive calls do; Ollama answers it with done_reason "load"
// or "unload" and no text. There is nothing to validate: the answer comes
// back as Ollama gives it (the client's model name in it), not as a 422.
func TestGuardLoadAndUnload(t *testing.T) {
	tests := []struct {
		name, path, body, reason string
	}{
		{"generate load", "/api/generate", `{"model":"quiz"}`, "load"},
		{"generate unload", "/api/generate", `{"model":"quiz","keep_alive":0}`, "unload"},
		{"chat load", "/api/chat", `{"model":"quiz","messages":[]}`, "load"},
		{"chat unload", "/api/chat", `{"model":"quiz","keep_alive":0}`, "unload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent map[string]any
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				json.NewDecoder(r.Body).Decode(&sent)
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				m := map[string]any{"model": sent["model"], "created_at": "2026-11-22T00:00:00Z", "done": true, "done_reason": tt.reason}
				if r.URL.Path == "/api/chat" {
					m["message"] = map[string]any{"role": "assistant", "content": ""}
				} else {
					m["response"] = ""
				}
				json.NewEncoder(w).Encode(m)
			})
			gw := newGuardedGateway(t, up, func(c *config.Config) {
				c.Routes = []config.Route{{Model: "quiz", Upstream: "llama3.2", Contract: "mcq", AddFormat: true}}
			})
			resp, body := post(t, gw.URL+tt.path, tt.body, nil)
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("status %d, body %s: %v", resp.StatusCode, body, err)
			}
			if resp.StatusCode != http.StatusOK || got["done_reason"] != tt.reason || got["model"] != "quiz" || got["done"] != true {
				t.Errorf("got %d %s, want 200 with done_reason %q and model quiz", resp.StatusCode, body, tt.reason)
			}
			if sent["model"] != "llama3.2" {
				t.Errorf("upstream model = %v, want llama3.2", sent["model"])
			}
		})
	}
}

// TestGuardOracleScheduleIsThreeAttempts: the oracle-score route's policy —
// three attempts at temperature 0.3, 0.2, 0.1, then the fallback — when the
// client chose no temperature; a client's own temperature is kept for the
// first attempt and all three scheduled ones become re-runs.
func TestGuardOracleScheduleIsThreeAttempts(t *testing.T) {
	mismatch := `{"score":900,"scoreBreakdown":{"activity":10,"maturity":10,"diversity":10,"riskBehavior":10,"surveyMatch":10},"reasoning":"Too high for the breakdown.","risk_factors":[],"strengths":[]}`
	tests := []struct {
		name  string
		body  string
		temps []any
	}{
		{"no client temperature", `{"model":"m","prompt":"score","stream":false}`, []any{0.3, 0.2, 0.1}},
		{"client temperature", `{"model":"m","prompt":"score","stream":false,"options":{"temperature":0.9}}`, []any{0.9, 0.3, 0.2, 0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{mismatch}}
			gw := newGuardedGateway(t, up, nil)
			resp, body := post(t, gw.URL+"/api/generate", tt.body, map[string]string{"X-Contract": "oracle-score"})
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "SCORE_MISMATCH") {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
			var got []any
			for _, r := range up.requests() {
				opts, _ := r["options"].(map[string]any)
				got = append(got, opts["temperature"])
			}
			if diff := cmp.Diff(tt.temps, got); diff != "" {
				t.Errorf("temperatures sent (-want +got):\n%s", diff)
			}
		})
	}
}
