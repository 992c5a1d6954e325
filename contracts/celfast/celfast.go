// Package celfast compiles a check's rule, once cel-go has checked it,
// into Go closures that evaluate it as cel-go's interpreter would, step
// for step and error for error, at a fraction of its cost: the rules
// that every item of every answer runs are the guard's hottest code.
package celfast

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/decls"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
	"cel.dev/cel-go/interpreter/functions"

	"github.com/contractgateway/gateway/contracts/celenv"
)

// Rule is a rule compiled into Go closures over its variables: the same
// steps cel-go's interpreter takes (the same functions, the same order,
// the same errors), without its per-step dispatch, name lookups and
// attribute machinery, which cost most of a check's time. It does not
// count cost, so a check has one only where the load-time estimate shows
// that the rule cannot reach contracts.CheckRuntimeCostLimit (the
// classes of contracts.Check.UntrackedWithin); every other document is
// evaluated by the check's Program. A rule using a part of CEL the
// compiler does not know (map or message literals, two-variable
// comprehensions, optional steps) has none.
type Rule struct {
	eval   fastExpr
	slots  int
	folds  int
	hints  int
	kept   int
	groups int
}

// Vars are the variables of one evaluation of a Rule, and the
// scratch space its comprehensions use; a caller reuses one across
// evaluations so that an evaluation allocates nothing of its own.
type Vars struct {
	Self, Root, Params ref.Val
	Index              types.Int
	slots              []ref.Val
	folds              []fastFolder
	// hints are the positions at which each member read of the rule
	// last found its member.
	hints []int
	// kept are the member reads of self, root and params made in this
	// evaluation (see selectExpr).
	kept []ref.Val
	// groups are the phrase sets found in each phrase group's value in
	// this evaluation, groupDone whether they have been looked for.
	groups    []uint64
	groupDone []bool
	// bail is set when the evaluation met a value the compiled rule
	// does not handle as cel-go would (an optional value where a member
	// is read); the caller then evaluates the rule with cel-go.
	bail bool
}

// Reset drops every value v holds, keeping its scratch space, so that
// v can serve another document without keeping this one alive.
func (v *Vars) Reset() {
	v.Self, v.Root, v.Params, v.Index = nil, nil, nil, 0
	clear(v.slots)
	clear(v.kept)
	clear(v.folds)
}

// errBail is what a step gives when it sets bail.
var errBail = types.NewErr("evaluated by cel-go")

// Eval evaluates the rule with the variables v; false when the rule
// must be evaluated by cel-go instead. A function that panics is an
// error, as cel-go's Eval makes it.
func (r *Rule) Eval(v *Vars) (out ref.Val, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			out, ok = types.WrapErr(fmt.Errorf("internal error: %v", p)), true
		}
	}()
	if len(v.slots) < r.slots {
		v.slots = make([]ref.Val, max(r.slots, 16))
	}
	if len(v.folds) < r.folds {
		v.folds = make([]fastFolder, max(r.folds, 8))
	}
	if len(v.hints) < r.hints {
		v.hints = make([]int, max(r.hints, 32))
	}
	if len(v.kept) < r.kept {
		v.kept = make([]ref.Val, max(r.kept, 16))
	}
	clear(v.kept[:r.kept])
	if len(v.groups) < r.groups {
		v.groups, v.groupDone = make([]uint64, max(r.groups, 4)), make([]bool, max(r.groups, 4))
	}
	clear(v.groupDone[:r.groups])
	v.bail = false
	out = r.eval(v)
	return out, !v.bail
}

type fastExpr func(*Vars) ref.Val

// errNotFast is returned by the compiler for a part of CEL it leaves to
// cel-go.
var errNotFast = errors.New("not compiled to Go")

// fastOverloads are the implementations of every function of celenv.Base,
// by overload id and by function name, as cel-go's dispatcher holds
// them.
var fastOverloads = func() map[string]*functions.Overload {
	out := map[string]*functions.Overload{}
	for _, fn := range celenv.Base.Functions() {
		bs, err := fn.Bindings()
		if err != nil {
			continue
		}
		for _, b := range bs {
			out[b.Operator] = b
		}
	}
	return out
}()

// fastLocal is a comprehension variable in scope: its slot, and for an
// accumulator its initial value, evaluated on first read as cel-go
// does.
type fastLocal struct {
	name string
	slot int
	init fastExpr
}

type fastCompiler struct {
	ast   *celast.AST
	prov  types.Provider
	scope []fastLocal
	slots int
	folds int
	hints int
	paths map[string]int
	// phraseGroups are the containsPhrase calls on each member path,
	// groupSlots their number.
	phraseGroups map[string]*phraseGroup
	groupSlots   int
}

// Compile compiles a checked (and folded) rule; errNotFast when it
// uses a part of CEL the compiler leaves to cel-go.
func Compile(a *celast.AST, prov types.Provider) (r *Rule, err error) {
	c := &fastCompiler{ast: a, prov: prov, paths: map[string]int{}, phraseGroups: map[string]*phraseGroup{}}
	e, err := c.expr(a.Expr())
	if err != nil {
		return nil, err
	}
	return &Rule{eval: e, slots: c.slots, folds: c.folds, hints: c.hints, kept: len(c.paths), groups: c.groupSlots}, nil
}

func (c *fastCompiler) lookup(name string) (fastLocal, bool) {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i].name == name {
			return c.scope[i], true
		}
	}
	return fastLocal{}, false
}

func (c *fastCompiler) expr(e celast.Expr) (fastExpr, error) {
	switch e.Kind() {
	case celast.LiteralKind:
		v := e.AsLiteral()
		return func(*Vars) ref.Val { return v }, nil
	case celast.IdentKind:
		if r, ok := c.ast.ReferenceMap()[e.ID()]; ok {
			return c.ident(e.ID(), r.Name, r)
		}
		return c.ident(e.ID(), e.AsIdent(), nil)
	case celast.SelectKind:
		return c.selectExpr(e)
	case celast.CallKind:
		return c.call(e)
	case celast.ListKind:
		return c.list(e)
	case celast.ComprehensionKind:
		return c.comprehension(e)
	}
	return nil, errNotFast
}

// ident is a variable, a constant or a type name, resolved in the order
// of cel-go's planner.
func (c *fastCompiler) ident(id int64, name string, r *celast.ReferenceInfo) (fastExpr, error) {
	if r != nil && r.Value != nil {
		v := r.Value
		return func(*Vars) ref.Val { return v }, nil
	}
	if t := c.ast.GetType(id); r != nil && t != nil && t.Kind() == types.TypeKind {
		v, ok := c.prov.FindIdent(r.Name)
		if !ok {
			return nil, errNotFast
		}
		return func(*Vars) ref.Val { return v }, nil
	}
	if l, ok := c.lookup(name); ok {
		s := l.slot
		if l.init == nil {
			return func(v *Vars) ref.Val { return v.slots[s] }, nil
		}
		init := l.init
		return func(v *Vars) ref.Val {
			if v.slots[s] == nil {
				v.slots[s] = init(v)
			}
			return v.slots[s]
		}, nil
	}
	switch name {
	case "self":
		return func(v *Vars) ref.Val { return v.Self }, nil
	case "root":
		return func(v *Vars) ref.Val { return v.Root }, nil
	case "index":
		return func(v *Vars) ref.Val { return v.Index }, nil
	case "params":
		return func(v *Vars) ref.Val { return v.Params }, nil
	}
	return nil, errNotFast
}

// itemer is a JSON array of the document: an element read in place.
type itemer interface {
	Item(i int) ref.Val
}

// elementAt is element i of l, which has more than i elements: read in
// place from the document's arrays, else through Get.
func elementAt(l traits.Lister, i types.Int) ref.Val {
	if it, ok := l.(itemer); ok {
		return it.Item(int(i))
	}
	return l.Get(i)
}

