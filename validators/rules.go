package validators

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/strictjson"
)

// Params are a contract's parameters, from a route's config, the
// X-Contract-Params header or --param on the command line. Keys and values
// are trimmed strings; each rule pack interprets its own keys.
type Params map[string]string

// RulePack is a set of semantic rules evaluated after JSON Schema validation.
// A pack is stateless and safe for concurrent use: everything it needs to
// compile is built when the pack value is created, never per request.
type RulePack interface {
	// CheckParams returns an error naming every parameter of p that the pack
	// cannot use (bad value). Unknown keys are ignored: several packs may
	// share one parameter set.
	CheckParams(p Params) error
	// Check evaluates the rules on doc and reports every violation to e.
	// doc has passed strict parsing but not necessarily the schema, so a
	// pack must tolerate missing members and wrong types (it simply skips
	// what the schema already reports).
	Check(doc *strictjson.Value, p Params, e *Emitter)
}

// Seg is one step of a path: a string member name or an int array index.
type Seg = any

// PathOf renders segments as the dotted path a report shows
// ("questions[3].answer") and as an RFC 6901 pointer ("/questions/3/answer").
func PathOf(segs ...Seg) (dotted, pointer string) {
	var d, p strings.Builder
	for _, s := range segs {
		switch s := s.(type) {
		case int:
			d.WriteByte('[')
			d.WriteString(strconv.Itoa(s))
			d.WriteByte(']')
			p.WriteByte('/')
			p.WriteString(strconv.Itoa(s))
		case string:
			if d.Len() > 0 {
				d.WriteByte('.')
			}
			d.WriteString(s)
			p.WriteByte('/')
			p.WriteString(pointerEscaper.Replace(s))
		}
	}
	return d.String(), p.String()
}

// pointerEscaper escapes a member name for an RFC 6901 pointer. It is built
// once: a Replacer builds its tables on first use, which costs more than the
// whole path.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// Emitter collects the violations of one validation run.
type Emitter struct {
	out []Violation
}

// Add records v as it is; pos is the document offset used for ordering
// (the offset of the value the violation is about, or of its nearest
// existing ancestor).
func (e *Emitter) Add(v Violation, pos int) {
	v.pos = pos
	e.out = append(e.out, v)
}

// Semantic records a SEMANTIC violation at the value `at` (or its nearest
// existing ancestor when the value is missing) with path segs. A non-nil fix
// makes the violation fixable by a JSON Patch replace at the pointer with
// fix as the value.
func (e *Emitter) Semantic(code string, sev Severity, at *strictjson.Value, segs []Seg, expected, actual any, hint string, fix any) {
	dotted, pointer := PathOf(segs...)
	v := Violation{
		Class:    ClassSemantic,
		Code:     code,
		Severity: sev,
		Path:     dotted,
		Pointer:  pointer,
		Expected: expected,
		Actual:   actual,
		Hint:     hint,
	}
	if fix != nil {
		v.Fixable = true
		v.Fix = &PatchOp{Op: "replace", Path: pointer, Value: marshal(fix)}
	}
	pos := 0
	if at != nil {
		pos = at.Offset
	}
	e.Add(v, pos)
}

// Null is the fix value that sets a member to JSON null (a nil fix means
// "not fixable").
var Null = json.RawMessage("null")

// marshal encodes a fix value without HTML escaping, so that "<" in a
// question survives byte for byte.
func marshal(x any) json.RawMessage {
	if raw, ok := x.(json.RawMessage); ok {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
