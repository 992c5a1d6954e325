package repair

import (
	"sort"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// itemIndex returns the index of the item of the item array at pointer
// array ("/questions") that violation v sits in, and false when v is not
// inside one item: a violation of the array itself, of another part of the
// document, or of parsing. The pointer decides; the dotted path
// ("questions[3].answer") is read only when the pointer is empty.
func itemIndex(array string, v validators.Violation) (int, bool) {
	if v.Pointer != "" {
		rest, ok := strings.CutPrefix(v.Pointer, array+"/")
		if !ok {
			return 0, false
		}
		tok, _, _ := strings.Cut(rest, "/")
		return parseIndex(tok)
	}
	if len(array) < 2 || strings.Contains(array[1:], "/") {
		return 0, false // dotted paths name top-level arrays only
	}
	rest, ok := strings.CutPrefix(v.Path, itemArrayName(array)+"[")
	if !ok {
		return 0, false
	}
	tok, _, ok := strings.Cut(rest, "]")
	if !ok {
		return 0, false
	}
	return parseIndex(tok)
}

func parseIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(tok)
	return n, err == nil && n >= 0
}

// itemArrayName is the last token of the item array's pointer: "questions"
// for "/questions". Prompts name the items by it.
func itemArrayName(array string) string {
	toks, err := strictjson.ParsePointer(array)
	if err != nil || len(toks) == 0 {
		return "items"
	}
	return toks[len(toks)-1]
}

// touchedItems returns the set of item indices that some violation of r
// (any severity) sits in, and whether r has a violation of the item array
// itself (its length, say), which allows a reply to change any item.
func touchedItems(array string, r validators.Report) (map[int]bool, bool) {
	touched := map[int]bool{}
	arrayLevel := false
	for _, v := range r.Violations {
		if v.Pointer == array {
			arrayLevel = true
			continue
		}
		if i, ok := itemIndex(array, v); ok {
			touched[i] = true
		}
	}
	return touched, arrayLevel
}

// itemErrors returns the sorted indices of the items that hold the error
// violations of r, and false when some error violation is not inside an item
// (it sits in meta, on the array itself, or in parsing): partial
// regeneration can only replace items.
func itemErrors(array string, r validators.Report) ([]int, bool) {
	return errorItems(array, r, func(validators.Violation) bool { return false })
}

