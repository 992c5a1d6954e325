package strictjson

import (
	"testing"
)

func TestSet(t *testing.T) {
	tests := []struct {
		name string
		in   string
		key  string
		nv   *Value
		want string
	}{
		{"replace keeps the member's place", `{"a":1,"b":2,"c":3}`, "b", String("x"), `{"a":1,"b":"x","c":3}`},
		{"replace the first member", `{"a":1,"b":2}`, "a", Null(), `{"a":null,"b":2}`},
		{"replace the last member", `{"a":1,"b":2}`, "b", Array(Int(1)), `{"a":1,"b":[1]}`},
		{"new key is appended", `{"a":1,"b":2}`, "c", BoolValue(true), `{"a":1,"b":2,"c":true}`},
		{"set on an empty object", `{}`, "a", Int(7), `{"a":7}`},
		{"empty key is a key", `{"a":1}`, "", Int(0), `{"a":1,"":0}`},
		{"key compared after unescaping", `{"\u0061":1}`, "a", Int(2), `{"a":2}`},
		{"nested object is replaced whole", `{"a":{"x":1}}`, "a", Object(), `{"a":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustParse(t, tt.in)
			v.Set(tt.key, tt.nv)
			if got := string(Marshal(v)); got != tt.want {
				t.Errorf("Set(%q) on %s = %s, want %s", tt.key, tt.in, got, tt.want)
			}
			if got := v.Get(tt.key); got != tt.nv {
				t.Errorf("Get(%q) after Set = %v, want the value set (linked, not copied)", tt.key, got)
			}
		})
	}
}

// TestSetKeepsKeyOffset checks that a replaced member still points at its
// key in the parsed input, so positions of later violations stay right.
func TestSetKeepsKeyOffset(t *testing.T) {
	v := mustParse(t, `{"a":1, "b":2}`)
	v.Set("b", Int(3))
	v.Set("c", Int(4))
	if got := []int{v.Members[0].KeyOffset, v.Members[1].KeyOffset, v.Members[2].KeyOffset}; got[0] != 1 || got[1] != 8 || got[2] != -1 {
		t.Errorf("KeyOffsets after Set = %v, want [1 8 -1]", got)
	}
}

func TestSetPanicsOnNonObject(t *testing.T) {
	tests := []struct {
		name string
		v    *Value
	}{
		{"nil", nil},
		{"array", Array()},
		{"string", String("a")},
		{"null", Null()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Set on %s did not panic", tt.name)
				}
			}()
			tt.v.Set("a", Int(1))
		})
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name string
		in   string
		key  string
		ok   bool
		want string
	}{
		{"first", `{"a":1,"b":2,"c":3}`, "a", true, `{"b":2,"c":3}`},
		{"middle keeps the order", `{"a":1,"b":2,"c":3}`, "b", true, `{"a":1,"c":3}`},
		{"last", `{"a":1,"b":2,"c":3}`, "c", true, `{"a":1,"b":2}`},
		{"only member", `{"a":1}`, "a", true, `{}`},
		{"absent key", `{"a":1}`, "b", false, `{"a":1}`},
		{"empty object", `{}`, "a", false, `{}`},
		{"nested members are not touched", `{"a":{"b":1},"b":2}`, "b", true, `{"a":{"b":1}}`},
		{"array", `["a"]`, "a", false, `["a"]`},
		{"string", `"a"`, "a", false, `"a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustParse(t, tt.in)
			if ok := v.Delete(tt.key); ok != tt.ok {
				t.Errorf("Delete(%q) on %s = %v, want %v", tt.key, tt.in, ok, tt.ok)
			}
			if got := string(Marshal(v)); got != tt.want {
				t.Errorf("after Delete(%q) on %s: %s, want %s", tt.key, tt.in, got, tt.want)
			}
			if v.Kind == KindObject && v.Has(tt.key) {
				t.Errorf("Has(%q) after Delete = true", tt.key)
			}
		})
	}
	if (*Value)(nil).Delete("a") {
		t.Errorf("nil.Delete = true, want false")
	}
}

// TestDeleteLeavesSharedMembers checks that a shallow copy made before
// Delete keeps its members: Delete must not shift them in the shared
// backing array.
func TestDeleteLeavesSharedMembers(t *testing.T) {
	v := mustParse(t, `{"a":1,"b":2,"c":3}`)
	shallow := *v
	v.Delete("a")
	if got := string(Marshal(&shallow)); got != `{"a":1,"b":2,"c":3}` {
		t.Errorf("shallow copy after Delete = %s, want the members it had", got)
	}
	if got := string(Marshal(v)); got != `{"b":2,"c":3}` {
		t.Errorf("after Delete = %s", got)
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		v    *Value
		want string
	}{
		{"string without its quotes", String(`a "b"`), `a "b"`},
		{"number", mustParse(t, `1.50`), "1.50"},
		{"object as JSON", mustParse(t, `{"a": [1, true]}`), `{"a":[1,true]}`},
		{"null", mustParse(t, `null`), "null"},
		{"absent", nil, ""},
	}
	for _, tt := range tests {
		if got := tt.v.Text(); got != tt.want {
			t.Errorf("%s: Text() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
