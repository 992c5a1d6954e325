package repair

import (
	"slices"
	"testing"

	"github.com/contractgateway/gateway/validators"
)

// TestErrorItems checks which items partial regeneration (itemErrors) and
// item-scoped repair (scopedIndices) pick for one report each: both take
// the sorted, distinct items in error and pass over warnings; an error
// outside every item stops partial regeneration, and stops scoped repair
// unless local repair re-derives it.
func TestErrorItems(t *testing.T) {
	item := func(ptr string) validators.Violation {
		return validators.Violation{Class: validators.ClassSemantic, Code: "ANSWER_OUT_OF_RANGE", Severity: validators.SeverityError, Pointer: ptr}
	}
	derived := validators.Violation{Class: validators.ClassSemantic, Code: "QUESTION_COUNT_MISMATCH", Severity: validators.SeverityError, Pointer: "/meta/count"}
	onArray := validators.Violation{Class: validators.ClassSemantic, Code: "QUESTION_COUNT_MISMATCH", Severity: validators.SeverityError, Pointer: "/questions"}
	parseErr := validators.Violation{Class: validators.ClassParse, Code: "NO_JSON_BLOCK", Severity: validators.SeverityError}
	warning := item("/questions/7/answer")
	warning.Severity = validators.SeverityWarning
	tests := []struct {
		name     string
		vs       []validators.Violation
		item     []int
		itemOK   bool
		scoped   []int
		scopedOK bool
	}{
		{"items", []validators.Violation{item("/questions/3/answer"), item("/questions/1"), item("/questions/3/options")}, []int{1, 3}, true, []int{1, 3}, true},
		{"warning only", []validators.Violation{warning}, nil, false, nil, false},
		{"derived outside", []validators.Violation{item("/questions/2/answer"), derived}, nil, false, []int{2}, true},
		{"derived alone", []validators.Violation{derived}, nil, false, nil, false},
		{"on the array", []validators.Violation{item("/questions/2/answer"), onArray}, nil, false, nil, false},
		{"parse", []validators.Violation{parseErr}, nil, false, nil, false},
	}
	val := mcqValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validators.Report{Violations: tt.vs}
			if got, ok := itemErrors("/questions", r); !slices.Equal(got, tt.item) || ok != tt.itemOK {
				t.Errorf("itemErrors(%v) = %v, %v, want %v, %v", tt.vs, got, ok, tt.item, tt.itemOK)
			}
			if got, ok := scopedIndices(val, "/questions", r); !slices.Equal(got, tt.scoped) || ok != tt.scopedOK {
				t.Errorf("scopedIndices(%v) = %v, %v, want %v, %v", tt.vs, got, ok, tt.scoped, tt.scopedOK)
			}
		})
	}
}
