package strictjson

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the pointer helpers. Callers test them with errors.Is; the
// returned errors wrap them with the pointer and the failing token.
var (
	// ErrInvalidPointer: the text is not an RFC 6901 JSON Pointer.
	ErrInvalidPointer = errors.New("invalid JSON pointer")
	// ErrNotFound: the pointer is well formed but names no existing value.
	ErrNotFound = errors.New("no value at JSON pointer")
	// ErrReplaceRoot: the method Replace cannot swap the value it is called
	// on; the function Replace returns the new root instead.
	ErrReplaceRoot = errors.New("the empty pointer names the root; use the function Replace, which returns the new root")
)

// ParsePointer splits an RFC 6901 JSON Pointer into its unescaped reference
// tokens. "" is the root and yields no tokens; any other pointer starts with
// "/". "~1" decodes to "/" and "~0" to "~"; any other "~" is an error.
func ParsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("%w %q: it must be empty or start with '/'", ErrInvalidPointer, p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		if !strings.Contains(t, "~") {
			continue
		}
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("%w %q: '~' must be followed by '0' or '1'", ErrInvalidPointer, p)
			}
		}
		// The order matters: "~01" is "~1" unescaped, not "/".
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// At returns the value that pointer (RFC 6901) names inside v. An array index
// must be a decimal number without leading zeros that is in range; "-" (the
// position after the last item) names no value and is an error here.
func (v *Value) At(pointer string) (*Value, error) {
	toks, err := ParsePointer(pointer)
	if err != nil {
		return nil, err
	}
	cur := v
	for _, t := range toks {
		next, err := child(cur, t)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrNotFound, pointer, err)
		}
		cur = next
	}
	if cur == nil {
		return nil, fmt.Errorf("%w %q", ErrNotFound, pointer)
	}
	return cur, nil
}

// Replace replaces the existing value that pointer names inside v with nv,
// in place. It cannot replace v itself: for the empty pointer it returns
// ErrReplaceRoot, and callers that may need that use the function Replace.
func (v *Value) Replace(pointer string, nv *Value) error {
	if pointer == "" {
		return ErrReplaceRoot
	}
	_, err := Replace(v, pointer, nv)
	return err
}

// Replace performs an RFC 6902 "replace": the value that pointer names
// inside root must exist, and it becomes nv. It returns the root of the
// result, which is nv itself for the empty pointer and root, changed in
// place, otherwise. nv is linked in, not copied.
func Replace(root *Value, pointer string, nv *Value) (*Value, error) {
	toks, err := ParsePointer(pointer)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nv, nil
	}
	parent := root
	for _, t := range toks[:len(toks)-1] {
		if parent, err = child(parent, t); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrNotFound, pointer, err)
		}
	}
	last := toks[len(toks)-1]
	switch {
	case parent != nil && parent.Kind == KindObject:
		for i := range parent.Members {
			if parent.Members[i].Key == last {
				parent.Members[i].Value = nv
				return root, nil
			}
		}
	case parent != nil && parent.Kind == KindArray:
		if i, ok := arrayIndex(last, len(parent.Items)); ok {
			parent.Items[i] = nv
			return root, nil
		}
	}
	_, err = child(parent, last)
	return nil, fmt.Errorf("%w %q: %v", ErrNotFound, pointer, err)
}

// child steps from v to the member or item named by token t.
func child(v *Value, t string) (*Value, error) {
	switch {
	case v == nil:
		return nil, fmt.Errorf("no value to look up %q in", t)
	case v.Kind == KindObject:
		if c := v.Get(t); c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("object has no member %q", t)
	case v.Kind == KindArray:
		if i, ok := arrayIndex(t, len(v.Items)); ok {
			return v.Items[i], nil
		}
		return nil, fmt.Errorf("%q is not an index of an array of length %d", t, len(v.Items))
	}
	return nil, fmt.Errorf("%s has no member or item %q", v.Kind, t)
}