// fielder is a JSON object of the document: a member read in place.
type fielder interface {
	Field(string) (ref.Val, bool)
}

// hintedFielder is a fielder that reads a member faster at the position
// it was last found at (see Vars.hints).
type hintedFielder interface {
	FieldAt(name string, hint int) (ref.Val, int, bool)
}

// field is the member name of f, using and updating the hint in slot h
// of v.
func field(v *Vars, h int, f fielder, name string) (ref.Val, bool) {
	if hf, ok := f.(hintedFielder); ok {
		x, at, found := hf.FieldAt(name, v.hints[h])
		v.hints[h] = at
		return x, found
	}
	return f.Field(name)
}

// selectExpr is x.f, or has(x.f). A member read of self, root or
// params (self.weight, root.meta.title) is read once per evaluation and
// kept: the rules read the same members again and again
// (self.weight == 1 || self.weight == 2 || …), and within one
// evaluation they are the same value.
func (c *fastCompiler) selectExpr(e celast.Expr) (fastExpr, error) {
	if r, ok := c.ast.ReferenceMap()[e.ID()]; ok {
		return c.ident(e.ID(), r.Name, r)
	}
	path, ok := c.varPath(e)
	if !ok {
		return c.selectUncached(e)
	}
	k, seen := c.paths[path]
	if !seen {
		k = len(c.paths)
		c.paths[path] = k
	}
	read, err := c.selectUncached(e)
	if err != nil {
		return nil, err
	}
	return func(v *Vars) ref.Val {
		if x := v.kept[k]; x != nil {
			return x
		}
		x := read(v)
		v.kept[k] = x
		return x
	}, nil
}

// varPath is e as a path such as "self.a.b" when it is a chain of
// member reads from self, root or params (not test-only, not through a
// comprehension variable of that name).
func (c *fastCompiler) varPath(e celast.Expr) (string, bool) {
	switch e.Kind() {
	case celast.SelectKind:
		if _, ok := c.ast.ReferenceMap()[e.ID()]; ok {
			return "", false
		}
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return "", false
		}
		p, ok := c.varPath(sel.Operand())
		return p + "." + sel.FieldName(), ok
	case celast.IdentKind:
		name := e.AsIdent()
		if r, ok := c.ast.ReferenceMap()[e.ID()]; ok {
			if r.Value != nil {
				return "", false
			}
			name = r.Name
		}
		if _, local := c.lookup(name); local {
			return "", false
		}
		switch name {
		case "self", "root", "params":
			return name, true
		}
	}
	return "", false
}

func (c *fastCompiler) selectUncached(e celast.Expr) (fastExpr, error) {
	sel := e.AsSelect()
	op, err := c.expr(sel.Operand())
	if err != nil {
		return nil, err
	}
	name := sel.FieldName()
	key := types.String(name)
	missing := types.NewErr("no such key: %s", name)
	h := c.hints
	c.hints++
	opType := c.ast.GetType(sel.Operand().ID())
	if opType != nil && opType.Kind() == types.OpaqueKind {
		return nil, errNotFast
	}
	if opType != nil && opType.Kind() == types.StructKind {
		if ft, ok := c.prov.FindStructFieldType(opType.TypeName(), name); ok && ft.IsSet != nil && ft.GetFrom != nil {
			// The schema's object type: cel-go reads the field through
			// the type's GetFrom and IsSet, whatever the value is.
			if sel.IsTestOnly() {
				return func(v *Vars) ref.Val {
					x := op(v)
					if types.IsUnknownOrError(x) {
						return x
					}
					return types.Bool(ft.IsSet(x.Value()))
				}, nil
			}
			return func(v *Vars) ref.Val {
				x := op(v)
				if types.IsUnknownOrError(x) {
					return x
				}
				if hf, ok := x.(hintedFielder); ok {
					// The document's objects are their own Value.
					m, at, found := hf.FieldAt(name, v.hints[h])
					v.hints[h] = at
					if found {
						return m
					}
					return missing
				}
				if _, ok := x.(*types.Optional); ok {
					v.bail = true
					return errBail
				}
				if f, ok := x.Value().(fielder); ok {
					if m, found := field(v, h, f, name); found {
						return m
					}
					return missing
				}
				out, err := ft.GetFrom(x.Value())
				if err != nil {
					return types.WrapErr(err)
				}
				return types.DefaultTypeAdapter.NativeToValue(out)
			}, nil
		}
	}
	// has(x.f) tests for the member where x.f reads it.
	test := sel.IsTestOnly()
	return func(v *Vars) ref.Val {
		x := op(v)
		switch m := x.(type) {
		case *types.Err, *types.Unknown:
			return x
		case *types.Optional:
			v.bail = true
			return errBail
		case fielder:
			if test {
				_, found := m.Field(name)
				return types.Bool(found)
			}
			if f, found := field(v, h, m, name); found {
				return f
			}
			return missing
		}
		out, found, err := qualify(x, key, test)
		if err != nil {
			return types.WrapErr(err)
		}
		if test && out == nil {
			return types.Bool(found)
		}
		return out
	}, nil
}

// qualify is x[idx] (or x.idx) as cel-go's attributes read it from a
// map, a list or an indexer; for a presence test, whether it is there
// (out is then nil unless it is unknown).
func qualify(x, idx ref.Val, presence bool) (out ref.Val, found bool, err error) {
	switch v := x.(type) {
	case *types.Unknown:
		return v, true, nil
	case *types.Err:
		return nil, false, v
	case traits.Mapper:
		val, found := v.Find(idx)
		if e, ok := val.(*types.Err); ok {
			return nil, false, e
		}
		if found && !presence {
			return val, true, nil
		}
		return absent(found, presence, "no such key: %v", idx)
	case traits.Lister:
		i, err := types.GetOrError(idx)
		if err != nil {
			return nil, false, err
		}
		found := i >= 0 && types.Int(i) < v.Size().(types.Int)
		if found && !presence {
			return v.Get(idx), true, nil
		}
		return absent(found, presence, "index out of bounds: %v", idx)
	case traits.Indexer:
		if presence {
			if ft, ok := v.(traits.FieldTester); ok {
				p := ft.IsSet(idx)
				if e, ok := p.(*types.Err); ok {
					return nil, false, e
				}
				return nil, p == types.True, nil
			}
		}
		val := v.Get(idx)
		if e, ok := val.(*types.Err); ok {
			return nil, false, e
		}
		if !presence {
			return val, true, nil
		}
		return nil, true, nil
	}
	return absent(false, presence, "no such key: %v", idx)
}

// absent is qualify's answer where no value is given: whether the member
// or element is there for a presence test, else the error of a read that
// found nothing, worded by missing.
func absent(found, presence bool, missing string, idx ref.Val) (ref.Val, bool, error) {
	if presence {
		return nil, found, nil
	}
	return nil, false, fmt.Errorf(missing, idx)
}

