package validators

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/contracts/celfast"
	"github.com/contractgateway/gateway/validators/celdoc"
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
	vals, maxList, maxString := celdoc.New(doc)
	pv, longest := paramsVal(params)
	act := &checkActivation{root: vals.Root(), params: pv}
	if act.root == nil {
		act.root = vals.Slot(-1, doc)
	}
	maxList, maxString = max(maxList, len(params)), max(maxString, longest)
	act.class, act.sized = contracts.CheckSizeClass(maxList, maxString)
	act.vars = checkVarsPool.Get().(*celfast.Vars)
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
			act.self, act.index = l.At(j), types.Int(j)
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
	vals *celdoc.Doc
	root ref.Val
	seen []forEachArray
}

type forEachArray struct {
	ptr  string
	arr  *strictjson.Value
	list *celdoc.List
}

// at is the array at the JSON Pointer ptr and its view; nil when the
// document has no array there.
func (a *forEachArrays) at(ptr string) (*strictjson.Value, *celdoc.List) {
	for _, s := range a.seen {
		if s.ptr == ptr {
			return s.arr, s.list
		}
	}
	s := forEachArray{ptr: ptr}
	if arr, err := a.doc.At(ptr); err == nil && arr.Kind == strictjson.KindArray {
		s.arr, s.list = arr, a.vals.ListAt(a.root, ptr, arr)
	}
	a.seen = append(a.seen, s)
	return s.arr, s.list
}

// checkVarsPool holds the variables and scratch space of compiled
// rules between documents, so that a document does not make them again.
var checkVarsPool = sync.Pool{New: func() any { return new(celfast.Vars) }}

// paramsVal is the bound parameters as a CEL map whose values are made
// once (a rule reading params.options on every item makes no string),
// and the length of the longest key or value, for the size class.
func paramsVal(params Params) (val ref.Val, longest int) {
	m := make(map[ref.Val]ref.Val, len(params))
	for k, v := range params {
		m[types.String(k)] = types.String(v)
		longest = max(longest, len(k), len(v))
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m), longest
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
	case *celdoc.List:
		return x.JSONValue().Interface(), nil
	case *celdoc.Object:
		return x.JSONValue().Interface(), nil
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
	vars *celfast.Vars
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
