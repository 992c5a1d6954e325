package strictjson

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestCanonicalGolden parses every testdata/canonical/*.json and compares
// its compact and indented encodings with the golden files next to it.
// Refresh them with: go test ./validators/strictjson -run Golden -update
func TestCanonicalGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "canonical", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs under testdata/canonical: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(%s) = %v", in, err)
			}
			outputs := []struct {
				suffix string
				got    []byte
			}{
				{".compact.golden", Marshal(v)},
				{".indent.golden", append(MarshalIndent(v, "  "), '\n')},
			}
			for _, o := range outputs {
				golden := strings.TrimSuffix(in, ".json") + o.suffix
				if *update {
					if err := os.WriteFile(golden, o.got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(o.got)); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
				}
				// Canonical output is itself strict JSON and a fixed point.
				again, err := Parse(o.got)
				if err != nil {
					t.Fatalf("Parse(%s output) = %v", o.suffix, err)
				}
				if !Equal(v, again) {
					t.Errorf("Parse(%s output) is not Equal to the input", o.suffix)
				}
				if !bytes.Equal(Marshal(again), Marshal(v)) {
					t.Errorf("Marshal is not idempotent for %s", in)
				}
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", `""`},
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"/", `"/"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"<>&", `"<>&"`},
		{"\u2028x\u2029", `"\u2028x\u2029"`},
		{"\u2027\u202a", "\"\u2027\u202a\""},
		{"é😀", `"é😀"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xe2\x82", `"\ufffd\ufffd"`},
		{"\ufffd", "\"\ufffd\""},
	}
	for _, tt := range tests {
		if got := string(AppendString(nil, tt.in)); got != tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestMarshalMatchesEncodingJSON compares string encoding with
// encoding/json without HTML escaping, which differs only in keeping DEL
// raw and in the escapes it spells differently.
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"plain", "<a href=\"x\">&</a>", "tab\there", "\u2028", "ü", "\x01", "\\"} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(b.String(), "\n")
		if got := string(Marshal(String(s))); got != want {
			t.Errorf("Marshal(String(%q)) = %s, encoding/json says %s", s, got, want)
		}
	}
}

func TestMarshalBuiltValues(t *testing.T) {
	tests := []struct {
		name   string
		v      *Value
		want   string
		indent string
	}{
		{"nil", nil, `null`, `null`},
		{"invalid kind", &Value{}, `null`, `null`},
		{"int", Int(-12), `-12`, `-12`},
		{"object", Object(Member{Key: "b", Value: BoolValue(true)}, Member{Key: "a", Value: Array(Number("1.50"), Null(), String("x"))}),
			`{"b":true,"a":[1.50,null,"x"]}`,
			"{\n  \"b\": true,\n  \"a\": [\n    1.50,\n    null,\n    \"x\"\n  ]\n}"},
		{"nil member value", Object(Member{Key: "a"}), `{"a":null}`, "{\n  \"a\": null\n}"},
		{"nil item", Array(nil), `[null]`, "[\n  null\n]"},
		{"empty containers", Array(Array(), Object()), `[[],{}]`, "[\n  [],\n  {}\n]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Marshal(tt.v)); got != tt.want {
				t.Errorf("Marshal = %s, want %s", got, tt.want)
			}
			if got := string(MarshalIndent(tt.v, "  ")); got != tt.indent {
				t.Errorf("MarshalIndent = %q, want %q", got, tt.indent)
			}
		})
	}
}

func TestAppendJSONAppends(t *testing.T) {
	got := String("x").AppendJSON([]byte("prefix:"))
	if string(got) != `prefix:"x"` {
		t.Errorf("AppendJSON = %s", got)
	}
}

// TestMarshalIndentMatchesEncodingJSON checks the pretty form against
// json.Indent, which defines the layout users know.
func TestMarshalIndentMatchesEncodingJSON(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "canonical", "nesting.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, Marshal(v), "", "  "); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), string(MarshalIndent(v, "  "))); diff != "" {
		t.Errorf("MarshalIndent differs from json.Indent (-want +got):\n%s", diff)
	}
}

// TestMarshalLike checks that MarshalLike gives the canonical encoding
// whatever text it is compared with, and that text itself when it is that
// encoding.
func TestMarshalLike(t *testing.T) {
	v, err := Parse([]byte(`{ "a" : [1, "x\/y"] }`))
	if err != nil {
		t.Fatal(err)
	}
	const canonical = `{"a":[1,"x/y"]}`
	for _, like := range []string{"", `{ "a" : [1, "x\/y"] }`, canonical} {
		if got := MarshalLike(v, like); got != canonical {
			t.Errorf("MarshalLike(v, %q) = %q, want %q", like, got, canonical)
		}
	}
	like := strings.Clone(canonical)
	if got := MarshalLike(v, like); unsafe.StringData(got) != unsafe.StringData(like) {
		t.Errorf("MarshalLike copied a text that is the canonical encoding already")
	}
	var w strings.Builder
	if err := WriteJSON(&w, v); err != nil || w.String() != canonical {
		t.Errorf("WriteJSON = %q, %v; want %q", w.String(), err, canonical)
	}
}
