package validators

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// runChecks evaluates the contract's checks (compiled at load) on doc and
// reports every rule that is false. A rule that reads a missing member is
// not reported (the schema step reports what is missing), nor one that
// meets a value of the wrong type where the schema step found a problem;
// any other evaluation error is a CHECK_ERROR naming the check.
func runChecks(checks []contracts.Check, doc *strictjson.Value, params Params, e *Emitter) {
	if len(checks) == 0 {
		return
	}
	vals, maxList, maxString := newDocVals(doc)
	act := &checkActivation{root: vals.root, params: paramsVal(params)}
	if act.root == nil {
		act.root = vals.slot(-1, doc)
	}
	maxList = max(maxList, len(params))
	for k, v := range params {
		maxString = max(maxString, len(k), len(v))
	}
	act.class, act.sized = contracts.CheckSizeClass(maxList, maxString)
	act.vars = checkVarsPool.Get().(*contracts.CheckVars)
	act.vars.Root, act.vars.Params = act.root, act.params
	defer func() {
		act.vars.Reset()
		checkVarsPool.Put(act.vars)
	}()
	schemaFound := func(ptr string) bool {
		for i := range e.out {
			v := &e.out[i]
			if v.Class == ClassSchema && v.Severity == SeverityError && (v.Pointer == ptr || strings.HasPrefix(v.Pointer, ptr+"/") || ptr == "") {
				return true
			}
		}
		return false
	}
	var seen [4]forEachArray
	arrays := forEachArrays{doc: doc, vals: vals, root: act.root, seen: seen[:0]}
	for i := range checks {
		c := &checks[i]
		if c.Program == nil {
			continue
		}
		if c.ForEach == "" {
			act.self, act.index = act.root, types.Int(0)
			runCheck(c, doc, "", -1, act, schemaFound, e)
			continue
		}
		arr, l := arrays.at(c.ForEach)
		if arr == nil {
			// The schema step reports a missing or mistyped array.
			continue
		}
		for j, it := range arr.Items {
			act.self, act.index = l.at(j), types.Int(j)
			runCheck(c, it, c.ForEach, j, act, schemaFound, e)
		}
	}
}

// forEachArrays finds the arrays the for_each checks run over, each
// once per document: the checks of a contract mostly share one array
// (every check over the questions), and its pointer is then parsed and
// followed once, not once per check.
type forEachArrays struct {
	doc  *strictjson.Value
	vals *docVals
	root ref.Val
	seen []forEachArray
}

type forEachArray struct {
	ptr  string
	arr  *strictjson.Value
	list *jsonList
}

// at is the array at the JSON Pointer ptr and its view; nil when the
// document has no array there.
func (a *forEachArrays) at(ptr string) (*strictjson.Value, *jsonList) {
	for _, s := range a.seen {
		if s.ptr == ptr {
			return s.arr, s.list
		}
	}
	s := forEachArray{ptr: ptr}
	if arr, err := a.doc.At(ptr); err == nil && arr.Kind == strictjson.KindArray {
		s.arr, s.list = arr, a.vals.listAt(a.root, ptr, arr)
	}
	a.seen = append(a.seen, s)
	return s.arr, s.list
}

// checkVarsPool holds the variables and scratch space of compiled
// rules between documents, so that a document does not make them again.
var checkVarsPool = sync.Pool{New: func() any { return new(contracts.CheckVars) }}

// paramsVal is the bound parameters as a CEL map whose values are made
// once, so that a rule reading params.options on every item does not
// make the string again each time.
func paramsVal(params Params) ref.Val {
	m := make(map[ref.Val]ref.Val, len(params))
	for k, v := range params {
		m[types.String(k)] = types.String(v)
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m)
}

