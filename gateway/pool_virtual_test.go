package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// apiOllama is an Ollama of a pool that answers every guarded API, in
// that API's stream (the guard always asks for one), with the JSON object
// {"by": its name}, for the models it lists; any other model is 404 as
// Ollama answers it. It records the model of each generation it served.
type apiOllama struct {
	name   string
	models []string
	srv    *httptest.Server

	mu    sync.Mutex
	asked []string // "path model" of each generation
}

func newAPIOllama(t *testing.T, name string, models ...string) *apiOllama {
	t.Helper()
	o := &apiOllama{name: name, models: models}
	o.srv = httptest.NewServer(o)
	t.Cleanup(o.srv.Close)
	return o
}

func (o *apiOllama) has(model string) bool {
	for _, m := range o.models {
		if m == model || m == model+":latest" {
			return true
		}
	}
	return false
}

func (o *apiOllama) generations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.asked...)
}

func (o *apiOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch r.URL.Path {
	case "/api/version":
		io.WriteString(w, `{"version":"0.17.4"}`)
		return
	case "/api/ps":
		io.WriteString(w, `{"models":[]}`)
		return
	case "/api/tags":
		var items []string
		for _, m := range o.models {
			items = append(items, fmt.Sprintf(`{"name":%q,"model":%q}`, m, m))
		}
		fmt.Fprintf(w, `{"models":[%s]}`, strings.Join(items, ","))
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if !o.has(req.Model) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"model %q not found, try pulling it first"}`, req.Model)
		return
	}
	o.mu.Lock()
	o.asked = append(o.asked, r.URL.Path+" "+req.Model)
	o.mu.Unlock()
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	text := fmt.Sprintf(`{"by":%q}`, o.name)
	m := req.Model
	var out string
	switch r.URL.Path {
	case "/api/generate", "/api/chat":
		w.Header().Set("Content-Type", "application/x-ndjson")
		chunk := func(s string, done bool) map[string]any {
			c := map[string]any{"model": m, "created_at": "2026-11-28T00:00:00Z", "done": done}
			if r.URL.Path == "/api/generate" {
				c["response"] = s
			} else {
				c["message"] = map[string]any{"role": "assistant", "content": s}
			}
			if done {
				c["done_reason"], c["eval_count"], c["prompt_eval_count"] = "stop", 5, 3
			}
			return c
		}
		out = enc(chunk(text, false)) + "\n" + enc(chunk("", true)) + "\n"
	case "/v1/chat/completions":
		chunk := func(delta map[string]any, finish any) string {
			return "data: " + enc(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": m,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}) + "\n\n"
		}
		out = chunk(map[string]any{"role": "assistant", "content": text}, nil) + chunk(map[string]any{}, "stop") + "data: [DONE]\n\n"
	case "/v1/completions":
		chunk := func(s string, finish any) string {
			return "data: " + enc(map[string]any{"id": "cmpl-1", "object": "text_completion", "created": 1, "model": m,
				"choices": []any{map[string]any{"index": 0, "text": s, "finish_reason": finish}}}) + "\n\n"
		}
		out = chunk(text, nil) + chunk("", "stop") + "data: [DONE]\n\n"
	case "/v1/responses":
		resp := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": m,
			"output": []any{map[string]any{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}},
			"usage": map[string]any{"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}}
		out = "event: response.completed\ndata: " + enc(map[string]any{"type": "response.completed", "sequence_number": 0, "response": resp}) + "\n\n"
	case "/v1/messages":
		event := func(name string, v map[string]any) string {
			v["type"] = name
			return "event: " + name + "\ndata: " + enc(v) + "\n\n"
		}
		out = event("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
			"model": m, "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 3, "output_tokens": 0}}}) +
			event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}}) +
			event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}}) +
			event("content_block_stop", map[string]any{"index": 0}) +
			event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}}) +
			event("message_stop", map[string]any{})
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"404 page not found"}`)
		return
	}
	if r.URL.Path != "/api/generate" && r.URL.Path != "/api/chat" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	io.WriteString(w, out)
}

// guardedRequests are a request on every guarded API for model, streamed
// or not, each with its own prompt (no answer comes from the cache).
func guardedRequests(model string) []struct{ name, path, body string } {
	var out []struct{ name, path, body string }
	for _, stream := range []bool{false, true} {
		s := fmt.Sprint(stream)
		for _, r := range []struct{ path, body string }{
			{"/api/generate", `{"model":%[1]q,"prompt":"p%[2]s","stream":%[2]s}`},
			{"/api/chat", `{"model":%[1]q,"messages":[{"role":"user","content":"p%[2]s"}],"stream":%[2]s}`},
			{"/v1/chat/completions", `{"model":%[1]q,"messages":[{"role":"user","content":"p%[2]s"}],"stream":%[2]s}`},
			{"/v1/completions", `{"model":%[1]q,"prompt":"p%[2]s","stream":%[2]s}`},
			{"/v1/responses", `{"model":%[1]q,"input":"p%[2]s","stream":%[2]s}`},
			{"/v1/messages", `{"model":%[1]q,"max_tokens":64,"messages":[{"role":"user","content":"p%[2]s"}],"stream":%[2]s}`},
		} {
			out = append(out, struct{ name, path, body string }{r.path + " stream " + s, r.path, fmt.Sprintf(r.body, model, s)})
		}
	}
	return out
}

// TestPoolVirtualModel: a virtual model over a pool goes to the upstream
// that has the route's upstream model — the pool routes the guarded call
// by the model it asks, not by the virtual name the client sent — on
// every guarded API, streamed or not.
func TestPoolVirtualModel(t *testing.T) {
	a := newAPIOllama(t, "a", "other:latest")
	b := newAPIOllama(t, "b", "quiz-base:latest")
	_, gw := newPoolGateway(t, nil, func(cfg *config.Config) {
		cfg.Routes = []config.Route{{Model: "quiz", Upstream: "quiz-base", Contract: "json"}}
	}, a.srv.URL, b.srv.URL)

	for _, tt := range guardedRequests("quiz") {
		t.Run(tt.name, func(t *testing.T) {
			before := len(b.generations())
			resp, body := post(t, gw.URL+tt.path, tt.body, nil)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "valid" || !strings.Contains(string(body), `by`) {
				t.Fatalf("POST %s %s = %d %q %s, want 200 valid with b's answer", tt.path, tt.body, resp.StatusCode, resp.Header.Get("X-Contract-Status"), body)
			}
			got := b.generations()[before:]
			if want := tt.path + " quiz-base"; len(got) != 1 || got[0] != want {
				t.Errorf("b served %q, want [%q]", got, want)
			}
			if strings.Contains(string(body), "quiz-base") {
				t.Errorf("answer names the upstream model: %s", body)
			}
		})
	}
	if got := a.generations(); len(got) != 0 {
		t.Errorf("a, which lacks quiz-base, served %q", got)
	}
}
