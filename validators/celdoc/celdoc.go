// Package celdoc makes a parsed JSON document (strictjson) the CEL values
// a contract's checks read: objects and arrays are views over the
// document, and every value is made once per document, so that the many
// checks of a contract that read the same members do not build them
// again. It knows nothing of checks or reports.
package celdoc

import (
	"errors"
	"math"
	"reflect"
	"strconv"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// Doc makes the CEL values of one document, each once: the checks
// of a contract read the same members again and again (every check over
// the questions reads each question), and a string or a view made once
// is not made again for the next check. The views of every object and
// array are made up front in two slabs, and each value has a slot in a
// third that its container's view indexes, so that a member read is a
// slice index, not a map lookup, and the document costs three
// allocations plus one per string or unusual number it is read for.
type Doc struct {
	slots []ref.Val
	objs  []Object
	lists []List
	root  ref.Val
}

// New makes the views of doc and returns them with the sizes of
// sizesOf, from the same walk.
func New(doc *strictjson.Value) (d *Doc, maxList, maxString int) {
	var n docCount
	n.walk(doc, 0)
	d = &Doc{
		slots: make([]ref.Val, 0, n.slots),
		objs:  make([]Object, 0, n.objs),
		lists: make([]List, 0, n.lists),
	}
	if n.deep {
		// A document nested deeper than the walk goes counts as too
		// large for every size class, and its values are made as they
		// are read, without slots below the walk's depth.
		n.maxList, n.maxString = math.MaxInt, math.MaxInt
	}
	d.root = d.View(doc, 0)
	return d, n.maxList, n.maxString
}

// docCount is the first walk of New: how many slots and views
// the document needs and the sizes that pick its class.
type docCount struct {
	slots, objs, lists int
	maxList, maxString int
	deep               bool
}

// maxViewDepth is the depth below which New makes views; deeper
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

// View is the CEL value of v: for an object or array its view from the
// slabs (made now, with the views of its containers' members), else
// nil for a scalar, which slot makes when it is read.
func (d *Doc) View(v *strictjson.Value, depth int) ref.Val {
	switch v.Kind {
	case strictjson.KindArray:
		if base, ok := d.take(len(d.lists) < cap(d.lists), len(v.Items), depth); ok {
			d.lists = append(d.lists, List{v: v, d: d, base: base})
			return d.fill(&d.lists[len(d.lists)-1], v, base, depth)
		}
		return &List{v: v, d: d, base: -1}
	case strictjson.KindObject:
		if base, ok := d.take(len(d.objs) < cap(d.objs), len(v.Members), depth); ok {
			d.objs = append(d.objs, Object{v: v, d: d, base: base})
			return d.fill(&d.objs[len(d.objs)-1], v, base, depth)
		}
		return &Object{v: v, d: d, base: -1}
	}
	return nil
}

// take reserves n slots for the members of a container at depth whose
// slab has room, and returns the first; false when the container is too
// deep or the slots are full, and its view is then made apart, its
// members' views when they are read. The slabs never grow: a view's
// address is kept.
func (d *Doc) take(room bool, n, depth int) (int, bool) {
	if !room || depth > maxViewDepth || cap(d.slots)-len(d.slots) < n {
		return 0, false
	}
	base := len(d.slots)
	d.slots = d.slots[:base+n]
	return base, true
}

// fill makes the views of v's items, or its members' values, into the
// slots from base, and returns view, v's own.
func (d *Doc) fill(view ref.Val, v *strictjson.Value, base, depth int) ref.Val {
	for i, it := range v.Items {
		d.slots[base+i] = d.View(it, depth+1)
	}
	for i, m := range v.Members {
		d.slots[base+i] = d.View(m.Value, depth+1)
	}
	return view
}

// Root is the view of the whole document.
func (d *Doc) Root() ref.Val { return d.root }

// errMissing is a pointer of ListAt that leads nowhere in the document.
var errMissing = errors.New("no value at the pointer")

// ListAt is the view of arr, the array at the JSON Pointer ptr of the
// document whose view is root, so that the items a for_each check runs
// on are the values every other rule reads.
func (d *Doc) ListAt(root ref.Val, ptr string, arr *strictjson.Value) *List {
	cur := root
	toks, err := strictjson.ParsePointer(ptr)
	for _, t := range toks {
		if err != nil {
			break
		}
		switch x := cur.(type) {
		case *Object:
			if cur, _ = x.Member(t); cur == nil {
				err = errMissing
			}
		case *List:
			n, aerr := strconv.Atoi(t)
			if aerr != nil || n < 0 || n >= len(x.v.Items) {
				err = errMissing
				break
			}
			cur = x.At(n)
		default:
			err = errMissing
		}
	}
	if l, ok := cur.(*List); ok && err == nil && l.v == arr {
		return l
	}
	return &List{v: arr, d: d, base: -1}
}

// Slot is the CEL value of v, the value in slot i (i < 0: a value
// without a slot), made on its first read.
func (d *Doc) Slot(i int, v *strictjson.Value) ref.Val {
	if i >= 0 {
		if x := d.slots[i]; x != nil {
			return x
		}
	}
	x := d.scalar(v)
	if x == nil {
		return d.View(v, maxViewDepth+1)
	}
	if i >= 0 {
		d.slots[i] = x
	}
	return x
}

// child is the CEL value of v, child i of a view whose children's slots
// start at base (base < 0: a view without slots).
func (d *Doc) child(base, i int, v *strictjson.Value) ref.Val {
	if base < 0 {
		return d.Slot(-1, v)
	}
	return d.Slot(base+i, v)
}

// scalar is v as a CEL value when it is not an object or array (nil
// then): numbers are doubles (as CEL reads JSON), so that 1 and 1.0 are
// the same number.
func (d *Doc) scalar(v *strictjson.Value) ref.Val {
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

// List is a JSON array as a CEL list; its element i is in slot
// base+i of d (base < 0: no slots).
type List struct {
	v    *strictjson.Value
	d    *Doc
	base int
}

// Item is element i as a CEL value, for the rules compiled into Go.
func (l *List) Item(i int) ref.Val { return l.At(i) }

// At is element i as a CEL value.
func (l *List) At(i int) ref.Val { return l.d.child(l.base, i, l.v.Items[i]) }

func (l *List) native() ref.Val {
	return types.DefaultTypeAdapter.NativeToValue(l.v.Interface())
}
func (l *List) ConvertToNative(t reflect.Type) (any, error) { return l.native().ConvertToNative(t) }
func (l *List) ConvertToType(t ref.Type) ref.Val            { return convertTo(l, t, types.ListType, "list") }
func (l *List) Equal(other ref.Val) ref.Val {
	if o, ok := other.(*List); ok && o.v == l.v {
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
		if l.At(i).Equal(o.Get(types.Int(i))) != types.True {
			return types.False
		}
	}
	return types.True
}
func (l *List) Type() ref.Type { return types.ListType }
func (l *List) Value() any     { return l.v }

// JSONValue is the array l is a view of.
func (l *List) JSONValue() *strictjson.Value { return l.v }
func (l *List) Add(other ref.Val) ref.Val {
	vals := make([]ref.Val, len(l.v.Items))
	for i := range l.v.Items {
		vals[i] = l.At(i)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals).(traits.Adder).Add(other)
}
func (l *List) Contains(x ref.Val) ref.Val {
	for i := range l.v.Items {
		if l.At(i).Equal(x) == types.True {
			return types.True
		}
	}
	return types.False
}
func (l *List) Get(index ref.Val) ref.Val {
	i, err := types.GetOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if i < 0 || i >= len(l.v.Items) {
		return types.NewErr("index '%d' out of range in list size '%d'", i, len(l.v.Items))
	}
	return l.At(i)
}
func (l *List) Iterator() traits.Iterator { return &listIter{l: l} }
func (l *List) Size() ref.Val             { return types.Int(len(l.v.Items)) }

// Fold hands each element to f, so that a comprehension over the list
// needs no iterator.
func (l *List) Fold(f traits.Folder) {
	for i := range l.v.Items {
		if !f.FoldEntry(i, l.At(i)) {
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

type listIter struct {
	iterValue
	l *List
	i int
}

func (it *listIter) HasNext() ref.Val { return types.Bool(it.i < len(it.l.v.Items)) }
func (it *listIter) Next() ref.Val {
	if it.i >= len(it.l.v.Items) {
		return nil
	}
	it.i++
	return it.l.At(it.i - 1)
}

// Object is a JSON object as a CEL map from strings; its member i
// is in slot base+i of d (base < 0: no slots).
type Object struct {
	v    *strictjson.Value
	d    *Doc
	base int
}

// FieldAt is Field that tries the member at position hint first and
// returns the position it found name at: the objects of an array mostly
// have their members in one order, so that a rule reading q.weight of
// every question finds it at once.
func (o *Object) FieldAt(name string, hint int) (ref.Val, int, bool) {
	if hint >= 0 && hint < len(o.v.Members) && o.v.Members[hint].Key == name {
		return o.at(hint), hint, true
	}
	for i := range o.v.Members {
		if o.v.Members[i].Key == name {
			return o.at(i), i, true
		}
	}
	return nil, hint, false
}

// Member is the value of the member named name as a CEL value, if the
// object has it.
func (o *Object) Member(name string) (ref.Val, bool) {
	for i := range o.v.Members {
		if o.v.Members[i].Key == name {
			return o.at(i), true
		}
	}
	return nil, false
}

// at is the value of member i.
func (o *Object) at(i int) ref.Val { return o.d.child(o.base, i, o.v.Members[i].Value) }

func (o *Object) ConvertToNative(t reflect.Type) (any, error) {
	return types.DefaultTypeAdapter.NativeToValue(o.v.Interface()).ConvertToNative(t)
}
func (o *Object) ConvertToType(t ref.Type) ref.Val { return convertTo(o, t, types.MapType, "map") }

// convertTo is ConvertToType of v, a view of the CEL type typ named name:
// v itself as its own type, typ as a type, and an error for any other, as
// CEL's own lists and maps convert.
func convertTo(v ref.Val, t ref.Type, typ *types.Type, name string) ref.Val {
	switch t {
	case typ:
		return v
	case types.TypeType:
		return typ
	}
	return types.NewErr("type conversion error from %s to '%s'", name, t)
}
func (o *Object) Equal(other ref.Val) ref.Val {
	m, ok := other.(traits.Mapper)
	if !ok || m.Size() != o.Size() {
		return types.False
	}
	for _, mem := range o.v.Members {
		ov, found := m.Find(types.String(mem.Key))
		if !found {
			return types.False
		}
		if mv, _ := o.Member(mem.Key); mv.Equal(ov) != types.True {
			return types.False
		}
	}
	return types.True
}
func (o *Object) Type() ref.Type { return types.MapType }

// Value is the object itself: a rule typed by the contract's schema
// reads its fields through Field and JSONValue.
func (o *Object) Value() any { return o }

// JSONValue is the object in the parsed document.
func (o *Object) JSONValue() *strictjson.Value { return o.v }

// Field is the member name as a CEL value, if the object has it.
func (o *Object) Field(name string) (ref.Val, bool) { return o.Member(name) }
func (o *Object) Contains(key ref.Val) ref.Val {
	_, found := o.Find(key)
	return types.Bool(found)
}
func (o *Object) Get(key ref.Val) ref.Val {
	v, found := o.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}
func (o *Object) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return o.Member(string(k))
}
func (o *Object) Iterator() traits.Iterator {
	keys := make([]string, len(o.v.Members))
	for i, m := range o.v.Members {
		keys[i] = m.Key
	}
	return &keyIter{keys: keys}
}
func (o *Object) Size() ref.Val { return types.Int(len(o.v.Members)) }

type keyIter struct {
	iterValue
	keys []string
	i    int
}

func (it *keyIter) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }
func (it *keyIter) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	it.i++
	return types.String(it.keys[it.i-1])
}
