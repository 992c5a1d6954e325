package oraclescore

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/internal/packtest"
)

func TestOracleRules(t *testing.T) {
	// 80×2 + 70×2 + 60×2 + 50×2.5 + 90×1.5 = 680.
	const base = `{"score": 680, "scoreBreakdown": {"activity": 80, "maturity": 70, "diversity": 60, "riskBehavior": 50, "surveyMatch": 90}, "reasoning": "Steady activity.", "risk_factors": [], "strengths": []}`
	tests := []struct {
		name  string
		edits []packtest.Edit
		want  []packtest.Hit
	}{
		{name: "score equals the weighted breakdown"},
		{name: "score 20 above passes", edits: []packtest.Edit{packtest.SetAt("/score", "700")}},
		{name: "score 20 below passes", edits: []packtest.Edit{packtest.SetAt("/score", "660")}},
		{name: "SCORE_MISMATCH 21 above", edits: []packtest.Edit{packtest.SetAt("/score", "701")},
			want: []packtest.Hit{packtest.ErrHit("SCORE_MISMATCH", "score", "/score", "680", "701", "")}},
		{name: "SCORE_MISMATCH for a score on the 0-100 scale", edits: []packtest.Edit{packtest.SetAt("/score", "68")},
			want: []packtest.Hit{packtest.ErrHit("SCORE_MISMATCH", "score", "/score", "680", "68", "")}},
		{name: "SCORE_MISMATCH with a half point expected", edits: []packtest.Edit{packtest.SetAt("/scoreBreakdown/riskBehavior", "51"), packtest.SetAt("/score", "600")},
			want: []packtest.Hit{packtest.ErrHit("SCORE_MISMATCH", "score", "/score", "682.5", "600", "")}},
		{name: "half point inside the tolerance passes", edits: []packtest.Edit{packtest.SetAt("/scoreBreakdown/riskBehavior", "51"), packtest.SetAt("/score", "663")}},
		{name: "half point just below fails", edits: []packtest.Edit{packtest.SetAt("/scoreBreakdown/riskBehavior", "51"), packtest.SetAt("/score", "662")},
			want: []packtest.Hit{packtest.ErrHit("SCORE_MISMATCH", "score", "/score", "682.5", "662", "")}},
		{name: "half point just outside fails", edits: []packtest.Edit{packtest.SetAt("/scoreBreakdown/riskBehavior", "51"), packtest.SetAt("/score", "703")},
			want: []packtest.Hit{packtest.ErrHit("SCORE_MISMATCH", "score", "/score", "682.5", "703", "")}},
		{name: "all 100 expects 1000", edits: []packtest.Edit{packtest.SetAt("/scoreBreakdown", `{"activity": 100, "maturity": 100, "diversity": 100, "riskBehavior": 100, "surveyMatch": 100}`), packtest.SetAt("/score", "1000")}},
		{name: "score of the wrong type is left to the schema", edits: []packtest.Edit{packtest.SetAt("/score", `"680"`)}},
		{name: "fractional score is left to the schema", edits: []packtest.Edit{packtest.SetAt("/score", "9.5")}},
		{name: "missing breakdown member is left to the schema", edits: []packtest.Edit{packtest.DelAt("/scoreBreakdown/surveyMatch"), packtest.SetAt("/score", "1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := packtest.EditedDoc(t, []byte(base), tt.edits...)
			got := packtest.Hits(t, validators.CheckPack(Rules{}, doc, nil).Violations)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%v) mismatch (-want +got):\n%s", tt.edits, diff)
			}
		})
	}
}

func TestOracleHint(t *testing.T) {
	doc := packtest.EditedDoc(t, []byte(`{"score": 68, "scoreBreakdown": {"activity": 80, "maturity": 70, "diversity": 60, "riskBehavior": 50, "surveyMatch": 90}}`))
	r := validators.CheckPack(Rules{}, doc, nil)
	want := "Set score to 680 (80×2 + 70×2 + 60×2 + 50×2.5 + 90×1.5 = activity×2 + maturity×2 + diversity×2 + riskBehavior×2.5 + surveyMatch×1.5), or correct scoreBreakdown; the two may differ by at most 20."
	if len(r.Violations) != 1 || r.Violations[0].Hint != want {
		t.Errorf("Check() = %+v, want one violation with hint %q", r.Violations, want)
	}
}
