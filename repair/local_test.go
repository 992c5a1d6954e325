package repair

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/repair/syntax"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func mcqValidator(t testing.TB) *validators.Validator {
	t.Helper()
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// validMCQ is the valid fixture's JSON text, re-serialised canonically.
func validMCQ(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../contracts/builtin/mcq/testdata/valid_fenced_model_output.txt")
	if err != nil {
		t.Fatal(err)
	}
	ex, viol := validators.Extract(string(b))
	if viol != nil {
		t.Fatal(viol.Code)
	}
	doc, err := strictjson.Parse([]byte(ex.Text))
	if err != nil {
		t.Fatal(err)
	}
	return string(strictjson.Marshal(doc))
}

// TestLocalFixesDerivableFaults breaks one derivable rule of a valid MCQ
// document per row and expects local repair to restore exactly the valid
// document, with the fault's fixer in the change log and no model call.
func TestLocalFixesDerivableFaults(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	tests := []struct {
		name, from, to, fixer string
	}{
		{"question count", `"question_count":3`, `"question_count":5`, "derive:question_count_mismatch"},
		{"profile mismatch", `"difficulty_profile":{"easy":1,"medium":1,"hard":1}`, `"difficulty_profile":{"easy":2,"medium":0,"hard":1}`, "derive:difficulty_profile_mismatch"},
		{"profile count missing", `"difficulty_profile":{"easy":1,"medium":1,"hard":1}`, `"difficulty_profile":{"easy":1,"medium":1}`, "derive:difficulty_profile_mismatch"},
		{"test duration", `"test_duration_minutes":11`, `"test_duration_minutes":30`, "derive:test_duration_mismatch"},
		{"question id", `"question_id":"Q002"`, `"question_id":"Q2"`, "derive:question_id_sequence"},
		{"question id duplicate", `"question_id":"Q002"`, `"question_id":"Q001"`, "derive:question_id_duplicate"},
		{"numbering", `"question":"1. Which keyword`, `"question":"Q1) Which keyword`, "derive:question_numbering"},
		{"numbering missing", `"question":"1. Which keyword`, `"question":"Which keyword`, "derive:question_numbering"},
		{"cognitive level", `"cognitive_level":"Reproduction"`, `"cognitive_level":"Recall"`, "derive:cognitive_level_mismatch"},
		{"string number", `"answer":0,`, `"answer":"0",`, "coerce"},
		{"profile sum", `"difficulty_profile":{"easy":1,"medium":1,"hard":1}`, `"difficulty_profile":{"easy":1,"medium":1,"hard":2}`, "derive:difficulty_profile"},
		{"weight from cognitive level", `"weight":1,`, `"weight":7,`, "derive:weight_invalid"},
		{"extended explanation of an easy question", `"extended_explanation":null`, `"extended_explanation":{"title":"t","steps":["a","b"],"content":"c"}`, "derive:extended_explanation_not_null"},
		{"code line numbers", `1: xs = [3, 1, 2]\n2: ys = sorted(xs)\n3: print(xs, ys)`, `xs = [3, 1, 2]\nys = sorted(xs)\nprint(xs, ys)`, "derive:code_line_numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(valid, tt.from) {
				t.Fatalf("fixture lacks %s", tt.from)
			}
			broken := strings.Replace(valid, tt.from, tt.to, 1)
			res := Local(v, broken, params)
			if !res.Report.Valid {
				t.Fatalf("Local(%s) still invalid: %v", tt.name, res.Report.Codes())
			}
			if diff := cmp.Diff(valid, string(strictjson.Marshal(res.Doc))); diff != "" {
				t.Errorf("Local(%s) document (-want +got):\n%s", tt.name, diff)
			}
			var fixers []string
			for _, c := range res.Changes {
				fixers = append(fixers, c.Fixer)
			}
			if !strings.Contains(strings.Join(fixers, " "), tt.fixer) {
				t.Errorf("Local(%s) fixers = %v, want %s", tt.name, fixers, tt.fixer)
			}
		})
	}
}

func TestLocalValidIsNoOp(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	res := Local(v, valid, params)
	if !res.Report.Valid || len(res.Changes) != 0 || string(strictjson.Marshal(res.Doc)) != valid {
		t.Errorf("Local(valid) = valid %v, %d changes", res.Report.Valid, len(res.Changes))
	}
}

