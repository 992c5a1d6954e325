package validators

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators/extract"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// updateExtract rewrites testdata/extract/*.golden. It has its own name so
// that it cannot clash with an -update flag registered by another test file
// of this package; when such a flag exists and is set, it counts too.
var updateExtract = flag.Bool("update-extract", false, "rewrite the golden files under testdata/extract/")

func updating() bool {
	if *updateExtract {
		return true
	}
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// extractGolden is what a golden file records about one raw model output.
type extractGolden struct {
	Source     string          `json:"source,omitempty"`
	Offset     int             `json:"offset"`
	Text       string          `json:"text"`
	Violation  *goldenViolated `json:"violation"`
	JSONBlocks int             `json:"json_blocks"`
	Plain      int             `json:"plain_blocks"`
	Bare       bool            `json:"bare"`
	// Parse is the strict parse of Text: null when it parses, else the
	// JSON_SYNTAX or JSON_TRUNCATED violation, so each file also shows what
	// the pipeline does next with that output.
	Parse *goldenViolated `json:"parse"`
}

type goldenViolated struct {
	Code     string `json:"code"`
	Path     string `json:"path,omitempty"`
	Expected any    `json:"expected"`
	Actual   any    `json:"actual"`
	Hint     string `json:"hint"`
}

func goldenOf(v Violation) *goldenViolated {
	return &goldenViolated{Code: v.Code, Path: v.Path, Expected: v.Expected, Actual: v.Actual, Hint: v.Hint}
}

// TestExtractGolden runs Extract over the raw model outputs in
// testdata/extract/*.txt and compares the result with NAME.golden.
// Refresh with: go test ./validators -run ExtractGolden -update-extract
func TestExtractGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "extract", "*.txt"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs under testdata/extract: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".txt")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			ex, viol := Extract(text)
			stripped := extract.StripThink(text)
			js, plain, bare := Candidates(stripped)
			got := extractGolden{
				Source: ex.Source, Offset: ex.Offset, Text: ex.Text,
				JSONBlocks: len(js), Plain: len(plain), Bare: bare != nil,
			}
			if viol != nil {
				got.Violation = goldenOf(*viol)
			} else {
				if stripped[ex.Offset:ex.Offset+len(ex.Text)] != ex.Text {
					t.Errorf("Extract: Text is not at Offset %d of the stripped text", ex.Offset)
				}
				if _, err := strictjson.Parse([]byte(ex.Text)); err != nil {
					got.Parse = goldenOf(ParseViolation(err))
				}
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".txt") + ".golden"
			if updating() {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-extract to create it)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("Extract(%s) mismatch (-want +got):\n%s", in, diff)
			}
		})
	}
}