// runCheck evaluates one check with self bound to self and records its
// violation, if any. self is at the JSON Pointer arr+"/"+j, or the
// document when j < 0; the pointer is written only for a violation, so
// that the common case, a rule that holds, costs no string.
func runCheck(c *contracts.Check, self *strictjson.Value, arr string, j int, act *checkActivation, schemaFound func(string) bool, e *Emitter) {
	selfPtr := func() string {
		if j < 0 {
			return ""
		}
		return arr + "/" + strconv.Itoa(j)
	}
	out, err := evalRule(c, act)
	if err == nil {
		if b, ok := out.(types.Bool); ok {
			if b {
				return
			}
			reportCheck(c, self, selfPtr(), act, e)
			return
		}
		err = fmt.Errorf("the rule gave %s, not a bool", out.Type().TypeName())
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "no such key"):
		return
	case strings.HasPrefix(msg, "no such overload") && schemaFound(scopeOf(c, selfPtr())):
		return
	}
	dotted, pointer := pointerPath(self, selfPtr(), "")
	pos := self.Offset
	e.Add(Violation{Class: ClassSemantic, Code: "CHECK_ERROR", Severity: SeverityError,
		Path: dotted, Pointer: pointer, Expected: c.Code, Actual: msg,
		Hint: "The check " + c.Code + " could not be evaluated: " + msg + "."}, pos)
}

// evalRule evaluates c's rule with the variables of act: compiled into
// Go where the rule has been and the document's size class lets it run
// uncounted, else by cel-go, counting its cost unless the class is
// known to stay below the limit.
func evalRule(c *contracts.Check, act *checkActivation) (ref.Val, error) {
	uncounted := act.sized && c.UntrackedWithin&(1<<act.class) != 0
	if uncounted && c.Fast != nil {
		act.vars.Self, act.vars.Index = act.self, act.index
		if out, ok := c.Fast.Eval(act.vars); ok {
			if e, isErr := out.(*types.Err); isErr {
				return out, e
			}
			return out, nil
		}
	}
	prg := c.Program
	if uncounted && c.Untracked != nil {
		prg = c.Untracked
	}
	out, _, err := prg.Eval(act)
	return out, err
}

// scopeOf is the pointer under which a schema problem explains a check's
// type error: its item for a check that reads only the item, else the
// whole document.
func scopeOf(c *contracts.Check, selfPtr string) string {
	if c.Local {
		return selfPtr
	}
	return ""
}

// reportCheck records the violation of a check whose rule is false: at
// its path, with the value there as actual, and with expected and a
// replace fix when the check has an expected expression that evaluates.
func reportCheck(c *contracts.Check, self *strictjson.Value, selfPtr string, act *checkActivation, e *Emitter) {
	target := self
	if c.Path != "" {
		target, _ = self.At(c.Path)
	}
	dotted, pointer := pointerPath(self, selfPtr, c.Path)
	v := Violation{Class: ClassSemantic, Code: c.Code, Severity: Severity(c.Severity),
		Path: dotted, Pointer: pointer, Actual: Actual(target), Hint: c.Message}
	if c.ExpectedProgram != nil {
		if out, _, err := c.ExpectedProgram.Eval(act); err == nil {
			if x, err := celToJSON(out, 0); err == nil {
				v.Expected = x
				if fix := marshal(x); target != nil && !strictjson.Equal(target, mustParse(fix)) {
					v.Fixable = true
					v.Fix = &PatchOp{Op: "replace", Path: pointer, Value: fix}
				}
			}
		}
	}
	pos := self.Offset
	if target != nil {
		pos = target.Offset
	}
	e.Add(v, pos)
}

func mustParse(raw []byte) *strictjson.Value {
	v, err := strictjson.Parse(raw)
	if err != nil {
		return strictjson.Null()
	}
	return v
}

