package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks Parse against encoding/json and checks the canonical
// encoding against Parse.
//
// encoding/json's scanner differs from RFC 8259 with Parse's restrictions
// in exactly two ways: it accepts invalid UTF-8 inside strings (Unmarshal
// turns it into U+FFFD) and it accepts duplicate object keys. Both use the
// same nesting limit (MaxDepth). So for input that is valid UTF-8, Parse
// must accept exactly what json.Valid accepts, except documents with a
// duplicate key, which Parse must reject as ReasonDuplicateKey. Duplicates
// are found with encoding/json's own tokenizer, which decodes keys (escapes,
// lone surrogates) the way Parse does.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			// Long inputs find nothing short ones do not, and minimizing
			// them stalls the fuzzer for a minute at a time.
			t.Skip()
		}
		v, err := Parse(data)
		if Valid(data) != (err == nil) {
			t.Fatalf("Valid(%q) = %v, Parse error %v", data, !(err == nil), err)
		}
		if ValidString(string(data)) != (err == nil) {
			t.Fatalf("ValidString(%q) = %v, Parse error %v", data, !(err == nil), err)
		}
		if ov, oerr := ParseOwned(bytes.Clone(data)); (oerr == nil) != (err == nil) || !Equal(ov, v) {
			t.Fatalf("ParseOwned(%q) = %v, %v; Parse gives %v, %v", data, ov, oerr, v, err)
		}
		sv, serr := ParseString(string(data))
		if (serr == nil) != (err == nil) || serr != nil && serr.Error() != err.Error() || !Equal(sv, v) {
			t.Fatalf("ParseString(%q) = %v, %v; Parse gives %v, %v", data, sv, serr, v, err)
		}
		if err != nil {
			checkSyntaxError(t, data, err)
		}
		if utf8.Valid(data) {
			valid := json.Valid(data)
			switch {
			case !valid && err == nil:
				t.Fatalf("Parse(%q) accepts what encoding/json rejects", data)
			case valid && err == nil:
			case valid && hasDuplicateKeys(data):
				if r := err.(*SyntaxError).Reason; r != ReasonDuplicateKey {
					t.Fatalf("Parse(%q) = %v (%v), want a duplicate key error", data, err, r)
				}
			case valid:
				t.Fatalf("Parse(%q) = %v; encoding/json accepts it and it has no duplicate key", data, err)
			}
			if err == nil {
				checkAgreesWithDecoder(t, data, v)
			}
		}
		if err != nil {
			return
		}
		if want := firstNonSpace(data); v.Offset != want {
			t.Fatalf("Parse(%q).Offset = %d, want %d", data, v.Offset, want)
		}
		out := Marshal(v)
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("Marshal(Parse(%q)) = %q is not valid JSON", data, out)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(%q))) = %v; output %q", data, err, out)
		}
		if !Equal(v, again) {
			t.Fatalf("Parse(Marshal(v)) is not Equal to v for %q; output %q", data, out)
		}
		if out2 := Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("Marshal is not idempotent for %q: %q then %q", data, out, out2)
		}
		// The indented form grows with the square of the depth, so the
		// 10000-deep seeds would cost hundreds of megabytes.
		if len(data) <= 1024 {
			pretty, err := Parse(MarshalIndent(v, "  "))
			if err != nil || !Equal(v, pretty) {
				t.Fatalf("MarshalIndent output of %q does not re-parse to an Equal value: %v", data, err)
			}
		}
		if c := v.Clone(); !Equal(v, c) || !bytes.Equal(Marshal(c), out) {
			t.Fatalf("Clone of %q differs", data)
		}
		checkSetDelete(t, data, v)
	})
}

