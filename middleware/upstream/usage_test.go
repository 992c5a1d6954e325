package upstream

import (
	"bytes"
	"strings"
	"testing"
)

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		n    int64
		want int
	}{
		{0, 0}, {-3, 0}, {1, 1}, {4, 1}, {5, 2}, {400, 100},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.n); got != tt.want {
			t.Errorf("EstimateTokens(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestPromptMeter(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int64
	}{
		{"generate", `{"model":"llama3.2","prompt":"Tell a story","stream":true}`, 12},
		{"system and options", `{"model":"m","system":"abc","prompt":"de","options":{"num_predict":5,"stop":["x"]}}`, 6},
		{"chat", `{"model":"m","messages":[{"role":"user","content":"hi there"}]}`, 12},
		{"format skipped", `{"model":"m","prompt":"p","format":{"type":"object","properties":{"name":{"type":"string"}}}}`, 1},
		{"images skipped", `{"model":"m","prompt":"p","images":["aGVsbG8gd29ybGQ="]}`, 1},
		{"openai image part skipped", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`, 4 + 4 + 4 + 9},
		{"anthropic image source skipped", `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"AAAA"}}]}]}`, 4 + 5},
		{"escapes as written", `{"prompt":"a\"b\\c\n"}`, 9},
		{"embed input", `{"model":"m","input":["abcd","efgh"]}`, 8},
		{"keys are no text", `{"a_very_long_member_name_indeed":1}`, 0},
		{"keep_alive skipped", `{"model":"m","keep_alive":"5m","prompt":"xy"}`, 2},
		{"skip ends with its value", `{"format":"json","prompt":"xy"}`, 2},
		{"not JSON", `plain text`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m PromptMeter
			for _, piece := range strings.SplitAfter(tt.body, `"`) {
				m.Write([]byte(piece))
			}
			if got := m.Bytes(); got != tt.want {
				t.Errorf("PromptMeter(%s) = %d bytes, want %d", tt.body, got, tt.want)
			}
		})
	}
}

func TestFrameCounter(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   int
	}{
		{"ndjson", "{\"response\":\"a\"}\n{\"response\":\"b\"}\n{\"done\":true}\n", 3},
		{"ndjson cut mid-line", "{\"response\":\"a\"}\n{\"response\":\"b\",\"crea", 2},
		{"too short to tell", "{\"response\":\"a\"}\n{\"res", 1},
		{"sse", "data: {\"choices\":[]}\n\ndata: {\"choices\":[]}\n\ndata: [DONE]\n\n", 2},
		{"sse with events", "event: message_start\ndata: {\"type\":\"message_start\"}\n\n: ping\n\nevent: content_block_delta\ndata:{\"type\":\"x\"}\n\n", 2},
		{"whole answer", `{"model":"m","response":"hi","done":true}`, 1},
		{"crlf", "data: {\"a\":1}\r\n\r\n", 1},
		{"none", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 3, len(tt.answer) + 1} {
				var f FrameCounter
				for b := []byte(tt.answer); len(b) > 0; {
					n := min(size, len(b))
					f.Write(b[:n])
					b = b[n:]
				}
				if got := f.Frames(); got != tt.want {
					t.Errorf("Frames(%q) in pieces of %d = %d, want %d", tt.answer, size, got, tt.want)
				}
			}
		})
	}
}

// FuzzPromptMeter checks that the measure never exceeds the body and does
// not depend on how the body is cut into writes.
func FuzzPromptMeter(f *testing.F) {
	for _, s := range []string{`{"model":"m","prompt":"p"}`, `{"format":{"a":[1,{"b":"c"}]},"x":"yy"}`, `"\\"`, `[[[[`, `}}]]"`, `{"images":["a"],"prompt":"b"}`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		var whole, pieces PromptMeter
		whole.Write(b)
		size := int(cut)%7 + 1
		for p := b; len(p) > 0; {
			n := min(size, len(p))
			pieces.Write(p[:n])
			p = p[n:]
		}
		if whole.Bytes() != pieces.Bytes() || whole.Bytes() < 0 || whole.Bytes() > int64(len(b)) {
			t.Fatalf("PromptMeter(%q) = %d whole, %d in pieces of %d", b, whole.Bytes(), pieces.Bytes(), size)
		}
	})
}

// FuzzFrameCounter checks that the count never exceeds the lines and
// does not depend on how the answer is cut into writes.
func FuzzFrameCounter(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"b\":2}\n", "data: {}\n\ndata: [DONE]\n\n", "event: x\n", "{"} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		var whole, pieces FrameCounter
		whole.Write(b)
		size := int(cut)%5 + 1
		for p := b; len(p) > 0; {
			n := min(size, len(p))
			pieces.Write(p[:n])
			p = p[n:]
		}
		if whole.Frames() != pieces.Frames() || whole.Frames() > bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("Frames(%q) = %d whole, %d in pieces of %d", b, whole.Frames(), pieces.Frames(), size)
		}
	})
}

// BenchmarkPromptMeter measures a chat body of 1 MiB of text, as the
// access check measures every model request's body on its way upstream.
func BenchmarkPromptMeter(b *testing.B) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("Once upon a time. ", 1<<20/18) + `"}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var m PromptMeter
		m.Write(body)
	}
}
