package contracts

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"cel.dev/cel-go/parser"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// Limits of a check's cost. CEL counts one unit per step of evaluation
// (a comparison, a member read, one turn of a comprehension); these limits
// keep a rule over a long list from taking a request's time.
const (
	// CheckAssumedListSize is the number of elements or members the
	// load-time estimate assumes for every list and object a rule reads,
	// CheckAssumedStringSize the bytes of every string: the estimate is a
	// worst case over documents of that size.
	CheckAssumedListSize   = 100
	CheckAssumedStringSize = 1000
	// CheckMaxEstimatedCost is the largest worst-case cost a rule (or its
	// expected expression) may have at load: passes over a list, one
	// nested in another and a regular expression per element are below
	// it, three comprehensions nested over the document are above it and
	// are refused.
	CheckMaxEstimatedCost = 10_000_000
	// CheckRuntimeCostLimit is the cost one evaluation may spend before it
	// stops with CHECK_ERROR.
	CheckRuntimeCostLimit = 1_000_000
)

// Check is one rule the contract's author writes in contract.json under
// "checks": a CEL expression that is true when the document is right.
type Check struct {
	// Code is the report's stable code (upper snake case).
	Code string `json:"code"`
	// Rule is the CEL expression; true means right.
	Rule string `json:"rule"`
	// ForEach is a JSON Pointer to an array: the rule runs once per
	// element, with self the element and index its position.
	ForEach string `json:"for_each,omitempty"`
	// Path is the JSON Pointer, relative to self, of the value the
	// violation is about; "" is self.
	Path string `json:"path,omitempty"`
	// Severity is "error" (the default) or "warning".
	Severity string `json:"severity,omitempty"`
	// Expected, when set, is a CEL expression for the right value at
	// Path: the violation carries it and local repair writes it there.
	Expected string `json:"expected,omitempty"`
	// Message is the violation's hint.
	Message string `json:"message,omitempty"`

	// Program is the compiled Rule, ExpectedProgram the compiled
	// Expected (nil without one); both stop at CheckRuntimeCostLimit.
	Program         cel.Program `json:"-"`
	ExpectedProgram cel.Program `json:"-"`
	// Untracked is Rule compiled without cost tracking, set when the
	// load-time estimate shows that the rule cannot reach
	// CheckRuntimeCostLimit on documents of some size class (see
	// CheckSizeClass); UntrackedWithin has bit k set for each such class
	// k. A document of such a class is evaluated without counting,
	// which saves most of the evaluation's allocations.
	Untracked       cel.Program `json:"-"`
	UntrackedWithin uint32      `json:"-"`
	// Fast is Rule compiled into Go (see FastRule), for the same size
	// classes as Untracked; nil when the rule uses a part of CEL the
	// compiler leaves to cel-go.
	Fast *FastRule `json:"-"`
	// Local is true when the rule and Expected read only self, index and
	// params: such a check can run on one item by itself (progressive
	// release runs it when the item closes).
	Local bool `json:"-"`
}

var checkCode = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// checkEnv is the CEL environment every check compiles in: the variables
// self, root (dynamic JSON), index (int) and params (map of strings), the
// standard library, cel-go's strings, lists, sets, math, bindings and
// regex extensions, optional values (an expected expression gives
// optional.none() when the right value does not follow from the
// document), sum() and unique() of a list, count(x, p) of the elements
// for which p holds and words() of a string. It is built once.
var checkEnv = func() *cel.Env {
	env, err := checkBase.Extend(
		cel.Variable("self", cel.DynType),
		cel.Variable("root", cel.DynType))
	if err != nil {
		panic(err)
	}
	return env
}()

