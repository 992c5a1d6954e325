package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/internal/packtest"
)

func TestPlanningRules(t *testing.T) {
	const base = `{"focus_task_id": "t3", "mini_task_ids": ["t1", "t7"], "buffer_minutes": 30, "reasoning": "Präsentation zuerst."}`
	tests := []struct {
		name  string
		edits []packtest.Edit
		want  []packtest.Hit
	}{
		{name: "focus and two mini tasks"},
		{name: "no mini tasks", edits: []packtest.Edit{packtest.DelAt("/mini_task_ids")}},
		{name: "empty mini tasks", edits: []packtest.Edit{packtest.SetAt("/mini_task_ids", `[]`)}},
		{name: "PLAN_IDS more than two", edits: []packtest.Edit{packtest.SetAt("/mini_task_ids", `["t1", "t7", "t9"]`)},
			want: []packtest.Hit{packtest.ErrHit("PLAN_IDS", "mini_task_ids", "/mini_task_ids", `"0..2"`, "3", "")}},
		{name: "PLAN_IDS contains the focus task", edits: []packtest.Edit{packtest.SetAt("/mini_task_ids", `["t1", "t3"]`)},
			want: []packtest.Hit{packtest.ErrHit("PLAN_IDS", "mini_task_ids[1]", "/mini_task_ids/1", `"not \"t3\" (focus_task_id)"`, `"t3"`, "")}},
		{name: "PLAN_IDS duplicate", edits: []packtest.Edit{packtest.SetAt("/mini_task_ids", `["t1", "t1"]`)},
			want: []packtest.Hit{packtest.ErrHit("PLAN_IDS", "mini_task_ids[1]", "/mini_task_ids/1", `"distinct from mini_task_ids[0]"`, `"t1"`, "")}},
		{name: "PLAN_IDS every problem at once", edits: []packtest.Edit{packtest.SetAt("/mini_task_ids", `["t3", "t1", "t1"]`)},
			want: []packtest.Hit{
				packtest.ErrHit("PLAN_IDS", "mini_task_ids", "/mini_task_ids", `"0..2"`, "3", ""),
				packtest.ErrHit("PLAN_IDS", "mini_task_ids[0]", "/mini_task_ids/0", `"not \"t3\" (focus_task_id)"`, `"t3"`, ""),
				packtest.ErrHit("PLAN_IDS", "mini_task_ids[2]", "/mini_task_ids/2", `"distinct from mini_task_ids[1]"`, `"t1"`, ""),
			}},
		{name: "ids of the wrong type are left to the schema", edits: []packtest.Edit{packtest.SetAt("/mini_task_ids", `[3, 3]`), packtest.SetAt("/focus_task_id", "3")}},
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
