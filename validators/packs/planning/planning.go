// Package planning is the "planning" rule pack: a day plan's task ids
// must name distinct tasks.
package planning

import (
	"fmt"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Rules is the "planning" rule pack: the day plan's task
// ids must name distinct tasks.
type Rules struct{}

var _ validators.RulePack = Rules{}

// CheckParams accepts any parameters: the pack has none.
func (Rules) CheckParams(validators.Params) error { return nil }

// Check reports PLAN_IDS when mini_task_ids holds more than two ids, an id
// twice, or the focus task: the plan is one focus task plus at most two
// other small ones. The schema's maxItems reports the length as well; the
// pack checks it too so that it stands on its own under any schema.
func (Rules) Check(doc *strictjson.Value, _ validators.Params, e *validators.Emitter) {
	mini := doc.Get("mini_task_ids")
	if mini == nil || mini.Kind != strictjson.KindArray {
		return
	}
	if n := len(mini.Items); n > 2 {
		e.Semantic("PLAN_IDS", validators.SeverityError, mini, []validators.Seg{"mini_task_ids"}, "0..2", n,
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
			e.Semantic("PLAN_IDS", validators.SeverityError, v, []validators.Seg{"mini_task_ids", j}, fmt.Sprintf("not %q (focus_task_id)", focus), id,
				fmt.Sprintf("Remove %q from mini_task_ids: it is the focus_task_id; mini tasks are other tasks.", id), nil)
			continue
		}
		if k, seen := first[id]; seen {
			e.Semantic("PLAN_IDS", validators.SeverityError, v, []validators.Seg{"mini_task_ids", j}, fmt.Sprintf("distinct from mini_task_ids[%d]", k), id,
				fmt.Sprintf("mini_task_ids[%d] repeats %q; remove it or name a different task.", j, id), nil)
			continue
		}
		first[id] = j
	}
}
