package middleware

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// toolUpstream answers /api/chat and /v1/chat/completions with one call of
// the function fn with args, and /api/generate (the repair calls) with
// fixed; it counts the requests of each path.
type toolUpstream struct {
	fn, args, fixed string
	// n is how many calls /api/chat's answer makes (0 means one).
	n     int
	mu    sync.Mutex
	calls map[string]int
}

func (u *toolUpstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[path]
}

func (u *toolUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	if u.calls == nil {
		u.calls = map[string]int{}
	}
	u.calls[r.URL.Path]++
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/generate":
		b, _ := json.Marshal(map[string]any{"model": "m", "response": u.fixed, "done": true, "done_reason": "stop"})
		w.Write(b)
	case "/api/chat":
		calls := make([]string, max(u.n, 1))
		for i := range calls {
			calls[i] = `{"function":{"index":` + strconv.Itoa(i) + `,"name":"` + u.fn + `","arguments":` + u.args + `}}`
		}
		w.Write([]byte(`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[` + strings.Join(calls, ",") + `]},"done":true,"done_reason":"stop"}`))
	case "/v1/responses":
		args, _ := json.Marshal(u.args)
		w.Write([]byte(`{"id":"r","object":"response","status":"completed","model":"m","output":[{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"` + u.fn + `","arguments":` + string(args) + `}],"usage":{"input_tokens":1,"output_tokens":2}}`))
	case "/v1/messages":
		w.Write([]byte(`{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t1","name":"` + u.fn + `","input":` + u.args + `}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}`))
	case "/v1/chat/completions":
		args, _ := json.Marshal(u.args)
		w.Write([]byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","index":0,"type":"function","function":{"name":"` + u.fn + `","arguments":` + string(args) + `}}]},"finish_reason":"tool_calls"}]}`))
	}
}

const weatherParams = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`

// weatherRequest is a request of path's API declaring the function
// weather.
func weatherRequest(path string) string {
	switch path {
	case "/v1/responses":
		return `{"model":"m","input":"weather in Oslo?","tools":[{"type":"function","name":"weather","parameters":` + weatherParams + `}]}`
	case "/v1/messages":
		return `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"weather in Oslo?"}],"tools":[{"name":"weather","input_schema":` + weatherParams + `}]}`
	}
	return `{"model":"m","stream":false,"messages":[{"role":"user","content":"weather in Oslo?"}],"tools":[{"type":"function","function":{"name":"weather","parameters":` + weatherParams + `}}]}`
}

// TestToolCallArguments: a call's arguments are validated against its
// function's parameters, repaired by the model, and a call that stays
// invalid or names an undeclared function is a 422 with the report.
func TestToolCallArguments(t *testing.T) {
	tests := []struct {
		name, path, fn, args, fixed string
		header                      bool
		toolCalls                   bool
		status                      int
		// want is in the answer's body; repairs the model calls made.
		want    string
		repairs int
	}{
		{"valid", "/api/chat", "weather", `{"city":"Oslo"}`, ``, true, false, 200, `"arguments":{"city":"Oslo"}`, 0},
		{"repaired by the model", "/api/chat", "weather", `{"town":"Oslo"}`, `{"city":"Oslo"}`, true, false, 200, `"arguments":{"city":"Oslo"}`, 1},
		{"openai string arguments", "/v1/chat/completions", "weather", `{"town":"Oslo"}`, `{"city":"Oslo"}`, true, false, 200, `"arguments":"{\"city\":\"Oslo\"}"`, 1},
		{"responses function_call", "/v1/responses", "weather", `{"town":"Oslo"}`, `{"city":"Oslo"}`, true, false, 200, `"arguments":"{\"city\":\"Oslo\"}"`, 1},
		{"anthropic tool_use", "/v1/messages", "weather", `{"town":"Oslo"}`, `{"city":"Oslo"}`, true, false, 200, `"input":{"city":"Oslo"}`, 1},
		{"anthropic unknown function", "/v1/messages", "rain", `{}`, ``, true, false, 422, `"type":"invalid_request_error"`, 0},
		{"stays invalid", "/api/chat", "weather", `{"town":"Oslo"}`, `{"town":"Oslo"}`, true, false, 422, `"contract":"tool:weather"`, 1},
		{"unknown function", "/api/chat", "rain", `{}`, ``, true, false, 422, `"code":"TOOL_UNKNOWN"`, 0},
		{"unguarded with the switch", "/api/chat", "weather", `{"town":"Oslo"}`, `{"city":"Oslo"}`, false, true, 200, `"arguments":{"city":"Oslo"}`, 1},
		{"unguarded without the switch", "/api/chat", "weather", `{"town":"Oslo"}`, ``, false, false, 200, `"arguments":{"town":"Oslo"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &toolUpstream{fn: tt.fn, args: tt.args, fixed: tt.fixed}
			fake := httptest.NewServer(up)
			t.Cleanup(fake.Close)
			gw := mount(t, fake.URL, func(c *GuardConfig) { c.ToolCalls = tt.toolCalls })
			body := weatherRequest(tt.path)
			req, _ := http.NewRequest(http.MethodPost, gw.URL+tt.path, strings.NewReader(body))
			if tt.header {
				req.Header.Set("X-Contract", "json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
				t.Errorf("%s = %d %s, want %d with %s", tt.path, resp.StatusCode, b, tt.status, tt.want)
			}
			if got := up.count("/api/generate"); got != tt.repairs {
				t.Errorf("%d repair calls, want %d", got, tt.repairs)
			}
		})
	}
}