func TestCandidates(t *testing.T) {
	type cand struct {
		Text   string
		Offset int
		Source string
	}
	conv := func(xs []Extraction) []cand {
		var out []cand
		for _, x := range xs {
			out = append(out, cand(x))
		}
		return out
	}
	tests := []struct {
		name  string
		in    string
		json  []cand
		plain []cand
		bare  *cand
	}{
		{"json block", "x\n```json\n{}\n```\n", []cand{{"{}", 10, SourceFenceJSON}}, nil, nil},
		{"tag with trailing spaces and words", "```Json  title=q.json\n[1]\n```", []cand{{"[1]", 22, SourceFenceJSON}}, nil, &cand{"```Json  title=q.json\n[1]\n```", 0, ""}},
		{"plain block", "```\n{\"a\":1}\n```", nil, []cand{{`{"a":1}`, 4, SourceFencePlain}}, nil},
		{"other tags ignored", "```python\nx = {}\n```\n```jsonc\n{}\n```\n```json5\n{}\n```", nil, nil, nil},
		{"block inside other block is not counted", "````markdown\n```json\n{}\n```\n````", nil, nil, nil},
		{"longer closing fence", "```json\n{}\n`````\n", []cand{{"{}", 8, SourceFenceJSON}}, nil, nil},
		{"shorter fence does not close", "````json\n{\"a\": \"\n```\n\"}\n````", []cand{{"{\"a\": \"\n```\n\"}", 9, SourceFenceJSON}}, nil, nil},
		{"fence with info does not close", "```json\n[1,\n```python\n2]\n```", []cand{{"[1,\n```python\n2]", 8, SourceFenceJSON}}, nil, nil},
		{"unclosed block", "```json\n{\"a\": [1,", []cand{{"{\"a\": [1,", 8, SourceFenceJSON}}, nil, nil},
		{"unclosed empty block", "```json", []cand{{"", 7, SourceFenceJSON}}, nil, nil},
		{"empty block", "```json\n```", []cand{{"", 8, SourceFenceJSON}}, nil, nil},
		{"fence in JSON string does not close", "```json\n{\"q\": \"1. x\\n```python\\n1: a\\n```\"}\n```", []cand{{"{\"q\": \"1. x\\n```python\\n1: a\\n```\"}", 8, SourceFenceJSON}}, nil, nil},
		{"mid-line json fence", "Here: ```json\n{}\n```", []cand{{"{}", 14, SourceFenceJSON}}, nil, nil},
		{"mid-line fence with other text is prose", "Use ``` to fence code and ```json to tag it.", nil, nil, nil},
		{"single-line fence", "A: ```json {\"a\":1}``` ok", []cand{{`{"a":1}`, 11, SourceFenceJSON}}, nil, nil},
		{"single-line untagged fence", "```[1, 2]```", nil, []cand{{"[1, 2]", 3, SourceFencePlain}}, nil},
		{"bare object", "  {\"a\": 1}\n", nil, nil, &cand{`{"a": 1}`, 2, SourceBare}},
		{"bare number", "42", nil, nil, &cand{"42", 0, SourceBare}},
		{"bare literal", " null ", nil, nil, &cand{"null", 1, SourceBare}},
		{"prose is not bare", "true story: it failed", nil, nil, nil},
		{"broken object is still bare", "{\"a\": 1,}", nil, nil, &cand{"{\"a\": 1,}", 0, SourceBare}},
		{"empty", "", nil, nil, nil},
		{"byte order mark before bare JSON", "\uFEFF{\"a\": 1}", nil, nil, &cand{"\uFEFF{\"a\": 1}", 0, SourceBare}},
		{"byte order mark before a bare scalar", "\uFEFF 42", nil, nil, &cand{"\uFEFF 42", 0, SourceBare}},
		{"byte order mark before a plain fence", "\uFEFF```\n{}\n```", nil, []cand{{"{}", 7, SourceFencePlain}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, plain, bare := Candidates(tt.in)
			if diff := cmp.Diff(tt.json, conv(js)); diff != "" {
				t.Errorf("Candidates(%q) json mismatch (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.plain, conv(plain)); diff != "" {
				t.Errorf("Candidates(%q) plain mismatch (-want +got):\n%s", tt.in, diff)
			}
			var gotBare *cand
			if bare != nil {
				c := cand(*bare)
				gotBare = &c
			}
			if tt.bare != nil && tt.bare.Source == "" {
				// The row only says that some bare candidate exists.
				tt.bare = gotBare
			}
			if diff := cmp.Diff(tt.bare, gotBare); diff != "" {
				t.Errorf("Candidates(%q) bare mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestExtractViolations(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Violation
	}{
		{"nothing", "No JSON here.", Violation{
			Class: ClassParse, Code: "NO_JSON_BLOCK", Severity: SeverityError,
			Expected: 1, Actual: 0,
			Hint: "Return exactly one ```json code block containing the whole JSON document.",
		}},
		{"only a think section", "<think>\n{\"a\": 1}\n</think>\n", Violation{
			Class: ClassParse, Code: "NO_JSON_BLOCK", Severity: SeverityError,
			Expected: 1, Actual: 0,
			Hint: "Return exactly one ```json code block containing the whole JSON document.",
		}},
		{"three json blocks", "```json\n1\n```\n```json\n2\n```\n```json\n3\n```\n```\n4\n```", Violation{
			Class: ClassParse, Code: "MULTIPLE_JSON_BLOCKS", Severity: SeverityError,
			Expected: 1, Actual: 3,
			Hint: "Return exactly one ```json code block containing the whole JSON document, not 3 ```json blocks.",
		}},
		{"two plain blocks", "```\n1\n```\n```\n2\n```", Violation{
			Class: ClassParse, Code: "MULTIPLE_JSON_BLOCKS", Severity: SeverityError,
			Expected: 1, Actual: 2,
			Hint: "Return exactly one ```json code block containing the whole JSON document, not 2 ``` blocks.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, v := Extract(tt.in)
			if v == nil {
				t.Fatalf("Extract(%q) = %+v, nil; want a violation", tt.in, ex)
			}
			if diff := cmp.Diff(tt.want, *v, cmp.AllowUnexported(Violation{})); diff != "" {
				t.Errorf("Extract(%q) violation mismatch (-want +got):\n%s", tt.in, diff)
			}
			if ex != (Extraction{}) {
				t.Errorf("Extract(%q) = %+v with a violation, want the zero Extraction", tt.in, ex)
			}
		})
	}
}

// TestValidateByteOrderMark: a file saved with a byte order mark holds
// JSON; the report names the mark (JSON_SYNTAX at 1:1), it does not claim
// that there is no JSON at all.
func TestValidateByteOrderMark(t *testing.T) {
	v := schemaValidator(t, `{"type":"object"}`)
	tests := []struct {
		name string
		in   string
		want brief
	}{
		{"bare object", "\uFEFF{\"a\": 1}\n", brief{Code: "JSON_SYNTAX", Path: "1:1", Expected: "value", Actual: `\ufeff`}},
		{"bare object, CRLF", "\uFEFF{\r\n  \"a\": 1\r\n}\r\n", brief{Code: "JSON_SYNTAX", Path: "1:1", Expected: "value", Actual: `\ufeff`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := v.Validate(tt.in, Params{})
			if diff := cmp.Diff([]brief{tt.want}, briefs(res.Report)); diff != "" {
				t.Errorf("Validate(%q) violations (-want +got):\n%s", tt.in, diff)
			}
			if got := res.Report.Violations[0].Hint; got != "Remove the byte order mark at the start of the document." {
				t.Errorf("Validate(%q) hint = %q", tt.in, got)
			}
		})
	}
}

func TestExtractPreference(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantText   string
		wantSource string
	}{
		{"json block beats plain block", "```\nplain\n```\n```json\n{\"j\":1}\n```", `{"j":1}`, SourceFenceJSON},
		{"json block beats two plain blocks", "```\n1\n```\n```\n2\n```\n```json\n3\n```", "3", SourceFenceJSON},
		{"plain block beats bare", "{\"bare\": 1}\n```\n{\"plain\": 1}\n```", `{"plain": 1}`, SourceFencePlain},
		{"bare last", "\n{\"bare\": 1}\n", `{"bare": 1}`, SourceBare},
		{"think removed before counting", "<think>\n```json\n{\"draft\":1}\n```\n</think>\n```json\n{\"final\":1}\n```", `{"final":1}`, SourceFenceJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, v := Extract(tt.in)
			if v != nil {
				t.Fatalf("Extract(%q) violation %s", tt.in, v.Code)
			}
			if ex.Text != tt.wantText || ex.Source != tt.wantSource {
				t.Errorf("Extract(%q) = %q from %s, want %q from %s", tt.in, ex.Text, ex.Source, tt.wantText, tt.wantSource)
			}
		})
	}
}

// FuzzExtract checks that extraction never panics, is deterministic, and
// that every candidate's Text sits at its Offset.
func FuzzExtract(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "extract", "*.txt"))
	for _, in := range inputs {
		if raw, err := os.ReadFile(in); err == nil {
			f.Add(string(raw))
		}
	}
	for _, s := range []string{
		"", "```", "````", "```json", "```json\n", "```\n```", "``````", "```json```", "```json {```",
		"<think>", "</think>", "<think></think>", "<think>\n```json\n{}\n```", "x</think>\n```json\n{}\n```",
		"```json\n{}\n```\n```json\n[]\n```", " ``` json\n{}\n```", "\n```JSON\r\n{}\r\n```\r\n",
		"```json\n\"\xff\"\n```", "{\"a\":\"<think>\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ex, v := Extract(text)
		ex2, v2 := Extract(text)
		if ex != ex2 || !reflect.DeepEqual(v, v2) {
			t.Fatalf("Extract(%q) is not deterministic: %+v %+v / %+v %+v", text, ex, v, ex2, v2)
		}
		stripped := extract.StripThink(text)
		if len(stripped) > len(text) {
			t.Fatalf("extract.StripThink(%q) grew the text to %q", text, stripped)
		}
		js, plain, bare := Candidates(stripped)
		all := append(append([]Extraction{}, js...), plain...)
		if bare != nil {
			all = append(all, *bare)
		}
		for _, c := range all {
			if c.Offset < 0 || c.Offset+len(c.Text) > len(stripped) || stripped[c.Offset:c.Offset+len(c.Text)] != c.Text {
				t.Fatalf("Candidates(%q): %+v is not at its offset", stripped, c)
			}
		}
		if v != nil {
			if v.Code != "NO_JSON_BLOCK" && v.Code != "MULTIPLE_JSON_BLOCKS" {
				t.Fatalf("Extract(%q) violation code %q", text, v.Code)
			}
			if ex != (Extraction{}) {
				t.Fatalf("Extract(%q) returned %+v with a violation", text, ex)
			}
			return
		}
		if ex.Source == "" || stripped[ex.Offset:ex.Offset+len(ex.Text)] != ex.Text {
			t.Fatalf("Extract(%q) = %+v is not a candidate of the stripped text", text, ex)
		}
	})
}
