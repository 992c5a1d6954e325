package packs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs/extraction"
)

// TestFixScope checks that a validator answers the fix scopes its own
// contract's packs declare, and nothing of packs it does not use.
func TestFixScope(t *testing.T) {
	packs := Builtins()
	newV := func(rules ...string) *validators.Validator {
		t.Helper()
		v, err := validators.New(&contracts.Contract{Name: "c", Version: "1", Rules: rules}, packs)
		if err != nil {
			t.Fatalf("New(%v): %v", rules, err)
		}
		return v
	}
	tests := []struct {
		rules []string
		code  string
		want  validators.FixScope
	}{
		{[]string{"mcq"}, "OPTIONS_COUNT", validators.FixScope{Fields: []string{"options", "answer"}}},
		{[]string{"mcq"}, "TEST_DURATION_MISMATCH", validators.FixScope{Derived: true}},
		{[]string{"mcq"}, "SCHEMA_TYPE", validators.FixScope{}},
		{[]string{"mcq"}, "DURATION_RANGE", validators.FixScope{}},
		{[]string{"extraction"}, "DURATION_RANGE", validators.FixScope{Fields: []string{"duration_min", "duration_max"}}},
		{[]string{"extraction"}, "EVENT_NEEDS_QUESTION", validators.FixScope{ItemFields: []string{"start_time"}}},
		{[]string{"extraction"}, "OPTIONS_COUNT", validators.FixScope{}},
		{nil, "ANSWER_RANGE", validators.FixScope{}},
	}
	for _, tt := range tests {
		if got := newV(tt.rules...).FixScope(tt.code); !cmp.Equal(got, tt.want) {
			t.Errorf("FixScope(%s) with packs %v = %+v, want %+v", tt.code, tt.rules, got, tt.want)
		}
	}
}

// dupScope is a pack that claims a code another pack owns.
type dupScope struct{ extraction.Rules }

func (dupScope) FixScopes() map[string]validators.FixScope {
	return map[string]validators.FixScope{"DURATION_RANGE": {Whole: true}}
}

func TestFixScopeDeclaredTwice(t *testing.T) {
	packs := Builtins()
	packs["dup"] = dupScope{}
	_, err := validators.New(&contracts.Contract{Name: "c", Version: "1", Rules: []string{"extraction", "dup"}}, packs)
	if err == nil || !strings.Contains(err.Error(), `"extraction" and "dup" both declare the fix scope of DURATION_RANGE`) {
		t.Fatalf("New() error = %v, want one naming both packs and the code", err)
	}
}
