package validators

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/strictjson"
)

// extractionRules is the "extraction" rule pack: the conditions between
// fields of an item, and between items and the top-level question, that
// the contract's JSON Schema does not express.
type extractionRules struct{}

// planningRules is the "planning" rule pack: the day plan's task
// ids must name distinct tasks.
type planningRules struct{}

var (
	_ RulePack         = extractionRules{}
	_ FixScopeDeclarer = extractionRules{}
	_ RulePack         = planningRules{}
)

// CheckParams accepts any parameters: the pack has none.
func (extractionRules) CheckParams(Params) error { return nil }

// FixScopes implements FixScopeDeclarer. Each scope is what the rule's hint
// offers the model: either duration may be the wrong one, and an untimed
// event is fixed by a question or by the event's own start_time.
func (extractionRules) FixScopes() map[string]FixScope {
	return map[string]FixScope{
		"DURATION_RANGE":       {Fields: []string{"duration_min", "duration_max"}},
		"EVENT_NEEDS_QUESTION": {ItemFields: []string{"start_time"}},
	}
}

// Check reports DURATION_RANGE for a task whose duration_min exceeds its
// duration_max, and EVENT_NEEDS_QUESTION when an event has no start_time and
// the document asks no question to learn it: an event may lack its
// start_time only while the answer asks the user for it.
func (extractionRules) Check(doc *strictjson.Value, _ Params, e *Emitter) {
	items := doc.Get("items")
	if items == nil || items.Kind != strictjson.KindArray {
		return
	}
	var untimed []string
	for i, it := range items.Items {
		typ, _ := it.Get("type").AsString()
		switch typ {
		case "task":
			lo := it.Get("duration_min")
			hi := it.Get("duration_max")
			dmin, ok1 := lo.AsFloat()
			dmax, ok2 := hi.AsFloat()
			if ok1 && ok2 && dmin > dmax {
				e.Semantic("DURATION_RANGE", SeverityError, lo, []Seg{"items", i, "duration_min"}, "0.."+FormatQuantity(dmax), Actual(lo),
					fmt.Sprintf("items[%d].duration_min (%s) must not exceed duration_max (%s); correct whichever is wrong (swap them if they are reversed).", i, lo.Num, hi.Num), nil)
			}
		case "event":
			if st := it.Get("start_time"); st == nil || st.IsNull() {
				title, _ := it.Get("title").AsString()
				untimed = append(untimed, fmt.Sprintf("items[%d] (%q)", i, title))
			}
		}
	}
	if len(untimed) == 0 {
		return
	}
	if q := doc.Get("question"); q != nil && !q.IsNull() {
		return
	}
	what := untimed[0] + " is an event"
	if len(untimed) > 1 {
		what = strings.Join(untimed, ", ") + " are events"
	}
	e.Semantic("EVENT_NEEDS_QUESTION", SeverityError, doc, []Seg{"question"}, "object", nil,
		fmt.Sprintf(`%s without start_time: add a top-level "question": {"question": "<ask for the time>", "field": "start_time"}, or give the event its "start_time" ("HH:MM") if the text states it.`, what), nil)
}

// CheckParams accepts any parameters: the pack has none.
func (planningRules) CheckParams(Params) error { return nil }

// Check reports PLAN_IDS when mini_task_ids holds more than two ids, an id
// twice, or the focus task: the plan is one focus task plus at most two
// other small ones. The schema's maxItems reports the length as well; the
// pack checks it too so that it stands on its own under any schema.
func (planningRules) Check(doc *strictjson.Value, _ Params, e *Emitter) {
	mini := doc.Get("mini_task_ids")
	if mini == nil || mini.Kind != strictjson.KindArray {
		return
	}
	if n := len(mini.Items); n > 2 {
		e.Semantic("PLAN_IDS", SeverityError, mini, []Seg{"mini_task_ids"}, "0..2", n,
			fmt.Sprintf("Keep at most 2 ids in mini_task_ids (it has %d); drop the least important.", n), nil)
	}
	focus, hasFocus := doc.Get("focus_task_id").AsString()
	// first maps each id to where it first occurs; a map keeps a long list
	// (a model repeating itself) linear.
	first := make(map[string]int, len(mini.Items))
	for j, v := range mini.Items {
		id, ok := v.AsString()
		if !ok {
			continue
		}
		if hasFocus && id == focus {
			e.Semantic("PLAN_IDS", SeverityError, v, []Seg{"mini_task_ids", j}, fmt.Sprintf("not %q (focus_task_id)", focus), id,
				fmt.Sprintf("Remove %q from mini_task_ids: it is the focus_task_id; mini tasks are other tasks.", id), nil)
			continue
		}
		if k, seen := first[id]; seen {
			e.Semantic("PLAN_IDS", SeverityError, v, []Seg{"mini_task_ids", j}, fmt.Sprintf("distinct from mini_task_ids[%d]", k), id,
				fmt.Sprintf("mini_task_ids[%d] repeats %q; remove it or name a different task.", j, id), nil)
			continue
		}
		first[id] = j
	}
}
