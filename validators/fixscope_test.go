package validators

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
)

// TestFixScope checks that a validator answers the fix scopes its own
// contract's packs declare, and nothing of packs it does not use.
func TestFixScope(t *testing.T) {
	packs := Builtins()
	newV := func(rules ...string) *Validator {
		t.Helper()
		v, err := New(&contracts.Contract{Name: "c", Version: "1", Rules: rules}, packs)
		if err != nil {
			t.Fatalf("New(%v): %v", rules, err)
		}
		return v
	}
	tests := []struct {
		rules []string
		code  string
		want  FixScope
	}{
		{[]string{"mcq"}, "OPTIONS_COUNT", FixScope{Fields: []string{"options", "answer"}}},
		{[]string{"mcq"}, "TEST_DURATION_MISMATCH", FixScope{Derived: true}},
		{[]string{"mcq"}, "SCHEMA_TYPE", FixScope{}},
		{[]string{"mcq"}, "DURATION_RANGE", FixScope{}},
		{[]string{"extraction"}, "DURATION_RANGE", FixScope{Fields: []string{"duration_min", "duration_max"}}},
		{[]string{"extraction"}, "EVENT_NEEDS_QUESTION", FixScope{ItemFields: []string{"start_time"}}},
		{[]string{"extraction"}, "OPTIONS_COUNT", FixScope{}},
		{nil, "ANSWER_RANGE", FixScope{}},
	}
	for _, tt := range tests {
		if got := newV(tt.rules...).FixScope(tt.code); !cmp.Equal(got, tt.want) {
			t.Errorf("FixScope(%s) with packs %v = %+v, want %+v", tt.code, tt.rules, got, tt.want)
		}
	}
}

// dupScope is a pack that claims a code another pack owns.
type dupScope struct{ extractionRules }

func (dupScope) FixScopes() map[string]FixScope {
	return map[string]FixScope{"DURATION_RANGE": {Whole: true}}
}

func TestFixScopeDeclaredTwice(t *testing.T) {
	packs := Builtins()
	packs["dup"] = dupScope{}
	_, err := New(&contracts.Contract{Name: "c", Version: "1", Rules: []string{"extraction", "dup"}}, packs)
	if err == nil || !strings.Contains(err.Error(), `"extraction" and "dup" both declare the fix scope of DURATION_RANGE`) {
		t.Fatalf("New() error = %v, want one naming both packs and the code", err)
	}
}
