package repair

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// update rewrites the golden files under testdata.
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// scopedCall is the request of an item-scoped repair call of the MCQ
// contract.
func scopedCall(violations ...string) sent {
	return sent{System: "repair-engine", Scoped: true, Temperature: 0, TopP: 1, Format: true, Violations: violations}
}

// scopedRetry is the scoped call repeated after one that fixed nothing: the
// same payload at the re-run schedule's first temperature (mcq: 0.3).
func scopedRetry(violations ...string) sent {
	c := scopedCall(violations...)
	c.Temperature = 0.3
	return c
}

func TestRunScoped(t *testing.T) {
	mcq := contractFor(t, "mcq", nil)
	valid := fixture(t, mcq, "valid_python_basics_en.json")
	answer3 := fixture(t, mcq, "invalid_ANSWER_RANGE_one_based_answer.json")
	twoFaults := mutate(t, answer3, ptrOption5, `"All of the above"`)
	oneRepair := contractFor(t, "mcq", func(c *contracts.Contract) { c.Policy.MaxRepairs = 1 })
	threeRepairs := contractFor(t, "mcq", func(c *contracts.Contract) { c.Policy.MaxRepairs = 3 })
	noSchedule := contractFor(t, "mcq", func(c *contracts.Contract) { c.Policy.Temperatures = nil })
	// A weight no rule can derive, and a profile count that can only be
	// derived once the weight is known.
	weightAndProfile := mutate(t, valid, "/questions/3/weight", "7", "/questions/3/cognitive_level", `"Hard"`, "/meta/difficulty_profile/medium", "9")

	unchanged := step{}
	tests := []struct {
		name     string
		v        *validators.Validator
		text     string
		params   validators.Params
		script   []step
		maxCalls int
		want     ladderResult
	}{
		{
			name: "one broken item: the scoped call fixes it",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3)}},
		},
		{
			name: "two broken items in one scoped call",
			v:    mcq, text: twoFaults,
			script: []step{{fix: []string{ptrAnswer3, ptrOption5}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3, violForbidden)}},
		},
		{
			name: "the model rephrases the explanation of the item it repairs: the field merge restores it",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, rewrite: []int{3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped", "merge"}, RestoredFields: 1, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3)}},
		},
		{
			name: "the reply is the whole document, rewritten: only the named item is taken",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, rewriteAll: true, full: true, prose: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped", "merge"}, RestoredFields: 1, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3)}},
		},
		{
			name: "the reply is the item alone",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, items: []int{3}, single: true, bare: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3)}},
		},
		{
			name: "the reply is the items as an array",
			v:    mcq, text: twoFaults,
			script: []step{{fix: []string{ptrAnswer3, ptrOption5}, items: []int{3, 5}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3, violForbidden)}},
		},
		{
			name: "the scoped call fails: whole-document repair follows",
			v:    mcq, text: answer3,
			script: []step{{err: errServer}, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), repairCall(violAnswer3)}},
		},
		{
			name: "the reply names an item it was not asked for: whole-document repair follows",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, keys: []string{"questions[4]"}}, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), repairCall(violAnswer3)}},
		},
		{
			name: "a truncated scoped reply: whole-document repair follows",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, truncate: true}, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), repairCall(violAnswer3)}},
		},
		{
			name: "the scoped reply fixes nothing: the same small call again, at the schedule's first temperature",
			v:    mcq, text: answer3,
			script: []step{unchanged, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), scopedRetry(violAnswer3)}},
		},
		{
			name: "both scoped replies fix nothing: max_repairs is spent, partial regeneration follows",
			v:    mcq, text: answer3,
			script: []step{unchanged, unchanged, {fix: []string{ptrAnswer3}, items: []int{3}, single: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 3, Rungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped", "partial_regeneration"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), scopedRetry(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "both scoped replies fix nothing and max_repairs allows a third call: the whole document",
			v:    threeRepairs, text: answer3,
			script: []step{unchanged, unchanged, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 3, Rungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), scopedRetry(violAnswer3), repairCall(violAnswer3)}},
		},
		{
			name: "no re-run schedule: a scoped reply that fixes nothing is followed by the whole document",
			v:    noSchedule, text: answer3,
			script: []step{unchanged, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), repairCall(violAnswer3)}},
		},
		{
			name: "the scoped retry fixes one of two items: the next scoped call, a new payload, is back at temperature 0",
			v:    threeRepairs, text: twoFaults,
			script: []step{unchanged, {fix: []string{ptrAnswer3}}, {fix: []string{ptrOption5}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 3, Rungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3, violForbidden), scopedRetry(violAnswer3, violForbidden), scopedCall(violForbidden)}},
		},
		{
			name: "the scoped reply fixes one of two items: the second scoped call sends the other",
			v:    mcq, text: twoFaults,
			script: []step{{fix: []string{ptrAnswer3}}, {fix: []string{ptrOption5}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3, violForbidden), scopedCall(violForbidden)}},
		},
		{
			name: "document-level violations that follow from the items stay home: only the item is sent, local repair derives the rest",
			v:    mcq, text: weightAndProfile,
			script: []step{{fix: []string{"/questions/3"}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall("WEIGHT_INVALID@questions[3].weight")}},
		},
		{
			name: "a violation outside the items: whole-document repair at once",
			v:    mcq, text: valid, params: validators.Params{"question_count": "11"},
			script:   []step{unchanged},
			maxCalls: 1,
			want: ladderResult{Status: StatusFailed, LLMCalls: 1, Rungs: []string{"local", "llm_repair", "fallback:error"}, Doc: "nil",
				Codes: []string{"QUESTION_COUNT_MISMATCH", "DIFFICULTY_PROFILE_SUM", "QUESTION_COUNT_MISMATCH"},
				Sent:  []sent{repairCall("QUESTION_COUNT_MISMATCH@meta.question_count", "DIFFICULTY_PROFILE_SUM@meta.difficulty_profile", "QUESTION_COUNT_MISMATCH@questions")}},
		},
		{
			name: "max_repairs counts the scoped call",
			v:    oneRepair, text: answer3,
			script: []step{{err: errServer}, {fix: []string{ptrAnswer3}, items: []int{3}, single: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair_scoped", "partial_regeneration"}, Doc: "truth", Codes: []string{},
				Sent: []sent{scopedCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "max_llm_calls counts the scoped call",
			v:    mcq, text: answer3, maxCalls: 1,
			script: []step{unchanged},
			want: ladderResult{Status: StatusFailed, LLMCalls: 1, Rungs: []string{"local", "llm_repair_scoped", "fallback:error"}, Doc: "nil", Codes: []string{"ANSWER_RANGE"},
				Sent: []sent{scopedCall(violAnswer3)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			truth := parse(t, valid)
			fm := &fakeModel{truth: truth, script: tt.script}
			params, err := tt.v.Params(tt.params)
			if err != nil {
				t.Fatal(err)
			}
			out := Run(context.Background(), Job{Validator: tt.v, Params: params, Text: tt.text, Prompt: "Write 10 MCQs about Python basics.", Model: fm, MaxLLMCalls: tt.maxCalls})
			got := summarize(out, truth, fm.requests(), nil, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Run() mismatch (-want +got):\n%s", diff)
			}
			if out.Tokens != fm.usage || (out.LLMCalls > 0 && out.Tokens.PromptTokens == 0) {
				t.Errorf("Run().Tokens = %+v, want %+v (the tokens of every reply)", out.Tokens, fm.usage)
			}
		})
	}
}

// TestRunScopedKeepsOtherItems checks the splice: the items not sent are
// byte for byte those of the first answer, even when the model rewrote them
// in its reply, and the scoped call costs fewer tokens than a whole-document
// call on the same fault.
func TestRunScopedKeepsOtherItems(t *testing.T) {
	v := contractFor(t, "mcq", nil)
	whole := contractFor(t, "mcq", wholeOnly)
	params, _ := v.Params(nil)
	truth := parse(t, fixture(t, v, "valid_python_basics_en.json"))
	answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
	first := Local(v, answer3, params).Doc.Get("questions")

	fm := &fakeModel{truth: truth, script: []step{{fix: []string{ptrAnswer3}, rewriteAll: true, full: true}}}
	out := Run(context.Background(), Job{Validator: v, Params: params, Text: answer3, Model: fm})
	if out.Status != StatusRepaired {
		t.Fatalf("Run() = %s, codes %v; want %s", out.Status, out.Report.Codes(), StatusRepaired)
	}
	for i, q := range out.Doc.Get("questions").Items {
		if i == 3 {
			continue
		}
		if got, want := string(strictjson.Marshal(q)), string(strictjson.Marshal(first.Items[i])); got != want {
			t.Errorf("questions[%d] = %s, want %s (as the first answer had it)", i, got, want)
		}
	}

	fs := &fakeModel{truth: truth, script: []step{{fix: []string{ptrAnswer3}}}}
	outScoped := Run(context.Background(), Job{Validator: v, Params: params, Text: answer3, Model: fs})
	fw := &fakeModel{truth: truth, script: []step{{fix: []string{ptrAnswer3}}}}
	outWhole := Run(context.Background(), Job{Validator: whole, Params: params, Text: answer3, Model: fw})
	if outScoped.Tokens.OutputTokens*3 > outWhole.Tokens.OutputTokens || outScoped.Tokens.PromptTokens >= outWhole.Tokens.PromptTokens {
		t.Errorf("scoped tokens %+v, whole-document %+v: want the scoped reply at most a third and a shorter prompt", outScoped.Tokens, outWhole.Tokens)
	}
}

// TestRunNeverAsksTheSameTwice runs the ladder on a model that never fixes
// anything, with re-runs that come back as the first answer, and checks
// the calls it made. At temperature 0 a local model answers a repeated
// request the same way, so such a repeat is a call spent for nothing: no
// request at temperature 0 is made twice, and no call is the same as the
// one just before it, whatever the contract's budget and schedule. A
// sampled call may be asked again later (after a re-run it is a fresh
// draw on the same items).
func TestRunNeverAsksTheSameTwice(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*contracts.Contract)
	}{
		{"mcq", nil},
		{"whole document only", wholeOnly},
		{"five repairs", func(c *contracts.Contract) { c.Policy.MaxRepairs = 5 }},
		{"five repairs, no schedule", func(c *contracts.Contract) { c.Policy.MaxRepairs, c.Policy.Temperatures = 5, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := contractFor(t, "mcq", tc.edit)
			params, _ := v.Params(nil)
			answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
			script := make([]step, 20)
			fm := &fakeModel{truth: parse(t, fixture(t, v, "valid_python_basics_en.json")), script: script}
			// A re-run that answers the first answer again is asked
			// nothing the ladder already asked about that answer.
			rerun := func(context.Context, float64) (Reply, error) { return Reply{Text: answer3}, nil }
			out := Run(context.Background(), Job{Validator: v, Params: params, Text: answer3, Prompt: "Write 10 MCQs about Python basics.", Model: fm, Rerun: rerun, MaxLLMCalls: 20})
			if out.Status != StatusFailed {
				t.Fatalf("Run() = %s, want %s from a model that fixes nothing", out.Status, StatusFailed)
			}
			reqs := fm.requests()
			if len(reqs) == 0 {
				t.Fatal("no model call made")
			}
			seen := map[string]int{}
			for i, r := range reqs {
				key := r.System + "\x00" + r.Prompt + "\x00" + strconv.FormatFloat(r.Temperature, 'g', -1, 64)
				if j, dup := seen[key]; dup && (r.Temperature == 0 || j == i-1) {
					t.Errorf("call %d at temperature %g repeats call %d (rungs %v)", i+1, r.Temperature, j+1, out.Rungs)
				}
				seen[key] = i
			}
		})
	}
}

