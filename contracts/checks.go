package contracts

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"

	"github.com/contractgateway/gateway/contracts/celenv"
	"github.com/contractgateway/gateway/contracts/celfast"
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
	// Fast is Rule compiled into Go (see celfast.Rule), for the same size
	// classes as Untracked; nil when the rule uses a part of CEL the
	// compiler leaves to cel-go.
	Fast *celfast.Rule `json:"-"`
	// Local is true when the rule and Expected read only self, index and
	// params: such a check can run on one item by itself (progressive
	// release runs it when the item closes).
	Local bool `json:"-"`
}

var checkCode = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

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
func compileExpr(env *cel.Env, i int, field, src string, want *cel.Type, raw []byte, at func(int, string) *strictjson.Value, file string, errs *[]error) (cel.Program, cel.Program, uint32, *celfast.Rule, bool) {
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
	if folded, iss := celenv.Folder.Optimize(env, ast); iss == nil || iss.Err() == nil {
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
	prg, err := env.Program(ast, cel.CostLimit(CheckRuntimeCostLimit), cel.EvalOptions(cel.OptOptimize), celenv.Plan, celenv.Phrases, celenv.Strings)
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
	var fast *celfast.Rule
	if within != 0 {
		if untracked, err = env.Program(ast, cel.EvalOptions(cel.OptOptimize), celenv.Plan, celenv.Phrases, celenv.Strings); err != nil {
			locate(err)
			return nil, nil, 0, nil, false
		}
		fast, _ = celfast.Compile(ast.NativeRep(), env.CELTypeProvider())
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
