//go:build ignore

// Command gen writes the ladder bench's corpus: faulty MCQ answers made from
// the mcq contract's valid fixture, one fault pattern per file, the way
// local models get them wrong (syntax, derivable fields, content). Run it
// from the module root:
//
//	go run repair/testdata/ladder/gen.go
//
// It refuses to write a case that validates as it is, so every file is a
// fault the ladder must deal with.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

const (
	source = "contracts/builtin/mcq/testdata/valid_python_basics_en.json"
	outDir = "repair/testdata/ladder/corpus"
)

// edit is one value-level change: the value at pointer becomes the JSON
// value, or, with value "-", the member is removed.
type edit struct{ pointer, value string }

// text is one text-level change of the indented document: old (which must
// occur) becomes new, count times (0: every occurrence).
type text struct {
	old, new string
	count    int
}

type fault struct {
	name  string
	edits []edit
	texts []text
	// wrap, when set, turns the document text into the model's whole answer.
	wrap func(doc string) string
	// cut keeps only this share of the answer (truncated output).
	cut float64
}

func fence(doc string) string { return "```json\n" + doc + "\n```" }

func main() {
	log.SetFlags(0)
	raw, err := os.ReadFile(source)
	if err != nil {
		log.Fatal(err)
	}
	v, err := packs.Builtin("mcq")
	if err != nil {
		log.Fatal(err)
	}
	params, _ := v.Params(nil)

	faults := []fault{
		// Syntax: rung 1 fixes these.
		{name: "trailing_comma_meta", texts: []text{{"\"test_duration_minutes\": 24\n", "\"test_duration_minutes\": 24,\n", 1}}},
		{name: "trailing_comma_options", texts: []text{{"\"lambda\"\n", "\"lambda\",\n", 1}}},
		{name: "line_comment", texts: []text{{"{\n  \"meta\"", "{\n  // generated question set\n  \"meta\"", 1}}},
		{name: "block_comment", texts: []text{{"\"answer\": 2,", "\"answer\": 2, /* tuple */", 1}}},
		{name: "single_quotes", texts: []text{{"\"title\": \"Python basics\"", "'title': 'Python basics'", 1}}},
		{name: "python_none", texts: []text{{"\"extended_explanation\": null", "\"extended_explanation\": None", 0}}},
		{name: "unquoted_keys", texts: []text{{"\"answer\":", "answer:", 0}, {"\"weight\":", "weight:", 0}}},
		{name: "prose_around_fence_trailing_comma", texts: []text{{"\"hard\": 2\n", "\"hard\": 2,\n", 1}}, wrap: func(d string) string { return "Here is your quiz:\n\n" + fence(d) + "\n\nGood luck with the test!" }},
		{name: "think_section_python_none", texts: []text{{"\"extended_explanation\": null", "\"extended_explanation\": None", 1}}, wrap: func(d string) string {
			return "<think>\nThe user wants ten questions. I will write them as JSON.\n</think>\n" + fence(d)
		}},
		{name: "missing_colon", texts: []text{{"\"title\": \"Python basics\"", "\"title: \"Python basics\"", 1}}},
		{name: "array_separator", texts: []text{{"    },\n    {\n      \"question_id\": \"Q004\"", "    }], {\n      \"question_id\": \"Q004\"", 1}}},
		{name: "markdown_escape", texts: []text{{"\"schema_version\"", "\"schema\\_version\"", 1}}},
		{name: "raw_newline", texts: []text{{"statement; lambda", "statement;\nlambda", 1}}},
		{name: "typographic_quotes", texts: []text{{"\"title\": \"Python basics\"", "\"title\": \u201cPython basics\u201d", 1}}},
		{name: "answer_as_string", texts: []text{{"\"answer\": 2,", "\"answer\": \"2\",", 1}}},
		{name: "two_blocks_one_draft", wrap: func(d string) string {
			return "Draft:\n```json\n{\"meta\": {\"title\": \"Python basics\"}}\n```\nFinal:\n" + fence(d)
		}},
		{name: "string_wrapped", wrap: func(d string) string { return string(strictjson.AppendString(nil, d)) }},
		{name: "syntax_combined", texts: []text{{"\"lambda\"\n", "\"lambda\",\n", 1}, {"\"extended_explanation\": null", "\"extended_explanation\": None", 0}, {"\"title\": \"Python basics\"", "'title': 'Python basics'", 1}}, wrap: func(d string) string { return "Sure!\n" + fence(d) }},
		// Truncated output: rung 1 reports it, a model has to finish it.
		{name: "truncated_60", cut: 0.6, wrap: fence},
		{name: "truncated_90", cut: 0.9},

		// Derivable fields: rung 1 re-derives them.
		{name: "question_count_12", edits: []edit{{"/meta/question_count", "12"}}},
		{name: "difficulty_swapped", edits: []edit{{"/meta/difficulty_profile/easy", "5"}, {"/meta/difficulty_profile/medium", "3"}}},
		{name: "duration_without_buffer", edits: []edit{{"/meta/test_duration_minutes", "19"}}},
		{name: "ids_skipped", edits: []edit{{"/questions/3/question_id", `"Q005"`}, {"/questions/4/question_id", `"Q006"`}}},
		{name: "id_duplicate", edits: []edit{{"/questions/6/question_id", `"Q006"`}}},
		{name: "numbering_parenthesis", edits: []edit{{"/questions/2/question", `"3) Which built-in type is immutable?"`}}},
		{name: "numbering_missing", edits: []edit{{"/questions/0/question", `"Which keyword defines a function in Python?"`}}},
		{name: "cognitive_lower_case", edits: []edit{{"/questions/4/cognitive_level", `"analysis"`}}},
		{name: "weight_4", edits: []edit{{"/questions/8/weight", "4"}}},
		{name: "explanation_for_easy", edits: []edit{{"/questions/0/extended_explanation", `{"title":"def","steps":["a","b"],"content":"c"}`}}},
		{name: "code_lines_unnumbered", texts: []text{{`1: xs = [3, 1, 2]\n2: ys = sorted(xs)\n3: print(xs, ys)`, `xs = [3, 1, 2]\nys = sorted(xs)\nprint(xs, ys)`, 1}}},
		{name: "derivable_combined", edits: []edit{{"/questions/1/question_id", `"Q1"`}, {"/questions/5/question", `"Q6. Which expression builds a list of the squares of 0 to 4?"`}, {"/meta/test_duration_minutes", "30"}}},

		// Content: only a model can write what is missing.
		{name: "answer_range_q3", edits: []edit{{"/questions/3/answer", "3"}}},
		{name: "answer_range_q0", edits: []edit{{"/questions/0/answer", "4"}}},
		{name: "options_count_two", edits: []edit{{"/questions/2/options", `["list","tuple"]`}, {"/questions/2/answer", "1"}}},
		{name: "options_count_six", edits: []edit{{"/questions/6/options", `["==","is","in","=","!=","is not"]`}}},
		{name: "forbidden_all_of_the_above", edits: []edit{{"/questions/5/options/3", `"All of the above"`}}},
		{name: "forbidden_none_of_these", edits: []edit{{"/questions/8/options/3", `"None of these"`}}},
		{name: "explanation_missing_q7", edits: []edit{{"/questions/7/extended_explanation", "null"}}},
		{name: "explanation_missing_two", edits: []edit{{"/questions/1/extended_explanation", "null"}, {"/questions/9/extended_explanation", "null"}}},
		{name: "explanation_one_step", edits: []edit{{"/questions/4/extended_explanation/steps", `["The default list is created once."]`}}},
		{name: "explanation_no_content", edits: []edit{{"/questions/4/extended_explanation/content", "-"}}},
		{name: "duplicate_options", edits: []edit{{"/questions/0/options/2", `"Def"`}}},
		{name: "missing_glossary", edits: []edit{{"/questions/6/mini_glossary", "-"}}},
		{name: "unfenced_code", texts: []text{{"print?\\n```python\\n1: xs = [3, 1, 2]\\n2: ys = sorted(xs)\\n3: print(xs, ys)\\n```", "print?\\n1: xs = [3, 1, 2]\\n2: ys = sorted(xs)\\n3: print(xs, ys)", 1}}},

		// Several kinds at once.
		{name: "content_and_derivable", edits: []edit{{"/questions/3/answer", "3"}, {"/questions/4/question_id", `"Q004"`}, {"/meta/test_duration_minutes", "19"}}},
		{name: "content_and_syntax", edits: []edit{{"/questions/5/options/3", `"All of the above"`}}, texts: []text{{"\"lambda\"\n", "\"lambda\",\n", 1}}, wrap: func(d string) string { return "Here you go:\n" + fence(d) }},
		{name: "content_three_items", edits: []edit{{"/questions/3/answer", "3"}, {"/questions/2/options", `["list","tuple"]`}, {"/questions/2/answer", "1"}, {"/questions/8/options/3", `"None of these"`}}},
		{name: "content_four_items", edits: []edit{{"/questions/0/answer", "4"}, {"/questions/5/options/3", `"All of the above"`}, {"/questions/7/extended_explanation", "null"}, {"/questions/9/extended_explanation/steps", `["ValueError."]`}}},
		{name: "content_with_comment_and_prose", edits: []edit{{"/questions/1/extended_explanation", "null"}}, texts: []text{{"{\n  \"meta\"", "{\n  // quiz\n  \"meta\"", 1}}, wrap: func(d string) string { return "I wrote the quiz.\n" + fence(d) + "\nTell me if you want more." }},
	}

	if err := os.MkdirAll(outDir, 0o755); err != nil {
		log.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(outDir, "*.txt"))
	for _, f := range old {
		os.Remove(f)
	}
	for i, f := range faults {
		answer, err := build(raw, f)
		if err != nil {
			log.Fatalf("%s: %v", f.name, err)
		}
		res := v.Validate(answer, params)
		if res.Report.Valid {
			log.Fatalf("%s: the answer is valid as written; it is no fault", f.name)
		}
		name := fmt.Sprintf("%03d_%s.txt", i+1, f.name)
		if err := os.WriteFile(filepath.Join(outDir, name), []byte(answer), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-40s %s\n", name, strings.Join(res.Report.Codes(), " "))
	}
	fmt.Printf("%d cases in %s\n", len(faults), outDir)
}

func build(raw []byte, f fault) (string, error) {
	doc, err := strictjson.Parse(raw)
	if err != nil {
		return "", err
	}
	for _, e := range f.edits {
		if e.value == "-" {
			if err := remove(doc, e.pointer); err != nil {
				return "", err
			}
			continue
		}
		nv, err := strictjson.Parse([]byte(e.value))
		if err != nil {
			return "", fmt.Errorf("%s: %w", e.pointer, err)
		}
		if doc, err = strictjson.Replace(doc, e.pointer, nv); err != nil {
			return "", err
		}
	}
	s := string(strictjson.MarshalIndent(doc, "  "))
	for _, t := range f.texts {
		if !strings.Contains(s, t.old) {
			return "", fmt.Errorf("text %q not found", t.old)
		}
		n := t.count
		if n == 0 {
			n = -1
		}
		s = strings.Replace(s, t.old, t.new, n)
	}
	if f.wrap != nil {
		s = f.wrap(s)
	}
	if f.cut > 0 {
		s = s[:int(float64(len(s))*f.cut)]
	}
	return s, nil
}

// remove deletes the object member that pointer names.
func remove(doc *strictjson.Value, pointer string) error {
	i := strings.LastIndex(pointer, "/")
	parent, err := doc.At(pointer[:i])
	if err != nil {
		return err
	}
	key := pointer[i+1:]
	for j, m := range parent.Members {
		if m.Key == key {
			parent.Members = append(parent.Members[:j], parent.Members[j+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%s: no member %q", pointer, key)
}