// TestLocalNeverOverridesParams: a question count the caller asked for is
// not derivable from the document; local repair must leave it to the model.
func TestLocalNeverOverridesParams(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, err := v.Params(validators.Params{"question_count": "4"})
	if err != nil {
		t.Fatal(err)
	}
	res := Local(v, valid, params)
	if res.Report.Valid {
		t.Fatal("a document with 3 questions is valid for question_count=4")
	}
	if got := res.Report.Codes(); !strings.Contains(strings.Join(got, ","), "QUESTION_COUNT_MISMATCH") {
		t.Errorf("codes = %v, want QUESTION_COUNT_MISMATCH", got)
	}
}

func TestLocalContentFaultsStay(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	broken := strings.Replace(valid, `"answer":0,`, `"answer":9,`, 1)
	res := Local(v, broken, params)
	if res.Report.Valid || res.Report.Violations[0].Code != "ANSWER_RANGE" {
		t.Errorf("content fault: valid %v codes %v", res.Report.Valid, res.Report.Codes())
	}
}

func TestLocalTruncatedNeverValid(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	res := Local(v, valid[:len(valid)/2], params)
	if res.Report.Valid || !res.Truncated || res.Doc != nil {
		t.Fatalf("truncated: valid %v truncated %v doc %v", res.Report.Valid, res.Truncated, res.Doc != nil)
	}
	if res.Report.Violations[0].Code != "JSON_TRUNCATED" {
		t.Errorf("codes = %v, want JSON_TRUNCATED", res.Report.Codes())
	}
}

func TestLocalChoosesTheValidBlock(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	text := "First draft:\n```json\n{\"meta\": {}}\n```\nFinal:\n```json\n" + valid + "\n```"
	res := Local(v, text, params)
	if !res.Report.Valid || string(strictjson.Marshal(res.Doc)) != valid {
		t.Fatalf("two blocks: valid %v codes %v", res.Report.Valid, res.Report.Codes())
	}
	if want := []Change{{Path: "", Before: 2, After: 2, Fixer: FixChooseBlock}}; !cmp.Equal(want, res.Changes) {
		t.Errorf("two blocks: changes %v, want %v", res.Changes, want)
	}
}

// TestLocalTakesTheLastValidBlock checks the draft-then-correction case:
// when several blocks validate, the last one is the answer; only when none
// does the text stay MULTIPLE_JSON_BLOCKS.
func TestLocalTakesTheLastValidBlock(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	corrected := strings.Replace(valid, `"title":"`, `"title":"Corrected: `, 1)
	tests := []struct {
		name, text string
		want       string // the document taken, "" for none
		wantCode   string
	}{
		{"first attempt, corrected version", "First attempt:\n```json\n" + valid + "\n```\nCorrected version:\n```json\n" + corrected + "\n```", corrected, ""},
		{"the same block twice", "```json\n" + valid + "\n```\n```json\n" + valid + "\n```", valid, ""},
		{"a valid block before a broken one", "```json\n" + valid + "\n```\n```json\n{\"meta\": {}}\n```", valid, ""},
		{"no block validates", "```json\n{\"meta\": {}}\n```\n```json\n{\"questions\": []}\n```", "", "MULTIPLE_JSON_BLOCKS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Local(v, tt.text, params)
			got := ""
			if res.Report.Valid {
				got = string(strictjson.Marshal(res.Doc))
			}
			if got != tt.want {
				t.Errorf("Local() took %.60q…, want %.60q…", got, tt.want)
			}
			if fixable := res.Before.Violations[0].Fixable; fixable != (tt.want != "") {
				t.Errorf("Local().Before MULTIPLE_JSON_BLOCKS fixable = %v, want %v", fixable, tt.want != "")
			}
			if tt.wantCode != "" && (len(res.Report.Violations) == 0 || res.Report.Violations[0].Code != tt.wantCode) {
				t.Errorf("Local() codes %v, want %s", res.Report.Codes(), tt.wantCode)
			}
		})
	}
}

func TestLocalUnwrapsStringifiedDocument(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	quoted, _ := json.Marshal(valid)
	res := Local(v, string(quoted), params)
	if !res.Report.Valid || string(strictjson.Marshal(res.Doc)) != valid {
		t.Fatalf("stringified document: valid %v codes %v", res.Report.Valid, res.Report.Codes())
	}
	// A plain string stays what it is: nothing to unwrap, the schema says why.
	res = Local(v, `"just a sentence"`, params)
	if res.Report.Valid || res.Doc == nil || res.Report.Violations[0].Code != "SCHEMA_TYPE" {
		t.Errorf("plain string: valid %v doc %v codes %v", res.Report.Valid, res.Doc != nil, res.Report.Codes())
	}
}

