package apis

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// clientEvent is one event of a stream as the API's client library sees
// it: the SSE event name (none on NDJSON and data-only streams) and the
// JSON data.
type clientEvent struct {
	name string
	data map[string]any
}

// clientEvents parses a stream as the API's client does: NDJSON lines, or
// SSE events whose comments are skipped and whose [DONE] ends the stream.
func clientEvents(t *testing.T, body string, sse bool) (evs []clientEvent, done bool) {
	t.Helper()
	if !sse {
		for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			evs = append(evs, clientEvent{data: m})
		}
		return evs, false
	}
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a whole event: %q", body)
	}
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var ev clientEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case line == "data: [DONE]":
				done = true
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					t.Fatalf("event %q: %v", block, err)
				}
			default:
				t.Fatalf("line %q is no SSE line", line)
			}
		}
		if ev.data != nil {
			evs = append(evs, ev)
		}
	}
	return evs, done
}

func get(m any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, _ := m.(map[string]any)
			m = mm[k]
		case int:
			a, _ := m.([]any)
			if k >= len(a) {
				return nil
			}
			m = a[k]
		}
	}
	return m
}

func text(m any, path ...any) string {
	s, _ := get(m, path...).(string)
	return s
}

// writerCase is one API's stream as its client reads it: the text of an
// event, the contract summary the final frames carry, the id every frame
// of the stream shares, and whether the stream must end with [DONE].
type writerCase struct {
	path    string
	sse     bool
	answer  string // the upstream's answer, before WithText
	textOf  func(ev clientEvent) string
	summary func(evs []clientEvent) any
	ids     func(evs []clientEvent) []string
	done    bool
	// errorOf reads the error of the last event as the API's client
	// library raises it: "" for an event that is no error.
	errorOf func(ev clientEvent) string
}

