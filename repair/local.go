// Package repair turns invalid model output into contract-valid JSON, cheapest
// rung first: local repair without a model (syntax, lossless
// coercion, derivable fixes), then — through a one-method Model interface —
// LLM repair (item-scoped when the errors sit in items, then the whole
// document, each reply blind-merged field by field), partial regeneration
// with item merge, re-runs and fallback.
package repair

import (
	"encoding/json"
	"strings"

	"github.com/contractgateway/gateway/repair/syntax"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// maxPatchRounds bounds the derive-and-revalidate loop. Derivations depend
// on each other at most a few levels deep (weight → cognitive level →
// difficulty profile → duration), so a fixed point comes well before this.
const maxPatchRounds = 8

// LocalResult is the outcome of rung 1.
type LocalResult struct {
	// Before is the report on the text as the model wrote it.
	Before validators.Report
	// Report is the report after local repair; Report.Valid says whether
	// local repair was enough.
	Report validators.Report
	// Doc is the repaired document, nil when no JSON could be recovered.
	Doc *strictjson.Value
	// Changes lists every edit, syntactic and semantic, in the order made.
	Changes []Change
	// Truncated is set when the model's output ended inside a value; such a
	// document is never declared valid locally.
	Truncated bool
	// Extraction is the JSON text validation took from the model's text,
	// and where (zero when it found none, or several blocks).
	Extraction validators.Extraction
}

// Local runs rung 1 of the ladder: it never calls a model and never invents
// content. params must come from v.Params.
func Local(v *validators.Validator, text string, params validators.Params) LocalResult {
	return localFrom(v, v.Validate(text, params), params)
}

// localFrom is Local from the validation of the text, so that a block
// already extracted is not looked for again.
func localFrom(v *validators.Validator, res validators.Result, params validators.Params) LocalResult {
	out := LocalResult{Before: res.Report, Report: res.Report, Doc: res.Doc, Extraction: res.Extraction}
	if res.Doc != nil {
		out.Changes = shapeChanges(res.Report)
	}
	// A document delivered as a JSON string parses, but is not what a
	// container contract wants: syntactic repair unwraps it.
	stringified := res.Doc != nil && res.Doc.Kind == strictjson.KindString && v.Contract.ExpectsContainer()
	if res.Doc == nil || stringified {
		doc, changes, report, truncated := recoverSyntax(v, res, params)
		if doc != nil && res.Doc == nil {
			markSyntaxFixable(&out.Before)
		}
		if doc != nil || res.Doc == nil {
			out.Changes = append(out.Changes, changes...)
			out.Report, out.Doc, out.Truncated = report, doc, truncated
			if doc == nil {
				return out
			}
		}
	}
	if out.Report.Valid && !hasFixes(out.Report) {
		return out
	}
	doc, report, changes := ApplyFixes(v, out.Doc, params, out.Report)
	out.Doc, out.Report = doc, report
	out.Changes = append(out.Changes, changes...)
	return out
}

// Check is the violation report on text as the model wrote it, with each
// violation's fixable saying whether local repair fixes it. The
// validators alone cannot say so of a syntax error: only the syntactic
// repairer can try. What validates answers it (the validate command, the
// admin validate route), so that a person reading a report learns what the
// gateway would fix on its own. params must come from v.Params.
func Check(v *validators.Validator, text string, params validators.Params) validators.Report {
	return Local(v, text, params).Before
}

// markSyntaxFixable sets fixable on the JSON_SYNTAX and MULTIPLE_JSON_BLOCKS
// violations of r: the syntactic repairer, run on the block, made it parse,
// or one of the blocks validated (fixable means local repair can fix it). A copy of the violations is changed, so that
// reports sharing them stay as they were.
func markSyntaxFixable(r *validators.Report) {
	vs := append([]validators.Violation(nil), r.Violations...)
	for i := range vs {
		if vs[i].Code == "JSON_SYNTAX" || vs[i].Code == "MULTIPLE_JSON_BLOCKS" {
			vs[i].Fixable = true
		}
	}
	r.Violations = vs
}

// recoverSyntax handles a validation whose document could not be parsed:
// it chooses among the blocks extraction found, or repairs the syntax of
// the model's text without its think sections (res.Answer), so that
// neither think sections nor blocks are read twice.
func recoverSyntax(v *validators.Validator, res validators.Result, params validators.Params) (*strictjson.Value, []Change, validators.Report, bool) {
	answer, before := res.Answer, res.Report
	if hasCode(before, "MULTIPLE_JSON_BLOCKS") {
		if doc, changes, report, ok := chooseBlock(v, res.Blocks, params); ok {
			return doc, changes, report, false
		}
		return nil, nil, before, false
	}
	sr, err := syntax.Repair([]byte(answer), syntax.Options{ExpectContainer: v.Contract.ExpectsContainer()})
	if err != nil || sr.Lossy {
		// A repair that would drop text of a value is refused: the model
		// repairs, or the client gets the failure.
		return nil, nil, before, false
	}
	if sr.Truncated {
		// The report after repair says what is missing; the one before it
		// stays what the model wrote.
		report := before
		report.Violations = append([]validators.Violation(nil), before.Violations...)
		for i := range report.Violations {
			if report.Violations[i].Code == "JSON_TRUNCATED" || report.Violations[i].Code == "JSON_SYNTAX" {
				report.Violations[i].Code = "JSON_TRUNCATED"
				report.Violations[i].Expected = "closing " + sr.Missing
				report.Violations[i].Hint = "The output ended inside a value. Complete the document and close it with " + sr.Missing + "."
			}
		}
		return nil, sr.Changes, report, true
	}
	doc, err := strictjson.Parse(sr.Text)
	if err != nil {
		return nil, nil, before, false
	}
	doc, report := v.CheckDoc(doc, params)
	return doc, append(sr.Changes, shapeChanges(report)...), report, false
}

// Fixers of shape normalisation, recorded from the validator's
// SHAPE_UNWRAPPED and SHAPE_WRAPPED warnings: the validator normalises the
// shape while it checks, and repair reports it like any other edit.
const (
	FixShapeUnwrap = "shape_unwrap"
	FixShapeWrap   = "shape_wrap"
)

// shapeChanges turns the shape warnings of a report into changes: the
// wrapper's key or the root as path, what the model wrote and what the
// contract wants.
func shapeChanges(r validators.Report) []Change {
	var out []Change
	for _, v := range r.Violations {
		switch v.Code {
		case "SHAPE_UNWRAPPED":
			out = append(out, Change{Path: v.Path, Before: v.Actual, After: v.Expected, Fixer: FixShapeUnwrap})
		case "SHAPE_WRAPPED":
			out = append(out, Change{Path: v.Path, Before: v.Actual, After: v.Expected, Fixer: FixShapeWrap})
		}
	}
	return out
}

// chooseBlock picks, among several candidate blocks, the last one that
// validates against the contract (after local repair): models write a draft
// first and the corrected block last ("First attempt: … Corrected
// version: …"), so a later valid block supersedes an earlier one,
// even a valid one. The choice is a change (choose_block: how many blocks,
// which one, 1-based). False when no block validates: the text stays
// MULTIPLE_JSON_BLOCKS. blocks are those extraction counted
// (validators.Result.Blocks); each is validated as it stands, not found
// again in a text.
func chooseBlock(v *validators.Validator, blocks []validators.Extraction, params validators.Params) (*strictjson.Value, []Change, validators.Report, bool) {
	for i := len(blocks) - 1; i >= 0; i-- {
		r := localFrom(v, v.ValidateBlock(blocks[i], params), params)
		if !r.Report.Valid {
			continue
		}
		changes := append([]Change{{Path: "", Before: len(blocks), After: i + 1, Fixer: FixChooseBlock}}, r.Changes...)
		return r.Doc, changes, r.Report, true
	}
	return nil, nil, validators.Report{}, false
}

// FixChooseBlock is the fixer of choosing one of several JSON blocks.
const FixChooseBlock = "choose_block"

// ApplyFixes applies the JSON Patch fixes that the validators attached to
// derivable violations, re-validates, and repeats until nothing fixable is
// left or no progress is made. It returns the new document and report and
// one Change per applied patch.
func ApplyFixes(v *validators.Validator, doc *strictjson.Value, params validators.Params, report validators.Report) (*strictjson.Value, validators.Report, []Change) {
	var changes []Change
	seen := map[string]bool{}
	for round := 0; round < maxPatchRounds && hasFixes(report); round++ {
		next := doc.Clone()
		applied := 0
		for _, viol := range report.Violations {
			if viol.Fix == nil || viol.Fix.Op != "replace" {
				continue
			}
			key := viol.Fix.Path + "\x00" + string(viol.Fix.Value)
			if seen[key] {
				continue // the same fix again means it did not stick: stop, do not loop
			}
			nv, err := strictjson.Parse(viol.Fix.Value)
			if err != nil {
				continue
			}
			old, _ := next.At(viol.Fix.Path)
			root, err := strictjson.Replace(next, viol.Fix.Path, nv)
			if err != nil {
				continue
			}
			next = root
			seen[key] = true
			applied++
			changes = append(changes, Change{Path: viol.Path, Before: valueOf(old), After: valueOf(nv), Fixer: fixerFor(viol, old, nv)})
		}
		if applied == 0 {
			break
		}
		doc, report = v.CheckDoc(next, params)
	}
	return doc, report, changes
}

// Fixers of the value fixes that the schema alone proves lossless.
const (
	// FixCoerce writes a scalar as the type the schema wants, with the
	// same characters: "2" → 2, 1 → "1".
	FixCoerce = "coerce"
	// FixEnumToken replaces a value by the one enum or const value written
	// with the same characters: B → "B", "2" → 2.
	FixEnumToken = "enum_token"
	// FixEnumCase replaces a value by the one enum or const value that
	// equals it when case is ignored: "b" → "B".
	FixEnumCase = "enum_case"
)

// fixerFor names the fix of violation v, which replaced old with nv.
func fixerFor(v validators.Violation, old, nv *strictjson.Value) string {
	switch v.Code {
	case "SCHEMA_TYPE":
		return FixCoerce
	case "SCHEMA_ENUM", "SCHEMA_CONST":
		if old.Text() == nv.Text() {
			return FixEnumToken
		}
		return FixEnumCase
	}
	return "derive:" + strings.ToLower(v.Code)
}

func valueOf(v *strictjson.Value) any {
	if v == nil {
		return nil
	}
	return json.RawMessage(strictjson.Marshal(v))
}

func hasFixes(r validators.Report) bool {
	for _, v := range r.Violations {
		if v.Fix != nil {
			return true
		}
	}
	return false
}

func hasCode(r validators.Report, code string) bool {
	for _, v := range r.Violations {
		if v.Code == code {
			return true
		}
	}
	return false
}