// TestLocalRecordsShapeChanges checks that shape normalisation is reported
// as changes, in the order made: unwrap, then wrap.
func TestLocalRecordsShapeChanges(t *testing.T) {
	v, err := packs.Builtin("link-plan")
	if err != nil {
		t.Fatal(err)
	}
	const link = `{"anchor_text":"JSON Schema","query":"JSON Schema spec","section":"Why","ref_id":"ref-1"}`
	tests := []struct {
		name, text string
		want       []Change
	}{
		{"wrapper around one object", `{"link_plan": ` + link + `}`, []Change{
			{Path: "link_plan", Before: "object with link_plan", After: "array", Fixer: FixShapeUnwrap},
			{Path: "", Before: "object", After: "array", Fixer: FixShapeWrap},
		}},
		{"wrapper around the array", "```json\n{\"data\": [" + link + "]}\n```", []Change{
			{Path: "data", Before: "object with data", After: "array", Fixer: FixShapeUnwrap},
		}},
		{"lone object, with a trailing comma", `{"anchor_text":"JSON Schema","query":"JSON Schema spec","section":"Why","ref_id":"ref-1",}`, []Change{
			{Path: "1:89", Before: ",", After: "", Fixer: syntax.FixRemoveTrailingComma},
			{Path: "", Before: "object", After: "array", Fixer: FixShapeWrap},
		}},
		{"the array itself", "[" + link + "]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Local(v, tt.text, validators.Params{})
			if !r.Report.Valid {
				t.Fatalf("Local(%q) report %v, want valid", tt.text, r.Report.Codes())
			}
			if diff := cmp.Diff(tt.want, r.Changes); diff != "" {
				t.Errorf("Local(%q) changes (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

// TestLocalSyntaxFixable checks that a JSON_SYNTAX violation is fixable
// when the syntactic repairer makes the block parse, and not otherwise.
func TestLocalSyntaxFixable(t *testing.T) {
	v, err := packs.Builtin("json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       bool
	}{
		{"trailing comma", `{"a": 1,}`, true},
		{"missing colon", `{"name" "Alice", "age" 30}`, true},
		{"python literals", `{"a": None, "b": True}`, true},
		{"repaired, but truncated", `{"a": "x" "b": [1, 2`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Local(v, tt.text, validators.Params{})
			if len(r.Before.Violations) == 0 || r.Before.Violations[0].Code != "JSON_SYNTAX" {
				t.Fatalf("Local(%q).Before = %v, want JSON_SYNTAX", tt.text, r.Before.Codes())
			}
			if got := r.Before.Violations[0].Fixable; got != tt.want {
				t.Errorf("Local(%q).Before JSON_SYNTAX fixable = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

// TestLocalRepairsTheChosenBlockAsItStands: a last block that needs
// syntactic repair is repaired as the block extraction found, so its
// changes are the block's own — the choice, then the repair — with no
// fence around it to take off and positions in the block's lines.
func TestLocalRepairsTheChosenBlockAsItStands(t *testing.T) {
	v := mcqValidator(t)
	valid := validMCQ(t)
	params, _ := v.Params(nil)
	broken := strings.Replace(valid, `"questions":[`, `"questions":[ // the questions
`, 1)
	text := "Draft:\n```json\n{\"meta\": {}}\n```\nFinal:\n```json\n" + broken + "\n```"
	res := Local(v, text, params)
	if !res.Report.Valid || string(strictjson.Marshal(res.Doc)) != valid {
		t.Fatalf("Local() valid %v codes %v, want the repaired last block", res.Report.Valid, res.Report.Codes())
	}
	if len(res.Changes) != 2 || res.Changes[0].Fixer != FixChooseBlock {
		t.Fatalf("Local() changes %+v, want the choice and the comment's removal", res.Changes)
	}
	if want := "1:"; !strings.HasPrefix(res.Changes[1].Path, want) {
		t.Errorf("Local() repair at %q, want a position on the block's line 1", res.Changes[1].Path)
	}
}