// pointerPath renders selfPtr+rel as a report's dotted path and pointer;
// a numeric step is an index when the document has an array there.
func pointerPath(self *strictjson.Value, selfPtr, rel string) (dotted, pointer string) {
	full := selfPtr + rel
	toks, err := strictjson.ParsePointer(full)
	if err != nil {
		return full, full
	}
	segs := make([]Seg, 0, len(toks))
	_ = self
	for _, t := range toks {
		if n, err := strconv.Atoi(t); err == nil && n >= 0 && strconv.Itoa(n) == t {
			segs = append(segs, n)
			continue
		}
		segs = append(segs, t)
	}
	return PathOf(segs...)
}

// celToJSON turns the value of an expected expression into the Go value a
// fix carries: whole numbers as ints, as Quantity writes them.
func celToJSON(v ref.Val, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("too deep")
	}
	switch x := v.(type) {
	case *types.Optional:
		if !x.HasValue() {
			return nil, errNoValue
		}
		return celToJSON(x.GetValue(), depth+1)
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.String:
		return string(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errors.New("not a JSON number")
		}
		return Quantity(float64(x)), nil
	case *jsonList:
		return x.v.Interface(), nil
	case *jsonObject:
		return x.v.Interface(), nil
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			el, err := celToJSON(it.Next(), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, el)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, errors.New("a map key that is not a string")
			}
			el, err := celToJSON(x.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[string(ks)] = el
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s is not JSON", v.Type().TypeName())
}

// errNoValue is an expected expression's optional.none(): the right value
// does not follow from the document, so the violation has no fix.
var errNoValue = errors.New("no value")

// checkActivation binds a check's variables without a map per
// evaluation.
type checkActivation struct {
	self, root ref.Val
	index      types.Int
	params     ref.Val
	// vars are the same variables for a rule compiled into Go.
	vars *contracts.CheckVars
	// class is the size class (contracts.CheckSizeClass) of the
	// document and the parameters; sized is false when they are larger
	// than every class.
	class int
	sized bool
}

func (a *checkActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "self":
		return a.self, true
	case "root":
		return a.root, true
	case "index":
		return a.index, true
	case "params":
		return a.params, true
	}
	return nil, false
}

func (a *checkActivation) Parent() interpreter.Activation { return nil }

// docVals makes the CEL values of one document, each once: the checks
// of a contract read the same members again and again (every check over
// the questions reads each question), and a string or a view made once
// is not made again for the next check. The views of every object and
// array are made up front in two slabs, and each value has a slot in a
// third that its container's view indexes, so that a member read is a
// slice index, not a map lookup, and the document costs three
// allocations plus one per string or unusual number it is read for.
type docVals struct {
	slots []ref.Val
	objs  []jsonObject
	lists []jsonList
	root  ref.Val
}

// newDocVals makes the views of doc and returns them with the sizes of
// sizesOf, from the same walk.
func newDocVals(doc *strictjson.Value) (d *docVals, maxList, maxString int) {
	var n docCount
	n.walk(doc, 0)
	d = &docVals{
		slots: make([]ref.Val, 0, n.slots),
		objs:  make([]jsonObject, 0, n.objs),
		lists: make([]jsonList, 0, n.lists),
	}
	if n.deep {
		// A document nested deeper than the walk goes counts as too
		// large for every size class, and its values are made as they
		// are read, without slots below the walk's depth.
		n.maxList, n.maxString = math.MaxInt, math.MaxInt
	}
	d.root = d.view(doc, 0)
	return d, n.maxList, n.maxString
}

// docCount is the first walk of newDocVals: how many slots and views
// the document needs and the sizes that pick its class.
type docCount struct {
	slots, objs, lists int
	maxList, maxString int
	deep               bool
}

// maxViewDepth is the depth below which newDocVals makes views; deeper
// values are made when read.
const maxViewDepth = 256

func (n *docCount) walk(v *strictjson.Value, depth int) {
	if depth > maxViewDepth {
		n.deep = true
		return
	}
	switch v.Kind {
	case strictjson.KindString:
		n.maxString = max(n.maxString, len(v.Str))
	case strictjson.KindArray:
		n.lists++
		n.slots += len(v.Items)
		n.maxList = max(n.maxList, len(v.Items))
		for _, it := range v.Items {
			n.walk(it, depth+1)
		}
	case strictjson.KindObject:
		n.objs++
		n.slots += len(v.Members)
		n.maxList = max(n.maxList, len(v.Members))
		for _, m := range v.Members {
			n.maxString = max(n.maxString, len(m.Key))
			n.walk(m.Value, depth+1)
		}
	}
}