// TestScopedRequest checks one scoped call byte for byte against
// testdata/ladder/scoped_request.golden: system prompt, payload (only the
// named items, keyed by their paths), format and num_predict.

func TestScopedRequest(t *testing.T) {
	v := contractFor(t, "mcq", nil)
	params, _ := v.Params(nil)
	truth := parse(t, fixture(t, v, "valid_python_basics_en.json"))
	answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
	text := mutate(t, answer3, ptrOption5, `"All of the above"`)
	fm := &fakeModel{truth: truth, script: []step{{fix: []string{ptrAnswer3, ptrOption5}}}}
	Run(context.Background(), Job{Validator: v, Params: params, Text: text, Model: fm, ModelName: "llama3.1:8b"})
	reqs := fm.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.System != RepairSystemPrompt || r.Model != "llama3.1:8b" || r.Temperature != 0 || r.TopP != 1 {
		t.Errorf("request = system %q, model %q, temperature %v, top_p %v; want the repair prompt, llama3.1:8b, 0, 1", systemName(r.System), r.Model, r.Temperature, r.TopP)
	}
	got := "NUM_PREDICT: " + strconv.Itoa(r.NumPredict) + "\n\nFORMAT:\n" + string(indentJSON(r.Format)) + "\n\nPROMPT:\n" + r.Prompt + "\n"
	golden(t, filepath.Join("testdata", "ladder", "scoped_request.golden"), got)
	for _, i := range []string{"questions[0]", "questions[4]", "questions[9]"} {
		if strings.Contains(r.Prompt, `"`+i+`"`) {
			t.Errorf("scoped payload holds %s, which has no violation", i)
		}
	}
}

