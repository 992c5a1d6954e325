package mcqgen_test

import (
	"testing"

	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators/packs"
)

// TestDocIsValid keeps the benchmarks honest: the generated documents are
// valid and carry no warning, or benchmarks would measure error paths.
func TestDocIsValid(t *testing.T) {
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	for _, size := range []int{2 << 10, 20 << 10, 200 << 10} {
		doc := mcqgen.Doc(size)
		if len(doc) < size {
			t.Errorf("Doc(%d) has %d bytes", size, len(doc))
		}
		if res := v.Validate(doc, params); len(res.Report.Violations) != 0 {
			t.Errorf("Doc(%d): %d violations, first %+v", size, len(res.Report.Violations), res.Report.Violations[0])
		}
	}
}

func TestQuestionsIsValid(t *testing.T) {
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	for _, n := range []int{1, 5, 20, 50} {
		res := v.Validate(mcqgen.Questions(n), params)
		if len(res.Report.Violations) != 0 {
			t.Errorf("Questions(%d): %d violations, first %+v", n, len(res.Report.Violations), res.Report.Violations[0])
		}
		if got := len(res.Doc.Get("questions").Items); got != n {
			t.Errorf("Questions(%d) has %d questions", n, got)
		}
	}
}