// view is the CEL value of v: for an object or array its view from the
// slabs (made now, with the views of its containers' members), else
// nil for a scalar, which slot makes when it is read.
func (d *docVals) view(v *strictjson.Value, depth int) ref.Val {
	switch v.Kind {
	case strictjson.KindArray:
		if depth > maxViewDepth || len(d.lists) == cap(d.lists) || cap(d.slots)-len(d.slots) < len(v.Items) {
			return &jsonList{v: v, d: d, base: -1}
		}
		d.lists = append(d.lists, jsonList{v: v, d: d, base: len(d.slots)})
		l := &d.lists[len(d.lists)-1]
		d.slots = d.slots[:len(d.slots)+len(v.Items)]
		for i, it := range v.Items {
			d.slots[l.base+i] = d.view(it, depth+1)
		}
		return l
	case strictjson.KindObject:
		if depth > maxViewDepth || len(d.objs) == cap(d.objs) || cap(d.slots)-len(d.slots) < len(v.Members) {
			return &jsonObject{v: v, d: d, base: -1}
		}
		d.objs = append(d.objs, jsonObject{v: v, d: d, base: len(d.slots)})
		o := &d.objs[len(d.objs)-1]
		d.slots = d.slots[:len(d.slots)+len(v.Members)]
		for i, m := range v.Members {
			d.slots[o.base+i] = d.view(m.Value, depth+1)
		}
		return o
	}
	return nil
}

// listAt is the view of arr, the array at the JSON Pointer ptr of the
// document whose view is root, so that the items a for_each check runs
// on are the values every other rule reads.
func (d *docVals) listAt(root ref.Val, ptr string, arr *strictjson.Value) *jsonList {
	cur := root
	toks, err := strictjson.ParsePointer(ptr)
	for _, t := range toks {
		if err != nil {
			break
		}
		switch x := cur.(type) {
		case *jsonObject:
			if cur, _ = x.member(t); cur == nil {
				err = errNoValue
			}
		case *jsonList:
			n, aerr := strconv.Atoi(t)
			if aerr != nil || n < 0 || n >= len(x.v.Items) {
				err = errNoValue
				break
			}
			cur = x.at(n)
		default:
			err = errNoValue
		}
	}
	if l, ok := cur.(*jsonList); ok && err == nil && l.v == arr {
		return l
	}
	return &jsonList{v: arr, d: d, base: -1}
}

// slot is the CEL value of v, the value in slot i (i < 0: a value
// without a slot), made on its first read.
func (d *docVals) slot(i int, v *strictjson.Value) ref.Val {
	if i >= 0 {
		if x := d.slots[i]; x != nil {
			return x
		}
	}
	x := d.scalar(v)
	if x == nil {
		return d.view(v, maxViewDepth+1)
	}
	if i >= 0 {
		d.slots[i] = x
	}
	return x
}

// scalar is v as a CEL value when it is not an object or array (nil
// then): numbers are doubles (as CEL reads JSON), so that 1 and 1.0 are
// the same number.
func (d *docVals) scalar(v *strictjson.Value) ref.Val {
	switch v.Kind {
	case strictjson.KindNull:
		return types.NullValue
	case strictjson.KindBool:
		return types.Bool(v.Bool)
	case strictjson.KindNumber:
		if n, ok := smallWhole(v.Num); ok {
			return smallDoubles[n]
		}
		f, err := strconv.ParseFloat(v.Num, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return types.NewErr("number %s: %v", v.Num, err)
		}
		return types.Double(f)
	case strictjson.KindString:
		return types.String(v.Str)
	}
	return nil
}

