package validators

import (
	"encoding/json"
	"math"
	"strconv"

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

// ruleActual is the "actual" of a violation about v: the value as the model
// wrote it (numbers keep their literal through json.Number), so that the
// report shows what the document holds and not a float round trip of it.
func ruleActual(v *strictjson.Value) any {
	if v == nil {
		return nil
	}
	if v.Kind == strictjson.KindNumber {
		return json.Number(v.Num)
	}
	return v.Interface()
}

// ruleNumber turns a computed quantity into the value a report and a fix
// carry: an int when it is whole, so that 30 minutes read "30" and not
// "30.0", else the float rounded to nine decimals, which removes the binary
// noise of sums such as 0.1 + 0.2 without touching any real minute value.
func ruleNumber(f float64) any {
	f = math.Round(f*1e9) / 1e9
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int(f)
	}
	return f
}

// ruleFormat renders a computed quantity for a hint, the way ruleNumber
// encodes it.
func ruleFormat(f float64) string {
	switch n := ruleNumber(f).(type) {
	case int:
		return strconv.Itoa(n)
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	return ""
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
