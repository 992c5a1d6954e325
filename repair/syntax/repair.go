// Package syntax turns a model's broken JSON text into strict JSON without
// knowing any contract: it finds the value among think sections, fences and
// prose (package locate), fixes each syntax fault where the one linear scan
// meets it, reading tokens and the text ahead through package lex, and
// records every edit as a Change, so that the repair ladder above it can
// report what was changed and why. The only value it ever writes is null
// for a member whose value the model left out.
package syntax

import (
	"errors"
	"slices"

	"github.com/contractgateway/gateway/repair/syntax/lex"
	"github.com/contractgateway/gateway/repair/syntax/locate"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Options tunes Repair to what the contract expects.
type Options struct {
	// ExpectContainer says the contract wants an object or an array, so a
	// whole document delivered as a JSON string ("{\"a\":1}") is unwrapped
	// and repaired. Without it a JSON string is a legitimate value.
	ExpectContainer bool
}

// Result is the outcome of Repair.
type Result struct {
	// Text is the repaired JSON text. When the input needed no change it
	// shares the input's memory (valid input then costs only the strict
	// parse that proves it valid); callers must not modify it. It is strict
	// RFC 8259 JSON, as strictjson.Parse reads it, when Truncated is false,
	// but for duplicate
	// keys, which are no syntax fault.
	Text []byte
	// Changes lists every edit in document order, with Path "line:col" of
	// the input.
	Changes []Change
	// Truncated says the input ended inside a value. Text was closed only so
	// that it parses and shows what is missing; it must never be accepted as
	// valid, since the model did not finish.
	Truncated bool
	// Missing holds the closers appended when Truncated, such as "\"}]}".
	Missing string
	// Lossy says Text would not keep every character of the model's value:
	// letters or digits stood where no token could take them, or the text
	// stripped after the value closes a bracket after words, so the value
	// most likely went on there. Like a truncated one, such a document must
	// never be accepted as valid: local repair refuses it.
	Lossy bool
}

// Sentinel errors of Repair.
var (
	// ErrNoJSON means the text holds nothing that could start a JSON value.
	ErrNoJSON = locate.ErrNoJSON
	// ErrMultipleJSON means the text holds two or more ```json blocks (or,
	// without one, two or more plain ``` blocks with JSON in them). Picking
	// one is a decision about content, so syntactic repair leaves it to the
	// caller (the validators report MULTIPLE_JSON_BLOCKS).
	ErrMultipleJSON = locate.ErrMultipleJSON
	// ErrTooDeep means containers are nested deeper than maxDepth, which no
	// contract needs and encoding/json refuses.
	ErrTooDeep = errors.New("repair: JSON nested too deeply")
)

// maxDepth is the nesting limit of encoding/json's scanner; output deeper than
// this could not be parsed by the rest of the pipeline anyway.
const maxDepth = 10000

// Repair turns a model's text into strict JSON in one linear pass: it
// finds the JSON value (stripping think sections, fences and prose), then
// tokenizes it once, fixing each fault where it is met, and records every
// edit as a Change. It does not invent content: the only value it ever
// writes is null for a member whose value the model left out
// (missing_value), and when the input ends inside a value it closes the text
// only to say what is missing and sets Truncated. Duplicate keys are no
// syntax fault and are left to the strict parse that follows.
//
// Text that is already valid JSON (after trimming surrounding whitespace)
// comes back byte for byte, with no changes. Time and memory are linear in
// the size of text whatever its content. The errors are ErrNoJSON,
// ErrMultipleJSON and ErrTooDeep.
func Repair(text []byte, opt Options) (Result, error) {
	run, err := repairDoc(text, opt, true)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:      run.text,
		Changes:   toChanges(text, run.log),
		Truncated: run.truncated,
		Missing:   run.missing,
		Lossy:     run.lossy,
	}, nil
}

// docRun is the outcome of repairing one document, positions still as byte
// offsets of the text it was given.
type docRun struct {
	text      []byte
	log       changeLog
	truncated bool
	missing   string
	lossy     bool
}

