package apis

import "testing"

// TestOpenAIAnswerErrors: the chat completion and completion codecs read
// an upstream's error alike, whole or streamed: an error member that is an
// object with a message or Ollama's plain string is the upstream's error,
// a null one is none.
func TestOpenAIAnswerErrors(t *testing.T) {
	tests := []struct {
		path, body string
		// wantErr is the error's text, "" for an answer read.
		wantErr, wantText string
	}{
		{"/v1/chat/completions", `{"error":{"message":"boom"}}`, "upstream: boom", ""},
		{"/v1/chat/completions", `{"error":"boom"}`, "upstream: boom", ""},
		{"/v1/chat/completions", `{"choices":[{"message":{"content":"{}"},"finish_reason":"stop"}],"error":null}`, "", "{}"},
		{"/v1/chat/completions", "data: {\"choices\":[{\"delta\":{\"content\":\"{\"}}]}\n\ndata: {\"error\":{\"message\":\"boom\"}}\n\ndata: [DONE]\n\n", "upstream: boom", ""},
		{"/v1/chat/completions", "data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}],\"error\":null}\n\ndata: [DONE]\n\n", "", "{}"},
		{"/v1/completions", `{"error":{"message":"boom"}}`, "upstream: boom", ""},
		{"/v1/completions", `{"error":"boom"}`, "upstream: boom", ""},
		{"/v1/completions", `{"choices":[{"text":"{}","finish_reason":"stop"}],"error":null}`, "", "{}"},
		{"/v1/completions", "data: {\"choices\":[{\"text\":\"{\"}]}\n\ndata: {\"error\":\"boom\"}\n\ndata: [DONE]\n\n", "upstream: boom", ""},
	}
	for _, tt := range tests {
		a, err := codecFor(t, tt.path).ReadAnswer([]byte(tt.body))
		gotErr, gotText := "", ""
		if err != nil {
			gotErr = err.Error()
		} else {
			gotText = a.Text
		}
		if gotErr != tt.wantErr || gotText != tt.wantText {
			t.Errorf("%s ReadAnswer(%s) = %q, %q; want %q, %q", tt.path, tt.body, gotText, gotErr, tt.wantText, tt.wantErr)
		}
	}
}