// golden compares got with the file at path, or writes it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestScopedItems(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		indices []int
		want    map[int]string
	}{
		{"keyed as asked", `{"questions[1]":{"q":"b"}}`, []int{1}, map[int]string{1: `{"q":"b"}`}},
		{"keyed, one of two", `{"questions[2]":{"q":"c"}}`, []int{0, 2}, map[int]string{2: `{"q":"c"}`}},
		{"keyed, extra keys ignored", `{"questions[0]":{"q":"a"},"questions[1]":{"q":"x"}}`, []int{0}, map[int]string{0: `{"q":"a"}`}},
		{"keyed by another item only", `{"questions[1]":{"q":"b"}}`, []int{0}, nil},
		{"keyed item not an object", `{"questions[1]":"b"}`, []int{1}, nil},
		{"whole document", `{"meta":{},"questions":[{"q":"a"},{"q":"b"},{"q":"c"}]}`, []int{1}, map[int]string{1: `{"q":"b"}`}},
		{"items as an array", `[{"q":"a"},{"q":"c"}]`, []int{0, 2}, map[int]string{0: `{"q":"a"}`, 2: `{"q":"c"}`}},
		{"one item alone", `{"q":"b"}`, []int{1}, map[int]string{1: `{"q":"b"}`}},
		{"a scalar", `7`, []int{1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := scopedItems("/questions", parse(t, tt.reply), tt.indices, 3)
			var gotS map[int]string
			if ok {
				gotS = map[int]string{}
				for i, v := range got {
					gotS[i] = string(strictjson.Marshal(v))
				}
			}
			if diff := cmp.Diff(tt.want, gotS); diff != "" {
				t.Errorf("scopedItems(%s, %v) mismatch (-want +got):\n%s", tt.reply, tt.indices, diff)
			}
		})
	}
}

