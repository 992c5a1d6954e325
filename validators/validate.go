package validators

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/extract"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Validator evaluates model output against one contract. It is built once
// per contract when contracts are loaded (rule packs resolved, schema
// already compiled) and is safe for concurrent use.
type Validator struct {
	Contract *contracts.Contract
	packs    []RulePack
	// scopes are the fix scopes the packs declare, by code.
	scopes map[string]FixScope
	// items is the validator of items in flight (see Items).
	items *Validator
}

// New resolves the contract's rule packs in packs (usually packs.Builtins()) and
// checks the contract's default parameters against them.
func New(c *contracts.Contract, packs map[string]RulePack) (*Validator, error) {
	v := &Validator{Contract: c}
	var errs []error
	for _, name := range c.Rules {
		p, ok := packs[name]
		if !ok {
			errs = append(errs, fmt.Errorf("contract %s: unknown rule pack %q (known: %s)", c.ID(), name, strings.Join(sortedKeys(packs), ", ")))
			continue
		}
		v.packs = append(v.packs, p)
	}
	if len(errs) == 0 {
		var err error
		if v.scopes, err = fixScopes(c.Rules, v.packs); err != nil {
			errs = append(errs, fmt.Errorf("contract %s: %w", c.ID(), err))
		}
	}
	if len(errs) == 0 {
		if _, err := v.Params(nil); err != nil {
			errs = append(errs, fmt.Errorf("contract %s: params: %w", c.ID(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	v.items = v.itemsOnly()
	return v, nil
}

// Items is the validator progressive release judges an item with the
// moment it closes (SPEC §11), on the document of that item and the ones
// before it: the rule packs and, of the contract's checks, those that run
// over the item array and read only self, index and params. A check that
// reads root or other items would judge a document that is not complete
// yet, so it runs at the end, on the whole document, as Validate runs it.
func (v *Validator) Items() *Validator {
	if v.items == nil {
		return v
	}
	return v.items
}

// itemsOnly builds Items' validator: v with a copy of its contract that
// keeps only the item-local checks (v itself when it keeps them all).
func (v *Validator) itemsOnly() *Validator {
	var keep []contracts.Check
	for _, c := range v.Contract.Checks {
		if c.Local && c.ForEach != "" && c.ForEach == v.Contract.ItemArray {
			keep = append(keep, c)
		}
	}
	if len(keep) == len(v.Contract.Checks) {
		return v
	}
	c := *v.Contract
	c.Checks = keep
	iv := *v
	iv.Contract = &c
	iv.items = &iv
	return &iv
}

// Params merges request parameters over the contract's defaults, each
// layer over the ones before it (a route's, then a header's), and checks
// them against every rule pack; the error names each bad parameter and
// each key no pack takes.
func (v *Validator) Params(layers ...Params) (Params, error) {
	out := Params{}
	maps.Copy(out, v.Contract.Params)
	for _, req := range layers {
		maps.Copy(out, req)
	}
	var errs []error
	if err := v.checkKnown(out); err != nil {
		errs = append(errs, err)
	}
	for _, p := range v.packs {
		if err := p.CheckParams(out); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// Result is the outcome of validating one model output.
type Result struct {
	Report Report
	// Doc is the parsed and shape-normalised document, nil when extraction
	// or strict parsing failed.
	Doc *strictjson.Value
	// Extraction is the JSON text that was parsed and where it came from.
	Extraction Extraction
	// Answer is the model text without its think sections, as extraction
	// read it; it shares the text's memory when there were none. Repair
	// reads blocks and broken JSON from it rather than scanning the text
	// for think sections again.
	Answer string
	// Blocks are the blocks extraction counted when it found several
	// (MULTIPLE_JSON_BLOCKS): the ```json blocks, else the untagged ones,
	// each as Candidates gives it. Repair chooses among them.
	Blocks []Extraction
}

// Validate runs the whole validation on raw model text: think
// sections removed, one JSON value extracted, strictly parsed, shape
// normalised, then schema and rule packs. params must come from Params.
func (v *Validator) Validate(text string, params Params) Result {
	var res Result
	res.Answer = extract.StripThink(text)
	ex, blocks, viol := extractAnswer(res.Answer)
	res.Extraction, res.Blocks = ex, blocks
	if viol != nil {
		res.Report = v.report([]Violation{*viol})
		return res
	}
	return v.parseChecked(res, text, params)
}

// ValidateBlock validates one of the blocks Validate found when it found
// several (Result.Blocks) as Validate would were it the text's only
// block: strictly parsed, shape normalised, schema, rule packs and checks.
// Line and column of a parse error are the block's own. params must come
// from Params.
func (v *Validator) ValidateBlock(block Extraction, params Params) Result {
	block.Offset = 0
	return v.parseChecked(Result{Extraction: block, Answer: block.Text}, block.Text, params)
}

// parseChecked parses res's extraction strictly and checks the document;
// text is the raw text the extraction came from, for the raw path of a
// parse error.
func (v *Validator) parseChecked(res Result, text string, params Params) Result {
	doc, err := strictjson.ParseString(res.Extraction.Text)
	if err != nil {
		pv := ParseViolation(err)
		pv.RawPath = rawPath(text, res.Answer, res.Extraction, pv.pos)
		res.Report = v.report([]Violation{pv})
		return res
	}
	res.Doc, res.Report = v.CheckDoc(doc, params)
	return res
}

// rawPath is "line:col" in the raw model text of byte off of the extracted
// block. The block's offset is one in answer, the think-stripped text; when
// think sections were removed (answer is shorter: stripping only removes),
// the block is found again in the raw text at or after that offset
// (removing text only moves it left). "" when it cannot be found.
func rawPath(raw, answer string, ex Extraction, off int) string {
	start := ex.Offset
	if len(answer) != len(raw) {
		from := min(ex.Offset, len(raw))
		k := strings.Index(raw[from:], ex.Text)
		if k < 0 {
			return ""
		}
		start = from + k
	}
	if start+off > len(raw) {
		return ""
	}
	line, col := 1, 0
	lineStart := 0
	for i := 0; i < start+off; i++ {
		if raw[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	col = utf8.RuneCountInString(raw[lineStart:start+off]) + 1
	return strconv.Itoa(line) + ":" + strconv.Itoa(col)
}

// CheckDoc validates an already parsed document: shape normalisation, JSON
// Schema, the rule packs, then the contract's checks. It returns the normalised document (doc
// itself when nothing changed) and the report. Repair calls it after every
// patch round.
func (v *Validator) CheckDoc(doc *strictjson.Value, params Params) (*strictjson.Value, Report) {
	var e Emitter
	doc = v.normalize(doc, &e)
	if v.Contract.Schema != nil {
		schemaViolations(v.Contract.Schema, doc, &e)
	}
	for _, p := range v.packs {
		p.Check(doc, params, &e)
	}
	runChecks(v.Contract.Checks, doc, params, &e)
	return doc, v.report(e.out)
}

func (v *Validator) report(vs []Violation) Report {
	r := Report{Contract: v.Contract.ID(), Violations: vs}
	r.finish()
	return r
}

// normalize applies the contract's shape rules: unwrap a
// {"data": …} style wrapper, wrap a lone object where an array is expected.
// A wrapper holding one object where the contract wants an array is first
// unwrapped, then its object wrapped ({"link_plan": {…}} → [{…}]): wrapping
// the wrapper would hand the schema an array of the wrong objects. Both
// are reported as warnings (repair records each as a change): the document
// is fine, but the model did not write what was asked and the counts show
// it.
func (v *Validator) normalize(doc *strictjson.Value, e *Emitter) *strictjson.Value {
	sh := v.Contract.Shape
	wrapLone := sh.Expect == "array" && sh.WrapSingle
	if doc.Kind == strictjson.KindObject {
		for _, key := range sh.Unwrap {
			inner := doc.Get(key)
			if inner == nil || !shapeFits(sh.Expect, inner) && !(wrapLone && inner.Kind == strictjson.KindObject) {
				continue
			}
			path, pointer := PathOf(key)
			e.Add(Violation{Class: ClassSchema, Code: "SHAPE_UNWRAPPED", Severity: SeverityWarning,
				Path: path, Pointer: pointer, Expected: sh.Expect, Actual: "object with " + key,
				Hint: "Return the " + sh.Expect + " itself, without the \"" + key + "\" wrapper.", Fixable: true}, doc.Offset)
			doc = inner
			if inner.Kind != strictjson.KindObject || !wrapLone {
				return doc
			}
			break
		}
	}
	if wrapLone && doc.Kind == strictjson.KindObject {
		e.Add(Violation{Class: ClassSchema, Code: "SHAPE_WRAPPED", Severity: SeverityWarning,
			Expected: "array", Actual: "object",
			Hint: "Return an array of objects, even when there is only one.", Fixable: true}, doc.Offset)
		return &strictjson.Value{Kind: strictjson.KindArray, Items: []*strictjson.Value{doc}, Offset: doc.Offset}
	}
	return doc
}

func shapeFits(expect string, v *strictjson.Value) bool {
	switch expect {
	case "array":
		return v.Kind == strictjson.KindArray
	case "object":
		return v.Kind == strictjson.KindObject
	}
	return v.Kind == strictjson.KindArray || v.Kind == strictjson.KindObject
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseParams reads "k=v, k=v" (the X-Contract-Params header and the
// route config's shorthand) into Params. Keys and values are trimmed; an
// entry without '=' or with an empty key is an error.
func ParseParams(s string) (Params, error) {
	p := Params{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, val, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("contract params: %q is not key=value", part)
		}
		p[k] = strings.TrimSpace(val)
	}
	return p, nil
}

// CompileAll builds a validator for every contract of reg, reporting every
// contract that cannot be built at once.
func CompileAll(reg *contracts.Registry, packs map[string]RulePack) (map[string]*Validator, error) {
	out := map[string]*Validator{}
	var errs []string
	for _, c := range reg.List() {
		v, err := New(c, packs)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out[c.ID()] = v
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}
