package validators

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExtractionRules(t *testing.T) {
	// A task and a timed event, as an extraction answer typically reads.
	const base = `{"items": [
		{"type": "task", "title": "Email an Chef schreiben", "duration_min": 10, "duration_max": 15, "importance": "normal", "confidence": 0.9},
		{"type": "event", "title": "Meeting", "start_time": "14:00", "confidence": 0.7},
		{"type": "task", "title": "Präsentation fertig machen", "duration_min": 60, "duration_max": 120, "importance": "high", "confidence": 0.8}
	]}`
	tests := []struct {
		name  string
		edits []docEdit
		want  []ruleHit
	}{
		{name: "a task and a timed event are valid"},
		{name: "DURATION_RANGE min above max", edits: []docEdit{setAt("/items/2/duration_min", "150")},
			want: []ruleHit{errHit("DURATION_RANGE", "items[2].duration_min", "/items/2/duration_min", `"0..120"`, "150", "")}},
		{name: "DURATION_RANGE equal bounds pass", edits: []docEdit{setAt("/items/0/duration_min", "15")}},
		{name: "DURATION_RANGE fractional", edits: []docEdit{setAt("/items/0/duration_min", "15.5")},
			want: []ruleHit{errHit("DURATION_RANGE", "items[0].duration_min", "/items/0/duration_min", `"0..15"`, "15.5", "")}},
		{name: "DURATION_RANGE of the wrong type is left to the schema", edits: []docEdit{setAt("/items/0/duration_min", `"20"`)}},
		{name: "DURATION_RANGE only for tasks", edits: []docEdit{setAt("/items/1", `{"type": "event", "title": "x", "start_time": "09:00", "duration_min": 9, "duration_max": 1, "confidence": 1}`)}},
		{name: "EVENT_NEEDS_QUESTION without start_time", edits: []docEdit{delAt("/items/1/start_time")},
			want: []ruleHit{errHit("EVENT_NEEDS_QUESTION", "question", "/question", `"object"`, "null", "")}},
		{name: "EVENT_NEEDS_QUESTION with a null start_time and a null question", edits: []docEdit{setAt("/items/1/start_time", "null"), setAt("/items", `[{"type": "event", "title": "Arzt", "start_time": null, "confidence": 0.4}]`)},
			want: []ruleHit{errHit("EVENT_NEEDS_QUESTION", "question", "/question", `"object"`, "null", "")}},
		{name: "EVENT_NEEDS_QUESTION passes with a question asking for the start time",
			edits: []docEdit{setAt("", `{"items": [{"type": "event", "title": "Arzt", "confidence": 0.4}], "question": {"question": "Wann findet der Arzttermin statt?", "field": "start_time"}}`)}},
		{name: "items of the wrong type are left to the schema", edits: []docEdit{setAt("/items", `{"type": "event"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := ruleEditedDoc(t, []byte(base), tt.edits...)
			got := ruleHits(t, ruleCheck(extractionRules{}, doc, nil).Violations)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%v) mismatch (-want +got):\n%s", tt.edits, diff)
			}
		})
	}
}

func TestExtractionHintNamesEveryEvent(t *testing.T) {
	doc := ruleEditedDoc(t, []byte(`{"items": [{"type": "event", "title": "Arzt", "confidence": 0.4}, {"type": "idea", "title": "x", "confidence": 1}, {"type": "event", "title": "Zahnarzt", "confidence": 0.4}]}`))
	r := ruleCheck(extractionRules{}, doc, nil)
	want := `items[0] ("Arzt"), items[2] ("Zahnarzt") are events without start_time: add a top-level "question": {"question": "<ask for the time>", "field": "start_time"}, or give the event its "start_time" ("HH:MM") if the text states it.`
	if len(r.Violations) != 1 || r.Violations[0].Hint != want {
		t.Errorf("Check() = %+v, want one violation with hint %q", r.Violations, want)
	}
}

func TestPlanningRules(t *testing.T) {
	const base = `{"focus_task_id": "t3", "mini_task_ids": ["t1", "t7"], "buffer_minutes": 30, "reasoning": "Präsentation zuerst."}`
	tests := []struct {
		name  string
		edits []docEdit
		want  []ruleHit
	}{
		{name: "focus and two mini tasks"},
		{name: "no mini tasks", edits: []docEdit{delAt("/mini_task_ids")}},
		{name: "empty mini tasks", edits: []docEdit{setAt("/mini_task_ids", `[]`)}},
		{name: "PLAN_IDS more than two", edits: []docEdit{setAt("/mini_task_ids", `["t1", "t7", "t9"]`)},
			want: []ruleHit{errHit("PLAN_IDS", "mini_task_ids", "/mini_task_ids", `"0..2"`, "3", "")}},
		{name: "PLAN_IDS contains the focus task", edits: []docEdit{setAt("/mini_task_ids", `["t1", "t3"]`)},
			want: []ruleHit{errHit("PLAN_IDS", "mini_task_ids[1]", "/mini_task_ids/1", `"not \"t3\" (focus_task_id)"`, `"t3"`, "")}},
		{name: "PLAN_IDS duplicate", edits: []docEdit{setAt("/mini_task_ids", `["t1", "t1"]`)},
			want: []ruleHit{errHit("PLAN_IDS", "mini_task_ids[1]", "/mini_task_ids/1", `"distinct from mini_task_ids[0]"`, `"t1"`, "")}},
		{name: "PLAN_IDS every problem at once", edits: []docEdit{setAt("/mini_task_ids", `["t3", "t1", "t1"]`)},
			want: []ruleHit{
				errHit("PLAN_IDS", "mini_task_ids", "/mini_task_ids", `"0..2"`, "3", ""),
				errHit("PLAN_IDS", "mini_task_ids[0]", "/mini_task_ids/0", `"not \"t3\" (focus_task_id)"`, `"t3"`, ""),
				errHit("PLAN_IDS", "mini_task_ids[2]", "/mini_task_ids/2", `"distinct from mini_task_ids[1]"`, `"t1"`, ""),
			}},
		{name: "ids of the wrong type are left to the schema", edits: []docEdit{setAt("/mini_task_ids", `[3, 3]`), setAt("/focus_task_id", "3")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := ruleEditedDoc(t, []byte(base), tt.edits...)
			got := ruleHits(t, ruleCheck(planningRules{}, doc, nil).Violations)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%v) mismatch (-want +got):\n%s", tt.edits, diff)
			}
		})
	}
}

// TestPacksAcceptAnyParams: the packs without parameters ignore whatever a
// shared parameter set holds.
func TestPacksAcceptAnyParams(t *testing.T) {
	for name, pack := range map[string]RulePack{"oracle-score": oracleRules{}, "extraction": extractionRules{}, "planning": planningRules{}} {
		if err := pack.CheckParams(Params{"options": "Z"}); err != nil {
			t.Errorf("%s.CheckParams() = %v, want nil", name, err)
		}
	}
}
