package strictjson

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t testing.TB, s string) *Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q) = %v", s, err)
	}
	return v
}

func TestParsePointer(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr error
	}{
		{"", nil, nil},
		{"/", []string{""}, nil},
		{"/a/0", []string{"a", "0"}, nil},
		{"/a~1b/m~0n", []string{"a/b", "m~n"}, nil},
		{"/~01", []string{"~1"}, nil},
		{"//x", []string{"", "x"}, nil},
		{"a", nil, ErrInvalidPointer},
		{"/a~", nil, ErrInvalidPointer},
		{"/a~2", nil, ErrInvalidPointer},
	}
	for _, tt := range tests {
		got, err := ParsePointer(tt.in)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("ParsePointer(%q) error = %v, want %v", tt.in, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParsePointer(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

// doc is RFC 6901 §5's example document.
const doc = `{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8}`

func TestAt(t *testing.T) {
	root := mustParse(t, doc)
	tests := []struct {
		pointer string
		want    string // canonical encoding of the result
		wantErr error
	}{
		{"", string(Marshal(root)), nil},
		{"/foo", `["bar","baz"]`, nil},
		{"/foo/0", `"bar"`, nil},
		{"/", `0`, nil},
		{"/a~1b", `1`, nil},
		{"/c%d", `2`, nil},
		{"/e^f", `3`, nil},
		{"/g|h", `4`, nil},
		{"/i\\j", `5`, nil},
		{"/k\"l", `6`, nil},
		{"/ ", `7`, nil},
		{"/m~0n", `8`, nil},
		{"/foo/2", "", ErrNotFound},
		{"/foo/-", "", ErrNotFound},
		{"/foo/01", "", ErrNotFound},
		{"/foo/-1", "", ErrNotFound},
		{"/foo/0/x", "", ErrNotFound},
		{"/missing", "", ErrNotFound},
		{"/missing/deeper", "", ErrNotFound},
		{"foo", "", ErrInvalidPointer},
	}
	for _, tt := range tests {
		got, err := root.At(tt.pointer)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("At(%q) error = %v, want %v", tt.pointer, err, tt.wantErr)
			continue
		}
		if err == nil && string(Marshal(got)) != tt.want {
			t.Errorf("At(%q) = %s, want %s", tt.pointer, Marshal(got), tt.want)
		}
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		pointer string
		nv      *Value
		want    string
		wantErr error
	}{
		{"member", `{"a":1,"b":2}`, "/b", Int(3), `{"a":1,"b":3}`, nil},
		{"item", `{"q":[{"n":1},{"n":2}]}`, "/q/1/n", String("x"), `{"q":[{"n":1},{"n":"x"}]}`, nil},
		{"whole item", `[1,2,3]`, "/0", Null(), `[null,2,3]`, nil},
		{"root", `{"a":1}`, "", Array(), `[]`, nil},
		{"escaped key", `{"a/b":1}`, "/a~1b", BoolValue(false), `{"a/b":false}`, nil},
		{"missing member", `{"a":1}`, "/b", Int(1), "", ErrNotFound},
		{"index past end", `[1]`, "/1", Int(1), "", ErrNotFound},
		{"append position", `[1]`, "/-", Int(1), "", ErrNotFound},
		{"missing parent", `{"a":1}`, "/x/y", Int(1), "", ErrNotFound},
		{"scalar parent", `{"a":1}`, "/a/0", Int(1), "", ErrNotFound},
		{"bad pointer", `{"a":1}`, "a", Int(1), "", ErrInvalidPointer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := mustParse(t, tt.doc)
			got, err := Replace(root, tt.pointer, tt.nv)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Replace(%s, %q) error = %v, want %v", tt.doc, tt.pointer, err, tt.wantErr)
			}
			if err == nil && string(Marshal(got)) != tt.want {
				t.Errorf("Replace(%s, %q) = %s, want %s", tt.doc, tt.pointer, Marshal(got), tt.want)
			}
		})
	}
}

