// Package celenv is the CEL environment a contract's checks compile in:
// the variables, the extensions, the functions a rule may call on JSON
// values (sum, words, unique, containsPhrase, codeBlocks and the rest),
// the count macro, and the planning steps and optimizer every check's
// programs are built with. It is built once, at start; contracts compiles
// the checks in it and celfast reuses its functions.
package celenv

import (
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"cel.dev/cel-go/parser"
)

// Env is the CEL environment every check compiles in: the variables
// self, root (dynamic JSON), index (int) and params (map of strings), the
// standard library, cel-go's strings, lists, sets, math, bindings and
// regex extensions, optional values (an expected expression gives
// optional.none() when the right value does not follow from the
// document), sum() and unique() of a list, count(x, p) of the elements
// for which p holds and words() of a string. It is built once.
var Env = func() *cel.Env {
	env, err := Base.Extend(
		cel.Variable("self", cel.DynType),
		cel.Variable("root", cel.DynType))
	if err != nil {
		panic(err)
	}
	return env
}()

// Base is Env without self and root, which a contract with a schema
// declares with the schema's types.
var Base = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("index", cel.IntType),
		cel.Variable("params", cel.MapType(cel.StringType, cel.StringType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		cel.Macros(countMacro),
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(), ext.Bindings(), ext.Regex(),
		cel.Function("sum",
			cel.MemberOverload("list_sum", []*cel.Type{cel.ListType(cel.DynType)}, cel.DoubleType,
				cel.UnaryBinding(ListSum))),
		cel.Function("words",
			cel.MemberOverload("string_words", []*cel.Type{cel.StringType}, cel.ListType(cel.StringType),
				cel.UnaryBinding(StringWords))),
		cel.Function("containsPhrase",
			cel.MemberOverload("string_contains_phrase", []*cel.Type{cel.StringType, cel.ListType(cel.StringType)}, cel.BoolType,
				cel.BinaryBinding(stringContainsPhrase)),
			cel.MemberOverload("list_contains_phrase", []*cel.Type{cel.ListType(cel.DynType), cel.ListType(cel.StringType)}, cel.BoolType,
				cel.BinaryBinding(stringContainsPhrase))),
		cel.Function("codeBlocks",
			cel.MemberOverload("string_code_blocks", []*cel.Type{cel.StringType}, cel.ListType(cel.MapType(cel.StringType, cel.DynType)),
				cel.UnaryBinding(StringCodeBlocks))),
		cel.Function("unfencedText",
			cel.MemberOverload("string_unfenced_text", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(StringUnfencedText))),
		cel.Function("numberCodeLines",
			cel.MemberOverload("string_number_code_lines", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(StringNumberCodeLines)),
			cel.MemberOverload("list_number_code_lines", []*cel.Type{cel.ListType(cel.DynType)}, cel.ListType(cel.DynType),
				cel.UnaryBinding(ListNumberCodeLines))),
		cel.Function("uniqueText",
			cel.MemberOverload("list_unique_text", []*cel.Type{cel.ListType(cel.DynType)}, cel.BoolType,
				cel.UnaryBinding(ListUniqueText))),
		cel.Function("unique",
			cel.MemberOverload("list_unique", []*cel.Type{cel.ListType(cel.DynType)}, cel.BoolType,
				cel.UnaryBinding(ListUnique))),
	)
	if err != nil {
		panic(err)
	}
	return env
}()

