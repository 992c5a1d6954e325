package repair

import (
	"path/filepath"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestLocalFixesThroughExpected checks that a contract check with an
// expected expression is fixed by local repair, and validated again: a
// line amount fixed in one round changes the total the next round
// derives.
func TestLocalFixesThroughExpected(t *testing.T) {
	cs, err := contracts.LoadPath(filepath.Join("..", "examples", "contracts", "invoice"))
	if err != nil || len(cs) != 1 {
		t.Fatalf("LoadPath = %v, %v", cs, err)
	}
	v, err := validators.New(cs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	tests := []struct {
		name, in, want string
		valid          bool
		fixers         int
	}{
		{"line and total", `{"issue_date":"2026-11-01","due_date":"2026-12-01","items":[{"qty":3,"price":4,"amount":10},{"qty":2,"price":0.25,"amount":0.5}],"total":13}`,
			`{"issue_date":"2026-11-01","due_date":"2026-12-01","items":[{"qty":3,"price":4,"amount":12},{"qty":2,"price":0.25,"amount":0.5}],"total":12.5}`, true, 3},
		{"total only", `{"issue_date":"2026-11-01","due_date":"2026-12-01","items":[{"qty":1,"price":2,"amount":2}],"total":3}`,
			`{"issue_date":"2026-11-01","due_date":"2026-12-01","items":[{"qty":1,"price":2,"amount":2}],"total":2}`, true, 1},
		{"a warning is not fixed", `{"issue_date":"2026-11-01","due_date":"2026-10-01","items":[{"qty":1,"price":2,"amount":2}],"total":2}`,
			`{"issue_date":"2026-11-01","due_date":"2026-10-01","items":[{"qty":1,"price":2,"amount":2}],"total":2}`, true, 0},
		{"a missing price leaves the amount to the schema", `{"issue_date":"2026-11-01","due_date":"2026-12-01","items":[{"qty":1,"amount":2}],"total":3}`,
			`{"issue_date":"2026-11-01","due_date":"2026-12-01","items":[{"qty":1,"amount":2}],"total":2}`, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Local(v, tt.in, params)
			if got := string(strictjson.Marshal(res.Doc)); got != tt.want || res.Report.Valid != tt.valid || len(res.Changes) != tt.fixers {
				t.Errorf("Local(%s) = %s valid=%v %d changes %+v, want %s valid=%v %d changes", tt.in, got, res.Report.Valid, len(res.Changes), res.Changes, tt.want, tt.valid, tt.fixers)
			}
		})
	}
}