// checkBase is checkEnv without self and root, which typedEnv declares
// with the schema's types.
var checkBase = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("index", cel.IntType),
		cel.Variable("params", cel.MapType(cel.StringType, cel.StringType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		cel.Macros(countMacro),
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(), ext.Bindings(), ext.Regex(),
		cel.Function("sum",
			cel.MemberOverload("list_sum", []*cel.Type{cel.ListType(cel.DynType)}, cel.DoubleType,
				cel.UnaryBinding(listSum))),
		cel.Function("words",
			cel.MemberOverload("string_words", []*cel.Type{cel.StringType}, cel.ListType(cel.StringType),
				cel.UnaryBinding(stringWords))),
		cel.Function("containsPhrase",
			cel.MemberOverload("string_contains_phrase", []*cel.Type{cel.StringType, cel.ListType(cel.StringType)}, cel.BoolType,
				cel.BinaryBinding(stringContainsPhrase)),
			cel.MemberOverload("list_contains_phrase", []*cel.Type{cel.ListType(cel.DynType), cel.ListType(cel.StringType)}, cel.BoolType,
				cel.BinaryBinding(stringContainsPhrase))),
		cel.Function("codeBlocks",
			cel.MemberOverload("string_code_blocks", []*cel.Type{cel.StringType}, cel.ListType(cel.MapType(cel.StringType, cel.DynType)),
				cel.UnaryBinding(stringCodeBlocks))),
		cel.Function("unfencedText",
			cel.MemberOverload("string_unfenced_text", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(stringUnfencedText))),
		cel.Function("numberCodeLines",
			cel.MemberOverload("string_number_code_lines", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(stringNumberCodeLines)),
			cel.MemberOverload("list_number_code_lines", []*cel.Type{cel.ListType(cel.DynType)}, cel.ListType(cel.DynType),
				cel.UnaryBinding(listNumberCodeLines))),
		cel.Function("uniqueText",
			cel.MemberOverload("list_unique_text", []*cel.Type{cel.ListType(cel.DynType)}, cel.BoolType,
				cel.UnaryBinding(listUniqueText))),
		cel.Function("unique",
			cel.MemberOverload("list_unique", []*cel.Type{cel.ListType(cel.DynType)}, cel.BoolType,
				cel.UnaryBinding(listUnique))),
	)
	if err != nil {
		panic(err)
	}
	return env
}()