func TestMergeFields(t *testing.T) {
	const base = `{"questions":[{"answer":3,"options":["a","b","c"],"explanation":"e","topic":"t"},{"answer":0,"explanation":"f"}]}`
	viol := func(code, pointer string) validators.Violation {
		return validators.Violation{Code: code, Pointer: pointer, Severity: validators.SeverityError}
	}
	tests := []struct {
		name         string
		reply        string
		sent         []validators.Violation
		want         string
		wantRestored int
	}{
		{"the named field changes, the explanation is restored",
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"better","topic":"t"},{"answer":0,"explanation":"f"}]}`,
			[]validators.Violation{viol("ANSWER_RANGE", "/questions/0/answer")},
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"e","topic":"t"},{"answer":0,"explanation":"f"}]}`, 1},
		{"the scope lets the answer move with the options",
			`{"questions":[{"answer":1,"options":["a","b","c","d"],"explanation":"e","topic":"t"},{"answer":0,"explanation":"f"}]}`,
			[]validators.Violation{viol("OPTIONS_COUNT", "/questions/0/options")},
			`{"questions":[{"answer":1,"options":["a","b","c","d"],"explanation":"e","topic":"t"},{"answer":0,"explanation":"f"}]}`, 0},
		{"a dropped and an added member are undone",
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"e","note":"n"},{"answer":0,"explanation":"f"}]}`,
			[]validators.Violation{viol("ANSWER_RANGE", "/questions/0/answer")},
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"e","topic":"t"},{"answer":0,"explanation":"f"}]}`, 2},
		{"a violation of the item itself leaves it whole",
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"x","topic":"t"},{"answer":0,"explanation":"f"}]}`,
			[]validators.Violation{viol("SCHEMA_TYPE", "/questions/0")},
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"x","topic":"t"},{"answer":0,"explanation":"f"}]}`, 0},
		{"an array-level violation leaves every item",
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"x","topic":"t"},{"answer":0,"explanation":"f"}]}`,
			[]validators.Violation{viol("QUESTION_COUNT_MISMATCH", "/questions"), viol("ANSWER_RANGE", "/questions/0/answer")},
			`{"questions":[{"answer":2,"options":["a","b","c"],"explanation":"x","topic":"t"},{"answer":0,"explanation":"f"}]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := parse(t, tt.reply)
			n := mergeFields(mcqValidator(t), "/questions", parse(t, base), reply, validators.Report{Violations: tt.sent})
			if got := string(strictjson.Marshal(reply)); got != tt.want || n != tt.wantRestored {
				t.Errorf("mergeFields(%s) = %s, %d restored; want %s, %d", tt.reply, got, n, tt.want, tt.wantRestored)
			}
		})
	}
}

// FuzzScopedReply feeds any reply text through the scoped reader: it never
// panics, and it only ever takes object items at the named indices.
func FuzzScopedReply(f *testing.F) {
	for _, s := range []string{
		"```json\n{\"questions[1]\": {\"q\": \"b\"}}\n```",
		`{"meta":{},"questions":[{"q":"a"},{"q":"b"},{"q":"c"}]}`,
		`[{"q":"a"},{"q":"c"}]`,
		`{"q":"b"}`,
		"Sure: {'questions[2]': {q: 'c',}}",
		`{"questions[1]": {"q": "b"`,
	} {
		f.Add(s)
	}
	named := map[int]bool{0: true, 2: true}
	f.Fuzz(func(t *testing.T, text string) {
		val, ok := parseReply(text, true)
		if !ok {
			return
		}
		got, ok := scopedItems("/questions", val, []int{0, 2}, 3)
		if !ok {
			return
		}
		if len(got) == 0 {
			t.Fatalf("scopedItems(%q) = empty, true", text)
		}
		for i, it := range got {
			if !named[i] || it.Kind != strictjson.KindObject {
				t.Fatalf("scopedItems(%q) took item %d of kind %v", text, i, it.Kind)
			}
		}
	})
}
