package validators

import (
	"math"

	"github.com/contractgateway/gateway/strictjson"
)

// Builtins returns the rule packs a contract can name in its "rules" list,
// by name. It is the one place where packs are registered: an explicit map
// rather than init() side effects, so that reading this function tells the
// whole story and tests can build as many independent sets as they like.
// Each call compiles the packs' matchers afresh; callers call it once when
// contracts are loaded.
func Builtins() map[string]RulePack {
	return map[string]RulePack{
		"mcq":          newMCQRules(),
		"oracle-score": oracleRules{},
		"extraction":   extractionRules{},
		"planning":     planningRules{},
	}
}

// ruleSame reports whether two computed quantities are equal up to float
// noise. Minutes and scores are small decimals, so a relative tolerance of
// 1e-9 separates rounding error from any real difference.
func ruleSame(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// ruleKind names what a member holds for "actual" when its type is the
// problem: the JSON Schema type name, or "missing" when it is absent.
func ruleKind(v *strictjson.Value) string {
	if v == nil {
		return "missing"
	}
	return v.Kind.String()
}
