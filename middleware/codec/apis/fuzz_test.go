package apis

import (
	"testing"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// FuzzReadAnswer: reading an upstream answer (one object, NDJSON or SSE)
// never panics, and an accepted answer has an object to answer with.
func FuzzReadAnswer(f *testing.F) {
	f.Add(`{"model":"m","response":"{\"a\":1}","done":true}`)
	f.Add("{\"response\":\"{\\\"a\\\"\",\"done\":false}\n{\"response\":\":1}\",\"done\":true}\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("{\"error\":\"boom\"}\n")
	f.Add(`{"object":"text_completion","choices":[{"text":"{}","index":0,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`)
	f.Add("data: {\"choices\":[{\"text\":\"{\",\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"text\":\"}\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	f.Add(`{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"{}"}]}],"usage":{"input_tokens":1,"output_tokens":2}}`)
	f.Add("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[]}}\n\n")
	f.Add(`{"type":"message","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"{}"},{"type":"tool_use","id":"x","name":"f","input":{}}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}`)
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{}\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	f.Add(`{"type":"error","error":{"type":"api_error","message":"boom"}}`)
	f.Add(`{"message":{"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":true}`)
	f.Add(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"{\"a\":1"}}]},"finish_reason":"tool_calls"}]}`)
	f.Add(`{"output":[{"type":"function_call","name":"f","arguments":"{}"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, cd := range All() {
			a, err := cd.ReadAnswer([]byte(body))
			if err == nil && (a == nil || a.Obj == nil) {
				t.Fatalf("%s ReadAnswer(%q) accepted without an object", cd.Path(), body)
			}
			if err == nil {
				if got := cd.WithText(a.Obj, "x"); got == nil {
					t.Fatalf("%s WithText returned nil", cd.Path())
				}
				if tc, ok := cd.(codec.ToolCodec); ok {
					calls := tc.ToolCalls(a.Obj)
					args := make([]*strictjson.Value, len(calls))
					for i := range args {
						args[i] = strictjson.Object()
					}
					if got := tc.ToolCalls(tc.WithToolArgs(a.Obj, args)); len(got) != len(calls) {
						t.Fatalf("%s: %d tool calls after WithToolArgs, %d before", cd.Path(), len(got), len(calls))
					}
				}
				cd.NormalStop(a.Obj.Clone())
			}
		}
	})
}

// FuzzDecode: reading a guarded request never panics, and editing an
// accepted one always yields a body that decodes again.
func FuzzDecode(f *testing.F) {
	f.Add(`{"model":"m","prompt":"p","stream":false,"format":{"type":"object"},"options":{"temperature":1}}`)
	f.Add(`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`)
	f.Add(`{"model":1}`)
	f.Add(`{"model":"m","options":3}`)
	f.Add(`{"model":"m","prompt":"p","stream":true,"stream_options":{"include_usage":true}}`)
	f.Add(`{"model":"m","instructions":"i","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}],"text":{"format":{"type":"json_schema","schema":{}}}}`)
	f.Add(`{"model":"m","input":"x","text":3}`)
	f.Add(`{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},{"name":"g","input_schema":3},{"type":"function","name":"h"}]}`)
	f.Add(`{"model":"m","max_tokens":3,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"hi"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, cd := range All() {
			r, err := cd.Decode([]byte(body))
			if err != nil {
				continue
			}
			r.SetModel("other")
			r.SetStream(false)
			cd.SetFormat(r, strictjson.Object(codec.Member("type", strictjson.String("object"))))
			_ = cd.Prompt(r)
			if tc, ok := cd.(codec.ToolCodec); ok {
				_ = tc.Tools(r)
			}
			cd.SetTemperature(r, 0.3)
			if !cd.Temperature(r) {
				t.Fatalf("%s: no temperature after SetTemperature: %s", cd.Path(), r.Bytes())
			}
			if _, err := cd.Decode(r.Bytes()); err != nil {
				t.Fatalf("%s: edited request does not decode: %v\n%s", cd.Path(), err, r.Bytes())
			}
		}
	})
}
