package repair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/repair/syntax"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Pointers of the faults the tests put into the MCQ fixture, and the
// violations they cause.
const (
	ptrAnswer3    = "/questions/3/answer"    // ANSWER_RANGE: 3 with 3 options
	ptrOption5    = "/questions/5/options/3" // FORBIDDEN_OPTION
	violAnswer3   = "ANSWER_RANGE@questions[3].answer"
	violForbidden = "FORBIDDEN_OPTION@questions[5].options[3]"
)

var registryOnce = sync.OnceValues(func() (*contracts.Registry, error) { return contracts.LoadRegistry("") })

// contractFor returns a copy of a built-in contract, changed by edit.
func contractFor(t *testing.T, name string, edit func(*contracts.Contract)) *validators.Validator {
	t.Helper()
	reg, err := registryOnce()
	if err != nil {
		t.Fatalf("LoadRegistry: %v", err)
	}
	c, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no built-in contract %s", name)
	}
	cp := *c
	if edit != nil {
		edit(&cp)
	}
	v, err := validators.New(&cp, packs.Builtins())
	if err != nil {
		t.Fatalf("validators.New(%s): %v", name, err)
	}
	return v
}

func fixture(t *testing.T, v *validators.Validator, name string) string {
	t.Helper()
	b, ok := v.Contract.Fixtures[name]
	if !ok {
		t.Fatalf("contract %s has no fixture %s", v.Contract.ID(), name)
	}
	return string(b)
}

func parse(t *testing.T, text string) *strictjson.Value {
	t.Helper()
	v, err := strictjson.Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return v
}

// mutate returns doc (as indented JSON) with the values at the given
// pointers replaced: pairs of pointer and JSON value.
func mutate(t *testing.T, doc string, pairs ...string) string {
	t.Helper()
	v := parse(t, doc)
	for i := 0; i+1 < len(pairs); i += 2 {
		var err error
		if v, err = strictjson.Replace(v, pairs[i], parse(t, pairs[i+1])); err != nil {
			t.Fatalf("mutate %s: %v", pairs[i], err)
		}
	}
	return string(strictjson.MarshalIndent(v, "  "))
}

// truthFixture names, per contract, the valid fixture the faulty inputs
// are made from: the fake model's source of right values.
var truthFixture = map[string]string{
	"mcq":          "valid_python_basics_en.json",
	"oracle-score": "valid_score_matches_breakdown.json",
}

// sent is what the tests check of one model request.
type sent struct {
	System      string // "repair-engine", "only-valid-json" or "" (none)
	Scoped      bool   // an item-scoped repair call
	Temperature float64
	TopP        float64
	Format      bool
	Violations  []string
}

// ladderResult is what the tests check of one Run.
type ladderResult struct {
	Status   string
	LLMCalls int
	Rungs    []string
	Restored int
	// RestoredFields counts members of repaired items put back (the
	// field-level blind merge).
	RestoredFields int
	// Doc is "truth" when the answer equals the valid fixture, "nil" when
	// there is none, "other" otherwise; Changed lists the items that differ
	// from the valid fixture.
	Doc     string
	Changed []int
	Codes   []string
	Sent    []sent
	// Reruns are the temperatures re-runs were asked at; FallbackModels the
	// models the fallback asked.
	Reruns         []float64
	FallbackModels []string
}

func systemName(s string) string {
	switch s {
	case RepairSystemPrompt:
		return "repair-engine"
	case OnlyValidJSONPrompt:
		return "only-valid-json"
	case "":
		return ""
	}
	return "unknown: " + s
}

// scriptedText answers call i with texts[i]; calls beyond are errors.
type scriptedText struct {
	mu    sync.Mutex
	texts []string
	args  []string
}

func (s *scriptedText) answer(arg string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.args = append(s.args, arg)
	n := len(s.args)
	if n > len(s.texts) {
		return "", fmt.Errorf("unscripted call %d", n)
	}
	return s.texts[n-1], nil
}

func summarize(out Outcome, truth *strictjson.Value, reqs []ModelRequest, reruns []float64, fbModels []string) ladderResult {
	r := ladderResult{
		Status: out.Status, LLMCalls: out.LLMCalls, Rungs: out.Rungs, Restored: out.Restored, RestoredFields: out.RestoredFields,
		Codes: out.Report.Codes(), Reruns: reruns, FallbackModels: fbModels,
	}
	switch {
	case out.Doc == nil:
		r.Doc = "nil"
	case strictjson.Equal(out.Doc, truth):
		r.Doc = "truth"
	default:
		r.Doc = "other"
	}
	if out.Doc != nil && truth.Get("questions") != nil {
		got, want := out.Doc.Get("questions"), truth.Get("questions")
		for i, q := range want.Items {
			if string(strictjson.Marshal(got.Index(i))) != string(strictjson.Marshal(q)) {
				r.Changed = append(r.Changed, i)
			}
		}
	}
	for _, q := range reqs {
		r.Sent = append(r.Sent, sent{System: systemName(q.System), Scoped: strings.HasPrefix(q.Prompt, "Repair ONLY "), Temperature: q.Temperature, TopP: q.TopP, Format: len(q.Format) > 0, Violations: sentViolations(q.Prompt)})
	}
	return r
}

// repairCall is the request every LLM repair call of the MCQ contract makes.
func repairCall(violations ...string) sent {
	return sent{System: "repair-engine", Temperature: 0, TopP: 1, Format: true, Violations: violations}
}

func partialCall(violations ...string) sent {
	return sent{System: "", Temperature: 0, TopP: 1, Format: true, Violations: violations}
}