// repairDoc repairs src. unwrap allows one level of unstringify; the
// unwrapped document is repaired without it, so that recursion stops there.
func repairDoc(src []byte, opt Options, unwrap bool) (docRun, error) {
	lo, hi := lex.TrimBounds(src)
	if lo == hi {
		return docRun{}, ErrNoJSON
	}
	t := src[lo:hi]
	wantString := unwrap && opt.ExpectContainer
	if !(wantString && t[0] == '"') && validJSON(t) {
		return docRun{text: t}, nil
	}
	var log changeLog
	start, err := findValue(src, lo, wantString, &log)
	if err != nil {
		return docRun{}, err
	}
	if wantString && src[start] == '"' {
		if run, ok, err := unstringify(src, start, log); ok {
			return run, err
		}
	}
	s := scanner{src: src, i: start, lastBad: -1, changeLog: log}
	s.out = make([]byte, 0, len(src)-start+len(src)/16+16)
	s.raw = slices.Grow(s.raw, len(src)/64)
	if err := s.run(); err != nil {
		return docRun{}, err
	}
	stripAfter(src, s.stop, &s.changeLog)
	lossy := s.lossy || lex.ValueGoesOn(src[s.stop:])
	return docRun{text: s.out, log: s.changeLog, truncated: s.truncated, missing: s.missing, lossy: lossy}, nil
}

// findValue finds where the value starts in src (locate.Value) and records
// in log the changes that strip what lies before it.
func findValue(src []byte, lo int, wantString bool, log *changeLog) (int, error) {
	var buf [4]locate.Strip
	start, before, err := locate.Value(buf[:0], src, lo, wantString)
	if err != nil {
		return 0, err
	}
	for _, st := range before {
		log.strip(src, st)
	}
	return start, nil
}

// stripAfter records the stripping of what follows the value that ends at
// p (locate.After): a closing fence, then any prose.
func stripAfter(src []byte, p int, log *changeLog) {
	fence, prose := locate.After(src, p)
	log.strip(src, fence)
	log.strip(src, prose)
}

// validJSON is the fast path's test: the pipeline's strict parse itself,
// so that valid input costs what the pipeline's own parse costs (measured
// faster than encoding/json.Valid plus a UTF-8 check, which it also
// replaces: encoding/json accepts invalid UTF-8 inside strings). A document
// it refuses only for a duplicate key goes through the scanner, which
// leaves syntactically valid JSON untouched, so the result is the same.
func validJSON(t []byte) bool {
	return strictjson.Valid(t)
}

// unstringify handles a document that a model returned as one JSON string
// ("{\"a\": 1}"), which happens when a client library serialises twice. When
// the string's content starts an object or an array, that content is repaired
// (once, without unwrapping again) and becomes the result; ok is false when the
// string holds something else and is to be treated as a plain value.
func unstringify(src []byte, start int, log changeLog) (run docRun, ok bool, err error) {
	dec, offs, end := lex.DecodeString(src, start)
	lo, hi := lex.TrimBounds(dec)
	if lo == hi || (dec[lo] != '{' && dec[lo] != '[') {
		return docRun{}, false, nil
	}
	inner, err := repairDoc(dec, Options{}, false)
	if err != nil {
		return docRun{}, true, err
	}
	log.add(start, end, fxUnstringify, log.fragOf(src, start, end), log.lit(frag(inner.text)))
	for _, r := range inner.log.raw {
		r.off, r.end = offs[r.off], offs[r.end]
		r.before = log.litB(inner.log.bytesOf(dec, r.before))
		r.after = log.litB(inner.log.bytesOf(dec, r.after))
		log.raw = append(log.raw, r)
	}
	stripAfter(src, end, &log)
	return docRun{text: inner.text, log: log, truncated: inner.truncated, missing: inner.missing, lossy: inner.lossy}, true, nil
}
