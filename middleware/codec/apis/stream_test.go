package apis

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/codec"
)

// readPieces reads body through cd's StreamReader in pieces of n bytes
// and returns the answer and the text the pieces completed.
func readPieces(cd codec.Codec, body string, n int) (*codec.Answer, string, error) {
	rd := cd.NewStreamReader()
	var deltas strings.Builder
	for len(body) > 0 {
		k := min(n, len(body))
		d, err := rd.Feed([]byte(body[:k]))
		if err != nil {
			return nil, deltas.String(), err
		}
		deltas.WriteString(d)
		body = body[k:]
	}
	a, err := rd.Close()
	return a, deltas.String(), err
}

// answerSummary is what must agree between an answer read whole and read
// as it arrives.
type answerSummary struct {
	Text, Reason   string
	Prompt, Output int
	Calls          int
}

func summarize(cd codec.Codec, a *codec.Answer) answerSummary {
	s := answerSummary{Text: a.Text, Reason: a.DoneReason, Prompt: a.PromptTokens, Output: a.OutputTokens}
	if tc, ok := cd.(codec.ToolCodec); ok {
		s.Calls = len(tc.ToolCalls(a.Obj))
	}
	return s
}

// TestStreamReaderGolden reads Ollama's recorded streams (and answers
// without a stream) as they arrive, in pieces of every size from one
// byte: the answer is the one ReadAnswer makes of the whole body, and the
// text the pieces complete is the answer's text.
func TestStreamReaderGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			cd := codecFor(t, tc.path)
			body := string(readGolden(t, tc.name))
			want, err := cd.ReadAnswer([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 2, 7, 64, 1 << 20} {
				got, deltas, err := readPieces(cd, body, n)
				if err != nil {
					t.Fatalf("pieces of %d: %v", n, err)
				}
				if diff := cmp.Diff(summarize(cd, want), summarize(cd, got)); diff != "" {
					t.Errorf("pieces of %d: answer (-whole +streamed):\n%s", n, diff)
				}
				if tc.stream && deltas != want.Text {
					t.Errorf("pieces of %d: deltas %q, want the text %q", n, deltas, want.Text)
				}
			}
		})
	}
}

// streams are upstream answers of each API, as Ollama streams them.
var streams = []struct {
	name, path, body, text string
}{
	{"generate", "/api/generate",
		"{\"model\":\"m\",\"response\":\"{\\\"a\\\"\",\"thinking\":\"hm\",\"done\":false}\n{\"model\":\"m\",\"response\":\":1}\",\"done\":false}\n{\"model\":\"m\",\"response\":\"\",\"done\":true,\"done_reason\":\"stop\",\"eval_count\":2,\"prompt_eval_count\":5}\n",
		`{"a":1}`},
	{"chat with a tool call", "/api/chat",
		"{\"message\":{\"role\":\"assistant\",\"content\":\"{\\\"a\\\"\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"x\":1}}}]},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\":1}\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"eval_count\":3}\n",
		`{"a":1}`},
	{"chat completion", "/v1/chat/completions",
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"{\\\"a\\\"\"},\"finish_reason\":null}]}\n\ndata: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]},\"finish_reason\":null}]}\n\ndata: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":null}]}\n\ndata: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\":1}\"},\"finish_reason\":\"stop\"}]}\n\ndata: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n",
		`{"a":1}`},
}

