// Package mcq is the "mcq" rule pack: the rules of a multiple-choice
// question set that its JSON Schema cannot express, and the fixes that
// follow from the rest of the document.
package mcq

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Rules is the "mcq" rule pack. Its rules are named C1–C7 in the code:
// C1 the meta values derived from the questions (question_count,
// difficulty_profile, test_duration_minutes), C2 the number of options and
// the answer index, C3 weight 1/2/3 as cognitive level
// Reproduction/Application/Analysis, C4 the extended explanation (null for
// weight 1, else title, 2 to 6 steps and content), C5 question ids
// Q001, Q002, … and the "1. " numbering of question texts, C6 distinct and
// specific options (no "all of the above"), C7 multi-line code in a fence
// with a language, its lines numbered "1: ", "2: ", …. The caller's
// question_count and difficulty add rules of their own. The schema has already checked types; every rule here
// skips values of the wrong type silently, because the schema reports them
// and a second violation for the same defect would only confuse a repair.
//
// Fixes follow one principle: a fix is offered only when the right value
// follows from the rest of the document and the caller's parameters, and
// applying every fix of one report never undoes another. Derived values
// (counts, durations, ids, numbering) are fixable; content (an answer, an
// option, an explanation) never is.
//
// The pack's files follow its jobs: params.go reads the parameters,
// meta.go checks the meta values derived from the questions,
// questions.go checks each question, code.go lints code in the
// texts, dupes.go finds near-duplicate questions and words.go
// holds the word folding and catch-all phrases the others share.
type Rules struct {
	// forbidden finds catch-all options ("all of the above" and its
	// equivalents): each phrase as its normalised words, indexed by the
	// first word, so that an option costs one map lookup per word. One
	// regular expression of all phrases was tried first and took most of
	// the pack's time in BenchmarkMCQRules: Go's regexp engine follows every
	// alternative at every position.
	forbidden map[string][][]string
}

var _ validators.RulePack = (*Rules)(nil)

// FixScopes implements validators.FixScopeDeclarer.
func (m *Rules) FixScopes() map[string]validators.FixScope { return mcqFixScopes }

// mcqFixScopes declares, per code of the pack, what its fix may touch
// inside a question besides the field the violation names, and which
// document-level codes local repair re-derives from the questions. A new
// rule adds its code here.
var mcqFixScopes = map[string]validators.FixScope{
	"QUESTION_COUNT_MISMATCH":     {Derived: true},
	"DIFFICULTY_PROFILE_SUM":      {Derived: true},
	"DIFFICULTY_PROFILE_MISMATCH": {Derived: true},
	"TEST_DURATION_MISMATCH":      {Derived: true},
	// The answer is an index into the options: changing the options may
	// move it.
	"ANSWER_RANGE":      {Fields: []string{"answer"}},
	"OPTIONS_COUNT":     {Fields: []string{"options", "answer"}},
	"DUPLICATE_OPTIONS": {Fields: []string{"options", "answer"}},
	"FORBIDDEN_OPTION":  {Fields: []string{"options", "answer"}},
	// Weight, level and extended explanation follow each other (C3, C4).
	"WEIGHT_INVALID":                {Fields: []string{"weight", "cognitive_level", "extended_explanation"}},
	"COGNITIVE_LEVEL_MISMATCH":      {Fields: []string{"weight", "cognitive_level", "extended_explanation"}},
	"EXTENDED_EXPLANATION_NOT_NULL": {Fields: []string{"extended_explanation"}},
	"EXTENDED_EXPLANATION_MISSING":  {Fields: []string{"extended_explanation"}},
	"EXTENDED_EXPLANATION_INVALID":  {Fields: []string{"extended_explanation"}},
	"EXTENDED_EXPLANATION_STEPS":    {Fields: []string{"extended_explanation"}},
	"QUESTION_ID_SEQUENCE":          {Fields: []string{"question_id"}},
	"QUESTION_ID_DUPLICATE":         {Fields: []string{"question_id"}},
	"QUESTION_NUMBERING":            {Fields: []string{"question"}},
	"CODE_FENCE_MISSING":            {},
	"CODE_LINE_NUMBERS":             {},
	// A near-duplicate question is fixed by writing another question.
	"DUPLICATE_QUESTION": {Whole: true},
}

// New compiles the pack's matchers once; Check only evaluates them.
func New() *Rules {
	m := &Rules{forbidden: map[string][][]string{}}
	add := func(words []string) {
		m.forbidden[words[0]] = append(m.forbidden[words[0]], words[1:])
	}
	for _, p := range mcqForbiddenPhrases {
		add(strings.Fields(mcqNormalize(p)))
	}
	for _, p := range mcqForbiddenPatterns {
		add(strings.Fields(p))
	}
	return m
}

// Check evaluates every rule of the pack on doc.
func (m *Rules) Check(doc *strictjson.Value, p validators.Params, e *validators.Emitter) {
	cfg, _ := parseMCQParams(p)
	meta := doc.Get("meta")
	qs := doc.Get("questions")
	var items []*strictjson.Value
	haveQs := qs != nil && qs.Kind == strictjson.KindArray
	if haveQs {
		items = qs.Items
	}
	w := mcqCollectWeights(items)

	// The number of questions the document must end up with: the caller's
	// when given, else the one it has: counts derive from the questions.
	target, haveTarget := cfg.count, cfg.count > 0
	if !haveTarget && haveQs {
		target, haveTarget = len(items), true
	}
	// lengthOK is false when the caller asked for another number of
	// questions than the document holds: then no count is derivable.
	lengthOK := haveQs && len(items) == target

	if haveQs && cfg.count > 0 && len(items) != cfg.count {
		e.Semantic("QUESTION_COUNT_MISMATCH", validators.SeverityError, qs, []validators.Seg{"questions"}, cfg.count, len(items),
			fmt.Sprintf("Return exactly %d questions (there are %d): add or remove whole questions, then renumber them and their question_id in order.", cfg.count, len(items)), nil)
	}
	if meta != nil && meta.Kind == strictjson.KindObject {
		m.checkMeta(meta, w, cfg, target, haveTarget, haveQs, lengthOK, e)
	}
	// The caller's difficulty binds the questions too; when every weight
	// is known and their counts differ, only new weights can fix it.
	if haveQs && cfg.hasDiff && w.unknown == 0 && w.counts != cfg.diff {
		want, got := mcqDifficulty(cfg.diff), mcqDifficulty(w.counts)
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", validators.SeverityError, qs, []validators.Seg{"questions"}, want, got,
			fmt.Sprintf("Change question weights so that %d questions have weight 1, %d weight 2 and %d weight 3 (now %s), keeping cognitive_level and extended_explanation consistent with each weight.", cfg.diff[0], cfg.diff[1], cfg.diff[2], got), nil)
	}
	if !haveQs {
		return
	}
	ids := make(mcqIDs, len(items))
	for i, q := range items {
		if id, ok := q.Get("question_id").AsString(); ok {
			if at, seen := ids[id]; !seen {
				ids[id] = [2]int{i, -1}
			} else if at[1] < 0 {
				ids[id] = [2]int{at[0], i}
			}
		}
	}
	var sc mcqScratch
	for i, q := range items {
		if q.Kind == strictjson.KindObject {
			m.checkQuestion(i, q, w.of[i], cfg, ids, &sc, e)
		}
	}
	m.checkDuplicateQuestions(items, &sc, e)
}