var writerCases = []writerCase{
	{path: "/api/generate", answer: `{"model":"up","created_at":"t","response":"x","thinking":"hmm","done":true,"done_reason":"stop","eval_count":3}`,
		textOf:  func(ev clientEvent) string { return text(ev.data, "response") },
		summary: func(evs []clientEvent) any { return get(evs[len(evs)-1].data, "contract") },
		ids:     func(evs []clientEvent) (ids []string) { return modelsOf(evs, "model") },
		errorOf: func(ev clientEvent) string { return text(ev.data, "error") }},
	{path: "/api/chat", answer: `{"model":"up","created_at":"t","message":{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":true,"done_reason":"stop"}`,
		textOf:  func(ev clientEvent) string { return text(ev.data, "message", "content") },
		summary: func(evs []clientEvent) any { return get(evs[len(evs)-1].data, "contract") },
		ids:     func(evs []clientEvent) (ids []string) { return modelsOf(evs, "model") },
		errorOf: func(ev clientEvent) string { return text(ev.data, "error") }},
	{path: "/v1/chat/completions", sse: true, done: true,
		answer:  `{"id":"chatcmpl-up","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":"x","tool_calls":[{"id":"call_1","index":0,"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		textOf:  func(ev clientEvent) string { return text(ev.data, "choices", 0, "delta", "content") },
		summary: summaryOfChunks,
		ids:     func(evs []clientEvent) []string { return append(modelsOf(evs, "id"), modelsOf(evs, "model")...) },
		errorOf: func(ev clientEvent) string { return text(ev.data, "error", "message") }},
	{path: "/v1/completions", sse: true, done: true,
		answer:  `{"id":"cmpl-up","object":"text_completion","created":1,"model":"up","choices":[{"text":"x","index":0,"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		textOf:  func(ev clientEvent) string { return text(ev.data, "choices", 0, "text") },
		summary: summaryOfChunks,
		ids:     func(evs []clientEvent) []string { return append(modelsOf(evs, "id"), modelsOf(evs, "model")...) },
		errorOf: func(ev clientEvent) string { return text(ev.data, "error", "message") }},
	{path: "/v1/messages", sse: true,
		answer: `{"id":"msg_up","type":"message","role":"assistant","model":"up","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}`,
		textOf: func(ev clientEvent) string {
			if text(ev.data, "delta", "type") != "text_delta" || get(ev.data, "index") != 0.0 {
				return ""
			}
			return text(ev.data, "delta", "text")
		},
		summary: func(evs []clientEvent) any { return get(evs[len(evs)-2].data, "contract") },
		ids: func(evs []clientEvent) []string {
			return []string{text(evs[0].data, "message", "id"), text(evs[0].data, "message", "model")}
		},
		errorOf: func(ev clientEvent) string {
			if ev.name != "error" {
				return ""
			}
			return text(ev.data, "error", "message")
		}},
	{path: "/v1/responses", sse: true,
		answer: `{"id":"resp_up","object":"response","created_at":1,"status":"completed","model":"up","output":[{"id":"fc","type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}","status":"completed"},{"id":"msg_up","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"x","annotations":[]}]}],"usage":{"input_tokens":1,"output_tokens":2}}`,
		textOf: func(ev clientEvent) string {
			if ev.name != "response.output_text.delta" {
				return ""
			}
			return text(ev.data, "delta")
		},
		summary: func(evs []clientEvent) any { return get(evs[len(evs)-1].data, "response", "contract") },
		ids: func(evs []clientEvent) []string {
			var ids []string
			for _, ev := range evs {
				if r := get(ev.data, "response"); r != nil {
					ids = append(ids, text(r, "id"), text(r, "model"))
				}
			}
			return ids
		},
		// The OpenAI libraries raise an event whose data has an error
		// member.
		errorOf: func(ev clientEvent) string {
			if ev.name != "error" || text(ev.data, "type") != "error" {
				return ""
			}
			return text(ev.data, "error", "message")
		}},
}

// modelsOf is member key of every event that has it.
func modelsOf(evs []clientEvent, key string) []string {
	var out []string
	for _, ev := range evs {
		if s, ok := ev.data[key].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// summaryOfChunks is the contract member of the chunk with the finish
// reason.
func summaryOfChunks(evs []clientEvent) any {
	for _, ev := range evs {
		if c := get(ev.data, "contract"); c != nil {
			return c
		}
	}
	return nil
}

// finalAnswer is the object the guard hands End: the upstream's answer
// with the whole text, the normal stop and the contract summary.
func finalAnswer(t *testing.T, cd codec.Codec, answer, text string) *strictjson.Value {
	t.Helper()
	obj, err := strictjson.Parse([]byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	obj = cd.WithText(obj, text)
	obj.Set("contract", strictjson.Object(codec.Member("status", strictjson.String("valid"))))
	return obj
}

// TestStreamWriter: the pieces "a", "b", "c" and the end, as each API's
// client reads them: the text deltas concatenate to the text (the final
// frames repeat none of it), the final frames carry the contract summary,
// every frame carries the stream's one id and the client's model, what
// the answer has besides its text (tool calls) comes through, and the
// whole stream reads back, through the codec's own reader, as the answer.
func TestStreamWriter(t *testing.T) {
	for _, tt := range writerCases {
		t.Run(tt.path, func(t *testing.T) {
			cd := codecFor(t, tt.path)
			rec := httptest.NewRecorder()
			r := &codec.Request{Model: "client-model", Stream: true, IncludeUsage: true}
			sw := cd.NewStreamWriter(rec, r)
			for _, d := range []string{"a", "b", "c"} {
				if err := sw.Text(d); err != nil {
					t.Fatal(err)
				}
			}
			obj := finalAnswer(t, cd, tt.answer, "abc")
			if err := sw.End(obj, "abc"); err != nil {
				t.Fatal(err)
			}
			if err := sw.Text("d"); !errors.Is(err, codec.ErrStreamEnded) {
				t.Errorf("Text after End = %v, want ErrStreamEnded", err)
			}
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), map[bool]string{false: "application/x-ndjson", true: "text/event-stream"}[tt.sse]) {
				t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			evs, done := clientEvents(t, body, tt.sse)
			var got strings.Builder
			for _, ev := range evs {
				got.WriteString(tt.textOf(ev))
			}
			if got.String() != "abc" {
				t.Errorf("the client's text = %q, want abc:\n%s", got.String(), body)
			}
			if done != tt.done {
				t.Errorf("[DONE] = %v, want %v", done, tt.done)
			}
			if diff := cmp.Diff(map[string]any{"status": "valid"}, tt.summary(evs)); diff != "" {
				t.Errorf("the final frames' summary (-want +got):\n%s\n%s", diff, body)
			}
			ids := tt.ids(evs)
			for i := 0; i+1 < len(ids); i += 2 {
				if ids[i] != ids[0] && ids[i] != "client-model" || ids[i+1] != "client-model" && ids[i+1] != ids[0] {
					t.Errorf("frame ids/models %v, want one id and the client's model", ids)
					break
				}
			}
			if strings.Contains(body, "_up") || strings.Contains(body, `"up"`) {
				t.Errorf("the upstream's id or model reached the stream:\n%s", body)
			}
			back, err := cd.ReadAnswer(rec.Body.Bytes())
			if err != nil {
				t.Fatalf("the stream does not read back: %v\n%s", err, body)
			}
			if back.Text != "abc" {
				t.Errorf("read back: text %q, want abc", back.Text)
			}
			if tc, ok := cd.(codec.ToolCodec); ok {
				if calls := tc.ToolCalls(back.Obj); len(calls) != 1 || calls[0].Name != "f" || calls[0].Args != `{"a":1}` {
					t.Errorf("read back: tool calls %+v, want f({\"a\":1})\n%s", calls, body)
				}
			}
		})
	}
}

// TestStreamWriterFail: a stream that fails after some text, or before
// any, ends with the API's own error frame — the one its client library
// raises, with the message and the contract report — and nothing after
// it; a stream that fails before any text still sends its headers first.
func TestStreamWriterFail(t *testing.T) {
	report := &validators.Report{Valid: false}
	e := &apierr.Error{Code: http.StatusUnprocessableEntity, Msg: "contract failed", Report: report}
	for _, tt := range writerCases {
		for _, before := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s after %d pieces", tt.path, before), func(t *testing.T) {
				cd := codecFor(t, tt.path)
				rec := httptest.NewRecorder()
				sw := cd.NewStreamWriter(rec, &codec.Request{Model: "m", Stream: true})
				for i := range before {
					if err := sw.Text(string(rune('a' + i))); err != nil {
						t.Fatal(err)
					}
				}
				if err := sw.Fail(e); err != nil {
					t.Fatal(err)
				}
				if err := sw.End(finalAnswer(t, cd, tt.answer, "ab"), "ab"); !errors.Is(err, codec.ErrStreamEnded) {
					t.Errorf("End after Fail = %v, want ErrStreamEnded", err)
				}
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") == "" {
					t.Errorf("status %d, content type %q: want the stream's headers", rec.Code, rec.Header().Get("Content-Type"))
				}
				evs, done := clientEvents(t, rec.Body.String(), tt.sse)
				if done {
					t.Errorf("a failed stream ends with [DONE]")
				}
				if before == 0 && len(evs) != 1 {
					t.Errorf("a stream failed before any text has %d events, want the error alone:\n%s", len(evs), rec.Body.String())
				}
				last := evs[len(evs)-1]
				if got := tt.errorOf(last); got != "contract failed" {
					t.Errorf("the last event's error = %q, want the message:\n%s", got, rec.Body.String())
				}
				if rep, ok := get(last.data, "contract").(map[string]any); !ok || rep["valid"] != false {
					t.Errorf("the error event carries no report: %v", last.data)
				}
				if _, err := cd.ReadAnswer(rec.Body.Bytes()); err == nil || !strings.Contains(err.Error(), "contract failed") && !errors.Is(err, codec.ErrIncomplete) {
					t.Errorf("ReadAnswer of the failed stream = %v, want its error", err)
				}
			})
		}
	}
}

// held is a response committed by keep-alives, as the guard hands it on:
// its header and status writes go nowhere.
type held struct{ *httptest.ResponseRecorder }

func (h held) Header() http.Header { return http.Header{} }
func (h held) WriteHeader(int)     {}

// TestStreamWriterAfterKeepAlives: a stream whose response the guard's
// keep-alives committed still reads as the answer — the keep-alives first,
// then the stream's own frames — with the keep-alives' headers.
func TestStreamWriterAfterKeepAlives(t *testing.T) {
	for _, tt := range writerCases {
		t.Run(tt.path, func(t *testing.T) {
			cd := codecFor(t, tt.path)
			rec := httptest.NewRecorder()
			r := &codec.Request{Model: "m", Stream: true}
			ct, ka0 := cd.KeepAlive(r, 0)
			_, ka1 := cd.KeepAlive(r, 1)
			rec.Header().Set("Content-Type", ct)
			rec.WriteHeader(http.StatusOK)
			rec.Write(append(ka0, ka1...))
			sw := cd.NewStreamWriter(held{rec}, r)
			for _, d := range []string{"a", "b"} {
				if err := sw.Text(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := sw.End(finalAnswer(t, cd, tt.answer, "ab"), "ab"); err != nil {
				t.Fatal(err)
			}
			evs, _ := clientEvents(t, rec.Body.String(), tt.sse)
			var got strings.Builder
			for _, ev := range evs {
				got.WriteString(tt.textOf(ev))
			}
			if got.String() != "ab" {
				t.Errorf("the client's text = %q, want ab:\n%s", got.String(), rec.Body.String())
			}
			// The stream's own frames read back as the answer on their
			// own (an upstream reader takes no keep-alive first).
			back, err := cd.ReadAnswer(rec.Body.Bytes()[len(ka0)+len(ka1):])
			if err != nil || back.Text != "ab" {
				t.Errorf("ReadAnswer = %v, %v; want the text ab\n%s", back, err, rec.Body.String())
			}
			if rec.Header().Get("Content-Type") != ct {
				t.Errorf("content type %q, want the keep-alives' %q", rec.Header().Get("Content-Type"), ct)
			}
		})
	}
}