// arrayIndex parses an RFC 6901 array index: "0" or a decimal number
// without leading zeros, below n.
func arrayIndex(t string, n int) (int, bool) {
	if t == "" || len(t) > 10 || (t[0] == '0' && len(t) > 1) {
		return 0, false
	}
	i := 0
	for j := 0; j < len(t); j++ {
		c := t[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int(c-'0')
	}
	return i, i < n
}

// Clone returns a deep copy of v, offsets included. Strings are copied too,
// so a cloned subtree no longer keeps the whole parsed input in memory.
func (v *Value) Clone() *Value {
	if v == nil {
		return nil
	}
	c := &Value{Kind: v.Kind, Bool: v.Bool, Offset: v.Offset}
	c.Num = strings.Clone(v.Num)
	c.Str = strings.Clone(v.Str)
	if v.Items != nil {
		c.Items = make([]*Value, len(v.Items))
		for i, it := range v.Items {
			c.Items[i] = it.Clone()
		}
	}
	if v.Members != nil {
		c.Members = make([]Member, len(v.Members))
		for i, m := range v.Members {
			c.Members[i] = Member{Key: strings.Clone(m.Key), KeyOffset: m.KeyOffset, Value: m.Value.Clone()}
		}
	}
	return c
}

// Equal reports whether a and b are the same JSON value. Objects are equal
// when they have the same set of keys with equal values, in any order: JSON
// gives member order no meaning, and a repair that reorders keys has not
// changed the document. Numbers are compared by their literal text, so 1,
// 1.0 and 1e0 differ: the gateway promises numbers as written, and Equal
// checks that promise. Offsets are ignored. Two nil values are equal; nil
// and JSON null are not. Objects with duplicate keys, which only code can
// build, are equal only member by member in the same order.
//
// Every pair of values is compared at most once, so Equal is linear in the
// size of the smaller tree (plus the key lookups of reordered objects).
func Equal(a, b *Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindBool:
		return a.Bool == b.Bool
	case KindNumber:
		return a.Num == b.Num
	case KindString:
		return a.Str == b.Str
	case KindArray:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !Equal(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	case KindObject:
		return equalObjects(a.Members, b.Members)
	}
	return true
}

func equalObjects(a, b []Member) bool {
	if len(a) != len(b) {
		return false
	}
	sameOrder := true
	for i := range a {
		if a[i].Key != b[i].Key {
			sameOrder = false
			break
		}
	}
	if sameOrder {
		// The common case: a document compared with its own re-parse.
		for i := range a {
			if !Equal(a[i].Value, b[i].Value) {
				return false
			}
		}
		return true
	}
	// With distinct keys and equal lengths, finding every key of a in b
	// proves the key sets equal, so one direction suffices.
	index, ok := keyIndex(b)
	if !ok {
		return false
	}
	if _, ok := keyIndex(a); !ok {
		return false
	}
	for i := range a {
		j, found := index(a[i].Key)
		if !found || !Equal(a[i].Value, b[j].Value) {
			return false
		}
	}
	return true
}

// keyIndex returns a lookup from key to member index, and false when ms
// repeats a key. Small objects are scanned; large ones get a map.
func keyIndex(ms []Member) (func(string) (int, bool), bool) {
	if len(ms) <= 16 {
		for i := range ms {
			for j := i + 1; j < len(ms); j++ {
				if ms[i].Key == ms[j].Key {
					return nil, false
				}
			}
		}
		return func(k string) (int, bool) {
			for i := range ms {
				if ms[i].Key == k {
					return i, true
				}
			}
			return 0, false
		}, true
	}
	m := make(map[string]int, len(ms))
	for i := range ms {
		if _, dup := m[ms[i].Key]; dup {
			return nil, false
		}
		m[ms[i].Key] = i
	}
	return func(k string) (int, bool) {
		i, ok := m[k]
		return i, ok
	}, true
}
