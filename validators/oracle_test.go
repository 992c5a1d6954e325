package validators

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOracleRules(t *testing.T) {
	// 80×2 + 70×2 + 60×2 + 50×2.5 + 90×1.5 = 680.
	const base = `{"score": 680, "scoreBreakdown": {"activity": 80, "maturity": 70, "diversity": 60, "riskBehavior": 50, "surveyMatch": 90}, "reasoning": "Steady activity.", "risk_factors": [], "strengths": []}`
	tests := []struct {
		name  string
		edits []docEdit
		want  []ruleHit
	}{
		{name: "score equals the weighted breakdown"},
		{name: "score 20 above passes", edits: []docEdit{setAt("/score", "700")}},
		{name: "score 20 below passes", edits: []docEdit{setAt("/score", "660")}},
		{name: "SCORE_MISMATCH 21 above", edits: []docEdit{setAt("/score", "701")},
			want: []ruleHit{errHit("SCORE_MISMATCH", "score", "/score", "680", "701", "")}},
		{name: "SCORE_MISMATCH for a score on the 0-100 scale", edits: []docEdit{setAt("/score", "68")},
			want: []ruleHit{errHit("SCORE_MISMATCH", "score", "/score", "680", "68", "")}},
		{name: "SCORE_MISMATCH with a half point expected", edits: []docEdit{setAt("/scoreBreakdown/riskBehavior", "51"), setAt("/score", "600")},
			want: []ruleHit{errHit("SCORE_MISMATCH", "score", "/score", "682.5", "600", "")}},
		{name: "half point inside the tolerance passes", edits: []docEdit{setAt("/scoreBreakdown/riskBehavior", "51"), setAt("/score", "663")}},
		{name: "half point just below fails", edits: []docEdit{setAt("/scoreBreakdown/riskBehavior", "51"), setAt("/score", "662")},
			want: []ruleHit{errHit("SCORE_MISMATCH", "score", "/score", "682.5", "662", "")}},
		{name: "half point just outside fails", edits: []docEdit{setAt("/scoreBreakdown/riskBehavior", "51"), setAt("/score", "703")},
			want: []ruleHit{errHit("SCORE_MISMATCH", "score", "/score", "682.5", "703", "")}},
		{name: "all 100 expects 1000", edits: []docEdit{setAt("/scoreBreakdown", `{"activity": 100, "maturity": 100, "diversity": 100, "riskBehavior": 100, "surveyMatch": 100}`), setAt("/score", "1000")}},
		{name: "score of the wrong type is left to the schema", edits: []docEdit{setAt("/score", `"680"`)}},
		{name: "fractional score is left to the schema", edits: []docEdit{setAt("/score", "9.5")}},
		{name: "missing breakdown member is left to the schema", edits: []docEdit{delAt("/scoreBreakdown/surveyMatch"), setAt("/score", "1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := ruleEditedDoc(t, []byte(base), tt.edits...)
			got := ruleHits(t, ruleCheck(oracleRules{}, doc, nil).Violations)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%v) mismatch (-want +got):\n%s", tt.edits, diff)
			}
		})
	}
}

func TestOracleHint(t *testing.T) {
	doc := ruleEditedDoc(t, []byte(`{"score": 68, "scoreBreakdown": {"activity": 80, "maturity": 70, "diversity": 60, "riskBehavior": 50, "surveyMatch": 90}}`))
	r := ruleCheck(oracleRules{}, doc, nil)
	want := "Set score to 680 (80×2 + 70×2 + 60×2 + 50×2.5 + 90×1.5 = activity×2 + maturity×2 + diversity×2 + riskBehavior×2.5 + surveyMatch×1.5), or correct scoreBreakdown; the two may differ by at most 20."
	if len(r.Violations) != 1 || r.Violations[0].Hint != want {
		t.Errorf("Check() = %+v, want one violation with hint %q", r.Violations, want)
	}
}