// smallDoubles are the whole numbers 0 to len-1 as CEL values, made
// once: counts, weights and indices, the numbers rules read most, then
// cost no allocation.
var smallDoubles = func() [1024]ref.Val {
	var out [1024]ref.Val
	for i := range out {
		out[i] = types.Double(i)
	}
	return out
}()

// smallWhole reports whether the number literal lit is a whole number
// with an entry in smallDoubles ("3", not "3.0" or "-3"), and which.
func smallWhole(lit string) (int, bool) {
	if len(lit) == 0 || len(lit) > 3 || (len(lit) > 1 && lit[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(lit); i++ {
		if lit[i] < '0' || lit[i] > '9' {
			return 0, false
		}
		n = 10*n + int(lit[i]-'0')
	}
	return n, true
}

// jsonList is a JSON array as a CEL list; its element i is in slot
// base+i of d (base < 0: no slots).
type jsonList struct {
	v    *strictjson.Value
	d    *docVals
	base int
}

// Item is element i as a CEL value, for the rules compiled into Go.
func (l *jsonList) Item(i int) ref.Val { return l.at(i) }

// at is element i as a CEL value.
func (l *jsonList) at(i int) ref.Val {
	if l.base < 0 {
		return l.d.slot(-1, l.v.Items[i])
	}
	return l.d.slot(l.base+i, l.v.Items[i])
}

func (l *jsonList) native() ref.Val {
	return types.DefaultTypeAdapter.NativeToValue(l.v.Interface())
}
func (l *jsonList) ConvertToNative(t reflect.Type) (any, error) { return l.native().ConvertToNative(t) }
func (l *jsonList) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return l
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from list to '%s'", t)
}
func (l *jsonList) Equal(other ref.Val) ref.Val {
	if o, ok := other.(*jsonList); ok && o.v == l.v {
		return types.True
	}
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if o.Size() != types.Int(len(l.v.Items)) {
		return types.False
	}
	for i := range l.v.Items {
		if l.at(i).Equal(o.Get(types.Int(i))) != types.True {
			return types.False
		}
	}
	return types.True
}
func (l *jsonList) Type() ref.Type { return types.ListType }
func (l *jsonList) Value() any     { return l.v }
func (l *jsonList) Add(other ref.Val) ref.Val {
	vals := make([]ref.Val, len(l.v.Items))
	for i := range l.v.Items {
		vals[i] = l.at(i)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals).(traits.Adder).Add(other)
}
func (l *jsonList) Contains(x ref.Val) ref.Val {
	for i := range l.v.Items {
		if l.at(i).Equal(x) == types.True {
			return types.True
		}
	}
	return types.False
}
func (l *jsonList) Get(index ref.Val) ref.Val {
	i, err := types.GetOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if i < 0 || i >= len(l.v.Items) {
		return types.NewErr("index '%d' out of range in list size '%d'", i, len(l.v.Items))
	}
	return l.at(i)
}
func (l *jsonList) Iterator() traits.Iterator { return &jsonListIter{l: l} }
func (l *jsonList) Size() ref.Val             { return types.Int(len(l.v.Items)) }

// Fold hands each element to f, so that a comprehension over the list
// needs no iterator.
func (l *jsonList) Fold(f traits.Folder) {
	for i := range l.v.Items {
		if !f.FoldEntry(i, l.at(i)) {
			break
		}
	}
}

// iterValue is what the iterators of lists and objects share: the parts
// of a CEL value an iterator must have and never uses as one.
type iterValue struct{}

func (iterValue) ConvertToNative(reflect.Type) (any, error) {
	return nil, errors.New("an iterator is not a value")
}
func (iterValue) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("an iterator is not a value")
}
func (iterValue) Equal(ref.Val) ref.Val { return types.False }
func (iterValue) Type() ref.Type        { return types.IteratorType }
func (iterValue) Value() any            { return nil }

