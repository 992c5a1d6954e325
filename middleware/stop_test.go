package middleware

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGuardedAnswerStopsNormally: an answer the guard brought into
// contract ends with the API's normal stop, and its contract summary keeps
// the upstream's own reason as done_reason_upstream; an answer that
// stopped normally gets none.
func TestGuardedAnswerStopsNormally(t *testing.T) {
	tests := []struct {
		name, path, upstream, body string
		// stop is the pointer of the stop reason in the answer, want its
		// value; upstream the summary's done_reason_upstream.
		stop, want, wantUpstream string
	}{
		{"generate cut", "/api/generate",
			`{"model":"m","response":"{\"a\":1}","done":true,"done_reason":"length"}`,
			`{"model":"m","prompt":"p","stream":false}`, "done_reason", "stop", "length"},
		{"chat stopped", "/api/chat",
			`{"model":"m","message":{"role":"assistant","content":"{\"a\":1}"},"done":true,"done_reason":"stop"}`,
			`{"model":"m","messages":[{"role":"user","content":"p"}],"stream":false}`, "done_reason", "stop", ""},
		{"openai chat cut", "/v1/chat/completions",
			`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"length"}]}`,
			`{"model":"m","messages":[{"role":"user","content":"p"}]}`, "finish_reason", "stop", "length"},
		{"messages cut", "/v1/messages",
			`{"id":"m","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"{\"a\":1}"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":2}}`,
			`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"p"}]}`, "stop_reason", "end_turn", "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := mount(t, upstreamObject(t, tt.upstream).URL, nil)
			resp, b := postJSONContract(t, gw.URL+tt.path, tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			var got struct {
				DoneReason string `json:"done_reason"`
				StopReason string `json:"stop_reason"`
				Choices    []struct {
					FinishReason string `json:"finish_reason"`
				}
				Contract struct {
					DoneReasonUpstream string `json:"done_reason_upstream"`
				}
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("answer %s: %v", b, err)
			}
			stop := map[string]string{"done_reason": got.DoneReason, "stop_reason": got.StopReason}
			if len(got.Choices) > 0 {
				stop["finish_reason"] = got.Choices[0].FinishReason
			}
			type ends struct{ Stop, Upstream string }
			if diff := cmp.Diff(ends{tt.want, tt.wantUpstream}, ends{stop[tt.stop], got.Contract.DoneReasonUpstream}); diff != "" {
				t.Errorf("%s answer %s (-want +got):\n%s", tt.path, b, diff)
			}
		})
	}
}
