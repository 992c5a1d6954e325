package mcq

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/internal/packtest"
	"github.com/contractgateway/gateway/validators/strictjson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func ruleReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const mcqBasePath = "testdata/rules/mcq_base.json"

// builtinDir is the built-in contracts' source directory, read directly so
// that these tests see the files as they are written, not as embedded.
const builtinDir = "../../../contracts/builtin"

// The base document: Q1 weight 1, Q2 weight 2 with a numbered python
// fence, Q3 weight 3 with three options; 1 + 2 + 4 minutes + 5 buffer = 12.
const q2Text = "2. What does this code print?\\n```python\\n1: x = 2\\n2: print(x * 3)\\n```"

var mcqRuleTests = []struct {
	name   string
	edits  []packtest.Edit
	params validators.Params
	want   []packtest.Hit
}{
	{name: "base document is valid"},
	{name: "base document is valid with every matching param", params: validators.Params{"options": "C", "question_count": "3", "difficulty": "1/1/1"}},

	// QUESTION_COUNT_MISMATCH
	{name: "QUESTION_COUNT_MISMATCH meta derived from length", edits: []packtest.Edit{packtest.SetAt("/meta/question_count", "4")},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_COUNT_MISMATCH", "meta.question_count", "/meta/question_count", "3", "4", "3")}},
	{name: "QUESTION_COUNT_MISMATCH param disagrees with length, nothing derived", params: validators.Params{"question_count": "4"},
		want: []packtest.Hit{
			packtest.ErrHit("QUESTION_COUNT_MISMATCH", "meta.question_count", "/meta/question_count", "4", "3", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_SUM", "meta.difficulty_profile", "/meta/difficulty_profile", "4", "3", ""),
			packtest.ErrHit("QUESTION_COUNT_MISMATCH", "questions", "/questions", "4", "3", ""),
		}},
	{name: "QUESTION_COUNT_MISMATCH meta agrees with param, questions do not", params: validators.Params{"question_count": "4"},
		edits: []packtest.Edit{packtest.SetAt("/meta/question_count", "4"), packtest.SetAt("/meta/difficulty_profile/hard", "2")},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.hard", "/meta/difficulty_profile/hard", "1", "2", ""),
			packtest.ErrHit("QUESTION_COUNT_MISMATCH", "questions", "/questions", "4", "3", ""),
		}},
	{name: "QUESTION_COUNT_MISMATCH param agrees with length, meta derived", params: validators.Params{"question_count": "3"},
		edits: []packtest.Edit{packtest.SetAt("/meta/question_count", "5")},
		want:  []packtest.Hit{packtest.ErrHit("QUESTION_COUNT_MISMATCH", "meta.question_count", "/meta/question_count", "3", "5", "3")}},
	{name: "QUESTION_COUNT_MISMATCH difficulty param implies the count", params: validators.Params{"difficulty": "1/1/2"},
		want: []packtest.Hit{
			packtest.ErrHit("QUESTION_COUNT_MISMATCH", "meta.question_count", "/meta/question_count", "4", "3", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_SUM", "meta.difficulty_profile", "/meta/difficulty_profile", "4", "3", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.hard", "/meta/difficulty_profile/hard", "2", "1", ""),
			packtest.ErrHit("QUESTION_COUNT_MISMATCH", "questions", "/questions", "4", "3", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "questions", "/questions", `"1/1/2"`, `"1/1/1"`, ""),
		}},
	{name: "QUESTION_COUNT_MISMATCH of the wrong type is left to the schema", edits: []packtest.Edit{packtest.SetAt("/meta/question_count", `"3"`)}},
	{name: "QUESTION_COUNT_MISMATCH without questions array is left to the schema", edits: []packtest.Edit{packtest.SetAt("/questions", `{}`), packtest.SetAt("/meta/question_count", "9")}},

	// DIFFICULTY_PROFILE_SUM
	{name: "DIFFICULTY_PROFILE_SUM derives the whole profile", edits: []packtest.Edit{packtest.SetAt("/meta/difficulty_profile/hard", "2")},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_SUM", "meta.difficulty_profile", "/meta/difficulty_profile", "3", "4", `{"easy":1,"medium":1,"hard":1}`),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.hard", "/meta/difficulty_profile/hard", "1", "2", "1"),
		}},
	{name: "DIFFICULTY_PROFILE_SUM fix keeps other members and their order",
		edits: []packtest.Edit{packtest.SetAt("/meta/difficulty_profile", `{"hard": 0, "note": "x", "easy": 1, "medium": 1}`)},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_SUM", "meta.difficulty_profile", "/meta/difficulty_profile", "3", "2", `{"hard":1,"note":"x","easy":1,"medium":1}`),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.hard", "/meta/difficulty_profile/hard", "1", "0", "1"),
		}},
	{name: "DIFFICULTY_PROFILE_SUM not derivable while a weight is invalid",
		edits: []packtest.Edit{packtest.SetAt("/meta/difficulty_profile/hard", "2"), packtest.SetAt("/questions/2/weight", "5")},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_SUM", "meta.difficulty_profile", "/meta/difficulty_profile", "3", "4", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.hard", "/meta/difficulty_profile/hard", `"0..1"`, "2", ""),
			packtest.ErrHit("WEIGHT_INVALID", "questions[2].weight", "/questions/2/weight", `"1..3"`, "5", "3"),
		}},

	// DIFFICULTY_PROFILE_MISMATCH
	{name: "DIFFICULTY_PROFILE_MISMATCH derives a missing count", edits: []packtest.Edit{packtest.DelAt("/meta/difficulty_profile/hard")},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile", "/meta/difficulty_profile", `"1/1/1"`, `"missing hard"`, `{"easy":1,"medium":1,"hard":1}`),
		}},
	{name: "DIFFICULTY_PROFILE_MISMATCH missing count not derived against the param", edits: []packtest.Edit{packtest.DelAt("/meta/difficulty_profile/hard")}, params: validators.Params{"difficulty": "2/0/1"},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.easy", "/meta/difficulty_profile/easy", "2", "1", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.medium", "/meta/difficulty_profile/medium", "0", "1", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "questions", "/questions", `"2/0/1"`, `"1/1/1"`, ""),
		}},
	{name: "DIFFICULTY_PROFILE_MISMATCH derived from weights", edits: []packtest.Edit{packtest.SetAt("/meta/difficulty_profile/easy", "2"), packtest.SetAt("/meta/difficulty_profile/medium", "0")},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.easy", "/meta/difficulty_profile/easy", "1", "2", "1"),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.medium", "/meta/difficulty_profile/medium", "1", "0", "1"),
		}},
	{name: "DIFFICULTY_PROFILE_MISMATCH param disagrees with weights, nothing derived", params: validators.Params{"difficulty": "2/0/1"},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.easy", "/meta/difficulty_profile/easy", "2", "1", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.medium", "/meta/difficulty_profile/medium", "0", "1", ""),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "questions", "/questions", `"2/0/1"`, `"1/1/1"`, ""),
		}},
	{name: "DIFFICULTY_PROFILE_MISMATCH param agrees with weights, meta derived", params: validators.Params{"difficulty": "1/1/1"},
		edits: []packtest.Edit{packtest.SetAt("/meta/difficulty_profile/easy", "2"), packtest.SetAt("/meta/difficulty_profile/medium", "0")},
		want: []packtest.Hit{
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.easy", "/meta/difficulty_profile/easy", "1", "2", "1"),
			packtest.ErrHit("DIFFICULTY_PROFILE_MISMATCH", "meta.difficulty_profile.medium", "/meta/difficulty_profile/medium", "1", "0", "1"),
		}},
	{name: "DIFFICULTY_PROFILE_MISMATCH passes with a matching param", params: validators.Params{"difficulty": "1/1/1"}},

	// TEST_DURATION_MISMATCH
	{name: "TEST_DURATION_MISMATCH derived", edits: []packtest.Edit{packtest.SetAt("/meta/test_duration_minutes", "20")},
		want: []packtest.Hit{packtest.ErrHit("TEST_DURATION_MISMATCH", "meta.test_duration_minutes", "/meta/test_duration_minutes", "12", "20", "12")}},
	{name: "TEST_DURATION_MISMATCH with fractional minutes", edits: []packtest.Edit{packtest.SetAt("/meta/time_per_weight_minutes/2", "1.5")},
		want: []packtest.Hit{packtest.ErrHit("TEST_DURATION_MISMATCH", "meta.test_duration_minutes", "/meta/test_duration_minutes", "11.5", "12", "11.5")}},
	{name: "TEST_DURATION_MISMATCH passes with fractional minutes",
		edits: []packtest.Edit{packtest.SetAt("/meta/time_per_weight_minutes/2", "1.5"), packtest.SetAt("/meta/test_duration_minutes", "11.50")}},
	{name: "TEST_DURATION_MISMATCH is a range while a weight is invalid",
		edits: []packtest.Edit{packtest.SetAt("/questions/0/weight", "0"), packtest.SetAt("/meta/test_duration_minutes", "30")},
		want: []packtest.Hit{
			packtest.ErrHit("TEST_DURATION_MISMATCH", "meta.test_duration_minutes", "/meta/test_duration_minutes", `"12..15"`, "30", ""),
			packtest.ErrHit("WEIGHT_INVALID", "questions[0].weight", "/questions/0/weight", `"1..3"`, "0", "1"),
		}},
	{name: "TEST_DURATION_MISMATCH passes inside the range while a weight is invalid", edits: []packtest.Edit{packtest.SetAt("/questions/0/weight", "0")},
		want: []packtest.Hit{packtest.ErrHit("WEIGHT_INVALID", "questions[0].weight", "/questions/0/weight", `"1..3"`, "0", "1")}},
	{name: "TEST_DURATION_MISMATCH without the minutes of a used weight is left to the schema",
		edits: []packtest.Edit{packtest.DelAt("/meta/time_per_weight_minutes/3"), packtest.SetAt("/meta/test_duration_minutes", "99")}},

	// ANSWER_RANGE
	{name: "ANSWER_RANGE past the last option", edits: []packtest.Edit{packtest.SetAt("/questions/2/answer", "3")},
		want: []packtest.Hit{packtest.ErrHit("ANSWER_RANGE", "questions[2].answer", "/questions/2/answer", `"0..2"`, "3", "")}},
	{name: "ANSWER_RANGE negative", edits: []packtest.Edit{packtest.SetAt("/questions/0/answer", "-1")},
		want: []packtest.Hit{packtest.ErrHit("ANSWER_RANGE", "questions[0].answer", "/questions/0/answer", `"0..3"`, "-1", "")}},
	{name: "ANSWER_RANGE passes on the last option", edits: []packtest.Edit{packtest.SetAt("/questions/2/answer", "2")}},
	{name: "ANSWER_RANGE of the wrong type is left to the schema", edits: []packtest.Edit{packtest.SetAt("/questions/2/answer", `"B"`)}},

	// OPTIONS_COUNT
	{name: "OPTIONS_COUNT C below 3", edits: []packtest.Edit{packtest.SetAt("/questions/2/options", `["a", "b"]`)},
		want: []packtest.Hit{packtest.ErrHit("OPTIONS_COUNT", "questions[2].options", "/questions/2/options", `"3..5"`, "2", "")}},
	{name: "OPTIONS_COUNT C above 5", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Paris", "Lyon", "Nice", "Lille", "Metz", "Brest"]`)},
		want: []packtest.Hit{packtest.ErrHit("OPTIONS_COUNT", "questions[0].options", "/questions/0/options", `"3..5"`, "6", "")}},
	{name: "OPTIONS_COUNT A wants exactly 4", params: validators.Params{"options": "A"},
		want: []packtest.Hit{packtest.ErrHit("OPTIONS_COUNT", "questions[2].options", "/questions/2/options", "4", "3", "")}},
	{name: "OPTIONS_COUNT B wants exactly 5", params: validators.Params{"options": "B"},
		want: []packtest.Hit{
			packtest.ErrHit("OPTIONS_COUNT", "questions[0].options", "/questions/0/options", "5", "4", ""),
			packtest.ErrHit("OPTIONS_COUNT", "questions[1].options", "/questions/1/options", "5", "4", ""),
			packtest.ErrHit("OPTIONS_COUNT", "questions[2].options", "/questions/2/options", "5", "3", ""),
		}},
	{name: "OPTIONS_COUNT A passes with 4", params: validators.Params{"options": "A"},
		edits: []packtest.Edit{packtest.SetAt("/questions/2/options", `["It is faster to copy", "Halving needs order", "Python requires it", "Lists are always sorted"]`)}},

	// DUPLICATE_OPTIONS
	{name: "DUPLICATE_OPTIONS after trimming and case folding", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Paris", "Lyon", " paris ", "Nice"]`)},
		want: []packtest.Hit{packtest.ErrHit("DUPLICATE_OPTIONS", "questions[0].options[2]", "/questions/0/options/2", `"distinct from options[0]"`, `" paris "`, "")}},
	{name: "DUPLICATE_OPTIONS passes on similar but distinct options", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Paris", "Paris, Texas", "Lyon", "Nice"]`)}},
	{name: "DUPLICATE_OPTIONS names the first occurrence each time", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Paris", "Lyon", "PARIS", "paris"]`)},
		want: []packtest.Hit{packtest.ErrHit("DUPLICATE_OPTIONS", "questions[0].options[2]", "/questions/0/options/2", `"distinct from options[0]"`, `"PARIS"`, ""),
			packtest.ErrHit("DUPLICATE_OPTIONS", "questions[0].options[3]", "/questions/0/options/3", `"distinct from options[0]"`, `"paris"`, "")}},
	{name: "DUPLICATE_OPTIONS folds case beyond ASCII", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Σίσυφος", "ΣΊΣΥΦΟΣ", "Kelvin", "\u212aelvin"]`)},
		want: []packtest.Hit{packtest.ErrHit("DUPLICATE_OPTIONS", "questions[0].options[1]", "/questions/0/options/1", `"distinct from options[0]"`, `"ΣΊΣΥΦΟΣ"`, ""),
			packtest.ErrHit("DUPLICATE_OPTIONS", "questions[0].options[3]", "/questions/0/options/3", `"distinct from options[2]"`, "\"\u212aelvin\"", "")}},
	{name: "DUPLICATE_OPTIONS under full case folding", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Weniger gießen", "WENIGER GIESSEN", "Mehr gießen", "Nie gießen"]`)},
		want: []packtest.Hit{packtest.ErrHit("DUPLICATE_OPTIONS", "questions[0].options[1]", "/questions/0/options/1", `"distinct from options[0]"`, `"WENIGER GIESSEN"`, "")}},

	// WEIGHT_INVALID
	{name: "WEIGHT_INVALID derived from cognitive_level", edits: []packtest.Edit{packtest.SetAt("/questions/1/weight", "0")},
		want: []packtest.Hit{packtest.ErrHit("WEIGHT_INVALID", "questions[1].weight", "/questions/1/weight", `"1..3"`, "0", "2")}},
	{name: "WEIGHT_INVALID without a valid cognitive_level", edits: []packtest.Edit{packtest.SetAt("/questions/1/weight", "7"), packtest.SetAt("/questions/1/cognitive_level", `"Anwendung"`)},
		want: []packtest.Hit{packtest.ErrHit("WEIGHT_INVALID", "questions[1].weight", "/questions/1/weight", `"1..3"`, "7", "")}},
	{name: "WEIGHT_INVALID of the wrong type is left to the schema", edits: []packtest.Edit{packtest.SetAt("/questions/1/weight", `"2"`)}},

	// COGNITIVE_LEVEL_MISMATCH
	{name: "COGNITIVE_LEVEL_MISMATCH in case", edits: []packtest.Edit{packtest.SetAt("/questions/2/cognitive_level", `"analysis"`)},
		want: []packtest.Hit{packtest.ErrHit("COGNITIVE_LEVEL_MISMATCH", "questions[2].cognitive_level", "/questions/2/cognitive_level", `"Analysis"`, `"analysis"`, `"Analysis"`)}},
	{name: "COGNITIVE_LEVEL_MISMATCH for another weight", edits: []packtest.Edit{packtest.SetAt("/questions/0/cognitive_level", `"Application"`)},
		want: []packtest.Hit{packtest.ErrHit("COGNITIVE_LEVEL_MISMATCH", "questions[0].cognitive_level", "/questions/0/cognitive_level", `"Reproduction"`, `"Application"`, `"Reproduction"`)}},

	// EXTENDED_EXPLANATION_*
	{name: "EXTENDED_EXPLANATION_NOT_NULL set null", edits: []packtest.Edit{packtest.SetAt("/questions/0/extended_explanation", `{"title": "t", "steps": ["a", "b"], "content": "c"}`)},
		want: []packtest.Hit{packtest.ErrHit("EXTENDED_EXPLANATION_NOT_NULL", "questions[0].extended_explanation", "/questions/0/extended_explanation", "null", `"object"`, "null")}},
	{name: "EXTENDED_EXPLANATION_MISSING for weight 2", edits: []packtest.Edit{packtest.SetAt("/questions/1/extended_explanation", "null")},
		want: []packtest.Hit{packtest.ErrHit("EXTENDED_EXPLANATION_MISSING", "questions[1].extended_explanation", "/questions/1/extended_explanation", `"object"`, "null", "")}},
	{name: "EXTENDED_EXPLANATION_INVALID members", edits: []packtest.Edit{packtest.SetAt("/questions/1/extended_explanation", `{"title": 5, "steps": ["a", "b"]}`)},
		want: []packtest.Hit{
			packtest.ErrHit("EXTENDED_EXPLANATION_INVALID", "questions[1].extended_explanation.content", "/questions/1/extended_explanation/content", `"string"`, `"missing"`, ""),
			packtest.ErrHit("EXTENDED_EXPLANATION_INVALID", "questions[1].extended_explanation.title", "/questions/1/extended_explanation/title", `"string"`, `"number"`, ""),
		}},
	{name: "EXTENDED_EXPLANATION_INVALID steps not an array", edits: []packtest.Edit{packtest.SetAt("/questions/2/extended_explanation/steps", `"a; b"`)},
		want: []packtest.Hit{packtest.ErrHit("EXTENDED_EXPLANATION_INVALID", "questions[2].extended_explanation.steps", "/questions/2/extended_explanation/steps", `"array"`, `"string"`, "")}},
	{name: "EXTENDED_EXPLANATION_STEPS too few", edits: []packtest.Edit{packtest.SetAt("/questions/1/extended_explanation/steps", `["a"]`)},
		want: []packtest.Hit{packtest.ErrHit("EXTENDED_EXPLANATION_STEPS", "questions[1].extended_explanation.steps", "/questions/1/extended_explanation/steps", `"2..6"`, "1", "")}},
	{name: "EXTENDED_EXPLANATION_STEPS too many", edits: []packtest.Edit{packtest.SetAt("/questions/2/extended_explanation/steps", `["1", "2", "3", "4", "5", "6", "7"]`)},
		want: []packtest.Hit{packtest.ErrHit("EXTENDED_EXPLANATION_STEPS", "questions[2].extended_explanation.steps", "/questions/2/extended_explanation/steps", `"2..6"`, "7", "")}},
	{name: "EXTENDED_EXPLANATION_INVALID passes with extra members", edits: []packtest.Edit{packtest.SetAt("/questions/1/extended_explanation", `{"title": "Evaluation", "steps": ["a", "b"], "content": "c", "source": "PEP 8"}`)}},
	{name: "EXTENDED_EXPLANATION_STEPS passes with 6", edits: []packtest.Edit{packtest.SetAt("/questions/2/extended_explanation/steps", `["1", "2", "3", "4", "5", "6"]`)}},
	{name: "EXTENDED_EXPLANATION rules wait for a valid weight",
		edits: []packtest.Edit{packtest.SetAt("/questions/1/weight", "9"), packtest.SetAt("/questions/1/cognitive_level", `"?"`), packtest.SetAt("/questions/1/extended_explanation", "null")},
		want:  []packtest.Hit{packtest.ErrHit("WEIGHT_INVALID", "questions[1].weight", "/questions/1/weight", `"1..3"`, "9", "")}},

	// QUESTION_ID_*
	{name: "QUESTION_ID_SEQUENCE derived from position", edits: []packtest.Edit{packtest.SetAt("/questions/1/question_id", `"Q2"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_ID_SEQUENCE", "questions[1].question_id", "/questions/1/question_id", `"Q002"`, `"Q2"`, `"Q002"`)}},
	{name: "QUESTION_ID_DUPLICATE on the later copy", edits: []packtest.Edit{packtest.SetAt("/questions/2/question_id", `"Q002"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_ID_DUPLICATE", "questions[2].question_id", "/questions/2/question_id", `"Q003"`, `"Q002"`, `"Q003"`)}},
	{name: "QUESTION_ID_SEQUENCE passes on ids of the wrong type, left to the schema", edits: []packtest.Edit{packtest.SetAt("/questions/1/question_id", "2")}},
	{name: "QUESTION_ID_DUPLICATE on the misplaced copy", edits: []packtest.Edit{packtest.SetAt("/questions/1/question_id", `"Q003"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_ID_DUPLICATE", "questions[1].question_id", "/questions/1/question_id", `"Q002"`, `"Q003"`, `"Q002"`)}},

	// QUESTION_NUMBERING
	{name: "QUESTION_NUMBERING Q prefix", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"Q1. What is the capital of France?"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_NUMBERING", "questions[0].question", "/questions/0/question", `"1. "`, `"Q1."`, `"1. What is the capital of France?"`)}},
	{name: "QUESTION_NUMBERING missing", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"What is the capital of France?"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_NUMBERING", "questions[0].question", "/questions/0/question", `"1. "`, `"What is the …"`, `"1. What is the capital of France?"`)}},
	{name: "QUESTION_NUMBERING wrong number and style", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"3) What is the capital of France?"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_NUMBERING", "questions[0].question", "/questions/0/question", `"1. "`, `"3)"`, `"1. What is the capital of France?"`)}},
	{name: "QUESTION_NUMBERING without the space", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"1.What is the capital of France?"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_NUMBERING", "questions[0].question", "/questions/0/question", `"1. "`, `"1."`, `"1. What is the capital of France?"`)}},
	{name: "QUESTION_NUMBERING passes with more space after the prefix", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"1.  What is the capital of France?"`)}},
	{name: "QUESTION_NUMBERING keeps a leading number that is content", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"3.14 is the value of which constant?"`)},
		want: []packtest.Hit{packtest.ErrHit("QUESTION_NUMBERING", "questions[0].question", "/questions/0/question", `"1. "`, `"3.14 is the …"`, `"1. 3.14 is the value of which constant?"`)}},

	// FORBIDDEN_OPTION
	{name: "FORBIDDEN_OPTION English", edits: []packtest.Edit{packtest.SetAt("/questions/0/options/3", `"All of the above."`)},
		want: []packtest.Hit{packtest.ErrHit("FORBIDDEN_OPTION", "questions[0].options[3]", "/questions/0/options/3", `"a specific answer"`, `"All of the above."`, "")}},
	{name: "FORBIDDEN_OPTION German", edits: []packtest.Edit{packtest.SetAt("/questions/0/options/3", `"Alle oben genannten Antworten"`)},
		want: []packtest.Hit{packtest.ErrHit("FORBIDDEN_OPTION", "questions[0].options[3]", "/questions/0/options/3", `"a specific answer"`, `"Alle oben genannten Antworten"`, "")}},
	{name: "FORBIDDEN_OPTION German none", edits: []packtest.Edit{packtest.SetAt("/questions/0/options/3", `"keine der oben genannten"`)},
		want: []packtest.Hit{packtest.ErrHit("FORBIDDEN_OPTION", "questions[0].options[3]", "/questions/0/options/3", `"a specific answer"`, `"keine der oben genannten"`, "")}},
	{name: "FORBIDDEN_OPTION Russian with ё", edits: []packtest.Edit{packtest.SetAt("/questions/0/options/3", `"Всё вышеперечисленное"`)},
		want: []packtest.Hit{packtest.ErrHit("FORBIDDEN_OPTION", "questions[0].options[3]", "/questions/0/options/3", `"a specific answer"`, `"Всё вышеперечисленное"`, "")}},
	{name: "FORBIDDEN_OPTION both A and B", edits: []packtest.Edit{packtest.SetAt("/questions/0/options/3", `"Both A and B"`)},
		want: []packtest.Hit{packtest.ErrHit("FORBIDDEN_OPTION", "questions[0].options[3]", "/questions/0/options/3", `"a specific answer"`, `"Both A and B"`, "")}},
	{name: "FORBIDDEN_OPTION behind a letter prefix", edits: []packtest.Edit{packtest.SetAt("/questions/0/options/3", `"D) None of these."`)},
		want: []packtest.Hit{packtest.ErrHit("FORBIDDEN_OPTION", "questions[0].options[3]", "/questions/0/options/3", `"a specific answer"`, `"D) None of these."`, "")}},
	{name: "FORBIDDEN_OPTION passes on ordinary words", edits: []packtest.Edit{packtest.SetAt("/questions/0/options", `["Paris", "None", "Above the clouds", "All"]`)}},

	// CODE_FENCE_MISSING
	{name: "CODE_FENCE_MISSING unfenced numbered code", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n1: x = 2\n2: print(x * 3)"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_FENCE_MISSING", "questions[1].question", "/questions/1/question", `"`+"```<language>"+`"`, `"1: x = 2"`, "")}},
	{name: "CODE_FENCE_MISSING fence without language", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`\n1: x = 2\n2: print(x * 3)\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_FENCE_MISSING", "questions[1].question", "/questions/1/question", `"`+"```<language>"+`"`, `"`+"```"+`"`, "")}},
	{name: "CODE_FENCE_MISSING lines separated by a literal backslash-n", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\\n1: x = 2\\n2: print(x * 3)\\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_FENCE_MISSING", "questions[1].question", "/questions/1/question", `"`+"```<language>"+`"`, `"`+"```"+`python\\n1: x = 2\\n2: …"`, "")}},
	{name: "CODE_FENCE_MISSING unclosed fence", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\n1: x = 2\n2: print(x * 3)"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_FENCE_MISSING", "questions[1].question", "/questions/1/question", `"`+"```"+`"`, `"end of text"`, "")}},
	{name: "CODE_FENCE_MISSING in an option", edits: []packtest.Edit{packtest.SetAt("/questions/1/options/2", `"x = 2\nprint(x * 3)"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_FENCE_MISSING", "questions[1].options[2]", "/questions/1/options/2", `"`+"```<language>"+`"`, `"x = 2"`, "")}},
	{name: "CODE_FENCE_MISSING passes on short inline code", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"1. What does sorted(xs) return for xs = [2, 1]?"`)}},
	{name: "CODE_FENCE_MISSING passes on prose lines", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"1. Consider the statements:\nParis is large.\nLyon is old.\nWhich is the capital?"`)}},
	{name: "CODE_FENCE_MISSING passes on formulas", edits: []packtest.Edit{packtest.SetAt("/questions/0/question", `"1. Given\nE = m * c ** 2\nF = m * a\nwhat is m?"`)}},

	// CODE_LINE_NUMBERS
	{name: "CODE_LINE_NUMBERS unnumbered lines", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\nx = 2\nprint(x * 3)\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_LINE_NUMBERS", "questions[1].question", "/questions/1/question", `"1: "`, `"x = 2"`, `"`+q2Text+`"`)}},
	{name: "CODE_LINE_NUMBERS out of sequence", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\n1: x = 2\n3: print(x * 3)\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_LINE_NUMBERS", "questions[1].question", "/questions/1/question", `"2: "`, `"3: print(x * 3)"`, `"`+q2Text+`"`)}},
	{name: "CODE_LINE_NUMBERS in list style", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\n1. x = 2\n2. print(x * 3)\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_LINE_NUMBERS", "questions[1].question", "/questions/1/question", `"1: "`, `"1. x = 2"`, `"`+q2Text+`"`)}},
	{name: "CODE_LINE_NUMBERS keeps indentation", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\ndef f():\n    return 6\nprint(f())\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_LINE_NUMBERS", "questions[1].question", "/questions/1/question", `"1: "`, `"def f():"`,
			`"2. What does this code print?\n`+"```"+`python\n1: def f():\n2:     return 6\n3: print(f())\n`+"```"+`"`)}},
	{name: "CODE_LINE_NUMBERS in an option", edits: []packtest.Edit{packtest.SetAt("/questions/1/options/2", `"`+"```"+`python\nx * 3\n`+"```"+`"`)},
		want: []packtest.Hit{packtest.ErrHit("CODE_LINE_NUMBERS", "questions[1].options[2]", "/questions/1/options/2", `"1: "`, `"x * 3"`, `"`+"```"+`python\n1: x * 3\n`+"```"+`"`)}},
	{name: "CODE_LINE_NUMBERS passes with a numbered blank line and blank edges", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"2. What does this code print?\n`+"```"+`python\n\n1: def f():\n2:     return 6\n3:\n4: print(f())\n\n`+"```"+`"`)}},
	{name: "QUESTION_NUMBERING and CODE_LINE_NUMBERS share one fix", edits: []packtest.Edit{packtest.SetAt("/questions/1/question", `"Q2 What does this code print?\n`+"```"+`python\nx = 2\nprint(x * 3)\n`+"```"+`"`)},
		want: []packtest.Hit{
			packtest.ErrHit("QUESTION_NUMBERING", "questions[1].question", "/questions/1/question", `"2. "`, `"Q2"`, `"`+q2Text+`"`),
			packtest.ErrHit("CODE_LINE_NUMBERS", "questions[1].question", "/questions/1/question", `"1: "`, `"x = 2"`, `"`+q2Text+`"`),
		}},

	// DUPLICATE_QUESTION
	{name: "DUPLICATE_QUESTION identical text", edits: []packtest.Edit{packtest.SetAt("/questions/2/question", `"3. What is the capital of France?"`)},
		want: []packtest.Hit{packtest.WarnHit("DUPLICATE_QUESTION", "questions[2].question", "/questions/2/question", `"< 0.9"`, "1")}},
	{name: "DUPLICATE_QUESTION at 0.92", edits: []packtest.Edit{
		packtest.SetAt("/questions/0/question", `"1. Which river flows through the city of Paris in the north of France?"`),
		packtest.SetAt("/questions/2/question", `"3. Which river flows through the city of Paris in the north of France today?"`)},
		want: []packtest.Hit{packtest.WarnHit("DUPLICATE_QUESTION", "questions[2].question", "/questions/2/question", `"< 0.9"`, "0.92")}},
	{name: "DUPLICATE_QUESTION passes below 0.9", edits: []packtest.Edit{packtest.SetAt("/questions/2/question", `"3. What is the capital city of France?"`)}},
}

func TestMCQRules(t *testing.T) {
	base := ruleReadFile(t, mcqBasePath)
	pack := New()
	for _, tt := range mcqRuleTests {
		t.Run(tt.name, func(t *testing.T) {
			doc := packtest.EditedDoc(t, base, tt.edits...)
			got := packtest.Hits(t, validators.CheckPack(pack, doc, tt.params).Violations)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%v, %v) mismatch (-want +got):\n%s", tt.edits, tt.params, diff)
			}
		})
	}
}

// TestMCQFixesConverge applies every fix of a report, validates again and
// repeats: the fixes of one report must agree with each other (one value
// per pointer), every fixable violation must carry a replace at its own
// pointer, and the process must reach a report without fixable violations
// within three rounds.
func TestMCQFixesConverge(t *testing.T) {
	base := ruleReadFile(t, mcqBasePath)
	pack := New()
	for _, tt := range mcqRuleTests {
		t.Run(tt.name, func(t *testing.T) {
			doc := packtest.EditedDoc(t, base, tt.edits...)
			ruleConverge(t, pack, doc, tt.params)
		})
	}
	t.Run("golden broken document", func(t *testing.T) {
		doc, err := strictjson.Parse(ruleReadFile(t, "testdata/rules/mcq_broken.json"))
		if err != nil {
			t.Fatal(err)
		}
		ruleConverge(t, pack, doc, nil)
	})
}

func ruleConverge(t *testing.T, pack validators.RulePack, doc *strictjson.Value, p validators.Params) {
	t.Helper()
	for round := 1; ; round++ {
		r := validators.CheckPack(pack, doc, p)
		byPointer := map[string]string{}
		var fixes []*validators.PatchOp
		for _, v := range r.Violations {
			if v.Fixable != (v.Fix != nil) {
				t.Fatalf("round %d: %s at %s: Fixable=%v but Fix=%v", round, v.Code, v.Pointer, v.Fixable, v.Fix)
			}
			if v.Fix == nil {
				continue
			}
			if v.Fix.Op != "replace" || v.Fix.Path != v.Pointer {
				t.Fatalf("round %d: %s: fix %+v is not a replace at %s", round, v.Code, *v.Fix, v.Pointer)
			}
			if prev, ok := byPointer[v.Pointer]; ok && prev != string(v.Fix.Value) {
				t.Fatalf("round %d: conflicting fixes at %s: %s and %s", round, v.Pointer, prev, v.Fix.Value)
			}
			byPointer[v.Pointer] = string(v.Fix.Value)
			fixes = append(fixes, v.Fix)
		}
		if len(fixes) == 0 {
			return
		}
		if round > 3 {
			t.Fatalf("still %d fixes after 3 rounds: %v", len(fixes), r.Codes())
		}
		// Applying the fixes in report order and in reverse must give the
		// same document: no fix may depend on another being applied first.
		fwd := ruleApplyFixes(t, doc.Clone(), fixes)
		slices.Reverse(fixes)
		rev := ruleApplyFixes(t, doc.Clone(), fixes)
		if !strictjson.Equal(fwd, rev) {
			t.Fatalf("round %d: fixes depend on their order:\n%s\n%s", round, strictjson.Marshal(fwd), strictjson.Marshal(rev))
		}
		var err error
		if doc, err = strictjson.Parse(strictjson.Marshal(fwd)); err != nil {
			t.Fatal(err)
		}
	}
}

func ruleApplyFixes(t *testing.T, doc *strictjson.Value, fixes []*validators.PatchOp) *strictjson.Value {
	t.Helper()
	for _, f := range fixes {
		nv, err := strictjson.Parse(f.Value)
		if err != nil {
			t.Fatalf("fix value %s: %v", f.Value, err)
		}
		if doc, err = strictjson.Replace(doc, f.Path, nv); err != nil {
			t.Fatalf("Replace(%s) = %v", f.Path, err)
		}
	}
	return doc
}

func TestMCQCheckParams(t *testing.T) {
	tests := []struct {
		params validators.Params
		want   string
	}{
		{validators.Params{}, ""},
		{validators.Params{"options": "A", "question_count": "10", "difficulty": "3/5/2"}, ""},
		{validators.Params{"options": "b"}, ""},
		{validators.Params{"difficulty": "0/4/0"}, ""},
		{validators.Params{"unrelated": "x"}, ""},
		{validators.Params{"options": "D"}, `mcq: param options="D": want A (exactly 4 options), B (exactly 5) or C (3 to 5)`},
		{validators.Params{"question_count": "ten"}, `mcq: param question_count="ten": want a positive integer such as 10`},
		{validators.Params{"question_count": "0"}, `mcq: param question_count="0": want a positive integer such as 10`},
		{validators.Params{"difficulty": "3-5-2"}, `mcq: param difficulty="3-5-2": want easy/medium/hard counts such as 3/5/2`},
		{validators.Params{"difficulty": "3/-1/2"}, `mcq: param difficulty="3/-1/2": want easy/medium/hard counts such as 3/5/2`},
		{validators.Params{"difficulty": "0/0/0"}, `mcq: param difficulty="0/0/0": want easy/medium/hard counts with a positive sum, such as 3/5/2`},
		{validators.Params{"question_count": "10", "difficulty": "3/5/3"}, `mcq: param difficulty="3/5/3" sums to 11 but question_count=10: want counts that add up to question_count`},
		{validators.Params{"options": "X", "question_count": "-2"}, "mcq: param options=\"X\": want A (exactly 4 options), B (exactly 5) or C (3 to 5)\nmcq: param question_count=\"-2\": want a positive integer such as 10"},
	}
	pack := New()
	for _, tt := range tests {
		got := ""
		if err := pack.CheckParams(tt.params); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckParams(%v) = %q, want %q", tt.params, got, tt.want)
		}
	}
}

// TestMCQRealisticFixture checks the 10-question fixture of the mcq
// contract, including its python question, with the question set's
// parameters.
func TestMCQRealisticFixture(t *testing.T) {
	raw := ruleReadFile(t, filepath.Join(builtinDir, "mcq", "testdata", "valid_python_basics_en.json"))
	doc, err := strictjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	params := validators.Params{"options": "C", "question_count": "10", "difficulty": "3/5/2"}
	if got := packtest.Hits(t, validators.CheckPack(New(), doc, params).Violations); len(got) != 0 {
		t.Errorf("Check(valid_python_basics_en.json, %v) = %v, want no violations", params, got)
	}
	q, _ := doc.Get("questions").Index(1).Get("question").AsString()
	if !strings.Contains(q, "```python\n1: ") || !strings.Contains(q, "\n2: ") {
		t.Errorf("questions[1].question = %q, want a python fence with numbered lines", q)
	}
}

// TestMCQGolden pins the complete report, hints included, for a realistic
// document with many faults. Refresh with go test -run TestMCQGolden -update.
func TestMCQGolden(t *testing.T) {
	raw := ruleReadFile(t, "testdata/rules/mcq_broken.json")
	doc, err := strictjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	r := validators.CheckPack(New(), doc, validators.Params{"question_count": "10", "difficulty": "3/5/2"})
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Violations); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/rules/mcq_broken.golden.json"
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := ruleReadFile(t, golden)
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("report mismatch (-want +got), run with -update to accept:\n%s", diff)
	}
}

// TestMCQDeterministic checks that the same input gives a byte-identical
// report, from the same pack and from a freshly built one.
func TestMCQDeterministic(t *testing.T) {
	raw := ruleReadFile(t, "testdata/rules/mcq_broken.json")
	render := func(pack validators.RulePack) string {
		doc, err := strictjson.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(validators.CheckPack(pack, doc, validators.Params{"difficulty": "3/5/2"}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pack := New()
	first := render(pack)
	for i := range 20 {
		p := pack
		if i%2 == 1 {
			p = New()
		}
		if got := render(p); got != first {
			t.Fatalf("run %d differs:\n%s\nwant\n%s", i, got, first)
		}
	}
}

// mcqBenchDoc generates a valid question set of at least size bytes: a mix
// of weights, four options each and every fifth question with a numbered
// python fence.
func mcqBenchDoc(size int) []byte {
	var qs []string
	counts := [3]int{}
	body := 0
	for i := 0; body < size; i++ {
		wt := i%3 + 1
		counts[wt-1]++
		text := fmt.Sprintf("%d. In scenario %d, which statement about topic %d and its consequence number %d holds?", i+1, i, i%17, i*7)
		if i%5 == 0 {
			text = fmt.Sprintf("%d. What does this code print for case %d?\n```python\n1: xs%d = list(range(%d))\n2: ys%d = [x * %d for x in xs%d]\n3: print(sum(ys%d))\n```", i+1, i, i, i+3, i, i%7+2, i, i)
		}
		ext := "null"
		if wt > 1 {
			ext = `{"title": "Why", "steps": ["First step of the reasoning.", "Second step of the reasoning."], "content": "Summary of the reasoning."}`
		}
		tb, _ := json.Marshal(text)
		q := fmt.Sprintf(`{"question_id": "Q%03d", "question": %s, "options": ["Option A %d", "Option B %d", "Option C %d", "Option D %d"], "answer": %d, "explanation": "Because of reason %d.", "weight": %d, "topic": "Topic %d", "concept": "Concept %d", "cognitive_level": %q, "extended_explanation": %s, "mini_glossary": [{"term": "term %d", "definition": "definition %d"}]}`,
			i+1, tb, i, i, i, i, i%4, i, wt, i%17, i, mcqLevels[wt], ext, i, i)
		qs = append(qs, q)
		body += len(q) + 2
	}
	n := len(qs)
	meta := fmt.Sprintf(`{"schema_version": "1.0", "title": "Benchmark", "created": "2025-01-01", "target_audience": "Everyone", "question_count": %d, "difficulty_profile": {"easy": %d, "medium": %d, "hard": %d}, "time_per_weight_minutes": {"1": 1, "2": 2, "3": 3}, "additional_buffer_minutes": 5, "test_duration_minutes": %d}`,
		n, counts[0], counts[1], counts[2], counts[0]+2*counts[1]+3*counts[2]+5)
	return []byte(`{"meta": ` + meta + `, "questions": [` + strings.Join(qs, ", ") + `]}`)
}

func TestMCQBenchDocIsValid(t *testing.T) {
	doc, err := strictjson.Parse(mcqBenchDoc(20 << 10))
	if err != nil {
		t.Fatal(err)
	}
	if got := packtest.Hits(t, validators.CheckPack(New(), doc, nil).Violations); len(got) != 0 {
		t.Errorf("benchmark document has violations: %v", got)
	}
}

func BenchmarkMCQRules(b *testing.B) {
	pack := New()
	for _, size := range []struct {
		name  string
		bytes int
	}{{"2KB", 2 << 10}, {"20KB", 20 << 10}, {"200KB", 200 << 10}} {
		raw := mcqBenchDoc(size.bytes)
		doc, err := strictjson.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				var e validators.Emitter
				pack.Check(doc, nil, &e)
			}
		})
	}
}

// TestMCQDuplicateQuestionsMatchesAllPairs checks the prefix-filtered
// similarity join against comparing every pair, on random question sets
// drawn from a small vocabulary with many near copies.
func TestMCQDuplicateQuestionsMatchesAllPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("which what why how is are the a of in on for python list set dict key value loop call return error type code")
	pack := New()
	pairs := 0
	for round := range 200 {
		var texts []string
		for range 2 + rng.IntN(30) {
			if len(texts) > 0 && rng.IntN(3) == 0 {
				// A near copy: one word replaced or appended.
				words := strings.Fields(texts[rng.IntN(len(texts))])
				if rng.IntN(2) == 0 {
					words[rng.IntN(len(words))] = vocab[rng.IntN(len(vocab))]
				} else {
					words = append(words, vocab[rng.IntN(len(vocab))])
				}
				texts = append(texts, strings.Join(words, " "))
				continue
			}
			words := make([]string, 1+rng.IntN(20))
			for k := range words {
				words[k] = vocab[rng.IntN(len(vocab))]
			}
			texts = append(texts, strings.Join(words, " "))
		}
		var want []string
		items := make([]*strictjson.Value, len(texts))
		for j, text := range texts {
			items[j] = &strictjson.Value{Kind: strictjson.KindObject, Members: []strictjson.Member{{Key: "question", Value: strictjson.String(text)}}}
			for i := range j {
				if ruleJaccard(texts[i], text) >= 0.9 {
					want = append(want, fmt.Sprintf("questions[%d] repeats questions[%d]", j, i))
					break
				}
			}
		}
		var e validators.Emitter
		pack.checkDuplicateQuestions(items, &mcqScratch{}, &e)
		var got []string
		for _, v := range e.Violations() {
			var j, i int
			fmt.Sscanf(v.Hint, "questions[%d].question nearly repeats questions[%d]", &j, &i)
			got = append(got, fmt.Sprintf("questions[%d] repeats questions[%d]", j, i))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d, texts %q: mismatch (-all pairs +prefix filter):\n%s", round, texts, diff)
		}
		pairs += len(want)
	}
	if pairs < 100 {
		t.Errorf("only %d near duplicates in 200 rounds: the generator no longer tests the join", pairs)
	}
}

func ruleJaccard(a, b string) float64 {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(s) {
			m[w] = true
		}
		return m
	}
	x, y := set(a), set(b)
	inter := 0
	for w := range x {
		if y[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(x)+len(y)-inter)
}

// TestMCQReplaceCounts pins the fix of a difficulty_profile: only the three
// counts change, every other member and the member order stay, and a
// missing count is added after the others.
func TestMCQReplaceCounts(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"all present", `{"easy":1,"medium":1,"hard":1}`, `{"easy":2,"medium":3,"hard":4}`},
		{"order and extras kept", `{"note":"x","hard":0,"easy":0,"medium":0}`, `{"note":"x","hard":4,"easy":2,"medium":3}`},
		{"missing counts appended in order", `{"medium":9}`, `{"medium":3,"easy":2,"hard":4}`},
		{"empty", `{}`, `{"easy":2,"medium":3,"hard":4}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prof, err := strictjson.Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(mcqReplaceCounts(prof, [3]int{2, 3, 4})); got != tt.want {
				t.Errorf("mcqReplaceCounts(%s) = %s, want %s", tt.in, got, tt.want)
			}
			if got := string(strictjson.Marshal(prof)); got != tt.in {
				t.Errorf("mcqReplaceCounts changed its input to %s", got)
			}
		})
	}
}

// TestNormalize: words are runs of letters and digits in lower case, ё
// (either case, anywhere in a word) is е, and all else between them is
// one space.
func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"  All of the ABOVE!! ": "all of the above",
		"ЁЛКА, всё—Ещё ёё":      "елка все еще ее",
		"Ёж_42 (Straße) ÉCOLE":  "еж 42 straße école",
		"":                      "",
		"—!?":                   "",
		"x\u0301y ё\u0308":      "x y е",
		"Ответ: всё вышеперечисл": "ответ все вышеперечисл",
	} {
		if got := mcqNormalize(in); got != want {
			t.Errorf("mcqNormalize(%q) = %q, want %q", in, got, want)
		}
	}
}