type jsonListIter struct {
	iterValue
	l *jsonList
	i int
}

func (it *jsonListIter) HasNext() ref.Val { return types.Bool(it.i < len(it.l.v.Items)) }
func (it *jsonListIter) Next() ref.Val {
	if it.i >= len(it.l.v.Items) {
		return nil
	}
	it.i++
	return it.l.at(it.i - 1)
}

// jsonObject is a JSON object as a CEL map from strings; its member i
// is in slot base+i of d (base < 0: no slots).
type jsonObject struct {
	v    *strictjson.Value
	d    *docVals
	base int
}

// FieldAt is Field that tries the member at position hint first and
// returns the position it found name at: the objects of an array mostly
// have their members in one order, so that a rule reading q.weight of
// every question finds it at once.
func (o *jsonObject) FieldAt(name string, hint int) (ref.Val, int, bool) {
	if hint >= 0 && hint < len(o.v.Members) && o.v.Members[hint].Key == name {
		if o.base < 0 {
			return o.d.slot(-1, o.v.Members[hint].Value), hint, true
		}
		return o.d.slot(o.base+hint, o.v.Members[hint].Value), hint, true
	}
	for i := range o.v.Members {
		if o.v.Members[i].Key == name {
			if o.base < 0 {
				return o.d.slot(-1, o.v.Members[i].Value), i, true
			}
			return o.d.slot(o.base+i, o.v.Members[i].Value), i, true
		}
	}
	return nil, hint, false
}

// member is the value of the member named name as a CEL value, if the
// object has it.
func (o *jsonObject) member(name string) (ref.Val, bool) {
	for i := range o.v.Members {
		if o.v.Members[i].Key == name {
			if o.base < 0 {
				return o.d.slot(-1, o.v.Members[i].Value), true
			}
			return o.d.slot(o.base+i, o.v.Members[i].Value), true
		}
	}
	return nil, false
}

func (o *jsonObject) ConvertToNative(t reflect.Type) (any, error) {
	return types.DefaultTypeAdapter.NativeToValue(o.v.Interface()).ConvertToNative(t)
}
func (o *jsonObject) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return o
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to '%s'", t)
}
func (o *jsonObject) Equal(other ref.Val) ref.Val {
	m, ok := other.(traits.Mapper)
	if !ok || m.Size() != o.Size() {
		return types.False
	}
	for _, mem := range o.v.Members {
		ov, found := m.Find(types.String(mem.Key))
		if !found {
			return types.False
		}
		if mv, _ := o.member(mem.Key); mv.Equal(ov) != types.True {
			return types.False
		}
	}
	return types.True
}
func (o *jsonObject) Type() ref.Type { return types.MapType }

// Value is the object itself: a rule typed by the contract's schema
// reads its fields through Field and JSONValue.
func (o *jsonObject) Value() any { return o }

// JSONValue is the object in the parsed document.
func (o *jsonObject) JSONValue() *strictjson.Value { return o.v }

// Field is the member name as a CEL value, if the object has it.
func (o *jsonObject) Field(name string) (ref.Val, bool) { return o.member(name) }
func (o *jsonObject) Contains(key ref.Val) ref.Val {
	_, found := o.Find(key)
	return types.Bool(found)
}
func (o *jsonObject) Get(key ref.Val) ref.Val {
	v, found := o.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}
func (o *jsonObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return o.member(string(k))
}
func (o *jsonObject) Iterator() traits.Iterator {
	keys := make([]string, len(o.v.Members))
	for i, m := range o.v.Members {
		keys[i] = m.Key
	}
	return &jsonKeyIter{keys: keys}
}
func (o *jsonObject) Size() ref.Val { return types.Int(len(o.v.Members)) }

type jsonKeyIter struct {
	iterValue
	keys []string
	i    int
}

func (it *jsonKeyIter) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }
func (it *jsonKeyIter) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	it.i++
	return types.String(it.keys[it.i-1])
}