// wholeOnly turns item-scoped repair off, so that every repair call sends
// the whole document.
func wholeOnly(c *contracts.Contract) { c.Policy.ScopedRepair = false }

func TestRun(t *testing.T) {
	// The whole-document rung: scoped repair has its own test.
	mcq := contractFor(t, "mcq", wholeOnly)
	valid := fixture(t, mcq, "valid_python_basics_en.json")
	answer3 := fixture(t, mcq, "invalid_ANSWER_RANGE_one_based_answer.json")
	twoFaults := mutate(t, answer3, ptrOption5, `"All of the above"`)
	oracle := contractFor(t, "oracle-score", nil)
	oracleValid := fixture(t, oracle, "valid_score_matches_breakdown.json")
	oracleBad := fixture(t, oracle, "invalid_SCORE_MISMATCH_off_by_40.json")

	bestEffort := contractFor(t, "mcq", func(c *contracts.Contract) {
		wholeOnly(c)
		c.Fallback = contracts.Fallback{Mode: contracts.FallbackBestEffort}
	})
	static := contractFor(t, "mcq", func(c *contracts.Contract) {
		wholeOnly(c)
		c.Fallback = contracts.Fallback{Mode: contracts.FallbackStatic, Static: []byte(`{"meta":{},"questions":[]}`)}
	})
	modelFallback := contractFor(t, "mcq", func(c *contracts.Contract) {
		wholeOnly(c)
		c.Fallback = contracts.Fallback{Mode: contracts.FallbackModel, Model: "qwen2.5:14b"}
	})
	harderFirst := mutate(t, valid, "/questions/0/weight", "2", "/questions/0/cognitive_level", `"Application"`,
		"/questions/0/extended_explanation", `{"title":"t","steps":["a","b"],"content":"c"}`)
	onlyValid := contractFor(t, "mcq", func(c *contracts.Contract) {
		c.Policy = contracts.Policy{MaxRepairs: 1, RepairPrompt: PromptOnlyValidJSON}
	})

	unchanged := step{}
	tests := []struct {
		name      string
		v         *validators.Validator
		text      string
		params    validators.Params
		script    []step
		reruns    []string
		fallback  []string
		maxCalls  int
		localOnly bool
		noModel   bool
		noFormat  bool
		want      ladderResult
	}{
		{
			name: "valid first answer makes no call",
			v:    mcq, text: valid,
			want: ladderResult{Status: StatusValid, Rungs: []string{"local"}, Doc: "truth", Codes: []string{}},
		},
		{
			name: "derivable fault is fixed locally",
			v:    mcq, text: fixture(t, mcq, "invalid_TEST_DURATION_MISMATCH_buffer_forgotten.json"),
			want: ladderResult{Status: StatusRepaired, Rungs: []string{"local"}, Doc: "truth", Codes: []string{}},
		},
		{
			name: "one repair call fixes the answer",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3)}},
		},
		{
			name: "model fixes only some violations, the second call the rest",
			v:    mcq, text: twoFaults,
			script: []step{{fix: []string{ptrAnswer3}}, {fix: []string{ptrOption5}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3, violForbidden), repairCall(violForbidden)}},
		},
		{
			name: "model rewrites unrelated questions, merge restores them",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, rewrite: []int{0, 7}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair", "merge"}, Restored: 2, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3)}},
		},
		{
			name: "model rephrases the explanation of the question it repairs, the field merge restores it",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, rewrite: []int{3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair", "merge"}, RestoredFields: 1, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3)}},
		},
		{
			name: "model drops a question without cause: the array comes back whole, nothing is fixed, on to partial regeneration",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, dropLast: true}, {fix: []string{ptrAnswer3}, items: []int{3}, single: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "merge", "partial_regeneration"}, Restored: 1, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "the caller's difficulty lets the model change a question without a violation of its own",
			v:    mcq, text: harderFirst, params: validators.Params{"difficulty": "3/5/2"},
			script: []step{{fix: []string{"/questions/0"}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall("DIFFICULTY_PROFILE_MISMATCH@questions")}},
		},
		{
			name: "prose around the JSON",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, prose: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3)}},
		},
		{
			// The second repair call would send the same original again:
			// at temperature 0 it would come back cut the same way.
			name: "truncated reply: the same call is not made again, regeneration answers",
			v:    mcq, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}, truncate: true}, {fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "partial_regeneration"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "500 on both repairs, partial regeneration answers the one item",
			v:    mcq, text: answer3,
			script: []step{{err: errServer}, {err: errServer}, {fix: []string{ptrAnswer3}, items: []int{3}, single: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 3, Rungs: []string{"local", "llm_repair", "llm_repair", "partial_regeneration"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3), repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "partial regeneration answers the items as an array",
			v:    mcq, text: twoFaults,
			script: []step{unchanged, {fix: []string{ptrAnswer3, ptrOption5}, items: []int{3, 5}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "partial_regeneration"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall(violAnswer3, violForbidden), partialCall(violAnswer3, violForbidden)}},
		},
		{
			name: "partial regeneration reply ignores the indices, only the named items are taken",
			v:    mcq, text: twoFaults,
			script: []step{unchanged, {fix: []string{ptrAnswer3, ptrOption5}, rewriteAll: true, prose: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "partial_regeneration"}, Doc: "other", Changed: []int{3, 5}, Codes: []string{},
				Sent: []sent{repairCall(violAnswer3, violForbidden), partialCall(violAnswer3, violForbidden)}},
		},
		{
			name: "partial regeneration reply is the whole array, rewritten",
			v:    mcq, text: answer3,
			script: []step{unchanged, {fix: []string{ptrAnswer3}, rewriteAll: true, items: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, bare: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "partial_regeneration"}, Doc: "other", Changed: []int{3}, Codes: []string{},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "every rung fails: error fallback",
			v:    mcq, text: answer3,
			script: []step{unchanged, unchanged, unchanged, unchanged},
			reruns: []string{twoFaults},
			// A repair reply that fixes nothing is not asked for again. The
			// re-run's answer gets a repair call; regeneration works on the
			// best attempt, still the first answer, whose regeneration was
			// asked already. The failure reports that best attempt.
			want: ladderResult{Status: StatusFailed, LLMCalls: 4, Rungs: []string{"local", "llm_repair", "partial_regeneration", "rerun:0.3", "llm_repair", "fallback:error"},
				Doc: "nil", Codes: []string{"ANSWER_RANGE"}, Reruns: []float64{0.3},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3), repairCall(violAnswer3, violForbidden)}},
		},
		{
			// The calls the first answer got would get the same replies
			// again: the re-run's answer costs nothing more.
			name: "a re-run that answers the same again is asked nothing already asked",
			v:    mcq, text: answer3,
			script: []step{unchanged, unchanged},
			reruns: []string{answer3},
			want: ladderResult{Status: StatusFailed, LLMCalls: 3, Rungs: []string{"local", "llm_repair", "partial_regeneration", "rerun:0.3", "fallback:error"},
				Doc: "nil", Codes: []string{"ANSWER_RANGE"}, Reruns: []float64{0.3},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			// The repair reply rewrote an item it was not asked about; the
			// re-run's answer would get the same reply again, which is read
			// again without a call, and its merge is not counted twice.
			name: "a reply read again is not merged into the counts again",
			v:    mcq, text: answer3,
			script: []step{{rewrite: []int{0}}, unchanged},
			reruns: []string{answer3},
			want: ladderResult{Status: StatusFailed, LLMCalls: 3, Rungs: []string{"local", "llm_repair", "merge", "partial_regeneration", "rerun:0.3", "fallback:error"},
				Restored: 1, Doc: "nil", Codes: []string{"ANSWER_RANGE"}, Reruns: []float64{0.3},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "re-run answers validly",
			v:    mcq, text: answer3,
			script: []step{unchanged, unchanged},
			reruns: []string{"```json\n" + valid + "\n```"},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 3, Rungs: []string{"local", "llm_repair", "partial_regeneration", "rerun:0.3"},
				Doc: "truth", Codes: []string{}, Reruns: []float64{0.3},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "best_effort fallback answers the best attempt",
			v:    bestEffort, text: twoFaults,
			script: []step{{fix: []string{ptrOption5}}, {truncate: true}, {err: errServer}},
			reruns: []string{"no JSON at all"},
			want: ladderResult{Status: StatusFallback, LLMCalls: 6, Rungs: []string{"local", "llm_repair", "llm_repair", "partial_regeneration", "rerun:0.3", "llm_repair", "llm_repair", "fallback:best_effort"},
				Doc: "other", Changed: []int{3}, Codes: []string{"ANSWER_RANGE"}, Reruns: []float64{0.3},
				Sent: []sent{repairCall(violAnswer3, violForbidden), repairCall(violAnswer3), partialCall(violAnswer3), repairCall("NO_JSON_BLOCK@"), repairCall("NO_JSON_BLOCK@")}},
		},
		{
			name: "static fallback",
			v:    static, text: answer3,
			script: []step{unchanged, unchanged, unchanged, unchanged},
			reruns: []string{twoFaults},
			want: ladderResult{Status: StatusFallback, LLMCalls: 4, Rungs: []string{"local", "llm_repair", "partial_regeneration", "rerun:0.3", "llm_repair", "fallback:static"},
				Doc: "other", Changed: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Codes: []string{"ANSWER_RANGE"}, Reruns: []float64{0.3},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3), repairCall(violAnswer3, violForbidden)}},
		},
		{
			name: "model fallback answers validly",
			v:    modelFallback, text: answer3,
			script: []step{unchanged, unchanged, unchanged, unchanged},
			reruns: []string{twoFaults}, fallback: []string{valid},
			want: ladderResult{Status: StatusFallback, LLMCalls: 5, Rungs: []string{"local", "llm_repair", "partial_regeneration", "rerun:0.3", "llm_repair", "fallback:model"},
				Doc: "truth", Codes: []string{}, Reruns: []float64{0.3}, FallbackModels: []string{"qwen2.5:14b"},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3), repairCall(violAnswer3, violForbidden)}},
		},
		{
			name: "max_llm_calls 2 stops after repair and regeneration",
			v:    mcq, text: answer3, maxCalls: 2,
			script: []step{unchanged, unchanged},
			want: ladderResult{Status: StatusFailed, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "partial_regeneration", "fallback:error"},
				Doc: "nil", Codes: []string{"ANSWER_RANGE"},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "the budget keeps one call for the fallback model",
			v:    modelFallback, text: answer3, maxCalls: 3,
			script: []step{unchanged, unchanged},
			reruns: []string{answer3}, fallback: []string{valid},
			want: ladderResult{Status: StatusFallback, LLMCalls: 3, Rungs: []string{"local", "llm_repair", "partial_regeneration", "fallback:model"},
				Doc: "truth", Codes: []string{}, FallbackModels: []string{"qwen2.5:14b"},
				Sent: []sent{repairCall(violAnswer3), partialCall(violAnswer3)}},
		},
		{
			name: "local only goes straight to the fallback",
			v:    mcq, text: answer3, localOnly: true,
			script: []step{unchanged},
			reruns: []string{valid},
			want:   ladderResult{Status: StatusFailed, Rungs: []string{"local", "fallback:error"}, Doc: "nil", Codes: []string{"ANSWER_RANGE"}},
		},
		{
			name: "no model: straight to the re-run",
			v:    mcq, text: answer3, noModel: true,
			reruns: []string{valid},
			want:   ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "rerun:0.3"}, Doc: "truth", Codes: []string{}, Reruns: []float64{0.3}},
		},
		{
			name: "prose without JSON goes to the model as it is",
			v:    mcq, text: "I am sorry, I can only describe the questions in words.",
			script: []step{{whole: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall("NO_JSON_BLOCK@")}},
		},
		{
			name: "truncated first answer is completed by the model",
			v:    mcq, text: valid[:1200],
			script: []step{{whole: true, prose: true}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{repairCall("JSON_TRUNCATED@47:54")}},
		},
		{
			name: "a violation outside the items rules out partial regeneration",
			v:    mcq, text: valid, params: validators.Params{"question_count": "11"},
			script: []step{unchanged, unchanged},
			reruns: []string{valid},
			// The re-run answers the same document: its repair call would
			// be the first one again, and is not made.
			want: ladderResult{Status: StatusFailed, LLMCalls: 2, Rungs: []string{"local", "llm_repair", "rerun:0.3", "fallback:error"},
				Doc:   "nil",
				Codes: []string{"QUESTION_COUNT_MISMATCH", "DIFFICULTY_PROFILE_SUM", "QUESTION_COUNT_MISMATCH"}, Reruns: []float64{0.3},
				Sent: []sent{
					repairCall("QUESTION_COUNT_MISMATCH@meta.question_count", "DIFFICULTY_PROFILE_SUM@meta.difficulty_profile", "QUESTION_COUNT_MISMATCH@questions"),
				}},
		},
		{
			name: "only-valid-json policy without format",
			v:    onlyValid, text: answer3,
			script: []step{{fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{{System: "only-valid-json", TopP: 1, Violations: []string{violAnswer3}}}},
		},
		{
			name: "a route without format sends none",
			v:    mcq, text: answer3, noFormat: true,
			script: []step{{fix: []string{ptrAnswer3}}},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 1, Rungs: []string{"local", "llm_repair"}, Doc: "truth", Codes: []string{},
				Sent: []sent{{System: "repair-engine", TopP: 1, Violations: []string{violAnswer3}}}},
		},
		{
			name: "oracle-score: re-runs at 0.3, 0.2, 0.1, the third is valid",
			v:    oracle, text: oracleBad,
			reruns: []string{oracleBad, oracleBad, oracleValid},
			want: ladderResult{Status: StatusRepaired, LLMCalls: 3, Rungs: []string{"local", "rerun:0.3", "rerun:0.2", "rerun:0.1"},
				Doc: "truth", Codes: []string{}, Reruns: []float64{0.3, 0.2, 0.1}},
		},
		{
			name: "oracle-score: three invalid re-runs, then the fallback",
			v:    oracle, text: oracleBad,
			reruns: []string{oracleBad, "{", oracleBad},
			want: ladderResult{Status: StatusFailed, LLMCalls: 3, Rungs: []string{"local", "rerun:0.3", "rerun:0.2", "rerun:0.1", "fallback:error"},
				Doc: "nil", Codes: []string{"SCORE_MISMATCH"}, Reruns: []float64{0.3, 0.2, 0.1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			truth := parse(t, fixture(t, tt.v, truthFixture[tt.v.Contract.Name]))
			fm := &fakeModel{truth: truth, script: tt.script}
			var reruns []float64
			rr := &scriptedText{texts: tt.reruns}
			fb := &scriptedText{texts: tt.fallback}
			params, err := tt.v.Params(tt.params)
			if err != nil {
				t.Fatal(err)
			}
			job := Job{
				Validator: tt.v, Params: params, Text: tt.text, Prompt: "Write 10 MCQs about Python basics.",
				Model: fm, MaxLLMCalls: tt.maxCalls, LocalOnly: tt.localOnly, NoFormat: tt.noFormat,
				Rerun: func(ctx context.Context, temp float64) (Reply, error) {
					reruns = append(reruns, temp)
					return textReply(rr.answer(fmt.Sprint(temp)))
				},
				RerunModel: func(ctx context.Context, model string) (Reply, error) { return textReply(fb.answer(model)) },
			}
			if tt.noModel {
				job.Model = nil
			}
			out := Run(context.Background(), job)
			got := summarize(out, truth, fm.requests(), reruns, fb.args)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Run() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPromptsVerbatim checks the prompts byte for byte against the
// reference texts in testdata: the repair system prompt, the partial
// regeneration instruction and the only-valid-json retry text.
func TestPromptsVerbatim(t *testing.T) {
	tests := []struct {
		file string
		got  string
	}{
		{"repair_system_prompt.txt", RepairSystemPrompt},
		{"partial_instruction.txt", PartialInstruction("questions", []int{2, 7, 9})},
		{"only_valid_json_prompt.txt", OnlyValidJSONPrompt},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join("testdata", "ladder", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(string(b), "\n"); tt.got != want {
			t.Errorf("%s: got\n%q\nwant\n%q", tt.file, tt.got, want)
		}
	}
}

// TestRunRequests checks the requests byte for byte: the payload, the
// model name, format and num_predict.
func TestRunRequests(t *testing.T) {
	mcq := contractFor(t, "mcq", wholeOnly)
	params, _ := mcq.Params(nil)
	valid := fixture(t, mcq, "valid_python_basics_en.json")
	answer3 := fixture(t, mcq, "invalid_ANSWER_RANGE_one_based_answer.json")
	local := Local(mcq, answer3, params)
	doc := string(strictjson.Marshal(local.Doc))
	// A document cut in half: JSON, but nothing parses.
	cut := doc[:len(doc)/2]
	task := "Write 10 MCQs about Python basics."
	tests := []struct {
		name   string
		text   string
		script []step
		want   []ModelRequest
	}{
		{
			name:   "repair call",
			text:   answer3,
			script: []step{{fix: []string{ptrAnswer3}}},
			want: []ModelRequest{{
				Model: "llama3.1:8b", System: RepairSystemPrompt,
				Prompt: "VIOLATION_REPORT:\n" + string(indentJSON(local.Report)) + "\n\nORIGINAL_JSON:\n" + doc,
				Format: mcq.Contract.SchemaJSON, Temperature: 0, TopP: 1, NumPredict: len(doc)/3*2 + 256,
			}},
		},
		{
			name:   "raw text when nothing parses",
			text:   cut,
			script: []step{{whole: true}},
			want: []ModelRequest{{
				Model: "llama3.1:8b", System: RepairSystemPrompt,
				Prompt: "VIOLATION_REPORT:\n" + string(indentJSON(Local(mcq, cut, params).Report)) + "\n\nORIGINAL_JSON:\n" + cut,
				Format: mcq.Contract.SchemaJSON, Temperature: 0, TopP: 1, NumPredict: len(cut)/3*2 + 256,
			}},
		},
		{
			name:   "partial regeneration call",
			text:   answer3,
			script: []step{{}, {fix: []string{ptrAnswer3}, items: []int{3}}},
			want: []ModelRequest{
				{
					Model: "llama3.1:8b", System: RepairSystemPrompt,
					Prompt: "VIOLATION_REPORT:\n" + string(indentJSON(local.Report)) + "\n\nORIGINAL_JSON:\n" + doc,
					Format: mcq.Contract.SchemaJSON, TopP: 1, NumPredict: len(doc)/3*2 + 256,
				},
				{
					Model: "llama3.1:8b",
					Prompt: task + "\n\n" +
						"Replace ONLY questions at indices: [3].\n" +
						"Keep meta unchanged (except test_duration_minutes if weights change).\n" +
						"Keep schema_version, question_id and numbering rules.\n" +
						"Return ONLY the full JSON (meta + questions).\n" +
						"All other questions must remain identical.\n\n" +
						"VIOLATIONS:\n" + string(indentJSON(local.Report.Violations)) + "\n\n" +
						"CURRENT_JSON:\n" + doc,
					Format: mcq.Contract.SchemaJSON, TopP: 1, NumPredict: len(doc)/3*2 + 256,
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{truth: parse(t, valid), script: tt.script}
			out := Run(context.Background(), Job{Validator: mcq, Params: params, Text: tt.text, Prompt: task, Model: fm, ModelName: "llama3.1:8b"})
			if out.Status != StatusRepaired {
				t.Errorf("Status = %q, want %q", out.Status, StatusRepaired)
			}
			if diff := cmp.Diff(tt.want, fm.requests()); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunStops checks that the deadline and the caller going away stop the
// ladder at once: the call in flight returns, no further call is made, and
// Outcome.Err says why.
func TestRunStops(t *testing.T) {
	v := contractFor(t, "mcq", func(c *contracts.Contract) {
		c.Fallback = contracts.Fallback{Mode: contracts.FallbackModel, Model: "qwen2.5:14b"}
	})
	params, _ := v.Params(nil)
	valid := fixture(t, v, "valid_python_basics_en.json")
	answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
	tests := []struct {
		name        string
		timeout     time.Duration
		cancelFirst bool
		script      []step
		// rerunCancels makes the re-run disconnect the client and hang.
		rerunCancels bool
		wantCalls    int
		wantRungs    []string
		wantModel    int
		wantReruns   int
		wantErr      []error
	}{
		{
			name: "deadline during a repair call", timeout: 300 * time.Millisecond,
			script:    []step{{block: true}, {}},
			wantCalls: 1, wantRungs: []string{"local", "llm_repair_scoped", "fallback:model"}, wantModel: 1,
			wantErr: []error{ErrBudgetExhausted, context.DeadlineExceeded},
		},
		{
			name:      "client disconnects during a repair call",
			script:    []step{{cancel: true}, {}},
			wantCalls: 1, wantRungs: []string{"local", "llm_repair_scoped", "fallback:model"}, wantModel: 1,
			wantErr: []error{context.Canceled},
		},
		{
			name:      "client disconnects during partial regeneration",
			script:    []step{{}, {}, {cancel: true}},
			wantCalls: 3, wantRungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped", "partial_regeneration", "fallback:model"}, wantModel: 3,
			wantErr: []error{context.Canceled},
		},
		{
			name:   "client disconnects during the re-run",
			script: []step{{}, {}, {}}, rerunCancels: true,
			wantCalls: 4, wantRungs: []string{"local", "llm_repair_scoped", "llm_repair_scoped", "partial_regeneration", "rerun:0.3", "fallback:model"}, wantModel: 3, wantReruns: 1,
			wantErr: []error{context.Canceled},
		},
		{
			name:        "client gone before the ladder starts",
			cancelFirst: true,
			wantRungs:   []string{"local", "fallback:model"},
			wantErr:     []error{context.Canceled},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if tt.cancelFirst {
				cancel()
			}
			fm := &fakeModel{truth: parse(t, valid), script: tt.script, cancel: cancel}
			reruns, fallbacks := 0, 0
			job := Job{
				Validator: v, Params: params, Text: answer3, Model: fm,
				Rerun: func(ctx context.Context, temp float64) (Reply, error) {
					reruns++
					if tt.rerunCancels {
						cancel()
					}
					<-ctx.Done()
					return Reply{}, ctx.Err()
				},
				RerunModel: func(ctx context.Context, model string) (Reply, error) {
					fallbacks++
					return Reply{Text: valid}, nil
				},
			}
			out := Run(ctx, job)
			if out.Status != StatusFailed || out.Doc != nil {
				t.Errorf("Status = %q (doc %v), want %q without a document", out.Status, out.Doc != nil, StatusFailed)
			}
			if out.LLMCalls != tt.wantCalls {
				t.Errorf("LLMCalls = %d, want %d", out.LLMCalls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantRungs, out.Rungs); diff != "" {
				t.Errorf("Rungs mismatch (-want +got):\n%s", diff)
			}
			if n := len(fm.requests()); n != tt.wantModel {
				t.Errorf("model calls = %d, want %d", n, tt.wantModel)
			}
			if reruns != tt.wantReruns || fallbacks != 0 {
				t.Errorf("re-runs = %d, fallback model calls = %d; want %d and 0", reruns, fallbacks, tt.wantReruns)
			}
			for _, want := range tt.wantErr {
				if !errors.Is(out.Err, want) {
					t.Errorf("Err = %v, want errors.Is %v", out.Err, want)
				}
			}
		})
	}
}

// TestRunBudgetError checks Outcome.Err when max_llm_calls runs out, and
// that a ladder that ran its course reports none.
func TestRunBudgetError(t *testing.T) {
	v := contractFor(t, "mcq", nil)
	params, _ := v.Params(nil)
	answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
	truth := parse(t, fixture(t, v, "valid_python_basics_en.json"))
	tests := []struct {
		name     string
		maxCalls int
		wantErr  error
	}{
		{"budget of one call", 1, ErrBudgetExhausted},
		{"default budget is enough", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{truth: truth, script: []step{{}, {}, {}}}
			out := Run(context.Background(), Job{Validator: v, Params: params, Text: answer3, Model: fm, MaxLLMCalls: tt.maxCalls})
			if !errors.Is(out.Err, tt.wantErr) || (tt.wantErr == nil && out.Err != nil) {
				t.Errorf("Err = %v, want %v", out.Err, tt.wantErr)
			}
		})
	}
}

func TestItemIndex(t *testing.T) {
	tests := []struct {
		array   string
		pointer string
		path    string
		want    int
		wantOK  bool
	}{
		{"/questions", "/questions/3/answer", "questions[3].answer", 3, true},
		{"/questions", "/questions/12", "questions[12]", 12, true},
		{"/questions", "", "questions[7].options", 7, true},
		{"/questions", "/questions", "questions", 0, false},
		{"/questions", "/meta/question_count", "meta.question_count", 0, false},
		{"/questions", "", "12:4", 0, false},
		{"/questions", "/questions/03/answer", "", 0, false},
		{"/questions", "/questionsX/3", "", 0, false},
		{"/data/items", "/data/items/2/title", "data.items[2].title", 2, true},
		{"/data/items", "", "data.items[2].title", 0, false},
	}
	for _, tt := range tests {
		got, ok := itemIndex(tt.array, validators.Violation{Pointer: tt.pointer, Path: tt.path})
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("itemIndex(%q, %q, %q) = %d, %v; want %d, %v", tt.array, tt.pointer, tt.path, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestReplacementItems(t *testing.T) {
	const doc = `{"meta":{},"questions":[{"q":0},{"q":1},{"q":2}]}`
	tests := []struct {
		name    string
		reply   string
		indices []int
		want    map[int]string
	}{
		{"full document, named index taken", `{"meta":{"x":1},"questions":[{"q":"a"},{"q":"b"},{"q":"c"}]}`, []int{1}, map[int]string{1: `{"q":"b"}`}},
		{"full document holding only the replacements", `{"meta":{},"questions":[{"q":"a"},{"q":"c"}]}`, []int{0, 2}, map[int]string{0: `{"q":"a"}`, 2: `{"q":"c"}`}},
		{"items alone, in order", `[{"q":"a"},{"q":"c"}]`, []int{0, 2}, map[int]string{0: `{"q":"a"}`, 2: `{"q":"c"}`}},
		{"every item, named ones taken", `[{"q":"a"},{"q":"b"},{"q":"c"}]`, []int{0, 2}, map[int]string{0: `{"q":"a"}`, 2: `{"q":"c"}`}},
		{"one item alone", `{"q":"b"}`, []int{1}, map[int]string{1: `{"q":"b"}`}},
		{"one object for two indices", `{"q":"b"}`, []int{0, 1}, nil},
		{"wrong number of items", `[{"q":"a"},{"q":"b"}]`, []int{1}, nil},
		{"items that are not objects", `["a","c"]`, []int{0, 2}, nil},
		{"a scalar", `42`, []int{1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := replacementItems("/questions", parse(t, tt.reply), tt.indices, len(parse(t, doc).Get("questions").Items))
			var gotS map[int]string
			if ok {
				gotS = map[int]string{}
				for i, v := range got {
					gotS[i] = string(strictjson.Marshal(v))
				}
			}
			if diff := cmp.Diff(tt.want, gotS); diff != "" {
				t.Errorf("replacementItems(%s, %v) mismatch (-want +got):\n%s", tt.reply, tt.indices, diff)
			}
		})
	}
}

func TestMergeItems(t *testing.T) {
	const base = `{"meta":{"n":3},"questions":[{"q":0},{"q":1},{"q":2}]}`
	viol := func(pointer string) validators.Violation {
		return validators.Violation{Pointer: pointer, Severity: validators.SeverityError}
	}
	tests := []struct {
		name         string
		reply        string
		sent         []validators.Violation
		want         string
		wantRestored int
	}{
		{"unrelated item restored", `{"meta":{"n":3},"questions":[{"q":"x"},{"q":"fixed"},{"q":2}]}`, []validators.Violation{viol("/questions/1/q")},
			`{"meta":{"n":3},"questions":[{"q":0},{"q":"fixed"},{"q":2}]}`, 1},
		{"meta is not an item", `{"meta":{"n":4},"questions":[{"q":0},{"q":1},{"q":2}]}`, []validators.Violation{viol("/meta/n")},
			`{"meta":{"n":4},"questions":[{"q":0},{"q":1},{"q":2}]}`, 0},
		{"key order is no change", `{"meta":{"n":3},"questions":[{"q":0},{"q":1},{"q":2}]}`, nil,
			base, 0},
		{"number written differently is a change", `{"meta":{"n":3},"questions":[{"q":0.0},{"q":1},{"q":2}]}`, nil,
			base, 1},
		{"dropped item without cause: array restored", `{"meta":{"n":2},"questions":[{"q":0},{"q":"fixed"}]}`, []validators.Violation{viol("/questions/1/q")},
			`{"meta":{"n":2},"questions":[{"q":0},{"q":1},{"q":2}]}`, 1},
		{"array-level violation, same length: every item may change", `{"meta":{"n":3},"questions":[{"q":"x"},{"q":1},{"q":"y"}]}`, []validators.Violation{viol("/questions")},
			`{"meta":{"n":3},"questions":[{"q":"x"},{"q":1},{"q":"y"}]}`, 0},
		{"added item asked for: kept", `{"meta":{"n":4},"questions":[{"q":0},{"q":1},{"q":2},{"q":3}]}`, []validators.Violation{viol("/questions")},
			`{"meta":{"n":4},"questions":[{"q":0},{"q":1},{"q":2},{"q":3}]}`, 0},
		{"reply without the array", `{"meta":{"n":3}}`, nil, `{"meta":{"n":3}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := parse(t, tt.reply)
			n := mergeItems(mcqValidator(t), "/questions", parse(t, base), reply, validators.Report{Violations: tt.sent})
			if got := string(strictjson.Marshal(reply)); got != tt.want || n != tt.wantRestored {
				t.Errorf("mergeItems(%s) = %s, %d restored; want %s, %d", tt.reply, got, n, tt.want, tt.wantRestored)
			}
		})
	}
}

func TestNumPredict(t *testing.T) {
	tests := []struct{ bytes, want int }{{0, 256}, {3, 258}, {3000, 2256}, {30000, 20256}}
	for _, tt := range tests {
		if got := NumPredict(tt.bytes); got != tt.want {
			t.Errorf("NumPredict(%d) = %d, want %d", tt.bytes, got, tt.want)
		}
	}
}

// TestRunNilRerun checks that a job without Rerun skips rung 4 without
// spending a call.
func TestRunNilRerun(t *testing.T) {
	v := contractFor(t, "oracle-score", nil)
	params, _ := v.Params(nil)
	out := Run(context.Background(), Job{Validator: v, Params: params, Text: fixture(t, v, "invalid_SCORE_MISMATCH_off_by_40.json")})
	if diff := cmp.Diff([]string{"local", "fallback:error"}, out.Rungs); diff != "" || out.LLMCalls != 0 || out.Status != StatusFailed {
		t.Errorf("Run() = %s, %d calls, rungs %v; want failed, 0 calls, [local fallback:error]", out.Status, out.LLMCalls, out.Rungs)
	}
}

// TestRunKeepsLocalChanges checks that a spliced document keeps the change
// log of the attempt it was spliced into: the local fixes of the first
// answer are still in it and must be reported.
func TestRunKeepsLocalChanges(t *testing.T) {
	v := contractFor(t, "mcq", nil)
	params, _ := v.Params(nil)
	truth := parse(t, fixture(t, v, "valid_python_basics_en.json"))
	answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
	text := strings.Replace(answer3, `"schema_version"`, `schema_version`, 1)
	fm := &fakeModel{truth: truth, script: []step{{}, {}, {fix: []string{ptrAnswer3}, items: []int{3}, single: true}}}
	out := Run(context.Background(), Job{Validator: v, Params: params, Text: text, Model: fm})
	if out.Status != StatusRepaired || !strictjson.Equal(out.Doc, truth) {
		t.Fatalf("Run() = %s, codes %v; want %s and the valid fixture", out.Status, out.Report.Codes(), StatusRepaired)
	}
	want := []Change{{Path: "3:5", Before: "schema_version", After: `"schema_version"`, Fixer: syntax.FixQuoteKey}}
	if diff := cmp.Diff(want, out.Changes); diff != "" {
		t.Errorf("Run() changes (-want +got):\n%s", diff)
	}
}

// TestRunNoJSONGoesToRerun: a runaway answer of prose with no JSON at all
// is not sent back to the model for repair (a repair prompt of megabytes);
// the re-run asks for the document again.
func TestRunNoJSONGoesToRerun(t *testing.T) {
	mcq := contractFor(t, "mcq", nil)
	params, _ := mcq.Params(nil)
	valid := fixture(t, mcq, "valid_python_basics_en.json")
	fm := &fakeModel{truth: parse(t, valid)}
	reruns := 0
	out := Run(context.Background(), Job{Validator: mcq, Params: params, Text: strings.Repeat("Once upon a time. ", 10000),
		Model: fm, ModelName: "m",
		Rerun: func(ctx context.Context, temp float64) (Reply, error) { reruns++; return Reply{Text: valid}, nil }})
	if out.Status != StatusRepaired || reruns != 1 {
		t.Errorf("Status %q after %d re-runs, want repaired by the first re-run", out.Status, reruns)
	}
	if n := len(fm.requests()); n != 0 {
		t.Errorf("%d repair calls for an answer with no JSON, want 0", n)
	}
}

// TestRunMergeFollowsFixScopes runs whole-document repair on the extraction
// contract, whose items are merged like the quiz's: a fix the violation's
// own hint asks for must survive the blind merge even where it lies outside
// the field the violation names (DURATION_RANGE points at duration_min, and
// raising duration_max or swapping the two is as right; an untimed event is
// fixed by a top-level question or by the event's start_time), while a
// member no violation allows is still put back.
func TestRunMergeFollowsFixScopes(t *testing.T) {
	v := contractFor(t, "extraction", nil)
	params, _ := v.Params(nil)
	durations := fixture(t, v, "invalid_DURATION_RANGE_min_above_max.json")
	event := fixture(t, v, "invalid_EVENT_NEEDS_QUESTION_event_without_time.json")
	tests := []struct {
		name       string
		text       string
		reply      string // what the model answers
		want       string // the answer, after the merge
		wantFields int
	}{
		{"duration_max raised", durations,
			mutate(t, durations, "/items/0/duration_max", "180"),
			mutate(t, durations, "/items/0/duration_max", "180"), 0},
		{"durations swapped", durations,
			mutate(t, durations, "/items/0/duration_min", "60", "/items/0/duration_max", "120"),
			mutate(t, durations, "/items/0/duration_min", "60", "/items/0/duration_max", "120"), 0},
		{"duration fixed, title rewritten: title put back", durations,
			mutate(t, durations, "/items/0/duration_max", "180", "/items/0/title", `"Die Präsentation fertigstellen"`),
			mutate(t, durations, "/items/0/duration_max", "180"), 1},
		{"event given its start_time", event,
			mutate(t, event, "/items/0", `{"type": "event", "title": "Arzt", "start_time": "09:30", "confidence": 0.4}`),
			mutate(t, event, "/items/0", `{"type": "event", "title": "Arzt", "start_time": "09:30", "confidence": 0.4}`), 0},
		{"event given its start_time, title rewritten: title put back", event,
			mutate(t, event, "/items/0", `{"type": "event", "title": "Arzttermin", "start_time": "09:30", "confidence": 0.4}`),
			mutate(t, event, "/items/0", `{"type": "event", "title": "Arzt", "start_time": "09:30", "confidence": 0.4}`), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{truth: parse(t, tt.reply), script: []step{{whole: true}}}
			out := Run(context.Background(), Job{Validator: v, Params: params, Text: tt.text, Model: fm})
			if out.Status != StatusRepaired {
				t.Fatalf("Run() = %s, codes %v, rungs %v; want %s", out.Status, out.Report.Codes(), out.Rungs, StatusRepaired)
			}
			if got, want := string(strictjson.Marshal(out.Doc)), string(strictjson.Marshal(parse(t, tt.want))); got != want {
				t.Errorf("Run() answered\n%s\nwant\n%s", got, want)
			}
			if out.RestoredFields+out.Restored != tt.wantFields {
				t.Errorf("Run() restored %d items and %d fields, want %d members in all", out.Restored, out.RestoredFields, tt.wantFields)
			}
		})
	}
}

// TestRunSpent checks that the ladder makes only the repair and
// regeneration calls an answer has left when a stream already made some
// on its items (Job.Spent): one budget per answer, whichever stage calls.
func TestRunSpent(t *testing.T) {
	v := contractFor(t, "mcq", nil)
	params, _ := v.Params(nil)
	answer3 := fixture(t, v, "invalid_ANSWER_RANGE_one_based_answer.json")
	truth := parse(t, fixture(t, v, "valid_python_basics_en.json"))
	tests := []struct {
		name      string
		spent     Spent
		wantRungs []string
	}{
		{"nothing spent", Spent{}, []string{"local", "llm_repair_scoped", "llm_repair_scoped", "partial_regeneration", "fallback:error"}},
		{"one repair spent", Spent{Repairs: 1}, []string{"local", "llm_repair_scoped", "partial_regeneration", "fallback:error"}},
		{"every repair spent", Spent{Repairs: 2}, []string{"local", "partial_regeneration", "fallback:error"}},
		{"more repairs spent than allowed", Spent{Repairs: 5}, []string{"local", "partial_regeneration", "fallback:error"}},
		{"repairs and the regeneration spent", Spent{Repairs: 2, Regenerations: 1}, []string{"local", "fallback:error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &fakeModel{truth: truth, script: []step{{}, {}, {}}}
			out := Run(context.Background(), Job{Validator: v, Params: params, Text: answer3, Model: fm, Spent: tt.spent})
			if diff := cmp.Diff(tt.wantRungs, out.Rungs); diff != "" {
				t.Errorf("Run(Spent %+v) rungs mismatch (-want +got):\n%s", tt.spent, diff)
			}
			if n := len(fm.requests()); n != out.LLMCalls || n != len(tt.wantRungs)-2 {
				t.Errorf("Run(Spent %+v) made %d model calls, LLMCalls %d; want %d", tt.spent, n, out.LLMCalls, len(tt.wantRungs)-2)
			}
		})
	}
}
