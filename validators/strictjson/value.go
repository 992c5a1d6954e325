// Package strictjson parses JSON exactly as RFC 8259 defines it and keeps what
// a contract gateway must not lose: the order of object members, numbers as
// the model wrote them, and the byte offset of every value, so that
// violations can be ordered by document position and the output can be
// re-serialised canonically without float round trips.
package strictjson

import (
	"encoding/json"
	"strconv"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON kinds. KindInvalid is the zero value and never produced by Parse.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

var kindNames = [...]string{"invalid", "null", "boolean", "number", "string", "array", "object"}

// String returns the JSON Schema name of the kind ("object", "number", …).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Value is one parsed JSON value. Members keep the order in which they were
// written; Num keeps the number literal exactly as written.
type Value struct {
	Kind    Kind
	Bool    bool     // KindBool
	Num     string   // KindNumber: the literal, e.g. "1.370"
	Str     string   // KindString: the decoded string
	Items   []*Value // KindArray
	Members []Member // KindObject
	// Offset is the byte offset of the value's first byte in the parsed input,
	// or -1 for values built in code.
	Offset int
}

// Member is one name/value pair of an object.
type Member struct {
	Key string
	// KeyOffset is the byte offset of the opening quote of the key, or -1.
	KeyOffset int
	Value     *Value
}

// Null, Bool, Number, String, Array and Object build values in code (Offset -1).
func Null() *Value             { return &Value{Kind: KindNull, Offset: -1} }
func BoolValue(b bool) *Value  { return &Value{Kind: KindBool, Bool: b, Offset: -1} }
func Number(lit string) *Value { return &Value{Kind: KindNumber, Num: lit, Offset: -1} }
func Int(n int64) *Value       { return Number(strconv.FormatInt(n, 10)) }
func String(s string) *Value   { return &Value{Kind: KindString, Str: s, Offset: -1} }

// Float builds f as a number in its shortest form (0.2, not
// 0.20000000000000001), as encoding/json writes it.
func Float(f float64) *Value {
	b, _ := json.Marshal(f)
	return Number(string(b))
}
func Array(items ...*Value) *Value {
	return &Value{Kind: KindArray, Items: items, Offset: -1}
}

// Object builds an object from members in the given order. Pass KeyOffset -1
// for members built in code; Object does not check for duplicate keys.
func Object(members ...Member) *Value {
	return &Value{Kind: KindObject, Members: members, Offset: -1}
}

// Get returns the value of the member named key, or nil when v is not an
// object or has no such member. Parse rejects duplicate keys, so the first
// match is the only one.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != KindObject {
		return nil
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// Has reports whether v is an object with a member named key.
func (v *Value) Has(key string) bool {
	if v == nil || v.Kind != KindObject {
		return false
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return true
		}
	}
	return false
}

// Set makes v's member key hold nv: an existing member keeps its place in
// the member order (and its KeyOffset) and gets the new value; a new key is
// appended at the end, so that a canonical re-encoding changes nothing but
// that member. nv is linked in, not copied. Set panics when v is not an
// object, like an assignment to a nil map: a caller that sets members on a
// number has a bug that a silent no-op would hide.
func (v *Value) Set(key string, nv *Value) {
	if v == nil || v.Kind != KindObject {
		panic("strictjson: Set on a value that is not an object")
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			v.Members[i].Value = nv
			return
		}
	}
	v.Members = append(v.Members, Member{Key: key, KeyOffset: -1, Value: nv})
}

// Delete removes v's member key and reports whether there was one; the
// other members keep their order. It returns false when v is not an object.
// The remaining members go to a new slice rather than being shifted inside
// the old one, so a shallow copy of v, or a range loop over v.Members in
// progress, still sees the members it had.
func (v *Value) Delete(key string) bool {
	if v == nil || v.Kind != KindObject {
		return false
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			v.Members = append(v.Members[:i:i], v.Members[i+1:]...)
			return true
		}
	}
	return false
}

// Index returns the i-th item of an array, or nil.
func (v *Value) Index(i int) *Value {
	if v == nil || v.Kind != KindArray || i < 0 || i >= len(v.Items) {
		return nil
	}
	return v.Items[i]
}

// IsNull reports whether v is JSON null (a nil *Value is not null: it is absent).
func (v *Value) IsNull() bool { return v != nil && v.Kind == KindNull }

// AsString returns the string and true when v is a string.
func (v *Value) AsString() (string, bool) {
	if v == nil || v.Kind != KindString {
		return "", false
	}
	return v.Str, true
}

// Text is a string's content, and any other value's JSON text ("" for
// a nil v): a value as a person would write it, without a string's
// quotes.
func (v *Value) Text() string {
	if s, ok := v.AsString(); ok || v == nil {
		return s
	}
	return string(Marshal(v))
}

// AsInt returns the number as an int64 and true when v is a number whose
// value is an exact integer (1, 1.0 and 1e0 all qualify).
func (v *Value) AsInt() (int64, bool) {
	if v == nil || v.Kind != KindNumber {
		return 0, false
	}
	if n, err := strconv.ParseInt(v.Num, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(v.Num, 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// AsFloat returns the number as a float64 and true when v is a number.
func (v *Value) AsFloat() (float64, bool) {
	if v == nil || v.Kind != KindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.Num, 64)
	return f, err == nil
}

// Interface converts v to the plain Go representation that
// encoding/json.Decoder with UseNumber produces and that JSON Schema
// validators expect: nil, bool, json.Number, string, []any, map[string]any.
func (v *Value) Interface() any {
	switch v.Kind {
	case KindNull:
		return nil
	case KindBool:
		return v.Bool
	case KindNumber:
		return json.Number(v.Num)
	case KindString:
		return v.Str
	case KindArray:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			out[i] = it.Interface()
		}
		return out
	case KindObject:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = m.Value.Interface()
		}
		return out
	}
	return nil
}