// TestToolCallsShareTheRequestsLadder checks that repairing tool-call
// arguments is the request's one use of the ladder: the repair gate stops
// its model calls as it stops the text's, the request's budget of model
// calls is shared by all its calls, and the request's Event (its log line
// and metrics) counts the model calls the summary reports.
func TestToolCallsShareTheRequestsLadder(t *testing.T) {
	tests := []struct {
		name     string
		n        int  // calls in the answer
		closed   bool // repair gate closed
		maxCalls int
		status   int
		// repairs is the model calls the upstream gets; gateDone what
		// the gate is told at the end.
		repairs  int
		gateDone []bool
	}{
		{"one call repaired", 1, false, 0, 200, 1, []bool{true}},
		{"gate closed: local repair only", 1, true, 0, 422, 0, []bool{false}},
		{"one budget for two calls", 2, false, 1, 422, 1, []bool{false}},
		{"a budget for both", 2, false, 2, 200, 2, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &toolUpstream{fn: "weather", args: `{"town":"Oslo"}`, fixed: `{"city":"Oslo"}`, n: tt.n}
			fake := httptest.NewServer(up)
			t.Cleanup(fake.Close)
			events := make(chan Event, 1)
			var mu sync.Mutex
			var gateDone []bool
			gw := mount(t, fake.URL, func(c *GuardConfig) {
				c.MaxLLMCalls = tt.maxCalls
				c.Observe = func(ev Event) { events <- ev }
				c.RepairGate = func(route, model string) (bool, func(bool)) {
					return !tt.closed, func(ok bool) {
						mu.Lock()
						defer mu.Unlock()
						gateDone = append(gateDone, ok)
					}
				}
			})
			req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/chat", strings.NewReader(weatherRequest("/api/chat")))
			req.Header.Set("X-Contract", "json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, b, tt.status)
			}
			if got := up.count("/api/generate"); got != tt.repairs {
				t.Errorf("%d repair calls, want %d", got, tt.repairs)
			}
			ev := <-events
			if ev.LLMCalls != tt.repairs {
				t.Errorf("Event.LLMCalls = %d, want %d (the calls the upstream got)", ev.LLMCalls, tt.repairs)
			}
			if tt.status == 200 {
				var sum struct {
					Message  json.RawMessage `json:"message"`
					Contract struct {
						LLMCalls int `json:"llm_calls"`
					} `json:"contract"`
				}
				if err := json.Unmarshal(b, &sum); err != nil {
					t.Fatal(err)
				}
				if sum.Contract.LLMCalls != ev.LLMCalls {
					t.Errorf("summary llm_calls = %d, Event %d: they must agree", sum.Contract.LLMCalls, ev.LLMCalls)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(gateDone, tt.gateDone) {
				t.Errorf("repair gate told %v, want %v", gateDone, tt.gateDone)
			}
		})
	}
}

// TestToolCallSummary: the contract summary of an answer whose tool calls
// were checked is the runs' contract summary, member for member, with the
// number of calls after the status.
func TestToolCallSummary(t *testing.T) {
	tests := []struct {
		name, args, fixed string
		n                 int
		want              string
	}{
		{"valid", `{"city":"Oslo"}`, ``, 1,
			`{"id":"json@1","status":"valid","tool_calls":1,"llm_calls":0,"local_fixes":0,"violations_before":[],"violations_after":[],"repair_tokens":{"prompt":0,"output":0},"cache":"bypass"}`},
		{"repaired by the model", `{"town":"Oslo"}`, `{"city":"Oslo"}`, 2,
			`{"id":"json@1","status":"repaired","tool_calls":2,"llm_calls":2,"local_fixes":0,"violations_before":["SCHEMA_REQUIRED","SCHEMA_ADDITIONAL","SCHEMA_REQUIRED","SCHEMA_ADDITIONAL"],"violations_after":[],"repair_tokens":{"prompt":0,"output":0},"cache":"bypass"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &toolUpstream{fn: "weather", args: tt.args, fixed: tt.fixed, n: tt.n}
			fake := httptest.NewServer(up)
			t.Cleanup(fake.Close)
			gw := mount(t, fake.URL, nil)
			req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/chat", strings.NewReader(weatherRequest("/api/chat")))
			req.Header.Set("X-Contract", "json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Contract json.RawMessage `json:"contract"`
			}
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Contract) != tt.want {
				t.Errorf("contract = %s, want %s", got.Contract, tt.want)
			}
		})
	}
}
