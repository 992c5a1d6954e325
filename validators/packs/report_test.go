package packs

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
)

// TestReportRepairType: repair_type is the class of the earliest stage that
// fails; a warning (a shape normalisation) fails nothing.
func TestReportRepairType(t *testing.T) {
	c := &contracts.Contract{Name: "wrapped", Version: "1", Rules: []string{"planning"},
		Shape: contracts.Shape{Expect: "object", Unwrap: []string{"data"}}}
	v, err := validators.New(c, Builtins())
	if err != nil {
		t.Fatal(err)
	}
	semantic := validators.ClassSemantic
	tests := []struct {
		name  string
		doc   string
		valid bool
		want  *validators.Class
	}{
		{"warning only", `{"data":{"mini_task_ids":["a"]}}`, true, nil},
		{"warning before a semantic error", `{"data":{"mini_task_ids":["a","b","c"]}}`, false, &semantic},
		{"no warning", `{"mini_task_ids":["a","b","c"]}`, false, &semantic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := v.Validate(tt.doc, validators.Params{}).Report
			if r.Valid != tt.valid || !cmp.Equal(r.RepairType, tt.want) {
				t.Errorf("Validate(%s) valid=%v repair_type=%v, want %v %v (codes %v)", tt.doc, r.Valid, deref(r.RepairType), tt.valid, deref(tt.want), r.Codes())
			}
		})
	}
}

func deref(c *validators.Class) any {
	if c == nil {
		return nil
	}
	return *c
}
