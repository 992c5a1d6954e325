package extraction

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/internal/packtest"
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
		edits []packtest.Edit
		want  []packtest.Hit
	}{
		{name: "a task and a timed event are valid"},
		{name: "DURATION_RANGE min above max", edits: []packtest.Edit{packtest.SetAt("/items/2/duration_min", "150")},
			want: []packtest.Hit{packtest.ErrHit("DURATION_RANGE", "items[2].duration_min", "/items/2/duration_min", `"0..120"`, "150", "")}},
		{name: "DURATION_RANGE equal bounds pass", edits: []packtest.Edit{packtest.SetAt("/items/0/duration_min", "15")}},
		{name: "DURATION_RANGE fractional", edits: []packtest.Edit{packtest.SetAt("/items/0/duration_min", "15.5")},
			want: []packtest.Hit{packtest.ErrHit("DURATION_RANGE", "items[0].duration_min", "/items/0/duration_min", `"0..15"`, "15.5", "")}},
		{name: "DURATION_RANGE of the wrong type is left to the schema", edits: []packtest.Edit{packtest.SetAt("/items/0/duration_min", `"20"`)}},
		{name: "DURATION_RANGE only for tasks", edits: []packtest.Edit{packtest.SetAt("/items/1", `{"type": "event", "title": "x", "start_time": "09:00", "duration_min": 9, "duration_max": 1, "confidence": 1}`)}},
		{name: "EVENT_NEEDS_QUESTION without start_time", edits: []packtest.Edit{packtest.DelAt("/items/1/start_time")},
			want: []packtest.Hit{packtest.ErrHit("EVENT_NEEDS_QUESTION", "question", "/question", `"object"`, "null", "")}},
		{name: "EVENT_NEEDS_QUESTION with a null start_time and a null question", edits: []packtest.Edit{packtest.SetAt("/items/1/start_time", "null"), packtest.SetAt("/items", `[{"type": "event", "title": "Arzt", "start_time": null, "confidence": 0.4}]`)},
			want: []packtest.Hit{packtest.ErrHit("EVENT_NEEDS_QUESTION", "question", "/question", `"object"`, "null", "")}},
		{name: "EVENT_NEEDS_QUESTION passes with a question asking for the start time",
			edits: []packtest.Edit{packtest.SetAt("", `{"items": [{"type": "event", "title": "Arzt", "confidence": 0.4}], "question": {"question": "Wann findet der Arzttermin statt?", "field": "start_time"}}`)}},
		{name: "items of the wrong type are left to the schema", edits: []packtest.Edit{packtest.SetAt("/items", `{"type": "event"}`)}},
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

func TestExtractionHintNamesEveryEvent(t *testing.T) {
	doc := packtest.EditedDoc(t, []byte(`{"items": [{"type": "event", "title": "Arzt", "confidence": 0.4}, {"type": "idea", "title": "x", "confidence": 1}, {"type": "event", "title": "Zahnarzt", "confidence": 0.4}]}`))
	r := validators.CheckPack(Rules{}, doc, nil)
	want := `items[0] ("Arzt"), items[2] ("Zahnarzt") are events without start_time: add a top-level "question": {"question": "<ask for the time>", "field": "start_time"}, or give the event its "start_time" ("HH:MM") if the text states it.`
	if len(r.Violations) != 1 || r.Violations[0].Hint != want {
		t.Errorf("Check() = %+v, want one violation with hint %q", r.Violations, want)
	}
}
