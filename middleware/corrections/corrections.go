// Package corrections lists what changed between a model's first answer
// and the answer the client got: the local fixes of the accepted attempt
// and every value a model call rewrote. It is the corrections report of
// the contract summary (X-Contract-Report: corrections) and of the debug
// store, kept apart from the guard because it only reads the ladder's
// outcome.
package corrections

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Correction is one change between the model's first answer and the
// answer the client got, listed in the contract summary of a request that
// sends X-Contract-Report: corrections.
type Correction struct {
	// Path is the dotted path of the value ("questions[2].answer"), or
	// "line:col" of the first answer for a syntactic fix, "" for the whole
	// document.
	Path string `json:"path"`
	// Rung made the change: local, llm_repair, regeneration, rerun or
	// fallback.
	Rung   string `json:"rung"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	// Kind is minor (derivable: counts, ids, numbering, coercion, syntax)
	// or major (content the model rewrote or regenerated).
	Kind string `json:"kind"`
	// Fixer names the local fix; empty for model-made changes.
	Fixer string `json:"fixer,omitempty"`
}

// Kinds of a Correction.
const (
	Minor = "minor"
	Major = "major"
)

// List lists what changed between the first answer and the final
// document: the local changes of the accepted attempt, and every value the
// model's calls changed that no local change explains — the difference
// between the final document and the first answer as local repair left
// it (out.First).
func List(out *repair.Outcome) []Correction {
	list := []Correction{}
	explained := map[string]bool{}
	for _, ch := range out.Changes {
		list = append(list, Correction{Path: ch.Path, Rung: "local", Before: ch.Before, After: ch.After,
			Kind: Minor, Fixer: ch.Fixer})
		explained[ch.Path] = true
	}
	if out.Doc != nil && slices.Contains(out.Rungs, "fallback:static") {
		// The contract's static answer replaced the model's whole.
		return append(list, Correction{Path: "", Rung: "fallback", Before: nil, After: rawJSON(out.Doc), Kind: Major})
	}
	rung := modelRung(out.Rungs)
	if rung == "" || out.Doc == nil {
		return list
	}
	// The first answer as local repair alone leaves it: what differs from
	// the final document beyond that, a model call wrote.
	base := out.First
	if base == nil {
		return append(list, Correction{Path: "", Rung: rung, Before: nil, After: rawJSON(out.Doc), Kind: Major})
	}
	diffValues("", base, out.Doc, func(path string, before, after *strictjson.Value) {
		if explained[path] {
			return
		}
		list = append(list, Correction{Path: path, Rung: rung, Before: rawJSON(before), After: rawJSON(after), Kind: Major})
	})
	return list
}

// modelRung is the model rung whose answer was accepted: the last model
// call of the ladder, "" when none was made.
func modelRung(rungs []string) string {
	for i := len(rungs) - 1; i >= 0; i-- {
		switch k := repair.RungKind(rungs[i]); k {
		case "llm_repair", "regeneration", "rerun":
			return k
		case "fallback:model":
			return "fallback"
		}
	}
	return ""
}

func rawJSON(v *strictjson.Value) any {
	if v == nil {
		return nil
	}
	return json.RawMessage(strictjson.Marshal(v))
}

// diffValues calls fn for each leaf (or kind change) that differs between
// a and b; a missing side is nil.
func diffValues(path string, a, b *strictjson.Value, fn func(path string, before, after *strictjson.Value)) {
	switch {
	case a == nil || b == nil:
		fn(path, a, b)
	case a.Kind == strictjson.KindObject && b.Kind == strictjson.KindObject:
		inA, inB := byKey(a), byKey(b)
		for _, m := range a.Members {
			diffValues(joinKey(path, m.Key), m.Value, inB[m.Key], fn)
		}
		for _, m := range b.Members {
			if _, ok := inA[m.Key]; !ok {
				fn(joinKey(path, m.Key), nil, m.Value)
			}
		}
	case a.Kind == strictjson.KindArray && b.Kind == strictjson.KindArray:
		for i := 0; i < max(len(a.Items), len(b.Items)); i++ {
			var x, y *strictjson.Value
			if i < len(a.Items) {
				x = a.Items[i]
			}
			if i < len(b.Items) {
				y = b.Items[i]
			}
			diffValues(path+"["+strconv.Itoa(i)+"]", x, y, fn)
		}
	default:
		if string(strictjson.Marshal(a)) != string(strictjson.Marshal(b)) {
			fn(path, a, b)
		}
	}
}

// byKey is obj's members by key, the first of a repeated one: a lookup
// per member of a large object without walking its members each time.
func byKey(obj *strictjson.Value) map[string]*strictjson.Value {
	m := make(map[string]*strictjson.Value, len(obj.Members))
	for _, mem := range obj.Members {
		if _, ok := m[mem.Key]; !ok {
			m[mem.Key] = mem.Value
		}
	}
	return m
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Value is the corrections as a summary member: an array,
// empty when there are none.
func Value(list []Correction) *strictjson.Value {
	if len(list) == 0 {
		return strictjson.Array()
	}
	b, _ := json.Marshal(list)
	v, err := strictjson.Parse(b)
	if err != nil {
		return strictjson.Array()
	}
	return v
}
