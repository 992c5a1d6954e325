// Package extraction is the "extraction" rule pack: the conditions
// between the items a model extracted from a text, and between them and
// the question it asks back, that the contract's JSON Schema cannot
// express.
package extraction

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Rules is the "extraction" rule pack: the conditions between
// fields of an item, and between items and the top-level question, that
// the contract's JSON Schema does not express.
type Rules struct{}

var (
	_ validators.RulePack         = Rules{}
	_ validators.FixScopeDeclarer = Rules{}
)

// CheckParams accepts any parameters: the pack has none.
func (Rules) CheckParams(validators.Params) error { return nil }

// FixScopes implements validators.FixScopeDeclarer. Each scope is what the rule's hint
// offers the model: either duration may be the wrong one, and an untimed
// event is fixed by a question or by the event's own start_time.
func (Rules) FixScopes() map[string]validators.FixScope {
	return map[string]validators.FixScope{
		"DURATION_RANGE":       {Fields: []string{"duration_min", "duration_max"}},
		"EVENT_NEEDS_QUESTION": {ItemFields: []string{"start_time"}},
	}
}

// Check reports DURATION_RANGE for a task whose duration_min exceeds its
// duration_max, and EVENT_NEEDS_QUESTION when an event has no start_time and
// the document asks no question to learn it: an event may lack its
// start_time only while the answer asks the user for it.
func (Rules) Check(doc *strictjson.Value, _ validators.Params, e *validators.Emitter) {
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
				e.Semantic("DURATION_RANGE", validators.SeverityError, lo, []validators.Seg{"items", i, "duration_min"}, "0.."+validators.FormatQuantity(dmax), validators.Actual(lo),
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
	e.Semantic("EVENT_NEEDS_QUESTION", validators.SeverityError, doc, []validators.Seg{"question"}, "object", nil,
		fmt.Sprintf(`%s without start_time: add a top-level "question": {"question": "<ask for the time>", "field": "start_time"}, or give the event its "start_time" ("HH:MM") if the text states it.`, what), nil)
}