// listSum is sum(): the numbers of a list added up as doubles (JSON
// numbers are doubles). An element that is not a number is an error.
func listSum(v ref.Val) ref.Val {
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

// stringWords is words(): the runs of letters and digits of a string,
// lower-cased, so that a rule can match phrases whatever their case and
// punctuation ("All of the above!" is ["all", "of", "the", "above"]).
func stringWords(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	var out []string
	start := -1
	str := string(s)
	for i, r := range str {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, strings.ToLower(str[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(str[start:]))
	}
	return types.NewStringList(types.DefaultTypeAdapter, out)
}

// listUnique is unique(): true when no two elements of the list are equal
// (numbers compare as numbers, so 1 and 1.0 are the same).
func listUnique(v ref.Val) ref.Val {
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

// checkPlan and checkPhrases are the planning steps of every check's
// programs: constant lists made once, containsPhrase's phrases prepared
// once.
var (
	checkPlan    = cel.CustomDecoratorV2(constantLists)
	checkPhrases = cel.CustomDecoratorV2(constantPhrases)
)

// checkFolder folds the constant parts of every check's expressions at
// load.
var checkFolder = func() *cel.StaticOptimizer {
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
// elements and every string by str bytes, so that CEL's estimate is
// finite for dynamic JSON.
type checkSizeEstimator struct{ list, str uint64 }

// assumedSizes is the estimator of the load-time limit.
var assumedSizes = checkSizeEstimator{CheckAssumedListSize, CheckAssumedStringSize}

func (e checkSizeEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	if cs := n.ComputedSize(); cs != nil {
		return cs
	}
	if t := n.Type(); t != nil && (t.IsExactType(cel.StringType) || t.IsExactType(cel.BytesType)) {
		return &cost.SizeEstimate{Min: 0, Max: e.str}
	}
	return &cost.SizeEstimate{Min: 0, Max: e.list}
}

// checkListSizes and checkStringSizes are the size classes of documents
// for which a rule's estimate is taken again at load: class
// i*len(checkStringSizes)+j holds the documents with no list or object
// over checkListSizes[i] elements and no string over checkStringSizes[j]
// bytes. A rule too costly to evaluate uncounted on any document may
// still be cheap enough on the small documents most answers are.
var (
	checkListSizes   = [...]int{8, 16, 32, 64, CheckAssumedListSize}
	checkStringSizes = [...]int{64, 128, 256, 512, CheckAssumedStringSize}
)

// CheckSizeClass is the smallest size class holding a document whose
// longest list or object has maxList elements and whose longest string
// (or member name) maxString bytes; false when the document is larger
// than every class.
func CheckSizeClass(maxList, maxString int) (int, bool) {
	i := 0
	for i < len(checkListSizes) && checkListSizes[i] < maxList {
		i++
	}
	j := 0
	for j < len(checkStringSizes) && checkStringSizes[j] < maxString {
		j++
	}
	if i == len(checkListSizes) || j == len(checkStringSizes) {
		return 0, false
	}
	return i*len(checkStringSizes) + j, true
}

func (checkSizeEstimator) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// compileChecks compiles and type-checks every check of the contract. raw
// is contract.json, doc its parse, so that errors name the line and column
// of the problem; schema is the contract's schema document (nil without
// one) for the for_each pointers.
func compileChecks(file string, raw []byte, doc *strictjson.Value, checks []Check, schema []byte) []error {
	var errs []error
	var schemaDoc any
	var types_ *schemaTypes
	envs := map[string]*cel.Env{}
	if schema != nil {
		if json.Unmarshal(schema, &schemaDoc) == nil {
			types_ = newSchemaTypes(schemaDoc)
		}
	}
	var arr *strictjson.Value
	if doc != nil {
		arr = doc.Get("checks")
	}
	at := func(i int, field string) *strictjson.Value {
		if arr == nil || arr.Kind != strictjson.KindArray || i >= len(arr.Items) {
			return nil
		}
		it := arr.Items[i]
		if field == "" || it.Kind != strictjson.KindObject {
			return it
		}
		if v := it.Get(field); v != nil {
			return v
		}
		return it
	}
	fail := func(i int, field string, err error) {
		fe := &FileError{File: file, Err: fmt.Errorf("checks[%d]: %w", i, err)}
		if v := at(i, field); v != nil {
			fe.Line, fe.Col = position(raw, v.Offset)
		}
		errs = append(errs, fe)
	}
	seen := map[string]bool{}
	for i := range checks {
		c := &checks[i]
		if !checkCode.MatchString(c.Code) {
			fail(i, "code", fmt.Errorf("code %q: want upper snake case such as LINE_AMOUNT", c.Code))
		}
		switch c.Severity {
		case "":
			c.Severity = "error"
		case "error", "warning":
		default:
			fail(i, "severity", fmt.Errorf("severity %q: want error or warning", c.Severity))
		}
		if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
			fail(i, "path", fmt.Errorf("path %q: must be a JSON Pointer such as /amount", c.Path))
		}
		if c.ForEach != "" {
			if !strings.HasPrefix(c.ForEach, "/") {
				fail(i, "for_each", fmt.Errorf("for_each %q: must be a JSON Pointer to an array such as /items", c.ForEach))
			} else if schemaDoc != nil && !schemaHasArray(schemaDoc, schemaDoc, c.ForEach, 0) {
				fail(i, "for_each", fmt.Errorf("for_each %q: the schema has no array there", c.ForEach))
			}
		}
		if c.Rule == "" {
			fail(i, "rule", errors.New("rule: must be a CEL expression"))
			continue
		}
		if seen[c.Code+"\x00"+c.ForEach+"\x00"+c.Path] && c.Code != "" {
			fail(i, "code", fmt.Errorf("code %q: a second check with the same code, for_each and path", c.Code))
		}
		seen[c.Code+"\x00"+c.ForEach+"\x00"+c.Path] = true
		env, ok := envs[c.ForEach]
		if !ok {
			var err error
			if env, err = typedEnv(types_, c.ForEach); err != nil {
				fail(i, "rule", err)
				continue
			}
			envs[c.ForEach] = env
		}
		var readsOther bool
		c.Program, c.Untracked, c.UntrackedWithin, c.Fast, readsOther = compileExpr(env, i, "rule", c.Rule, cel.BoolType, raw, at, file, &errs)
		c.Local = !readsOther
		if c.Expected != "" {
			var other bool
			c.ExpectedProgram, _, _, _, other = compileExpr(env, i, "expected", c.Expected, nil, raw, at, file, &errs)
			c.Local = c.Local && !other
		}
		c.Local = c.Local && c.ForEach != ""
	}
	return errs
}

// compileExpr compiles one CEL expression of check i (field is "rule" or
// "expected"), checks its result type (want nil: any), estimates its cost
// and appends every problem to errs, located in the file. It returns the
// program with the runtime cost limit; for a rule also the one without
// and the size classes it may run uncounted on (nil and 0 when none),
// with the rule compiled into Go for them (nil when it cannot be); and
// whether the expression reads root.
func compileExpr(env *cel.Env, i int, field, src string, want *cel.Type, raw []byte, at func(int, string) *strictjson.Value, file string, errs *[]error) (cel.Program, cel.Program, uint32, *FastRule, bool) {
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		for _, e := range iss.Errors() {
			fe := &FileError{File: file, Err: fmt.Errorf("checks[%d].%s: %s", i, field, e.Message)}
			if v := at(i, field); v != nil {
				fe.Line, fe.Col = position(raw, stringOffset(raw, v.Offset, src, e.Location.Line(), e.Location.Column()))
			}
			*errs = append(*errs, fe)
		}
		return nil, nil, 0, nil, false
	}
	locate := func(err error) {
		fe := &FileError{File: file, Err: fmt.Errorf("checks[%d].%s: %w", i, field, err)}
		if v := at(i, field); v != nil {
			fe.Line, fe.Col = position(raw, v.Offset)
		}
		*errs = append(*errs, fe)
	}
	if want != nil && !ast.OutputType().IsExactType(want) && !ast.OutputType().IsExactType(cel.DynType) {
		locate(fmt.Errorf("the rule is of type %s, want bool", ast.OutputType()))
		return nil, nil, 0, nil, false
	}
	readsRoot := false
	if refs := ast.NativeRep().ReferenceMap(); refs != nil {
		for _, r := range refs {
			if r.Name == "root" {
				readsRoot = true
			}
		}
	}
	// Parts of the expression that do not depend on the document (a list
	// of level names, a phrase list for "in") are evaluated once here, not
	// built again on every evaluation.
	if folded, iss := checkFolder.Optimize(env, ast); iss == nil || iss.Err() == nil {
		ast = folded
	}
	est, err := env.EstimateCost(ast, assumedSizes)
	if err != nil {
		locate(fmt.Errorf("cost: %w", err))
		return nil, nil, 0, nil, false
	}
	if est.Max > CheckMaxEstimatedCost {
		locate(fmt.Errorf("estimated cost %d over lists of %d elements and strings of %d bytes is above the limit %d: read fewer nested lists", est.Max, CheckAssumedListSize, CheckAssumedStringSize, CheckMaxEstimatedCost))
		return nil, nil, 0, nil, false
	}
	prg, err := env.Program(ast, cel.CostLimit(CheckRuntimeCostLimit), cel.EvalOptions(cel.OptOptimize), checkPlan, checkPhrases, checkStrings)
	if err != nil {
		locate(err)
		return nil, nil, 0, nil, false
	}
	var within uint32
	for i, l := range checkListSizes {
		if field != "rule" {
			break
		}
		for j, str := range checkStringSizes {
			if e, err := env.EstimateCost(ast, checkSizeEstimator{uint64(l), uint64(str)}); err == nil && e.Max <= CheckRuntimeCostLimit {
				within |= 1 << (i*len(checkStringSizes) + j)
			}
		}
	}
	var untracked cel.Program
	var fast *FastRule
	if within != 0 {
		if untracked, err = env.Program(ast, cel.EvalOptions(cel.OptOptimize), checkPlan, checkPhrases, checkStrings); err != nil {
			locate(err)
			return nil, nil, 0, nil, false
		}
		fast, _ = compileFast(ast.NativeRep(), env.CELTypeProvider())
	}
	return prg, untracked, within, fast, readsRoot
}

// stringOffset is the byte offset in raw of the character at CEL's line
// (1-based) and column (0-based, in runes) of src, the JSON string that
// starts at off (its opening quote). Escapes count as the one character
// they stand for.
func stringOffset(raw []byte, off int, src string, line, col int) int {
	target := 0
	lines := strings.SplitAfter(src, "\n")
	for l := 0; l < line-1 && l < len(lines); l++ {
		target += utf8.RuneCountInString(lines[l])
	}
	target += col
	i := off + 1
	for n := 0; n < target && i < len(raw) && raw[i] != '"'; n++ {
		if raw[i] == '\\' {
			if i+1 < len(raw) && raw[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			continue
		}
		_, size := utf8.DecodeRune(raw[i:])
		i += size
	}
	return min(i, len(raw))
}

// schemaHasArray reports whether the schema s (within the document root)
// can hold an array at the JSON Pointer ptr: every step names a property
// (or an element of items), following local $refs and the branches of
// allOf, anyOf and oneOf. A schema that says nothing about a step (no
// "properties", or additionalProperties allowed) can hold anything.
func schemaHasArray(root, s any, ptr string, depth int) bool {
	if depth > 64 {
		return true
	}
	m, ok := s.(map[string]any)
	if !ok {
		return s != false
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		if t := resolveRef(root, ref); t != nil {
			return schemaHasArray(root, t, ptr, depth+1)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok {
			for _, b := range bs {
				if schemaHasArray(root, b, ptr, depth+1) {
					return true
				}
			}
		}
	}
	if ptr == "" {
		return typeAllows(m["type"], "array")
	}
	seg, rest, found := strings.Cut(ptr[1:], "/")
	if found {
		rest = "/" + rest
	}
	seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	if props, ok := m["properties"].(map[string]any); ok {
		if p, ok := props[seg]; ok && typeAllows(m["type"], "object") {
			return schemaHasArray(root, p, rest, depth+1)
		}
	}
	if items, ok := m["items"]; ok && isIndex(seg) && typeAllows(m["type"], "array") {
		return schemaHasArray(root, items, rest, depth+1)
	}
	if m["type"] == nil && m["properties"] == nil && m["items"] == nil {
		return true
	}
	if ap, ok := m["additionalProperties"]; ok && typeAllows(m["type"], "object") {
		return ap != false && schemaHasArray(root, ap, rest, depth+1)
	}
	return false
}

func typeAllows(t any, kind string) bool {
	switch t := t.(type) {
	case nil:
		return true
	case string:
		return t == kind
	case []any:
		for _, x := range t {
			if x == kind {
				return true
			}
		}
	}
	return false
}

func isIndex(s string) bool {
	if s == "-" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// resolveRef follows a local "#/…" reference within root; nil when it
// names nothing.
func resolveRef(root any, ref string) any {
	cur := root
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[seg]; !ok {
			return nil
		}
	}
	return cur
}

// checkStrings is the planning step that spares rules the strings they
// build to compare: string(n) of a small int is a string made once, and
// x == a + b or x.startsWith(a + b) compares x with a and b in place
// instead of joining them (a rule such as self.question_id == 'Q00' +
// string(index + 1) would otherwise make two strings per item). A
// program that counts its cost keeps the generic steps, whose costs the
// tracker knows.
var checkStrings = cel.CustomDecoratorV2(plainStrings)

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

// smallInts are the strings of 0 to len-1 as CEL values, made once.
var smallInts = func() [1024]ref.Val {
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
		if n >= 0 && int(n) < len(smallInts) {
			return smallInts[n]
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
	if !strings.HasPrefix(string(xs), string(as)) {
		return types.False
	}
	rest := xs[len(as):]
	if c.prefix {
		return types.Bool(strings.HasPrefix(string(rest), string(bs)))
	}
	return types.Bool(rest == bs)
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
