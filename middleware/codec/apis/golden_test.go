//go:build unix

package apis

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/validators/strictjson"
)

var update = flag.Bool("update", false, "record the golden upstream answers of testdata/golden from a real Ollama (internal/ollamatest)")

// goldenSchema is the format of the recorded requests that take one.
const goldenSchema = `{"type":"object","properties":{"name":{"type":"string","maxLength":12}},"required":["name"]}`

// goldenCase is one recorded exchange: a request sent to Ollama as it is,
// and the file holding Ollama's answer.
type goldenCase struct {
	name string
	path string
	body string
	// stream is whether the answer is a stream; schema whether the
	// request carries goldenSchema as its format.
	stream, schema bool
}

func goldenCases() []goldenCase {
	var cs []goldenCase
	for _, stream := range []bool{false, true} {
		suffix, s := "", fmt.Sprint(stream)
		if stream {
			suffix = "_stream"
		}
		cs = append(cs,
			goldenCase{"completions" + suffix, "/v1/completions",
				`{"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0,"seed":1,"stream":` + s + `,"stream_options":{"include_usage":true}}`, stream, false},
			goldenCase{"responses" + suffix, "/v1/responses",
				`{"model":"stories","instructions":"Name a child.","input":"Tell a story","max_output_tokens":48,"temperature":0,"stream":` + s + `,"text":{"format":{"type":"json_schema","name":"child","schema":` + goldenSchema + `}}}`, stream, true},
			goldenCase{"responses_text" + suffix, "/v1/responses",
				`{"model":"stories","input":[{"role":"user","content":[{"type":"input_text","text":"Once upon a time"}]}],"max_output_tokens":24,"temperature":0,"stream":` + s + `}`, stream, false},
			goldenCase{"messages" + suffix, "/v1/messages",
				`{"model":"stories","max_tokens":24,"system":"Tell a story.","messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"stream":` + s + `}`, stream, false},
		)
	}
	return cs
}

func goldenFile(name string) string { return filepath.Join("testdata", "golden", name+".txt") }

// TestRecordGolden asks a real Ollama (internal/ollamatest; skipped
// without its binary unless CG_REQUIRE_OLLAMA=1) every golden request:
// with -update it records the answers; without, it checks that Ollama
// still answers what was recorded (text, reason and counters; ids and
// timestamps change per call).
func TestRecordGolden(t *testing.T) {
	o := ollamatest.Start(t)
	if err := os.MkdirAll(filepath.Join("testdata", "golden"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenCases() {
		resp, err := http.Post(o.URL+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v %s", tc.name, resp.StatusCode, err, body)
		}
		if !*update {
			cd := codecFor(t, tc.path)
			live, err := cd.ReadAnswer(body)
			if err != nil {
				t.Fatalf("%s: live answer: %v", tc.name, err)
			}
			rec, err := cd.ReadAnswer(readGolden(t, tc.name))
			if err != nil {
				t.Fatalf("%s: recorded answer: %v", tc.name, err)
			}
			type counters struct {
				Text, Reason string
				Output       int
			}
			if diff := cmp.Diff(counters{rec.Text, rec.DoneReason, rec.OutputTokens}, counters{live.Text, live.DoneReason, live.OutputTokens}); diff != "" {
				t.Errorf("%s: Ollama answers otherwise than recorded (-recorded +live; refresh with -update):\n%s", tc.name, diff)
			}
			continue
		}
		if err := os.WriteFile(goldenFile(tc.name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(goldenFile(name))
	if err != nil {
		t.Fatalf("%v (record with go test ./middleware/codec -run TestRecordGolden -update)", err)
	}
	return b
}

// TestGoldenAnswers reads Ollama's recorded answers: a stream assembles to
// the answer Ollama gives the same request without a stream (text, reason
// and counters), and an answer with its text replaced and encoded — one
// object or the API's stream — reads back as the same answer.
func TestGoldenAnswers(t *testing.T) {
	for _, tc := range goldenCases() {
		if tc.stream {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			cd := codecFor(t, tc.path)
			one, err := cd.ReadAnswer(readGolden(t, tc.name))
			if err != nil {
				t.Fatalf("ReadAnswer(object): %v", err)
			}
			streamed, err := cd.ReadAnswer(readGolden(t, tc.name+"_stream"))
			if err != nil {
				t.Fatalf("ReadAnswer(stream): %v", err)
			}
			if one.Text == "" {
				t.Fatal("no text in the recorded answer")
			}
			if tc.schema {
				if _, err := strictjson.Parse([]byte(one.Text)); err != nil {
					t.Errorf("text under a schema format is not JSON: %v: %s", err, one.Text)
				}
			}
			type counters struct {
				Text, Reason   string
				Prompt, Output int
			}
			got := counters{streamed.Text, streamed.DoneReason, streamed.PromptTokens, streamed.OutputTokens}
			want := counters{one.Text, one.DoneReason, one.PromptTokens, one.OutputTokens}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stream assembles to another answer (-object +stream):\n%s", diff)
			}
			if one.OutputTokens <= 0 {
				t.Errorf("output tokens = %d", one.OutputTokens)
			}
			for _, stream := range []bool{false, true} {
				obj := cd.WithText(one.Obj, `{"name":"Tim"}`)
				obj.Set("contract", strictjson.Object(codec.Member("status", strictjson.String("repaired"))))
				rec := httptest.NewRecorder()
				if err := cd.Encode(rec, &codec.Request{Stream: stream, IncludeUsage: true}, obj, `{"name":"Tim"}`); err != nil {
					t.Fatal(err)
				}
				back, err := cd.ReadAnswer(rec.Body.Bytes())
				if err != nil {
					t.Fatalf("stream=%v: encoded answer does not read back: %v\n%s", stream, err, rec.Body.Bytes())
				}
				got := counters{back.Text, back.DoneReason, back.PromptTokens, back.OutputTokens}
				want := counters{`{"name":"Tim"}`, one.DoneReason, one.PromptTokens, one.OutputTokens}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("stream=%v: encoded answer reads back as another (-want +got):\n%s\n%s", stream, diff, rec.Body.Bytes())
				}
				if !bytes.Contains(rec.Body.Bytes(), []byte(`"contract":{"status":"repaired"}`)) {
					t.Errorf("stream=%v: the contract summary is missing:\n%s", stream, rec.Body.Bytes())
				}
			}
		})
	}
}
