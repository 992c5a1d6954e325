package validators_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// mcqDoc builds a valid MCQ document of about size bytes: questions cycle
// through weights 1, 2, 3 with their cognitive levels and explanations.
func mcqDoc(size int) string {
	var qs []string
	counts := [4]int{}
	total := 0
	minutes := 0
	for i := 0; total < size || i < 3; i++ {
		w := i%3 + 1
		counts[w]++
		minutes += w
		level := [...]string{"", "Reproduction", "Application", "Analysis"}[w]
		ext := "null"
		if w > 1 {
			ext = `{"title":"Why","steps":["Read the code line by line.","Track the value of each variable."],"content":"The list is sorted in place, so the original order is lost."}`
		}
		q := fmt.Sprintf(`{"question_id":"Q%03d","question":"%d. Which statement about list number %d in Python is true?","options":["It is sorted in place","It returns a new list","It raises an error","It prints nothing"],"answer":%d,"explanation":"Lists have a sort method that works in place and returns None.","weight":%d,"topic":"Lists","concept":"sorting","cognitive_level":"%s","extended_explanation":%s,"mini_glossary":[{"term":"list","definition":"A mutable sequence."}]}`,
			i+1, i+1, i, i%4, w, level, ext)
		qs = append(qs, q)
		total += len(q)
	}
	n := len(qs)
	return fmt.Sprintf(`{"meta":{"schema_version":"1.0","title":"Bench","created":"2026-11-22","target_audience":"developers","question_count":%d,"difficulty_profile":{"easy":%d,"medium":%d,"hard":%d},"time_per_weight_minutes":{"1":1,"2":2,"3":3},"additional_buffer_minutes":5,"test_duration_minutes":%d},"questions":[%s]}`,
		n, counts[1], counts[2], counts[3], minutes+5, strings.Join(qs, ","))
}

func benchValidator(b *testing.B, rules bool) *validators.Validator {
	b.Helper()
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		b.Fatal(err)
	}
	c, _ := reg.Lookup("mcq")
	if !rules {
		cc := *c
		cc.Rules = nil
		c = &cc
	}
	v, err := validators.New(c, validators.Builtins())
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkValidateMCQ measures the whole pipeline (extract, strict parse,
// schema, rule packs) against the same pipeline without rule packs, so the
// rules' share can be read off side by side.
func BenchmarkValidateMCQ(b *testing.B) {
	for _, size := range []int{2 << 10, 20 << 10, 200 << 10} {
		doc := mcqDoc(size)
		for _, mode := range []struct {
			name  string
			rules bool
		}{{"schema", false}, {"full", true}} {
			v := benchValidator(b, mode.rules)
			params, _ := v.Params(nil)
			if res := v.Validate(doc, params); !res.Report.Valid {
				b.Fatalf("bench document invalid: %v", res.Report.Codes())
			}
			b.Run(fmt.Sprintf("%dKB/%s", size>>10, mode.name), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					v.Validate(doc, params)
				}
			})
		}
	}
}

// TestBenchDocumentIsValid keeps the benchmark honest: the generated
// documents must be valid, or the benchmark measures error paths.
func TestBenchDocumentIsValid(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Lookup("mcq")
	v, err := validators.New(c, validators.Builtins())
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	for _, size := range []int{2 << 10, 20 << 10} {
		doc := mcqDoc(size)
		if _, err := strictjson.Parse([]byte(doc)); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if res := v.Validate(doc, params); !res.Report.Valid {
			t.Errorf("size %d: %v", size, res.Report.Violations)
		}
	}
}
