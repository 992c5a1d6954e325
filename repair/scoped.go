package repair

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// itemKey is the name an item goes by in a scoped payload: "questions[3]",
// the dotted path of the item, so that a violation path such as
// "questions[3].answer" reads as the key followed by the member.
func itemKey(name string, i int) string {
	return name + "[" + strconv.Itoa(i) + "]"
}

// scopedIndices returns the sorted indices of the items that hold the error
// violations of r, and false when scoping cannot repair r: some error sits
// outside every item and is not one local repair re-derives from the items
// (validators.FixScope.Derived), or no error sits in an item at all. A
// violation of the item array itself (the caller's question count) is not
// derived: it needs items added or removed.
func scopedIndices(val *validators.Validator, array string, r validators.Report) ([]int, bool) {
	return errorItems(array, r, func(v validators.Violation) bool {
		return v.Class != validators.ClassParse && v.Pointer != array && val.FixScope(v.Code).Derived
	})
}

// scopedReport is the report a scoped call shows: the violations inside the
// named items (warnings included, as the whole-document call shows them),
// with pointers rewritten to resolve in the scoped ORIGINAL_JSON, whose
// members are the item keys: "/questions/3/answer" becomes
// "/questions[3]/answer". The dotted paths need no rewriting.
func scopedReport(array string, r validators.Report, indices []int) validators.Report {
	name := itemArrayName(array)
	out := validators.Report{Contract: r.Contract, Violations: []validators.Violation{}}
	for _, v := range violationsIn(array, r, indices) {
		i, _ := itemIndex(array, v)
		if rest, ok := strings.CutPrefix(v.Pointer, array+"/"+strconv.Itoa(i)); ok {
			v.Pointer = "/" + pointerToken(itemKey(name, i)) + rest
		}
		// A fix the ladder did not apply is of no use to the model, and
		// its pointer would name the whole document.
		v.Fix = nil
		if v.Severity == validators.SeverityError {
			c := v.Class
			if out.RepairType == nil || classRank(c) < classRank(*out.RepairType) {
				out.RepairType = &c
			}
		}
		out.Violations = append(out.Violations, v)
	}
	out.Valid = out.RepairType == nil
	return out
}

func classRank(c validators.Class) int {
	switch c {
	case validators.ClassParse:
		return 0
	case validators.ClassSchema:
		return 1
	}
	return 2
}

func pointerToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// scopedOriginal is the ORIGINAL_JSON of a scoped call: an object whose
// members are the named items under their keys, in index order.
func scopedOriginal(array string, doc *strictjson.Value, indices []int) (string, bool) {
	arr, err := doc.At(array)
	if err != nil || arr.Kind != strictjson.KindArray {
		return "", false
	}
	name := itemArrayName(array)
	obj := strictjson.Object()
	for _, i := range indices {
		it := arr.Index(i)
		if it == nil {
			return "", false
		}
		obj.Set(itemKey(name, i), it.Clone())
	}
	return string(strictjson.MarshalIndent(obj, "  ")), true
}

// scopedItems reads the reply of a scoped call. The model was asked for an
// object keyed like ORIGINAL_JSON; it may also answer one item alone, the
// items as an array, or the whole document. Only the named
// indices are taken. It returns false when the reply cannot be mapped onto
// them: then the reply is of no use and whole-document repair follows.
func scopedItems(array string, reply *strictjson.Value, indices []int, n int) (map[int]*strictjson.Value, bool) {
	if reply.Kind == strictjson.KindObject {
		name := itemArrayName(array)
		keyed := map[int]*strictjson.Value{}
		for _, i := range indices {
			if it := reply.Get(itemKey(name, i)); it != nil {
				if it.Kind != strictjson.KindObject {
					return nil, false
				}
				keyed[i] = it
			}
		}
		if len(keyed) > 0 {
			return keyed, true
		}
		// An object keyed by items it was not asked for is not one item.
		for _, m := range reply.Members {
			if strings.HasPrefix(m.Key, name+"[") {
				return nil, false
			}
		}
	}
	return replacementItems(array, reply, indices, n)
}

// ScopedInstruction is the request of an item-scoped repair call, placed
// before RepairPayload: which items are shown, how they are keyed, and
// what to answer.
func ScopedInstruction(name string, indices []int) string {
	keys := make([]string, len(indices))
	for k, i := range indices {
		b, _ := json.Marshal(itemKey(name, i))
		keys[k] = string(b)
	}
	return "Repair ONLY " + name + " at indices: " + formatIndices(indices) + ".\n" +
		"ORIGINAL_JSON holds only these " + name + ", keyed " + strings.Join(keys, ", ") + "; violation paths start with the same keys.\n" +
		"Return ONLY a JSON object with exactly these keys and the corrected " + name + " as their values.\n" +
		"Everything else in the document stays as it is and is not shown."
}

// ScopedPayload is the user message of an item-scoped repair call: the
// instruction, then RepairPayload with the scoped report and items.
func ScopedPayload(name string, indices []int, report validators.Report, items string) string {
	return ScopedInstruction(name, indices) + "\n\n" + RepairPayload(report, items)
}

// scopedFormat is the Ollama `format` of a scoped call: an object of the
// named keys, each an item of the contract's schema (its item schema at
// /properties/<name>/items, with the schema's $defs so that references
// resolve). The contract's own schema would make the model write the whole
// document, the cost the rung exists to avoid. nil when the item schema
// cannot be found.
func scopedFormat(schema json.RawMessage, array string, indices []int) json.RawMessage {
	if len(schema) == 0 || strings.Count(array, "/") != 1 {
		return nil
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var props map[string]struct {
		Items json.RawMessage `json:"items"`
	}
	if json.Unmarshal(root["properties"], &props) != nil {
		return nil
	}
	name := itemArrayName(array)
	item := props[name].Items
	if len(item) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	keys := make([]string, len(indices))
	for k, i := range indices {
		key, _ := json.Marshal(itemKey(name, i))
		keys[k] = string(key)
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(item)
	}
	b.WriteString(`},"required":[` + strings.Join(keys, ",") + `],"additionalProperties":false`)
	for _, defs := range []string{"$defs", "definitions"} {
		if raw, ok := root[defs]; ok {
			b.WriteString(`,"` + defs + `":`)
			b.Write(raw)
		}
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}