func TestReplaceMethod(t *testing.T) {
	root := mustParse(t, `{"a":[1,2]}`)
	if err := root.Replace("/a/1", Int(5)); err != nil {
		t.Fatalf("Replace(/a/1) = %v", err)
	}
	if got := string(Marshal(root)); got != `{"a":[1,5]}` {
		t.Errorf("after Replace(/a/1): %s", got)
	}
	if err := root.Replace("", Null()); !errors.Is(err, ErrReplaceRoot) {
		t.Errorf("Replace(\"\") = %v, want ErrReplaceRoot", err)
	}
}

func TestClone(t *testing.T) {
	orig := mustParse(t, `{"a":[1,{"b":"x"}],"c":null}`)
	c := orig.Clone()
	if !Equal(orig, c) {
		t.Fatalf("Clone is not Equal to the original")
	}
	if diff := cmp.Diff(orig, c); diff != "" {
		t.Errorf("Clone differs structurally (-orig +clone):\n%s", diff)
	}
	// Changing the clone must leave the original alone.
	c.Members[0].Value.Items[1].Members[0].Value.Str = "changed"
	c.Members[0].Value.Items = append(c.Members[0].Value.Items, Int(2))
	c.Members[1].Key = "d"
	if got := string(Marshal(orig)); got != `{"a":[1,{"b":"x"}],"c":null}` {
		t.Errorf("original changed through its clone: %s", got)
	}
	if (*Value)(nil).Clone() != nil {
		t.Errorf("nil.Clone() != nil")
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"a":1,"c":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`1`, `1.0`, false},
		{`1.370`, `1.370`, true},
		{`"a"`, `"\u0061"`, true},
		{`null`, `false`, false},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`{}`, `[]`, false},
		{`{"x":{"y":[{"z":1}]}}`, `{"x":{"y":[{"z":2}]}}`, false},
	}
	for _, tt := range tests {
		a, b := mustParse(t, tt.a), mustParse(t, tt.b)
		if got := Equal(a, b); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Equal(b, a); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
	if !Equal(nil, nil) || Equal(nil, Null()) || Equal(Null(), nil) {
		t.Errorf("Equal mishandles nil")
	}
	// Built objects may repeat keys; Equal stays symmetric.
	m := func(k string, n int64) Member { return Member{Key: k, Value: Int(n)} }
	dups := []struct {
		a, b *Value
		want bool
	}{
		{Object(m("x", 1), m("x", 1)), Object(m("x", 1), m("y", 1)), false},
		{Object(m("x", 1), m("x", 2)), Object(m("x", 1), m("x", 1)), false},
		{Object(m("x", 1), m("x", 2)), Object(m("x", 1), m("x", 2)), true},
		{Object(m("x", 1), m("y", 2), m("x", 3)), Object(m("y", 2), m("x", 1), m("x", 3)), false},
	}
	for i, tt := range dups {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("duplicate-key case %d: Equal(a, b) = %v, want %v", i, got, tt.want)
		}
		if got := Equal(tt.b, tt.a); got != tt.want {
			t.Errorf("duplicate-key case %d: Equal(b, a) = %v, want %v", i, got, tt.want)
		}
	}
}

// TestEqualLargeObjects covers the map path of reordered objects.
func TestEqualLargeObjects(t *testing.T) {
	var fwd, rev []Member
	for i := range 40 {
		fwd = append(fwd, Member{Key: itoa(i), Value: Int(int64(i))})
	}
	for i := 39; i >= 0; i-- {
		rev = append(rev, Member{Key: itoa(i), Value: Int(int64(i))})
	}
	if !Equal(Object(fwd...), Object(rev...)) {
		t.Errorf("Equal(40 members, same members reversed) = false")
	}
	rev[0].Value = Int(-1)
	if Equal(Object(fwd...), Object(rev...)) {
		t.Errorf("Equal ignores a changed value in a large object")
	}
}

// TestEqualDeepIsLinear guards against comparing subtrees more than once,
// which made nested objects cost 2^depth.
func TestEqualDeepIsLinear(t *testing.T) {
	a := mustParse(t, strings.Repeat(`{"a":{"b":1,"c":`, 200)+"1"+strings.Repeat("}}", 200))
	b := mustParse(t, strings.Repeat(`{"a":{"c":`, 200)+"1"+strings.Repeat(`,"b":1}}`, 200))
	if !Equal(a, b) {
		t.Errorf("Equal(deep, deep reordered) = false")
	}
}
