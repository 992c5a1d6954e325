// Package packtest holds what the tests of the rule packs share: a
// violation in the form the tests compare it, and documents built from a
// base by a list of edits. Each pack is a package of its own, so the
// helpers live here rather than in one pack's test files.
package packtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Hit is a violation as the rule tests compare it: expected, actual and
// the fix value as the JSON a report carries, so that a test pins the wire
// form and not the Go type behind it. Fix is "" when not fixable.
type Hit struct {
	Code, Severity, Path, Pointer, Expected, Actual, Fix string
}

// ErrHit is a hit of severity error.
func ErrHit(code, path, pointer, expected, actual, fix string) Hit {
	return Hit{code, "error", path, pointer, expected, actual, fix}
}

// WarnHit is a hit of severity warning; a warning carries no fix.
func WarnHit(code, path, pointer, expected, actual string) Hit {
	return Hit{code, "warning", path, pointer, expected, actual, ""}
}

// Hits turns violations into hits, in their order.
func Hits(t *testing.T, vs []validators.Violation) []Hit {
	t.Helper()
	var out []Hit
	for _, v := range vs {
		h := Hit{Code: v.Code, Severity: string(v.Severity), Path: v.Path, Pointer: v.Pointer,
			Expected: encode(t, v.Expected), Actual: encode(t, v.Actual)}
		if v.Fix != nil {
			h.Fix = string(v.Fix.Value)
		}
		out = append(out, h)
	}
	return out
}

// encode renders x as a report carries it: JSON without HTML escaping.
func encode(t *testing.T, x any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		t.Fatalf("encode %#v: %v", x, err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Edit replaces the value at a pointer with a value (JSON text), or removes
// the member at the pointer when the value is "".
type Edit struct{ ptr, value string }

// SetAt is the edit that replaces the value at ptr with value (JSON text).
func SetAt(ptr, value string) Edit { return Edit{ptr, value} }

// DelAt is the edit that removes the member at ptr.
func DelAt(ptr string) Edit { return Edit{ptr, ""} }

// EditedDoc parses base, applies edits and parses the result again, so
// that every value has the offset it would have in a real document and
// violations are ordered as in production.
func EditedDoc(t *testing.T, base []byte, edits ...Edit) *strictjson.Value {
	t.Helper()
	doc, err := strictjson.Parse(base)
	if err != nil {
		t.Fatalf("Parse(base) = %v", err)
	}
	for _, ed := range edits {
		if ed.value == "" {
			removeAt(t, doc, ed.ptr)
			continue
		}
		nv, err := strictjson.Parse([]byte(ed.value))
		if err != nil {
			t.Fatalf("Parse(%q) = %v", ed.value, err)
		}
		if doc, err = strictjson.Replace(doc, ed.ptr, nv); err != nil {
			t.Fatalf("Replace(%q) = %v", ed.ptr, err)
		}
	}
	out, err := strictjson.Parse(strictjson.MarshalIndent(doc, "  "))
	if err != nil {
		t.Fatalf("reparse: %v", err)
	}
	return out
}

func removeAt(t *testing.T, doc *strictjson.Value, ptr string) {
	t.Helper()
	i := strings.LastIndexByte(ptr, '/')
	parent, err := doc.At(ptr[:i])
	if err != nil {
		t.Fatalf("At(%q) = %v", ptr[:i], err)
	}
	last := ptr[i+1:]
	for j, m := range parent.Members {
		if m.Key == last {
			parent.Members = append(parent.Members[:j], parent.Members[j+1:]...)
			return
		}
	}
	t.Fatalf("removeAt(%q): no such member", ptr)
}
