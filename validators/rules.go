package validators

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators/strictjson"
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

// Violations returns what was recorded so far, in the order it was added;
// a report orders it by document position only when it is finished. A
// pack's tests use it to look at one of the pack's rules on its own.
func (e *Emitter) Violations() []Violation {
	return e.out
}

// CheckPack runs one rule pack on doc and returns its findings as a
// finished report: violations in document order, Valid and RepairType set,
// as a contract that uses the pack would report them. It lets a pack in a
// package of its own be tested without a contract around it.
func CheckPack(pack RulePack, doc *strictjson.Value, p Params) Report {
	var e Emitter
	pack.Check(doc, p, &e)
	r := Report{Violations: e.out}
	r.finish()
	return r
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

// Actual is the "actual" of a violation about v: the value as the model
// wrote it (numbers keep their literal through json.Number), so that the
// report shows what the document holds and not a float round trip of it.
func Actual(v *strictjson.Value) any {
	if v == nil {
		return nil
	}
	if v.Kind == strictjson.KindNumber {
		return json.Number(v.Num)
	}
	return v.Interface()
}

// Quantity turns a computed quantity into the value a report and a fix
// carry: an int when it is whole, so that 30 minutes read "30" and not
// "30.0", else the float rounded to nine decimals, which removes the binary
// noise of sums such as 0.1 + 0.2 without touching any real minute value.
func Quantity(f float64) any {
	f = math.Round(f*1e9) / 1e9
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int(f)
	}
	return f
}

// FormatQuantity renders a computed quantity for a hint the way Quantity
// encodes it, so that a hint and the expected value it explains agree.
func FormatQuantity(f float64) string {
	switch n := Quantity(f).(type) {
	case int:
		return strconv.Itoa(n)
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	return ""
}
