// Package oraclescore is the "oracle-score" rule pack: a score that must
// agree with its weighted breakdown.
package oraclescore

import (
	"fmt"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Rules is the "oracle-score" rule pack: the total score must agree
// with its weighted breakdown.
//
// The score and the 20-point tolerance are on 0–1000 while each breakdown
// value is on 0–100, so the expected score is the weighted sum itself,
// whose weights add up to 10: a breakdown of all 100s expects exactly
// 1000. Dividing the sum by 10 would land on 0–100, and a score written
// on that scale is reported as a mismatch.
type Rules struct{}

var _ validators.RulePack = Rules{}

// oracleWeights are the breakdown members and their weights, in tenths so
// that the sum stays an exact integer (riskBehavior counts 2.5).
var oracleWeights = []struct {
	key    string
	tenths int64
}{
	{"activity", 20}, {"maturity", 20}, {"diversity", 20}, {"riskBehavior", 25}, {"surveyMatch", 15},
}

// oracleTolerance is the largest accepted |score − expected| (2% of 1000).
const oracleTolerance = 20

// CheckParams accepts any parameters: the pack has none.
func (Rules) CheckParams(validators.Params) error { return nil }

// Check reports SCORE_MISMATCH when score is more than 20 points away from
// the weighted breakdown. A missing or non-integer score or breakdown
// member is the schema's finding, and then nothing is compared.
func (Rules) Check(doc *strictjson.Value, _ validators.Params, e *validators.Emitter) {
	sv := doc.Get("score")
	score, ok := sv.AsInt()
	if !ok {
		return
	}
	bd := doc.Get("scoreBreakdown")
	var tenths int64
	terms := ""
	for i, w := range oracleWeights {
		n, ok := bd.Get(w.key).AsInt()
		if !ok {
			return
		}
		tenths += n * w.tenths
		if i > 0 {
			terms += " + "
		}
		terms += fmt.Sprintf("%d×%s", n, validators.FormatQuantity(float64(w.tenths)/10))
	}
	if diff := score*10 - tenths; diff >= -oracleTolerance*10 && diff <= oracleTolerance*10 {
		return
	}
	expected := float64(tenths) / 10
	e.Semantic("SCORE_MISMATCH", validators.SeverityError, sv, []validators.Seg{"score"}, validators.Quantity(expected), validators.Actual(sv),
		fmt.Sprintf("Set score to %s (%s = activity×2 + maturity×2 + diversity×2 + riskBehavior×2.5 + surveyMatch×1.5), or correct scoreBreakdown; the two may differ by at most %d.", validators.FormatQuantity(expected), terms, oracleTolerance), nil)
}