// TestStreamReaderAssembles checks that a stream reads as the answer
// Ollama gives without a stream: the whole text, thinking and tool calls
// in the final object, the counters of the final chunk.
func TestStreamReaderAssembles(t *testing.T) {
	for _, tt := range streams {
		t.Run(tt.name, func(t *testing.T) {
			cd := codecFor(t, tt.path)
			got, deltas, err := readPieces(cd, tt.body, 3)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != tt.text || deltas != tt.text {
				t.Errorf("text %q, deltas %q, want %q", got.Text, deltas, tt.text)
			}
			whole, err := cd.ReadAnswer([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(summarize(cd, whole), summarize(cd, got)); diff != "" {
				t.Errorf("answer (-whole +streamed):\n%s", diff)
			}
			if tc, ok := cd.(codec.ToolCodec); ok {
				calls := tc.ToolCalls(got.Obj)
				if len(calls) != 1 || calls[0].Name != "f" || calls[0].Args != `{"x":1}` {
					t.Errorf("tool calls = %+v, want f({\"x\":1})", calls)
				}
			}
		})
	}
}

// TestStreamReaderStop checks the answer of a stream the guard stopped
// once the text was complete: the text read, a normal stop, the chunks
// read as output tokens; and that a stream stopped before any chunk, or
// ended early without a stop, is an error.
func TestStreamReaderStop(t *testing.T) {
	cut := []struct {
		name, path, body, reason string
	}{
		{"generate", "/api/generate", "{\"model\":\"m\",\"response\":\"{\\\"a\\\"\",\"done\":false}\n{\"model\":\"m\",\"response\":\":1}\",\"done\":false}\n{\"model\":\"m\",\"resp", "stop"},
		{"chat", "/api/chat", "{\"message\":{\"role\":\"assistant\",\"content\":\"{\\\"a\\\"\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\":1}\"},\"done\":false}\n", "stop"},
		{"chat completion", "/v1/chat/completions", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"a\\\"\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\":1}\"},\"finish_reason\":null}]}\n\n", "stop"},
		{"completion", "/v1/completions", "data: {\"choices\":[{\"index\":0,\"text\":\"{\\\"a\\\"\",\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"text\":\":1}\",\"finish_reason\":null}]}\n\n", "stop"},
		{"responses", "/v1/responses", "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"{\\\"a\\\"\"}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\":1}\"}\n\n", ""},
		{"messages", "/v1/messages", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":4}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{\\\"a\\\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\":1}\"}}\n\n", "end_turn"},
	}
	for _, tt := range cut {
		t.Run(tt.name, func(t *testing.T) {
			cd := codecFor(t, tt.path)
			rd := cd.NewStreamReader()
			deltas, err := rd.Feed([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if deltas != `{"a":1}` {
				t.Errorf("deltas %q", deltas)
			}
			a, err := rd.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != `{"a":1}` || a.DoneReason != tt.reason || a.OutputTokens != 2 {
				t.Errorf("stopped answer: text %q, reason %q, output tokens %d; want the text, %q, 2", a.Text, a.DoneReason, a.OutputTokens, tt.reason)
			}
			if _, err := codecFor(t, tt.path).NewStreamReader().Stop(); !errors.Is(err, codec.ErrIncomplete) {
				t.Errorf("Stop before any chunk = %v, want ErrIncomplete", err)
			}
			if _, _, err := readPieces(cd, tt.body, 5); err == nil {
				t.Error("Close of a cut stream succeeded, want an error")
			}
		})
	}
}

// FuzzStreamReader: reading an answer as it arrives, in pieces split
// anywhere, never panics and agrees with ReadAnswer on the whole body:
// both accept it or both refuse it, with the same text, reason, counters
// and tool calls.
func FuzzStreamReader(f *testing.F) {
	for _, s := range streams {
		f.Add(s.body, uint8(3))
	}
	f.Add(`{"model":"m","response":"{}","done":true}`, uint8(1))
	f.Add("{\n\"response\":\"{}\",\n\"done\":true}\n", uint8(2))
	f.Add("  data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}]}\n\ndata: [DONE]\n\ndata: junk\n", uint8(4))
	f.Add(`{"object":"response","status":"completed","output":[]}`, uint8(9))
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\ndata: junk", uint8(6))
	f.Add("dat", uint8(1))
	f.Add("", uint8(1))
	f.Fuzz(func(t *testing.T, body string, n uint8) {
		size := int(n)%32 + 1
		for _, cd := range All() {
			want, werr := cd.ReadAnswer([]byte(body))
			got, _, gerr := readPieces(cd, body, size)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s: ReadAnswer error %v, streamed in pieces of %d error %v", cd.Path(), werr, size, gerr)
			}
			if werr != nil {
				continue
			}
			if diff := cmp.Diff(summarize(cd, want), summarize(cd, got)); diff != "" {
				t.Fatalf("%s: pieces of %d: answer (-whole +streamed):\n%s", cd.Path(), size, diff)
			}
		}
	})
}

// TestIncomplete checks each API's assembler through its codec: a stream
// that ends before its API's end is incomplete, the same events stopped
// by the guard make an answer, and the text of each event comes back as
// it is read.
func TestIncomplete(t *testing.T) {
	tests := []struct {
		name, path, body, text string
	}{
		{"generate", "/api/generate", "{\"response\":\"{}\",\"done\":false}\n", "{}"},
		{"chat completion", "/v1/chat/completions", "data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}]}\n\n", "{}"},
		{"messages", "/v1/messages", "data: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{}\"}}\n\n", "{}"},
		{"responses", "/v1/responses", "data: {\"type\":\"response.created\",\"response\":{}}\n\n" +
			"data: {\"type\":\"response.output_text.delta\",\"delta\":\"{}\"}\n\n", "{}"},
	}
	for _, tt := range tests {
		for _, stopped := range []bool{false, true} {
			rd := codecFor(t, tt.path).NewStreamReader()
			text, err := rd.Feed([]byte(tt.body))
			if err != nil {
				t.Fatalf("%s: Feed = %v", tt.name, err)
			}
			if text != tt.text {
				t.Errorf("%s: deltas %q, want %q", tt.name, text, tt.text)
			}
			end := rd.Close
			if stopped {
				end = rd.Stop
			}
			_, err = end()
			if stopped != (err == nil) || (!stopped && !errors.Is(err, codec.ErrIncomplete)) {
				t.Errorf("%s: end of the stream (stopped %v) = %v, want ErrIncomplete only when not stopped", tt.name, stopped, err)
			}
		}
	}
}

// TestReadAnswerEndsAtTheLastEvent reads the recorded Messages and
// Responses streams whole with an event after their last (message_stop,
// response.completed) that is not even JSON: the answer is the one
// without it, since nothing after the last event is read.
func TestReadAnswerEndsAtTheLastEvent(t *testing.T) {
	tests := []struct{ name, path string }{
		{"messages_stream", "/v1/messages"},
		{"responses_stream", "/v1/responses"},
		{"responses_text_stream", "/v1/responses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cd := codecFor(t, tt.path)
			body := readGolden(t, tt.name)
			want, err := cd.ReadAnswer(body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cd.ReadAnswer(append(body, "event: late\ndata: {not json\n\n"...))
			if err != nil {
				t.Fatalf("ReadAnswer(stream + a late event) = %v, want the answer without it", err)
			}
			if diff := cmp.Diff(summarize(cd, want), summarize(cd, got)); diff != "" {
				t.Errorf("answer (-without +with the late event):\n%s", diff)
			}
		})
	}
}