func (c *fastCompiler) args(e celast.Expr) ([]fastExpr, error) {
	call := e.AsCall()
	var out []fastExpr
	if call.IsMemberFunction() {
		t, err := c.expr(call.Target())
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	for _, a := range call.Args() {
		x, err := c.expr(a)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func (c *fastCompiler) call(e celast.Expr) (fastExpr, error) {
	call := e.AsCall()
	fn := call.FunctionName()
	oID := ""
	r, ok := c.ast.ReferenceMap()[e.ID()]
	if !ok {
		// cel-go resolves a call the checker did not in ways this
		// compiler does not repeat.
		return nil, errNotFast
	}
	if len(r.OverloadIDs) == 1 {
		oID = r.OverloadIDs[0]
	}
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	switch fn {
	case operators.LogicalAnd, operators.LogicalOr:
		return logical(args, fn == operators.LogicalOr), nil
	case operators.Conditional:
		return conditional(args[0], args[1], args[2]), nil
	case operators.Equals, operators.NotEquals:
		if fn == operators.Equals && oID == "equals" {
			if f := c.joinedCompare(e, args, false); f != nil {
				return f, nil
			}
		}
		if f := c.equalityConst(e, args[0], fn == operators.NotEquals); f != nil {
			return f, nil
		}
		return equality(args[0], args[1], fn == operators.NotEquals), nil
	case operators.Index:
		return c.index(e, args)
	case operators.OptIndex, operators.OptSelect:
		return nil, errNotFast
	case operators.NotStrictlyFalse:
		a := args[0]
		return func(v *Vars) ref.Val {
			if b, ok := a(v).(types.Bool); ok {
				return b
			}
			return types.True
		}, nil
	}
	switch {
	case oID == "int64_to_string" && len(args) == 1:
		a := args[0]
		return func(v *Vars) ref.Val {
			x := a(v)
			if n, ok := x.(types.Int); ok {
				if n >= 0 && int(n) < len(celenv.SmallInts) {
					return celenv.SmallInts[n]
				}
				return n.ConvertToType(types.StringType)
			}
			if types.IsUnknownOrError(x) {
				return x
			}
			return types.MaybeNoSuchOverloadErr(x)
		}, nil
	case oID == "starts_with_string" && len(args) == 2:
		if f := c.joinedCompare(e, args, true); f != nil {
			return f, nil
		}
		if f := c.stringTest(e, oID, args, strings.HasPrefix); f != nil {
			return f, nil
		}
	case oID == "contains_string" && len(args) == 2:
		if f := c.stringTest(e, oID, args, strings.Contains); f != nil {
			return f, nil
		}
	case oID == "ends_with_string" && len(args) == 2:
		if f := c.stringTest(e, oID, args, strings.HasSuffix); f != nil {
			return f, nil
		}
	case fn == "containsPhrase" && len(args) == 2:
		if f := c.phrases(e, args); f != nil {
			return f, nil
		}
	case fn == "matches" && len(args) == 2:
		if f, err := c.matches(e, args); f != nil || err != nil {
			return f, err
		}
	}
	var impl *functions.Overload
	if oID != "" {
		impl = fastOverloads[oID]
	}
	if impl == nil {
		impl = fastOverloads[fn]
	}
	if f := c.standard(fn, impl, args); f != nil {
		return f, nil
	}
	if raw, ok := unguarded[oID]; ok && len(args) == 1 && impl != nil && impl.Unary != nil && impl.OperandTrait == 0 && !impl.NonStrict {
		return guardOnce(fn, raw, args[0], impl.Unary), nil
	}
	if impl != nil && (impl.Async != nil || impl.LateBound) {
		return nil, errNotFast
	}
	if oID == "" && impl != nil && len(args) >= 1 && len(args) <= 3 {
		if f := dispatchTable(fn, impl, args); f != nil {
			return f, nil
		}
	}
	switch len(args) {
	case 0:
		if impl == nil || impl.Function == nil {
			return nil, errNotFast
		}
		f := impl.Function
		return func(*Vars) ref.Val { return f() }, nil
	case 1:
		if impl != nil && impl.Unary == nil && impl.Function != nil {
			return varArgs(fn, oID, impl, args), nil
		}
		if impl != nil && impl.Unary == nil {
			return nil, errNotFast
		}
		return unary(fn, oID, impl, args[0]), nil
	case 2:
		if impl != nil && impl.Binary == nil && impl.Function != nil {
			return varArgs(fn, oID, impl, args), nil
		}
		if impl != nil && impl.Binary == nil {
			return nil, errNotFast
		}
		return binary(fn, oID, impl, args[0], args[1]), nil
	}
	if impl != nil && impl.Function == nil {
		return nil, errNotFast
	}
	return varArgs(fn, oID, impl, args), nil
}

// logical is && (or || when or): the terms in order, stopping at the
// first false (true), else the first error, as cel-go's evalAnd and
// evalOr.
func logical(terms []fastExpr, or bool) fastExpr {
	stop := types.False
	if or {
		stop = types.True
	}
	if len(terms) == 2 {
		// The common case, a || b: both bools or the first one stop.
		a, b := terms[0], terms[1]
		return func(v *Vars) ref.Val {
			x := a(v)
			xb, xok := x.(types.Bool)
			if xok && xb == stop {
				return stop
			}
			y := b(v)
			yb, yok := y.(types.Bool)
			if yok && yb == stop {
				return stop
			}
			if xok && yok {
				return !stop
			}
			return logical2(x, y, stop)
		}
	}
	return func(v *Vars) ref.Val {
		var err ref.Val
		var unk *types.Unknown
		for _, t := range terms {
			x := t(v)
			b, ok := x.(types.Bool)
			if ok && b == stop {
				return stop
			}
			if !ok {
				unk, err = nonBool(x, unk, err)
			}
		}
		return noStop(unk, err, stop)
	}
}

// conditional is c ? t : f as cel-go's conditional attribute.
func conditional(cond, t, f fastExpr) fastExpr {
	return func(v *Vars) ref.Val {
		x := cond(v)
		if b, ok := x.(types.Bool); ok {
			if b {
				return t(v)
			}
			return f(v)
		}
		if types.IsUnknown(x) {
			return x
		}
		return types.MaybeNoSuchOverloadErr(x)
	}
}

// equality is == (or != when ne) as cel-go's evalEq and evalNe.
func equality(l, r fastExpr, ne bool) fastExpr {
	return func(v *Vars) ref.Val {
		lv := l(v)
		if _, ok := lv.(*types.Err); ok {
			return lv
		}
		rv := r(v)
		if _, ok := rv.(*types.Err); ok {
			return rv
		}
		if types.IsUnknown(lv) || types.IsUnknown(rv) {
			return unknownOf(lv, rv)
		}
		eq := types.Equal(lv, rv)
		if ne {
			return types.Bool(eq != types.True)
		}
		return eq
	}
}

func unknownOf(l, r ref.Val) ref.Val {
	lu, lok := l.(*types.Unknown)
	ru, rok := r.(*types.Unknown)
	switch {
	case lok && rok:
		return types.MergeUnknowns(lu, ru)
	case lok:
		return lu
	}
	return ru
}

// index is x[k] for a constant string k, as cel-go's string qualifier
// (or a schema object's field) reads it; other indexes are left to
// cel-go.
func (c *fastCompiler) index(e celast.Expr, args []fastExpr) (fastExpr, error) {
	call := e.AsCall()
	if len(call.Args()) != 2 {
		return nil, errNotFast
	}
	k, ok := constString(call.Args()[1])
	if !ok {
		return nil, errNotFast
	}
	if t := c.ast.GetType(call.Args()[0].ID()); t == nil || t.Kind() == types.StructKind || t.Kind() == types.OpaqueKind {
		return nil, errNotFast
	}
	op := args[0]
	return func(v *Vars) ref.Val {
		x := op(v)
		if types.IsUnknownOrError(x) {
			return x
		}
		if _, ok := x.(*types.Optional); ok {
			v.bail = true
			return errBail
		}
		out, _, err := qualify(x, k, false)
		if err != nil {
			return types.WrapErr(err)
		}
		return out
	}, nil
}

// unary is a call of one argument as cel-go's evalUnary.
func unary(fn, oID string, impl *functions.Overload, arg fastExpr) fastExpr {
	o := rulesOf(fn, oID, impl)
	return func(v *Vars) ref.Val { return o.on1(arg(v)) }
}

// binary is a call of two arguments as cel-go's evalBinary.
func binary(fn, oID string, impl *functions.Overload, lhs, rhs fastExpr) fastExpr {
	o := rulesOf(fn, oID, impl)
	return func(v *Vars) ref.Val {
		l := lhs(v)
		if _, ok := l.(*types.Err); ok && o.strict {
			return l
		}
		return o.on2(l, rhs(v))
	}
}

// varArgs is a call of any number of arguments as cel-go's evalVarArgs.
func varArgs(fn, oID string, impl *functions.Overload, args []fastExpr) fastExpr {
	o := rulesOf(fn, oID, impl)
	return func(v *Vars) ref.Val { return o.evalN(v, args, make([]ref.Val, len(args)), 0) }
}

// callRules is what cel-go's evalUnary, evalBinary and evalVarArgs share:
// the overload's rules for its first operand, and what a call that no Go
// function takes becomes.
type callRules struct {
	fn, oID string
	// impl is the overload, one without functions for none.
	impl   *functions.Overload
	trait  int
	strict bool
}

var noOverload = &functions.Overload{}

func rulesOf(fn, oID string, impl *functions.Overload) *callRules {
	if impl == nil {
		impl = noOverload
	}
	return &callRules{fn: fn, oID: oID, impl: impl, trait: impl.OperandTrait, strict: !impl.NonStrict}
}

// takes reports whether the overload's function takes x as its first
// operand.
func (o *callRules) takes(x ref.Val) bool {
	return o.trait == 0 || (!o.strict && types.IsUnknownOrError(x)) || x.Type().HasTrait(o.trait)
}

// on1 is the call of x, its operand's value, as evalUnary makes it.
func (o *callRules) on1(x ref.Val) ref.Val {
	if o.strict && types.IsUnknownOrError(x) {
		return x
	}
	if f := o.impl.Unary; f != nil && o.takes(x) {
		return f(x)
	}
	return o.fallback(x, []ref.Val{})
}

// on2 is the call of l and r, its operands' values, as evalBinary makes
// it.
func (o *callRules) on2(l, r ref.Val) ref.Val {
	if o.strict {
		switch l.(type) {
		case *types.Err:
			return l
		case *types.Unknown:
			if u, ok := r.(*types.Unknown); ok {
				return types.MergeUnknowns(l.(*types.Unknown), u)
			}
			return l
		}
		if types.IsUnknownOrError(r) {
			return r
		}
	}
	if f := o.impl.Binary; f != nil && o.takes(l) {
		return f(l, r)
	}
	return o.fallback(l, []ref.Val{r})
}

// evalN is the call of args as evalVarArgs makes it, the values of those
// before from given in vals: the rest evaluated into vals (see evalAll),
// then the call.
func (o *callRules) evalN(v *Vars, args []fastExpr, vals []ref.Val, from int) ref.Val {
	if stop := evalAll(v, args, vals, from, o.strict); stop != nil {
		return stop
	}
	if f := o.impl.Function; f != nil && o.takes(vals[0]) {
		return f(vals...)
	}
	return o.fallback(vals[0], vals[1:])
}

// fallback is a call of x's own method, for a receiver, else no such
// overload.
func (o *callRules) fallback(x ref.Val, args []ref.Val) ref.Val {
	if x.Type().HasTrait(traits.ReceiverType) {
		return x.(traits.Receiver).Receive(o.fn, o.oID, args)
	}
	return types.NewErr("no such overload: %s", o.fn)
}

// list is a list literal: made once when its elements are constants
// (as constantLists does for cel-go), else on each evaluation.
func (c *fastCompiler) list(e celast.Expr) (fastExpr, error) {
	l := e.AsList()
	if len(l.OptionalIndices()) != 0 {
		return nil, errNotFast
	}
	if lv, ok := c.constList(e); ok {
		return func(*Vars) ref.Val { return lv }, nil
	}
	elems := make([]fastExpr, len(l.Elements()))
	for i, el := range l.Elements() {
		x, err := c.expr(el)
		if err != nil {
			return nil, err
		}
		elems[i] = x
	}
	return func(v *Vars) ref.Val {
		vals := make([]ref.Val, len(elems))
		if stop := evalAll(v, elems, vals, 0, true); stop != nil {
			return stop
		}
		return types.NewRefValList(types.DefaultTypeAdapter, vals)
	}, nil
}

// evalAll evaluates exprs in order into vals, as cel-go evaluates a
// call's arguments or a list's elements; the values before from are
// given, evaluated already. When strict, an error ends it and is stop,
// and the unknowns met are stop once all are evaluated; stop is nil when
// the values stand.
func evalAll(v *Vars, exprs []fastExpr, vals []ref.Val, from int, strict bool) (stop ref.Val) {
	var unk *types.Unknown
	for i, e := range exprs {
		x := vals[i]
		if i >= from {
			x = e(v)
			vals[i] = x
		}
		if strict {
			switch u := x.(type) {
			case *types.Err:
				return u
			case *types.Unknown:
				unk = mergeUnknown(unk, u)
			}
		}
	}
	if unk != nil {
		return unk
	}
	return nil
}

// constList is the list a compiled constant list literal gives, if e is
// one.
func (c *fastCompiler) constList(e celast.Expr) (traits.Lister, bool) {
	if e.Kind() != celast.ListKind || len(e.AsList().OptionalIndices()) != 0 {
		return nil, false
	}
	vals := make([]ref.Val, 0, len(e.AsList().Elements()))
	for _, el := range e.AsList().Elements() {
		if el.Kind() != celast.LiteralKind {
			return nil, false
		}
		vals = append(vals, el.AsLiteral())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals), true
}

// phrases is containsPhrase with a constant list of phrases, prepared
// once as constantPhrases prepares them for cel-go; nil otherwise.
func (c *fastCompiler) phrases(e celast.Expr, args []fastExpr) fastExpr {
	call := e.AsCall()
	if !call.IsMemberFunction() || len(call.Args()) != 1 {
		return nil
	}
	l, ok := c.constList(call.Args()[0])
	if !ok {
		return nil
	}
	set, ok := celenv.NewPhraseSet(l)
	if !ok {
		return nil
	}
	arg := args[0]
	if path, ok := c.varPath(call.Target()); ok {
		return c.phraseGroup(path, set, arg)
	}
	return strict1(arg, set.Holds)
}

// matches is matches() with a constant pattern, compiled once as
// cel-go's regex optimization compiles it; nil otherwise.
func (c *fastCompiler) matches(e celast.Expr, args []fastExpr) (fastExpr, error) {
	p, ok := constString(operands(e.AsCall())[1])
	if !ok {
		return nil, nil
	}
	re, err := regexp.Compile(string(p))
	if err != nil {
		return nil, errNotFast
	}
	return strict1(args[0], func(x ref.Val) ref.Val {
		s, ok := x.Value().(string)
		if !ok {
			return types.NoSuchOverloadErr()
		}
		return types.Bool(re.MatchString(s))
	}), nil
}

// operands is a call's target, for a member call, then its arguments:
// the order of the compiled arguments args gives.
func operands(call celast.CallExpr) []celast.Expr {
	if !call.IsMemberFunction() {
		return call.Args()
	}
	return append([]celast.Expr{call.Target()}, call.Args()...)
}

// strict1 is f of one operand with a strict function's rule: an error or
// an unknown operand is the result as it is.
func strict1(arg fastExpr, f func(x ref.Val) ref.Val) fastExpr {
	return func(v *Vars) ref.Val {
		x := arg(v)
		if types.IsUnknownOrError(x) {
			return x
		}
		return f(x)
	}
}

// joinedCompare is x == a + b (x.startsWith(a + b) when prefix) for
// strings without joining them, as checkStrings does for cel-go; nil
// when the right side is not a string addition.
func (c *fastCompiler) joinedCompare(e celast.Expr, args []fastExpr, prefix bool) fastExpr {
	rhs := operands(e.AsCall())[1]
	if rhs.Kind() != celast.CallKind {
		return nil
	}
	ids := c.ast.GetOverloadIDs(rhs.ID())
	if len(ids) != 1 || ids[0] != "add_string" || len(rhs.AsCall().Args()) != 2 || rhs.AsCall().IsMemberFunction() {
		return nil
	}
	a, err := c.expr(rhs.AsCall().Args()[0])
	if err != nil {
		return nil
	}
	b, err := c.expr(rhs.AsCall().Args()[1])
	if err != nil {
		return nil
	}
	var generic fastExpr
	if prefix {
		generic = binary("startsWith", "starts_with_string", fastOverloads["starts_with_string"], args[0], args[1])
	} else {
		generic = equality(args[0], args[1], false)
	}
	x := args[0]
	return func(v *Vars) ref.Val {
		xv := x(v)
		xs, ok := xv.(types.String)
		if !ok {
			return generic(v)
		}
		av, bv := a(v), b(v)
		as, okA := av.(types.String)
		bs, okB := bv.(types.String)
		if !okA || !okB {
			return generic(v)
		}
		return celenv.Joined(xs, as, bs, prefix)
	}
}

// fastFolder runs one comprehension over its range, as cel-go's folder:
// the loop condition before each step, stopping when it is not true,
// the result with the iteration variable out of scope.
type fastFolder struct {
	v                *Vars
	iter, accu       int
	cond, step       fastExpr
	listV1           bool
	interrupted      bool
	list             []ref.Val
	elem, keep       fastExpr
	appendErr        ref.Val
	appendListAppend bool
}

func (f *fastFolder) FoldKeyOnly() bool { return !f.listV1 }

func (f *fastFolder) FoldEntry(key, val any) bool {
	x := key
	if f.listV1 {
		x = val
	}
	xv, ok := x.(ref.Val)
	if !ok {
		xv = types.DefaultTypeAdapter.NativeToValue(x)
	}
	v := f.v
	v.slots[f.iter] = xv
	if f.appendListAppend {
		f.appendStep()
		return true
	}
	c := f.cond(v)
	if c != types.True {
		if _, isErr := c.(*types.Err); isErr {
			f.interrupted = true
		}
		return false
	}
	v.slots[f.accu] = f.step(v)
	return true
}

// appendStep is one step of map() or filter(): the element added to the
// list being built, or the error that the list becomes, as cel-go's
// accu + [e] and p ? accu + [e] : accu give them.
func (f *fastFolder) appendStep() {
	f.list, f.appendErr = appendElement(f.v, f.keep, f.elem, f.list, f.appendErr)
}

// appendElement is appendStep's work: the list and the error it has
// become, if any, after the element in the iteration variable.
func appendElement(v *Vars, keep, elem fastExpr, list []ref.Val, failed ref.Val) ([]ref.Val, ref.Val) {
	if keep != nil {
		p := keep(v)
		b, ok := p.(types.Bool)
		switch {
		case ok && !bool(b):
			return list, failed
		case !ok && types.IsUnknown(p):
			return list, p
		case !ok:
			return list, types.MaybeNoSuchOverloadErr(p)
		}
	}
	if failed != nil {
		return list, failed
	}
	x := elem(v)
	if types.IsUnknownOrError(x) {
		return list, x
	}
	return append(list, x), nil
}

func (c *fastCompiler) comprehension(e celast.Expr) (fastExpr, error) {
	fold := e.AsComprehension()
	if fold.HasIterVar2() {
		return nil, errNotFast
	}
	accuInit, err := c.expr(fold.AccuInit())
	if err != nil {
		return nil, err
	}
	rng, err := c.expr(fold.IterRange())
	if err != nil {
		return nil, err
	}
	accu := fastLocal{name: fold.AccuVar(), slot: c.slots, init: accuInit}
	iter := fastLocal{name: fold.IterVar(), slot: c.slots + 1}
	c.slots += 2
	k := c.folds
	c.folds++
	listAppend := listAppendFold(fold)
	c.scope = append(c.scope, accu, iter)
	var cond, step, elem, keep fastExpr
	if listAppend {
		call := fold.LoopStep().AsCall()
		if call.FunctionName() == operators.Conditional {
			if keep, err = c.expr(call.Args()[0]); err != nil {
				return nil, err
			}
			call = call.Args()[1].AsCall()
		}
		elem, err = c.expr(call.Args()[1].AsList().Elements()[0])
	} else {
		if cond, err = c.expr(fold.LoopCondition()); err == nil {
			step, err = c.expr(fold.LoopStep())
		}
	}
	if err != nil {
		return nil, err
	}
	q, predExpr := quantifierOf(fold)
	var pred fastExpr
	if q != notQuantifier {
		if pred, err = c.expr(predExpr); err != nil {
			return nil, err
		}
	}
	c.scope = c.scope[:len(c.scope)-1]
	result, err := c.expr(fold.Result())
	if err != nil {
		return nil, err
	}
	c.scope = c.scope[:len(c.scope)-1]
	// over is the comprehension over r, its range's value, as cel-go's
	// folder runs it.
	over := func(v *Vars, r ref.Val) ref.Val {
		v.slots[accu.slot] = nil
		if types.IsUnknownOrError(r) {
			return r
		}
		f := &v.folds[k]
		*f = fastFolder{v: v, iter: iter.slot, accu: accu.slot, cond: cond, step: step,
			elem: elem, keep: keep, appendListAppend: listAppend}
		if s, ok := r.(traits.Sizer); ok && s.Size() == types.IntZero {
			return f.result(result)
		}
		var foldable traits.Foldable
		switch x := r.(type) {
		case traits.Foldable:
			foldable = x
			_, f.listV1 = r.(traits.Lister)
		case traits.Mapper:
			foldable = types.ToFoldableMap(x)
		case traits.Lister:
			f.listV1 = true
			foldable = types.ToFoldableList(x)
		}
		if foldable != nil {
			foldable.Fold(f)
			return f.result(result)
		}
		if !r.Type().HasTrait(traits.IterableType) {
			return types.ValOrErr(r, "got '%T', expected iterable type", r)
		}
		for it := r.(traits.Iterable).Iterator(); it.HasNext() == types.True; {
			if !f.FoldEntry(it.Next(), nil) {
				break
			}
		}
		return f.result(result)
	}
	if in := fold.IterRange(); in.Kind() == celast.ListKind && in.AsList().Size() == 0 && !listAppend {
		// cel.bind(x, init, result): a loop over no elements, whose
		// result reads x, evaluated on first read.
		slot := accu.slot
		return func(v *Vars) ref.Val {
			v.slots[slot] = nil
			return result(v)
		}, nil
	}
	if listAppend {
		return appendAll(rng, keep, elem, iter.slot, over), nil
	}
	if q == notQuantifier {
		return func(v *Vars) ref.Val { return over(v, rng(v)) }, nil
	}
	return quantify(q, rng, pred, iter.slot, over), nil
}

// quantifier is the macro a comprehension expands: all(), exists() or
// count().
type quantifier int

const (
	notQuantifier quantifier = iota
	allOf
	existsIn
	countOf
)

// quantifierOf is the macro fold expands, read from its shape as
// cel-go's macros (and countMacro) write it, and the predicate; the
// accumulator must be one no rule can name.
func quantifierOf(fold celast.ComprehensionExpr) (quantifier, celast.Expr) {
	accu := fold.AccuVar()
	if !strings.HasPrefix(accu, "@") || accu == fold.IterVar() {
		return notQuantifier, nil
	}
	isAccu := func(e celast.Expr) bool { return e.Kind() == celast.IdentKind && e.AsIdent() == accu }
	lit := func(e celast.Expr, want ref.Val) bool {
		return e.Kind() == celast.LiteralKind && e.AsLiteral().Type() == want.Type() && e.AsLiteral().Equal(want) == types.True
	}
	callOf := func(e celast.Expr, fn string, n int) []celast.Expr {
		if e.Kind() != celast.CallKind || e.AsCall().IsMemberFunction() || e.AsCall().FunctionName() != fn || len(e.AsCall().Args()) != n {
			return nil
		}
		return e.AsCall().Args()
	}
	if !isAccu(fold.Result()) {
		return notQuantifier, nil
	}
	cond, step, init := fold.LoopCondition(), fold.LoopStep(), fold.AccuInit()
	switch {
	case lit(init, types.True):
		if a := callOf(cond, operators.NotStrictlyFalse, 1); a != nil && isAccu(a[0]) {
			if s := callOf(step, operators.LogicalAnd, 2); s != nil && isAccu(s[0]) {
				return allOf, s[1]
			}
		}
	case lit(init, types.False):
		if a := callOf(cond, operators.NotStrictlyFalse, 1); a != nil {
			if n := callOf(a[0], operators.LogicalNot, 1); n != nil && isAccu(n[0]) {
				if s := callOf(step, operators.LogicalOr, 2); s != nil && isAccu(s[0]) {
					return existsIn, s[1]
				}
			}
		}
	case lit(init, types.Int(0)) && lit(cond, types.True):
		if s := callOf(step, operators.Conditional, 3); s != nil && isAccu(s[2]) {
			if add := callOf(s[1], operators.Add, 2); add != nil && isAccu(add[0]) && lit(add[1], types.Int(1)) {
				return countOf, s[0]
			}
		}
	}
	return notQuantifier, nil
}

// quantify is all(), exists() or count() over a list in one loop: the
// predicate on each element, combined with what came before as the
// macro's step (accu && p, accu || p, p ? accu + 1 : accu) combines
// them, stopping where the macro's loop condition stops. A range that
// is not a list goes to over.
func quantify(q quantifier, rng, pred fastExpr, iter int, over func(*Vars, ref.Val) ref.Val) fastExpr {
	return func(v *Vars) ref.Val {
		r := rng(v)
		l, n, ok := listOf(r)
		if !ok {
			return over(v, r)
		}
		var accu ref.Val
		switch q {
		case allOf, existsIn:
			// accu && p (all) or accu || p (exists), until accu is
			// stop; a bool accu is then !stop.
			stop := types.Bool(q == existsIn)
			accu = !stop
			for i := types.Int(0); i < n; i++ {
				v.slots[iter] = elementAt(l, i)
				p := pred(v)
				if pb, ok := p.(types.Bool); ok {
					if pb == stop {
						return stop
					}
					if _, ok := accu.(types.Bool); ok {
						continue
					}
				}
				accu = logical2(accu, p, stop)
			}
		case countOf:
			accu = types.Int(0)
			for i := types.Int(0); i < n; i++ {
				v.slots[iter] = elementAt(l, i)
				p := pred(v)
				if pb, ok := p.(types.Bool); ok {
					if c, isInt := accu.(types.Int); bool(pb) && isInt {
						accu = c.Add(types.Int(1))
					}
					continue
				}
				if types.IsUnknown(p) {
					accu = p
				} else {
					accu = types.MaybeNoSuchOverloadErr(p)
				}
			}
		}
		return accu
	}
}

// logical2 is accu && p (stop false) or accu || p (stop true) as
// cel-go's evalAnd and evalOr give it, accu not being stop.
func logical2(accu, p, stop ref.Val) ref.Val {
	if p == stop {
		return stop
	}
	var err ref.Val
	var unk *types.Unknown
	for _, x := range [2]ref.Val{accu, p} {
		if _, ok := x.(types.Bool); !ok {
			unk, err = nonBool(x, unk, err)
		}
	}
	return noStop(unk, err, stop.(types.Bool))
}

// nonBool notes x, a term of && or || that is not a bool, as cel-go's
// evalAnd and evalOr do: unknowns merge, and the first error is kept.
func nonBool(x ref.Val, unk *types.Unknown, err ref.Val) (*types.Unknown, ref.Val) {
	if u, ok := x.(*types.Unknown); ok {
		return mergeUnknown(unk, u), err
	}
	if err == nil {
		err = types.MaybeNoSuchOverloadErr(x)
	}
	return unk, err
}

// mergeUnknown adds u to the unknowns met so far, unk (nil for none).
func mergeUnknown(unk, u *types.Unknown) *types.Unknown {
	if unk == nil {
		return u
	}
	return types.MergeUnknowns(unk, u)
}

// noStop is the value of && or || when no term was stop: the unknowns
// met, else the first error, else !stop.
func noStop(unk *types.Unknown, err ref.Val, stop types.Bool) ref.Val {
	if unk != nil {
		return unk
	}
	if err != nil {
		return err
	}
	return !stop
}

// result is the comprehension's result once the loop is done.
func (f *fastFolder) result(result fastExpr) ref.Val {
	if f.interrupted {
		return types.WrapErr(interpreter.InterruptError{})
	}
	if f.appendListAppend {
		if f.appendErr != nil {
			return f.appendErr
		}
		return types.NewRefValList(types.DefaultTypeAdapter, f.list)
	}
	return result(f.v)
}

// listAppendFold reports whether fold is the expansion of map() or
// filter(): a list built from [] by accu + [e] (or p ? accu + [e] :
// accu), with no loop condition, under an accumulator no rule can
// name, as cel-go's planner recognizes it.
func listAppendFold(fold celast.ComprehensionExpr) bool {
	accu := fold.AccuVar()
	if !strings.HasPrefix(accu, "@") || accu == fold.IterVar() {
		return false
	}
	if r := fold.Result(); r.Kind() != celast.IdentKind || r.AsIdent() != accu {
		return false
	}
	if in := fold.AccuInit(); in.Kind() != celast.ListKind || in.AsList().Size() != 0 {
		return false
	}
	if cond := fold.LoopCondition(); cond.Kind() != celast.LiteralKind || cond.AsLiteral() != types.True {
		return false
	}
	step := fold.LoopStep()
	if step.Kind() != celast.CallKind {
		return false
	}
	call := step.AsCall()
	if call.FunctionName() == operators.Conditional && len(call.Args()) == 3 {
		other := call.Args()[2]
		if other.Kind() != celast.IdentKind || other.AsIdent() != accu {
			return false
		}
		branch := call.Args()[1]
		if branch.Kind() != celast.CallKind {
			return false
		}
		call = branch.AsCall()
	}
	args := call.Args()
	return call.FunctionName() == operators.Add && len(args) == 2 &&
		args[0].Kind() == celast.IdentKind && args[0].AsIdent() == accu &&
		args[1].Kind() == celast.ListKind && args[1].AsList().Size() == 1 &&
		len(args[1].AsList().OptionalIndices()) == 0
}

// scalarSamples are one value of each scalar type, in the order
// scalarKind numbers them.
var scalarSamples = [...]ref.Val{types.False, types.Int(0), types.Uint(0), types.Double(0), types.String(""), types.NullValue, types.Bytes(nil)}

// scalarKind is the position of v's type in scalarSamples; -1 when v is
// not a scalar.
func scalarKind(v ref.Val) int {
	switch v.(type) {
	case types.Bool:
		return 0
	case types.Int:
		return 1
	case types.Uint:
		return 2
	case types.Double:
		return 3
	case types.String:
		return 4
	case types.Null:
		return 5
	case types.Bytes:
		return 6
	}
	return -1
}

// dispatchTable is a call of fn whose overload the checker left to be
// chosen at run time (a comparison or an addition of dyn values): for
// arguments that are scalars, the overload cel-go's dispatcher picks
// depends only on their types, so it is picked here once for every
// combination of types, and the call goes to it without trying the
// function's overloads one by one and without an argument slice. Other
// arguments go to the dispatcher, as in cel-go. nil when fn is not
// dispatched that way.
func dispatchTable(fn string, impl *functions.Overload, args []fastExpr) fastExpr {
	decl, ok := celenv.Base.Functions()[fn]
	if !ok || impl.Function == nil || impl.NonStrict || impl.OperandTrait != 0 {
		return nil
	}
	n := len(args)
	size := 1
	for range n {
		size *= len(scalarSamples)
	}
	type target struct {
		unary  functions.UnaryOp
		binary functions.BinaryOp
		fn     functions.FunctionOp
	}
	table := make([]target, size)
	sample := make([]ref.Val, n)
	for k := range table {
		rest := k
		for i := range sample {
			sample[i] = scalarSamples[rest%len(scalarSamples)]
			rest /= len(scalarSamples)
		}
		for _, o := range decl.OverloadDecls() {
			b := fastOverloads[o.ID()]
			if b == nil || len(o.ArgTypes()) != n || o.IsNonStrict() {
				continue
			}
			match := true
			for i, a := range sample {
				if !o.ArgTypes()[i].IsAssignableRuntimeType(a) {
					match = false
					break
				}
			}
			if !match || (o.OperandTrait() != 0 && !sample[0].Type().HasTrait(o.OperandTrait())) {
				continue
			}
			switch {
			case n == 1 && b.Unary != nil:
				table[k] = target{unary: b.Unary}
			case n == 2 && b.Binary != nil:
				table[k] = target{binary: b.Binary}
			case b.Function != nil:
				table[k] = target{fn: b.Function}
			default:
				continue
			}
			break
		}
	}
	// Other arguments go on to the dispatcher as varArgs takes them, with
	// the values evaluated so far.
	o := rulesOf(fn, "", impl)
	if n == 1 {
		if lists := listDispatch(decl); lists != nil {
			a := args[0]
			return func(v *Vars) ref.Val {
				x := a(v)
				if kind := scalarKind(x); kind >= 0 {
					if t := table[kind]; t.unary != nil {
						return t.unary(x)
					}
				} else if l, ok := x.(traits.Lister); ok && x.Type().TypeName() == types.ListType.TypeName() {
					k := len(scalarSamples)
					if size, ok := l.Size().(types.Int); ok && size > 0 {
						k = scalarKind(l.Get(types.Int(0)))
					}
					if k >= 0 && lists[k] != nil {
						return lists[k](x)
					}
				}
				return o.evalN(v, args, []ref.Val{x}, 1)
			}
		}
	}
	return func(v *Vars) ref.Val {
		var vals [3]ref.Val
		k, scale := 0, 1
		for i, a := range args {
			x := a(v)
			kind := scalarKind(x)
			if kind < 0 {
				// An error, an unknown or another value: the rest
				// are the dispatcher's.
				all := make([]ref.Val, n)
				copy(all, vals[:i])
				all[i] = x
				return o.evalN(v, args, all, i+1)
			}
			vals[i] = x
			k += kind * scale
			scale *= len(scalarSamples)
		}
		t := table[k]
		switch {
		case t.unary != nil:
			return t.unary(vals[0])
		case t.binary != nil:
			return t.binary(vals[0], vals[1])
		case t.fn != nil:
			return t.fn(append([]ref.Val(nil), vals[:n]...)...)
		}
		return decls.MaybeNoSuchOverload(fn, append([]ref.Val(nil), vals[:n]...)...)
	}
}

// standard is a call of one of the standard functions the rules call
// most, type(), size(), ! and the comparisons, done in place: the same
// steps as their implementations in cel-go's standard library (which
// bind each of them once for all its overloads, without type guards),
// without the call through them. A comparison of two numbers compares
// them as cel-go's Compare does, without making the -1, 0 or 1 it
// gives. nil for any other call.
func (c *fastCompiler) standard(fn string, impl *functions.Overload, args []fastExpr) fastExpr {
	if impl == nil || impl != fastOverloads[fn] {
		return nil
	}
	switch {
	case fn == "type" && len(args) == 1 && impl.Unary != nil:
		return strict1(args[0], func(x ref.Val) ref.Val { return x.ConvertToType(types.TypeType) })
	case fn == operators.LogicalNot && len(args) == 1 && impl.Unary != nil:
		a, o := args[0], rulesOf(fn, "", impl)
		return func(v *Vars) ref.Val {
			x := a(v)
			if b, ok := x.(types.Bool); ok {
				return !b
			}
			if types.IsUnknownOrError(x) {
				return x
			}
			return o.on1(x)
		}
	case fn == "size" && len(args) == 1 && impl.Unary != nil && impl.OperandTrait == traits.SizerType:
		a, o := args[0], rulesOf(fn, "", impl)
		return func(v *Vars) ref.Val {
			x := a(v)
			switch s := x.(type) {
			case types.String, traits.Lister, traits.Mapper:
				return s.(traits.Sizer).Size()
			}
			if types.IsUnknownOrError(x) {
				return x
			}
			return o.on1(x)
		}
	}
	var holds func(cmp int) bool
	switch fn {
	case operators.Less:
		holds = func(cmp int) bool { return cmp < 0 }
	case operators.LessEquals:
		holds = func(cmp int) bool { return cmp <= 0 }
	case operators.Greater:
		holds = func(cmp int) bool { return cmp > 0 }
	case operators.GreaterEquals:
		holds = func(cmp int) bool { return cmp >= 0 }
	default:
		return nil
	}
	if len(args) != 2 || impl.Binary == nil {
		return nil
	}
	l, r, o := args[0], args[1], rulesOf(fn, "", impl)
	return func(v *Vars) ref.Val {
		lv := l(v)
		if _, ok := lv.(*types.Err); ok && o.strict {
			return lv
		}
		rv := r(v)
		if cmp, ok := compareNumbers(lv, rv); ok {
			return types.Bool(holds(cmp))
		}
		return o.on2(lv, rv)
	}
}

// compareNumbers compares two ints or doubles as their Compare methods
// do; false for anything else, and for NaN, which the comparisons of
// the standard library leave to their own path.
func compareNumbers(a, b ref.Val) (int, bool) {
	switch x := a.(type) {
	case types.Double:
		if math.IsNaN(float64(x)) {
			return 0, false
		}
		switch y := b.(type) {
		case types.Double:
			if math.IsNaN(float64(y)) {
				return 0, false
			}
			return cmpFloat(float64(x), float64(y)), true
		case types.Int:
			return cmpDoubleInt(float64(x), int64(y)), true
		}
	case types.Int:
		switch y := b.(type) {
		case types.Int:
			return cmp.Compare(int64(x), int64(y)), true
		case types.Double:
			if math.IsNaN(float64(y)) {
				return 0, false
			}
			return -cmpDoubleInt(float64(y), int64(x)), true
		}
	}
	return 0, false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpDoubleInt is cel-go's compareDoubleInt.
func cmpDoubleInt(d float64, i int64) int {
	if d < math.MinInt64 {
		return -1
	}
	if d > math.MaxInt64 {
		return 1
	}
	return cmpFloat(d, float64(i))
}

// equalityConst is x == k (x != k when ne) for a constant k on the
// right, a literal or a type name such as string: x is compared with k
// as types.Equal compares them, a string with a string and a type with
// itself in place. nil when the right side is not such a constant.
func (c *fastCompiler) equalityConst(e celast.Expr, l fastExpr, ne bool) fastExpr {
	call := e.AsCall()
	if call.IsMemberFunction() || len(call.Args()) != 2 {
		return nil
	}
	var k ref.Val
	switch re := call.Args()[1]; re.Kind() {
	case celast.LiteralKind:
		k = re.AsLiteral()
	case celast.IdentKind:
		r, ok := c.ast.ReferenceMap()[re.ID()]
		if !ok {
			return nil
		}
		if r.Value != nil {
			k = r.Value
			break
		}
		if t := c.ast.GetType(re.ID()); t == nil || t.Kind() != types.TypeKind {
			return nil
		}
		if k, ok = c.prov.FindIdent(r.Name); !ok {
			return nil
		}
	default:
		return nil
	}
	if k == nil || types.IsUnknownOrError(k) {
		return nil
	}
	ks, kIsString := k.(types.String)
	kt, kIsType := k.(*types.Type)
	return func(v *Vars) ref.Val {
		x := l(v)
		var eq ref.Val
		switch y := x.(type) {
		case *types.Err, *types.Unknown:
			return x
		case types.String:
			if kIsString {
				eq = types.Bool(y == ks)
			}
		case *types.Type:
			if kIsType && y == kt {
				eq = types.True
			}
		}
		if eq == nil {
			eq = types.Equal(x, k)
		}
		if ne {
			return types.Bool(eq != types.True)
		}
		return eq
	}
}

// phraseGroup is containsPhrase of the value at path (a member of self,
// root or params) with set, one of the sets the rule looks for in that
// value: the first call of the evaluation splits the value's text into
// words once and looks for every set of the group in them (a rule that
// looks for catch-all phrases and then for "both" reads the options
// once), and the other calls take their answer from it.
func (c *fastCompiler) phraseGroup(path string, set celenv.PhraseSet, arg fastExpr) fastExpr {
	g := c.phraseGroups[path]
	if g == nil {
		g = &phraseGroup{slot: c.groupSlots}
		c.groupSlots++
		c.phraseGroups[path] = g
	}
	bit, ok := g.sets.Add(set)
	if !ok {
		return strict1(arg, set.Holds)
	}
	slot := g.slot
	return func(v *Vars) ref.Val {
		x := arg(v)
		switch x.(type) {
		case *types.Err, *types.Unknown:
			return x
		}
		found, done := v.groups[slot], v.groupDone[slot]
		if !done {
			var ok bool
			if found, ok = g.sets.Holds(x); !ok {
				return types.MaybeNoSuchOverloadErr(x)
			}
			v.groups[slot], v.groupDone[slot] = found, true
		}
		return types.Bool(found&(1<<bit) != 0)
	}
}

// phraseGroup is the phrase sets one rule looks for in one value, and
// the slot of Vars.groups that holds what an evaluation found.
type phraseGroup struct {
	sets celenv.PhraseGroup
	slot int
}

// unguarded are the functions of this package the checks bind with one
// argument, by overload id, with the type of that argument: cel-go
// calls them through a guard that checks the argument's type (for a
// list, that its first element is a value, which takes an iterator);
// guardOnce makes the same check in place.
var unguarded = map[string]struct {
	fn   func(ref.Val) ref.Val
	list bool
}{
	"list_sum":                 {celenv.ListSum, true},
	"list_unique":              {celenv.ListUnique, true},
	"list_unique_text":         {celenv.ListUniqueText, true},
	"list_number_code_lines":   {celenv.ListNumberCodeLines, true},
	"string_number_code_lines": {celenv.StringNumberCodeLines, false},
	"string_code_blocks":       {celenv.StringCodeBlocks, false},
	"string_unfenced_text":     {celenv.StringUnfencedText, false},
	"string_words":             {celenv.StringWords, false},
}

// guardOnce calls raw.fn on the value of arg when it is of raw's type
// (a string, or a list whose first element, if any, is a value), and
// otherwise the guarded binding, which reports it as cel-go does.
func guardOnce(fn string, raw struct {
	fn   func(ref.Val) ref.Val
	list bool
}, arg fastExpr, guarded functions.UnaryOp) fastExpr {
	return func(v *Vars) ref.Val {
		x := arg(v)
		if types.IsUnknownOrError(x) {
			return x
		}
		if raw.list {
			if l, ok := x.(traits.Lister); ok && x.Type().TypeName() == types.ListType.TypeName() {
				if n, ok := l.Size().(types.Int); ok && (n == 0 || !types.IsUnknownOrError(l.Get(types.Int(0)))) {
					return raw.fn(x)
				}
			}
		} else if _, ok := x.(types.String); ok {
			return raw.fn(x)
		}
		return guarded(x)
	}
}

// stringTest is s.contains(k), s.startsWith(k) or s.endsWith(k) for a
// constant string k: test(s, k) in place when s is a string, else the
// guarded binding, which reports the wrong type as cel-go does. nil
// when k is not a constant string.
func (c *fastCompiler) stringTest(e celast.Expr, oID string, args []fastExpr, test func(s, k string) bool) fastExpr {
	call := e.AsCall()
	if !call.IsMemberFunction() || len(call.Args()) != 1 {
		return nil
	}
	k, ok := constString(call.Args()[0])
	impl := fastOverloads[oID]
	if !ok || impl == nil || impl.Binary == nil {
		return nil
	}
	x, guarded := args[0], impl.Binary
	return func(v *Vars) ref.Val {
		s := x(v)
		if str, ok := s.(types.String); ok {
			return types.Bool(test(string(str), string(k)))
		}
		if types.IsUnknownOrError(s) {
			return s
		}
		return guarded(s, k)
	}
}

// constString is the string e is, when it is a string literal.
func constString(e celast.Expr) (types.String, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return s, ok
}

// listOf is the list a comprehension's range gives, and its size; false
// when the range is not a list the loop can walk, which the folder takes.
func listOf(r ref.Val) (traits.Lister, types.Int, bool) {
	l, ok := r.(traits.Lister)
	if !ok {
		return nil, 0, false
	}
	n, ok := l.Size().(types.Int)
	return l, n, ok
}

// appendAll is map() or filter() over a list in one loop, the list
// built as cel-go builds it (see fastFolder.appendStep); a range that
// is not a list goes to over.
func appendAll(rng, keep, elem fastExpr, iter int, over func(*Vars, ref.Val) ref.Val) fastExpr {
	return func(v *Vars) ref.Val {
		r := rng(v)
		l, n, ok := listOf(r)
		if !ok {
			return over(v, r)
		}
		list := make([]ref.Val, 0, n)
		var failed ref.Val
		for i := types.Int(0); i < n; i++ {
			v.slots[iter] = elementAt(l, i)
			list, failed = appendElement(v, keep, elem, list, failed)
		}
		if failed != nil {
			return failed
		}
		return types.NewRefValList(types.DefaultTypeAdapter, list)
	}
}

// listDispatch is, for a function of one argument with overloads for
// lists, the unary binding cel-go's dispatcher picks for a list whose
// first element is of scalar kind k (k = len(scalarSamples): an empty
// list): the dispatcher's type guards read only a list's first element.
// nil when no overload takes a list.
func listDispatch(decl *decls.FunctionDecl) []functions.UnaryOp {
	out := make([]functions.UnaryOp, len(scalarSamples)+1)
	any := false
	for k := range out {
		var sample ref.Val = types.NewRefValList(types.DefaultTypeAdapter, nil)
		if k < len(scalarSamples) {
			sample = types.NewRefValList(types.DefaultTypeAdapter, []ref.Val{scalarSamples[k]})
		}
		for _, o := range decl.OverloadDecls() {
			b := fastOverloads[o.ID()]
			if b == nil || len(o.ArgTypes()) != 1 || o.IsNonStrict() || !o.ArgTypes()[0].IsAssignableRuntimeType(sample) ||
				(o.OperandTrait() != 0 && !sample.Type().HasTrait(o.OperandTrait())) {
				continue
			}
			if b.Unary == nil {
				// The dispatcher would call the overload's function;
				// leave such a list to it.
				break
			}
			out[k] = b.Unary
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	return out
}