// checkSetDelete edits a parsed object with Set and Delete on a clone and
// checks the result against the same edit made on the decoded map: every
// other member is kept, in its order, and the output still parses.
func checkSetDelete(t *testing.T, data []byte, v *Value) {
	t.Helper()
	if v.Kind != KindObject {
		return
	}
	keys := []string{"", "a"}
	if len(v.Members) > 0 {
		keys = append(keys, v.Members[0].Key, v.Members[len(v.Members)-1].Key)
	}
	for _, key := range keys {
		c := v.Clone()
		c.Set(key, String("set"))
		want := v.Interface().(map[string]any)
		want[key] = "set"
		if got := c.Interface(); !reflect.DeepEqual(want, got) {
			t.Fatalf("Set(%q) on %q (-want +got):\n%s", key, data, cmp.Diff(want, got))
		}
		if n := len(v.Members) + btoi(!v.Has(key)); len(c.Members) != n {
			t.Fatalf("Set(%q) on %q left %d members, want %d", key, data, len(c.Members), n)
		}
		if ok := c.Delete(key); !ok {
			t.Fatalf("Delete(%q) after Set on %q = false", key, data)
		}
		delete(want, key)
		if got := c.Interface(); !reflect.DeepEqual(want, got) {
			t.Fatalf("Set then Delete(%q) on %q (-want +got):\n%s", key, data, cmp.Diff(want, got))
		}
		// Other members keep their order.
		var kept []string
		for _, m := range v.Members {
			if m.Key != key {
				kept = append(kept, m.Key)
			}
		}
		var got []string
		for _, m := range c.Members {
			got = append(got, m.Key)
		}
		if !slices.Equal(kept, got) {
			t.Fatalf("Delete(%q) on %q: keys %q, want %q", key, data, got, kept)
		}
		if _, err := Parse(Marshal(c)); err != nil {
			t.Fatalf("Marshal after Set/Delete(%q) on %q does not parse: %v", key, data, err)
		}
		if c.Delete(key) {
			t.Fatalf("second Delete(%q) on %q = true", key, data)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func checkSyntaxError(t *testing.T, data []byte, err error) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("Parse(%q) error %T is not a *SyntaxError", data, err)
	}
	switch {
	case se.Offset < 0 || se.Offset > len(data):
		t.Fatalf("Parse(%q): Offset %d out of range", data, se.Offset)
	case se.Line < 1 || se.Col < 1:
		t.Fatalf("Parse(%q): Line %d, Col %d", data, se.Line, se.Col)
	case se.Char == "" || se.Expected == "" || se.Msg == "" || strings.Contains(se.Msg, "\n"):
		t.Fatalf("Parse(%q): incomplete error %+v", data, *se)
	case se.Truncated != (se.Offset == len(data)):
		t.Fatalf("Parse(%q): Truncated = %v at offset %d of %d", data, se.Truncated, se.Offset, len(data))
	case se.Truncated != (se.Char == "EOF"):
		t.Fatalf("Parse(%q): Truncated = %v with Char %q", data, se.Truncated, se.Char)
	case !utf8.ValidString(se.Char) || !utf8.ValidString(se.Msg):
		t.Fatalf("Parse(%q): error text is not valid UTF-8: %+v", data, *se)
	case strings.Trim(se.Unclosed, `"]}`) != "":
		t.Fatalf("Parse(%q): Unclosed = %q", data, se.Unclosed)
	}
}

// checkAgreesWithDecoder compares the tree with what encoding/json decodes
// from the same bytes.
func checkAgreesWithDecoder(t *testing.T, data []byte, v *Value) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("json.Decode(%q) = %v", data, err)
	}
	if got := v.Interface(); !reflect.DeepEqual(want, got) {
		t.Fatalf("Parse(%q) decodes differently from encoding/json (-want +got):\n%s", data, cmp.Diff(want, got))
	}
}

// hasDuplicateKeys reports whether some object in data, which json.Valid
// accepts, repeats a key. It walks encoding/json's token stream: in an
// object, tokens alternate between a key and a value, and a container value
// counts as given once it closes.
func hasDuplicateKeys(data []byte) bool {
	type frame struct {
		obj     bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{obj: true, wantKey: true, keys: map[string]bool{}})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].wantKey = true
				}
			}
			continue
		}
		if top != nil && top.obj && top.wantKey {
			key := tok.(string)
			if top.keys[key] {
				return true
			}
			top.keys[key] = true
			top.wantKey = false
			continue
		}
		if top != nil && top.obj {
			top.wantKey = true
		}
	}
}

func firstNonSpace(data []byte) int {
	return len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
}

func TestHasDuplicateKeys(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"a":1,"b":2}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, false},
		{`{"a":{"x":1},"a":[]}`, true},
		{`[{"a":1,"b":{"c":[]},"a":0}]`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`{"\ud800":1,"\ufffd":2}`, true},
		{`{"k":{},"v":{"k":1}}`, false},
	}
	for _, tt := range tests {
		if got := hasDuplicateKeys([]byte(tt.in)); got != tt.want {
			t.Errorf("hasDuplicateKeys(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

var fuzzSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.370`, `1e400`, `-1.5E-7`,
	`"x"`, `"\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\u0000"`,
	`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"\ud800":1,"\ufffd":2}`,
	`[1,2,]`, `{"a":1,}`, `{'a':1}`, `{a:1}`, `[01]`, `[+1]`, `[.5]`, `[1.]`, `[NaN]`, `[Infinity]`,
	"\xef\xbb\xbf{}", "{} x", "[1]\n```", "/* c */ {}", "[1, // c\n2]",
	"\"a\nb\"", "\"\\x\"", "\"\xff\"", "\"caf\xc3", `{"a":`, `[tr`, `["ab\`, `["\u00`,
	"\"\u2028\u2029\"", `"<b>&amp;</b>"`, "{\"q\":\"1. x\\n```python\\n1: a\\n```\"}",
	// Depth at and past MaxDepth is covered by TestParseRejects and
	// TestParseAccepts: 20 KB seeds make every minimization run take
	// minutes, which starves the fuzzer. Nested objects that once made
	// Equal exponential are in testdata/fuzz/FuzzParse.
	strings.Repeat("[", 50) + strings.Repeat("]", 50),
	strings.Repeat(`{"a":[`, 30),
	`{"meta":{"question_count":2},"questions":[{"question_id":"Q001","options":["a","b"],"answer":0}]}`,
}