// errorItems returns the sorted indices of the items that hold the error
// violations of r, and false when no error sits in an item or when an
// error outside every item is not one that outside lets pass.
func errorItems(array string, r validators.Report, outside func(validators.Violation) bool) ([]int, bool) {
	seen := map[int]bool{}
	var out []int
	for _, v := range r.Violations {
		if v.Severity != validators.SeverityError {
			continue
		}
		i, ok := itemIndex(array, v)
		if !ok {
			if !outside(v) {
				return nil, false
			}
			continue
		}
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	sort.Ints(out)
	return out, true
}

// violationsIn returns the violations of r inside the given items, in report
// order.
func violationsIn(array string, r validators.Report, indices []int) []validators.Violation {
	want := map[int]bool{}
	for _, i := range indices {
		want[i] = true
	}
	out := []validators.Violation{}
	for _, v := range r.Violations {
		if i, ok := itemIndex(array, v); ok && want[i] {
			out = append(out, v)
		}
	}
	return out
}

// mergeItems restores, in reply, the items of the item array that the report
// sent to the model gave no cause to change (the blind merge: the model
// never gets to change what must be preserved). base is the document the model was
// given, sent the report about it. reply is changed in place; the number of
// restored items is returned. An item that a violation outside the items
// lets the fix reach (validators.FixScope.ItemFields) is left to
// mergeFields, which keeps only those members of it.
//
// A violation of the array itself (the caller's question_count or
// difficulty) is cause to change any item: adding or removing items, or
// changing the weights of items that have no violation of their own, is the
// fix, so the reply's array is kept as written. Without one, a reply with a
// different number of items added or removed them without cause;
// index-wise restoration would then mix up items, so the whole array of
// base is taken back (the fixes the model made in it are lost with it, and
// later rungs deal with them).
func mergeItems(v *validators.Validator, array string, base, reply *strictjson.Value, sent validators.Report) int {
	bArr, err1 := base.At(array)
	rArr, err2 := reply.At(array)
	if err1 != nil || err2 != nil || bArr.Kind != strictjson.KindArray || rArr.Kind != strictjson.KindArray {
		return 0
	}
	touched, arrayLevel := touchedItems(array, sent)
	if arrayLevel {
		return 0
	}
	if len(rArr.Items) != len(bArr.Items) {
		restored := 0
		for i, it := range bArr.Items {
			if !touched[i] && !strictjson.Equal(it, rArr.Index(i)) {
				restored++
			}
		}
		rArr.Items = bArr.Clone().Items
		return restored
	}
	reach := len(reachingFields(v, array, sent)) > 0
	restored := 0
	for i, it := range bArr.Items {
		if touched[i] || strictjson.Equal(it, rArr.Items[i]) {
			continue
		}
		if reach && it.Kind == strictjson.KindObject && rArr.Items[i].Kind == strictjson.KindObject {
			continue // mergeFields keeps what the fix may set
		}
		rArr.Items[i] = it.Clone()
		restored++
	}
	return restored
}

// reachingFields are the members of any item that the fixes of the
// violations outside the items may set (validators.FixScope.ItemFields).
func reachingFields(v *validators.Validator, array string, sent validators.Report) map[string]bool {
	var out map[string]bool
	for _, viol := range sent.Violations {
		if _, in := itemIndex(array, viol); in || viol.Pointer == array {
			continue
		}
		for _, f := range v.FixScope(viol.Code).ItemFields {
			if out == nil {
				out = map[string]bool{}
			}
			out[f] = true
		}
	}
	return out
}

// replacementItems reads the reply of a partial regeneration call: the full
// document (only the named indices are taken from its item array), the
// replacement items alone as an array (in the order of indices, or the whole
// array when it has as many items as the document), or, for one index, the
// item alone. It returns the new item per named index and false when the
// reply cannot be mapped onto the indices.
func replacementItems(array string, reply *strictjson.Value, indices []int, n int) (map[int]*strictjson.Value, bool) {
	var items *strictjson.Value
	if reply.Kind == strictjson.KindObject {
		if arr, err := reply.At(array); err == nil && arr.Kind == strictjson.KindArray {
			items = arr
		} else if len(indices) == 1 {
			return map[int]*strictjson.Value{indices[0]: reply}, true
		}
	}
	if reply.Kind == strictjson.KindArray {
		items = reply
	}
	if items == nil {
		return nil, false
	}
	out := map[int]*strictjson.Value{}
	switch {
	case len(items.Items) == n:
		// The whole array came back (with the document or without it):
		// take the named indices only.
		for _, i := range indices {
			out[i] = items.Items[i]
		}
	case len(items.Items) == len(indices):
		// Only the replacements, in the order asked for.
		for k, i := range indices {
			out[i] = items.Items[k]
		}
	default:
		return nil, false
	}
	for _, it := range out {
		if it.Kind != strictjson.KindObject {
			return nil, false
		}
	}
	return out, true
}

// splice returns a copy of doc whose item array has the given items
// replaced; every other item is left as it was, byte for byte.
func splice(array string, doc *strictjson.Value, repl map[int]*strictjson.Value) (*strictjson.Value, bool) {
	out := doc.Clone()
	arr, err := out.At(array)
	if err != nil || arr.Kind != strictjson.KindArray {
		return nil, false
	}
	for i, it := range repl {
		if i < 0 || i >= len(arr.Items) {
			return nil, false
		}
		arr.Items[i] = it.Clone()
	}
	return out, true
}

// mergeFields is the field-level blind merge inside the items the
// report sent gave cause to change: only the members its violations name,
// those each violation's code declares its fix may touch, and those a
// violation outside the items lets its fix set in any item
// (validators.FixScope), may differ from base; every other member of the
// item is restored from base, one that the model added is removed, one it
// dropped comes back. A violation of the item itself (a missing member) or
// of a code whose fix is the whole item leaves that item as the model wrote
// it, and so does a violation of the array itself. reply is changed in
// place; the number of restored members is returned.
func mergeFields(v *validators.Validator, array string, base, reply *strictjson.Value, sent validators.Report) int {
	bArr, err1 := base.At(array)
	rArr, err2 := reply.At(array)
	if err1 != nil || err2 != nil || bArr.Kind != strictjson.KindArray || rArr.Kind != strictjson.KindArray || len(bArr.Items) != len(rArr.Items) {
		return 0
	}
	reach := reachingFields(v, array, sent)
	allowed := map[int]map[string]bool{}
	may := func(i int) map[string]bool {
		if allowed[i] == nil {
			allowed[i] = map[string]bool{}
			for f := range reach {
				allowed[i][f] = true
			}
		}
		return allowed[i]
	}
	if len(reach) > 0 {
		for i := range bArr.Items {
			may(i)
		}
	}
	whole := map[int]bool{}
	for _, viol := range sent.Violations {
		if viol.Pointer == array {
			return 0
		}
		i, ok := itemIndex(array, viol)
		if !ok {
			continue
		}
		field, ok := itemField(array, i, viol)
		scope := v.FixScope(viol.Code)
		if !ok || scope.Whole {
			whole[i] = true
			continue
		}
		m := may(i)
		m[field] = true
		for _, f := range scope.Fields {
			m[f] = true
		}
	}
	restored := 0
	for i, m := range allowed {
		if whole[i] || i >= len(bArr.Items) {
			continue
		}
		b, r := bArr.Items[i], rArr.Items[i]
		if b.Kind != strictjson.KindObject || r.Kind != strictjson.KindObject {
			continue
		}
		restored += restoreMembers(b, r, m)
	}
	return restored
}

// restoreMembers makes every member of r that may does not name equal to
// b's, keeping r's order for the members both have.
func restoreMembers(b, r *strictjson.Value, may map[string]bool) int {
	n := 0
	kept := r.Members[:0:0]
	for _, m := range r.Members {
		if may[m.Key] {
			kept = append(kept, m)
			continue
		}
		orig := b.Get(m.Key)
		if orig == nil {
			n++ // added without cause
			continue
		}
		if !strictjson.Equal(orig, m.Value) {
			n++
			m.Value = orig.Clone()
		}
		kept = append(kept, m)
	}
	for _, m := range b.Members {
		if !may[m.Key] && r.Get(m.Key) == nil {
			n++ // dropped without cause
			kept = append(kept, strictjson.Member{Key: m.Key, KeyOffset: -1, Value: m.Value.Clone()})
		}
	}
	r.Members = kept
	return n
}

// itemField is the member of item i that violation v names ("answer" for
// questions[3].answer), and false when v is about the item itself.
func itemField(array string, i int, v validators.Violation) (string, bool) {
	rest, ok := strings.CutPrefix(v.Pointer, array+"/"+strconv.Itoa(i)+"/")
	if !ok || rest == "" {
		return "", false
	}
	tok, _, _ := strings.Cut(rest, "/")
	toks, err := strictjson.ParsePointer("/" + tok)
	if err != nil || len(toks) != 1 {
		return "", false
	}
	return toks[0], true
}