// ListSum is sum(): the numbers of a list added up as doubles (JSON
// numbers are doubles). An element that is not a number is an error.
func ListSum(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	total := 0.0
	size, ok := l.Size().(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	for i := types.Int(0); i < size; i++ {
		switch n := l.Get(i).(type) {
		case types.Double:
			total += float64(n)
		case types.Int:
			total += float64(n)
		case types.Uint:
			total += float64(n)
		default:
			return types.MaybeNoSuchOverloadErr(n)
		}
	}
	return types.Double(total)
}

// StringWords is words(): the runs of letters and digits of a string,
// lower-cased, so that a rule can match phrases whatever their case and
// punctuation ("All of the above!" is ["all", "of", "the", "above"]).
func StringWords(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	return types.NewStringList(types.DefaultTypeAdapter, words(string(s)))
}

// ListUnique is unique(): true when no two elements of the list are equal
// (numbers compare as numbers, so 1 and 1.0 are the same).
func ListUnique(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	n, ok := l.Size().(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	if n <= uniqueScan {
		// Short lists, the common case (options, tags), are compared
		// pair by pair in place.
		for i := types.Int(1); i < n; i++ {
			x := l.Get(i)
			for j := types.Int(0); j < i; j++ {
				if l.Get(j).Equal(x) == types.True {
					return types.False
				}
			}
		}
		return types.True
	}
	// A long list keys its strings by value and compares the rest
	// (numbers, which meet across types, lists, objects) pair by pair.
	strs := make(map[string]struct{}, n)
	var rest []ref.Val
	for it := l.Iterator(); it.HasNext() == types.True; {
		x := it.Next()
		if y, ok := x.(types.String); ok {
			if _, dup := strs[string(y)]; dup {
				return types.False
			}
			strs[string(y)] = struct{}{}
			continue
		}
		for _, s := range rest {
			if s.Equal(x) == types.True {
				return types.False
			}
		}
		rest = append(rest, x)
	}
	return types.True
}

// uniqueScan is the list length up to which unique() compares pairs.
const uniqueScan = 16

// Plan and Phrases are the planning steps of every check's
// programs: constant lists made once, containsPhrase's phrases prepared
// once.
var (
	Plan    = cel.CustomDecoratorV2(constantLists)
	Phrases = cel.CustomDecoratorV2(constantPhrases)
)

// Folder folds the constant parts of every check's expressions at
// load.
var Folder = func() *cel.StaticOptimizer {
	f, err := cel.NewConstantFoldingOptimizer()
	if err != nil {
		panic(err)
	}
	o, err := cel.NewStaticOptimizer(f)
	if err != nil {
		panic(err)
	}
	return o
}()

// checkSizeEstimator bounds every list and object a rule reads by list
// Strings is the planning step that spares rules the strings they
// build to compare: string(n) of a small int is a string made once, and
// x == a + b or x.startsWith(a + b) compares x with a and b in place
// instead of joining them (a rule such as self.question_id == 'Q00' +
// string(index + 1) would otherwise make two strings per item). A
// program that counts its cost keeps the generic steps, whose costs the
// tracker knows.
var Strings = cel.CustomDecoratorV2(plainStrings)

func plainStrings(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok {
		return i, nil
	}
	args := call.Args()
	switch {
	case call.OverloadID() == "int64_to_string" && len(args) == 1:
		return &smallIntString{InterpretableCall: call, generic: i, arg: args[0]}, nil
	case (call.OverloadID() == "equals" || call.OverloadID() == "starts_with_string") && len(args) == 2:
		add, ok := args[1].(interpreter.InterpretableCall)
		if !ok || add.OverloadID() != "add_string" || len(add.Args()) != 2 {
			return i, nil
		}
		return &joinedCompare{InterpretableCall: call, generic: i, x: args[0], a: add.Args()[0], b: add.Args()[1],
			prefix: call.OverloadID() == "starts_with_string"}, nil
	}
	return i, nil
}

// SmallInts are the strings of 0 to len-1 as CEL values, made once.
var SmallInts = func() [1024]ref.Val {
	var out [1024]ref.Val
	for i := range out {
		out[i] = types.String(strconv.Itoa(i))
	}
	return out
}()

// smallIntString is string(n) that gives the string made once for a
// small n.
type smallIntString struct {
	interpreter.InterpretableCall
	generic, arg interpreter.InterpretableV2
}

func (c *smallIntString) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	if frame.CostTracker() != nil {
		return c.generic.Exec(frame)
	}
	v := c.arg.Exec(frame)
	if n, ok := v.(types.Int); ok {
		if n >= 0 && int(n) < len(SmallInts) {
			return SmallInts[n]
		}
		return n.ConvertToType(types.StringType)
	}
	if types.IsUnknownOrError(v) {
		return v
	}
	return types.MaybeNoSuchOverloadErr(v)
}

func (c *smallIntString) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, c.Exec)
}

// joinedCompare is x == a + b (or x.startsWith(a + b) when prefix) for
// strings, without making a + b.
type joinedCompare struct {
	interpreter.InterpretableCall
	generic, x, a, b interpreter.InterpretableV2
	prefix           bool
}

func (c *joinedCompare) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	if frame.CostTracker() != nil {
		return c.generic.Exec(frame)
	}
	x := c.x.Exec(frame)
	xs, ok := x.(types.String)
	if !ok {
		return c.generic.Exec(frame)
	}
	a, b := c.a.Exec(frame), c.b.Exec(frame)
	as, okA := a.(types.String)
	bs, okB := b.(types.String)
	if !okA || !okB {
		return c.generic.Exec(frame)
	}
	return Joined(xs, as, bs, c.prefix)
}

// Joined is x == a + b (x.startsWith(a + b) when prefix), without
// joining a and b.
func Joined(x, a, b types.String, prefix bool) types.Bool {
	if !strings.HasPrefix(string(x), string(a)) {
		return types.False
	}
	rest := x[len(a):]
	if prefix {
		return types.Bool(strings.HasPrefix(string(rest), string(b)))
	}
	return types.Bool(rest == b)
}

func (c *joinedCompare) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, c.Exec)
}

// countMacro is list.count(x, p): the number of elements x of the list
// for which p is true, as an int. It is filter(x, p).size() without the
// list filter builds, one list per element it keeps: the rules that
// count questions by weight read every question of the document.
var countMacro = cel.ReceiverMacro("count", 2, func(eh cel.MacroExprFactory, target celast.Expr, args []celast.Expr) (celast.Expr, *cel.Error) {
	if args[0].Kind() != celast.IdentKind {
		return nil, eh.NewError(args[0].ID(), "argument is not an identifier")
	}
	v := args[0].AsIdent()
	accu := eh.AccuIdentName()
	if v == accu || v == parser.AccumulatorName {
		return nil, eh.NewError(args[0].ID(), "iteration variable overwrites accumulator variable")
	}
	step := eh.NewCall(operators.Conditional, args[1],
		eh.NewCall(operators.Add, eh.NewAccuIdent(), eh.NewLiteral(types.Int(1))),
		eh.NewAccuIdent())
	return eh.NewComprehension(target, v, accu, eh.NewLiteral(types.Int(0)), eh.NewLiteral(types.True), step, eh.NewAccuIdent()), nil
})
