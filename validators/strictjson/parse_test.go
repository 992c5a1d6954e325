package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreMsg leaves the prose out of error comparisons: Msg is for people and
// may be reworded, every other field is part of the report format.
var ignoreMsg = cmpopts.IgnoreFields(SyntaxError{}, "Msg")

func TestParseRejects(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	deepObj := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	tests := []struct {
		name string
		in   string
		want SyntaxError
	}{
		// Trailing commas point at the comma, which is what to remove.
		{"trailing comma array", `[1,2,]`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: ",", Expected: "']'", Reason: ReasonTrailingComma}},
		{"trailing comma object", "{\n  \"a\": 1,\n}", SyntaxError{Offset: 10, Line: 2, Col: 9, Char: ",", Expected: "'}'", Reason: ReasonTrailingComma}},
		{"trailing comma before whitespace", "[1 , \n ]", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: ",", Expected: "']'", Reason: ReasonTrailingComma}},
		{"comma without item", `[,1]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: ",", Expected: "value", Reason: ReasonUnexpected}},
		{"double comma", `[1,,2]`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: ",", Expected: "value", Reason: ReasonUnexpected}},
		{"comma without member", `{,}`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: ",", Expected: "string (object key)", Reason: ReasonUnexpected}},

		{"line comment", "{\"a\": 1 // one\n}", SyntaxError{Offset: 8, Line: 1, Col: 9, Char: "/", Expected: "',' or '}'", Reason: ReasonComment}},
		{"block comment before value", `/* c */ {}`, SyntaxError{Offset: 0, Line: 1, Col: 1, Char: "/", Expected: "value", Reason: ReasonComment}},
		{"comment before key", `{/* c */ "a": 1}`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "/", Expected: "string (object key)", Reason: ReasonComment}},
		{"hash comment", "[1, # one\n2]", SyntaxError{Offset: 4, Line: 1, Col: 5, Char: "#", Expected: "value", Reason: ReasonComment}},
		{"comment after value", "{}\n// done", SyntaxError{Offset: 3, Line: 2, Col: 1, Char: "/", Expected: "end of input", Reason: ReasonComment}},

		{"single-quoted value", `{"a": 'x'}`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "'", Expected: "value", Reason: ReasonQuote}},
		{"single-quoted key", `{'a': 1}`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "'", Expected: "string (object key)", Reason: ReasonQuote}},
		{"typographic quotes", `{"a": “x”}`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "“", Expected: "value", Reason: ReasonQuote}},
		{"unquoted key", `{a: 1}`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "a", Expected: "string (object key)", Reason: ReasonUnquotedKey}},
		{"unquoted second key", "{\"a\": 1,\n total: 2}", SyntaxError{Offset: 10, Line: 2, Col: 2, Char: "t", Expected: "string (object key)", Reason: ReasonUnquotedKey}},

		{"raw newline in string", "{\"q\": \"line one\nline two\"}", SyntaxError{Offset: 15, Line: 1, Col: 16, Char: `\u000a`, Expected: `\n`, Reason: ReasonControlChar}},
		{"raw tab in string", "[\"a\tb\"]", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: `\u0009`, Expected: `\t`, Reason: ReasonControlChar}},
		{"raw carriage return in string", "[\"a\rb\"]", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: `\u000d`, Expected: `\r`, Reason: ReasonControlChar}},
		{"raw U+0001 in string", "[\"a\x01\"]", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: `\u0001`, Expected: `\u0001`, Reason: ReasonControlChar}},
		{"raw NUL in string", "\"\x00\"", SyntaxError{Offset: 1, Line: 1, Col: 2, Char: `\u0000`, Expected: `\u0000`, Reason: ReasonControlChar}},
		{"control char after escape", "\"\\n\x1f\"", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: `\u001f`, Expected: `\u001f`, Reason: ReasonControlChar}},

		{"invalid escape", `{"path": "C:\Users"}`, SyntaxError{Offset: 12, Line: 1, Col: 13, Char: `\U`, Expected: expEscape, Reason: ReasonEscape}},
		{"escaped single quote", `["it\'s"]`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: `\'`, Expected: expEscape, Reason: ReasonEscape}},
		{"markdown underscore escape", `["snake\_case"]`, SyntaxError{Offset: 7, Line: 1, Col: 8, Char: `\_`, Expected: expEscape, Reason: ReasonEscape}},
		{"bad hex in unicode escape", `["\u12G4"]`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "G", Expected: "hex digit", Reason: ReasonEscape}},
		{"short unicode escape", `["\u12"]`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: `"`, Expected: "hex digit", Reason: ReasonEscape}},
		{"escape of control char", "[\"\\\x01\"]", SyntaxError{Offset: 2, Line: 1, Col: 3, Char: `\\u0001`, Expected: expEscape, Reason: ReasonEscape}},

		{"duplicate key", `{"a": 1, "a": 2}`, SyntaxError{Offset: 9, Line: 1, Col: 10, Char: `"a"`, Expected: "unique key", Reason: ReasonDuplicateKey}},
		{"duplicate key via escape", `{"a": 1, "\u0061": 2}`, SyntaxError{Offset: 9, Line: 1, Col: 10, Char: `"a"`, Expected: "unique key", Reason: ReasonDuplicateKey}},
		{"duplicate key nested", "{\"q\": [{\"id\": 1,\n  \"text\": \"x\",\n  \"id\": 2}]}", SyntaxError{Offset: 34, Line: 3, Col: 3, Char: `"id"`, Expected: "unique key", Reason: ReasonDuplicateKey}},
		{"duplicate key in large object", largeObjectWithDuplicate(100), SyntaxError{Offset: 901, Line: 1, Col: 902, Char: `"k007"`, Expected: "unique key", Reason: ReasonDuplicateKey}},

		{"invalid UTF-8 in string", "[\"a\xffb\"]", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: `\xff`, Expected: "UTF-8 character", Reason: ReasonUTF8}},
		{"overlong encoding in string", "[\"\xc0\xaf\"]", SyntaxError{Offset: 2, Line: 1, Col: 3, Char: `\xc0`, Expected: "UTF-8 character", Reason: ReasonUTF8}},
		{"surrogate encoded in UTF-8", "[\"\xed\xa0\x80\"]", SyntaxError{Offset: 2, Line: 1, Col: 3, Char: `\xed`, Expected: "UTF-8 character", Reason: ReasonUTF8}},
		{"invalid UTF-8 outside strings", "[1, \xfe]", SyntaxError{Offset: 4, Line: 1, Col: 5, Char: `\xfe`, Expected: "value", Reason: ReasonUTF8}},
		{"invalid UTF-8 after value", "{}\xff", SyntaxError{Offset: 2, Line: 1, Col: 3, Char: `\xff`, Expected: "end of input", Reason: ReasonUTF8}},
		{"byte order mark", "\xef\xbb\xbf{}", SyntaxError{Offset: 0, Line: 1, Col: 1, Char: `\ufeff`, Expected: "value", Reason: ReasonBOM}},
		{"byte order mark after space", " \xef\xbb\xbf{}", SyntaxError{Offset: 1, Line: 1, Col: 2, Char: `\ufeff`, Expected: "value", Reason: ReasonUnexpected}},
		{"non-breaking space", "[1,\u00a02]", SyntaxError{Offset: 3, Line: 1, Col: 4, Char: `\u00a0`, Expected: "value", Reason: ReasonUnexpected}},

		{"trailing word", `{} x`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "x", Expected: "end of input", Reason: ReasonTrailingData}},
		{"extra closing brace", `{"a": 1}}`, SyntaxError{Offset: 8, Line: 1, Col: 9, Char: "}", Expected: "end of input", Reason: ReasonTrailingData}},
		{"second value", "{\"a\": 1}\n{\"b\": 2}", SyntaxError{Offset: 9, Line: 2, Col: 1, Char: "{", Expected: "end of input", Reason: ReasonTrailingData}},
		{"closing fence left over", "[1]\n```", SyntaxError{Offset: 4, Line: 2, Col: 1, Char: "`", Expected: "end of input", Reason: ReasonTrailingData}},
		{"prose after value", "{\"a\": 1}\n\nHope this helps!", SyntaxError{Offset: 10, Line: 3, Col: 1, Char: "H", Expected: "end of input", Reason: ReasonTrailingData}},
		{"second scalar", `1 2`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "2", Expected: "end of input", Reason: ReasonTrailingData}},

		{"NaN", `[NaN]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "N", Expected: "value", Reason: ReasonLiteral}},
		{"nan lower case", `[nan]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "n", Expected: "value", Reason: ReasonLiteral}},
		{"Infinity", `{"x": Infinity}`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "I", Expected: "value", Reason: ReasonLiteral}},
		{"minus Infinity", `[-Infinity]`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "I", Expected: "digit", Reason: ReasonNumber}},
		{"Python True", `{"ok": True}`, SyntaxError{Offset: 7, Line: 1, Col: 8, Char: "T", Expected: "value", Reason: ReasonLiteral}},
		{"Python None", `[None]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "N", Expected: "value", Reason: ReasonLiteral}},
		{"undefined", `[undefined]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "u", Expected: "value", Reason: ReasonLiteral}},
		{"literal with suffix", `[truex]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "t", Expected: "value", Reason: ReasonLiteral}},
		{"misspelt literal", `[nul]`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: "]", Expected: "literal null", Reason: ReasonLiteral}},
		{"unquoted string value", `{"a": yes}`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "y", Expected: "value", Reason: ReasonLiteral}},

		{"leading zero", `[01]`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "1", Expected: "'.', 'e' or end of number", Reason: ReasonNumber}},
		{"negative leading zero", `-012`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "1", Expected: "'.', 'e' or end of number", Reason: ReasonNumber}},
		{"double zero", `00`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "0", Expected: "'.', 'e' or end of number", Reason: ReasonNumber}},
		{"plus sign", `[+1]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "+", Expected: "value", Reason: ReasonNumber}},
		{"leading decimal point", `[.5]`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: ".", Expected: "value", Reason: ReasonNumber}},
		{"trailing decimal point", `[1.]`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "]", Expected: "digit", Reason: ReasonNumber}},
		{"decimal point before exponent", `[1.e5]`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "e", Expected: "digit", Reason: ReasonNumber}},
		{"empty exponent", `[1e]`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "]", Expected: "digit", Reason: ReasonNumber}},
		{"signed empty exponent", `[1e+]`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: "]", Expected: "digit", Reason: ReasonNumber}},
		{"lone minus", `[-]`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "]", Expected: "digit", Reason: ReasonNumber}},
		{"hex number", `[0x1F]`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "x", Expected: "',' or ']'", Reason: ReasonMissingComma}},
		{"second decimal point", `[1.2.3]`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: ".", Expected: "',' or ']'", Reason: ReasonUnexpected}},

		{"missing comma between items", `[1 2]`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "2", Expected: "',' or ']'", Reason: ReasonMissingComma}},
		{"missing comma between members", "{\"a\": 1\n \"b\": 2}", SyntaxError{Offset: 9, Line: 2, Col: 2, Char: `"`, Expected: "',' or '}'", Reason: ReasonMissingComma}},
		{"missing colon", `{"key" "value"}`, SyntaxError{Offset: 7, Line: 1, Col: 8, Char: `"`, Expected: "':'", Reason: ReasonMissingColon}},
		{"equals instead of colon", `{"key" = 1}`, SyntaxError{Offset: 7, Line: 1, Col: 8, Char: "=", Expected: "':'", Reason: ReasonUnexpected}},
		{"mismatched bracket", `[1}`, SyntaxError{Offset: 2, Line: 1, Col: 3, Char: "}", Expected: "',' or ']'", Reason: ReasonUnexpected}},
		{"mismatched brace", `{"a": 1]`, SyntaxError{Offset: 7, Line: 1, Col: 8, Char: "]", Expected: "',' or '}'", Reason: ReasonUnexpected}},
		{"array separator between objects", `[{"a": 1}], {"b": 2}]`, SyntaxError{Offset: 10, Line: 1, Col: 11, Char: ",", Expected: "end of input", Reason: ReasonTrailingData}},
		{"lone closing bracket", `]`, SyntaxError{Offset: 0, Line: 1, Col: 1, Char: "]", Expected: "value", Reason: ReasonUnexpected}},

		{"too deep arrays", deep, SyntaxError{Offset: MaxDepth, Line: 1, Col: MaxDepth + 1, Char: "[", Expected: expMaxDepth, Reason: ReasonDepth}},
		{"too deep objects", deepObj, SyntaxError{Offset: 5 * MaxDepth, Line: 1, Col: 5*MaxDepth + 1, Char: "{", Expected: expMaxDepth, Reason: ReasonDepth}},

		// Columns count runes, lines count "\n" only.
		{"column counts runes", `{"äöü": x}`, SyntaxError{Offset: 11, Line: 1, Col: 9, Char: "x", Expected: "value", Reason: ReasonLiteral}},
		{"CRLF lines", "{\r\n\"a\": 1,\r\n}", SyntaxError{Offset: 9, Line: 2, Col: 7, Char: ",", Expected: "'}'", Reason: ReasonTrailingComma}},

		// Truncation: the input ends inside a value.
		{"empty input", ``, SyntaxError{Offset: 0, Line: 1, Col: 1, Char: "EOF", Expected: "value", Truncated: true, Reason: ReasonEmpty}},
		{"whitespace only", " \n\t", SyntaxError{Offset: 3, Line: 2, Col: 2, Char: "EOF", Expected: "value", Truncated: true, Reason: ReasonEmpty}},
		{"open brace", `{`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "EOF", Expected: "string (object key)", Truncated: true, Reason: ReasonTruncated, Unclosed: "}"}},
		{"after key", `{"a"`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: "EOF", Expected: "':'", Truncated: true, Reason: ReasonTruncated, Unclosed: "}"}},
		{"after colon", `{"a": `, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "EOF", Expected: "value", Truncated: true, Reason: ReasonTruncated, Unclosed: "}"}},
		{"after member", `{"a": 1`, SyntaxError{Offset: 7, Line: 1, Col: 8, Char: "EOF", Expected: "',' or '}'", Truncated: true, Reason: ReasonTruncated, Unclosed: "}"}},
		{"after comma", `{"a": [1,`, SyntaxError{Offset: 9, Line: 1, Col: 10, Char: "EOF", Expected: "value", Truncated: true, Reason: ReasonTruncated, Unclosed: "]}"}},
		{"inside string", `{"q": [{"text": "What is`, SyntaxError{Offset: 24, Line: 1, Col: 25, Char: "EOF", Expected: `'"'`, Truncated: true, Reason: ReasonTruncated, Unclosed: `"}]}`}},
		{"inside key", `{"qu`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: "EOF", Expected: `'"'`, Truncated: true, Reason: ReasonTruncated, Unclosed: `"}`}},
		{"inside escape", `["ab\`, SyntaxError{Offset: 5, Line: 1, Col: 6, Char: "EOF", Expected: `'"'`, Truncated: true, Reason: ReasonTruncated, Unclosed: `"]`}},
		{"inside unicode escape", `["\u00`, SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "EOF", Expected: "hex digit", Truncated: true, Reason: ReasonTruncated, Unclosed: `"]`}},
		{"inside literal", `[tr`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "EOF", Expected: "literal true", Truncated: true, Reason: ReasonTruncated, Unclosed: "]"}},
		{"inside number", `[1.`, SyntaxError{Offset: 3, Line: 1, Col: 4, Char: "EOF", Expected: "digit", Truncated: true, Reason: ReasonTruncated, Unclosed: "]"}},
		{"inside exponent", `[1e-`, SyntaxError{Offset: 4, Line: 1, Col: 5, Char: "EOF", Expected: "digit", Truncated: true, Reason: ReasonTruncated, Unclosed: "]"}},
		{"after minus", `-`, SyntaxError{Offset: 1, Line: 1, Col: 2, Char: "EOF", Expected: "digit", Truncated: true, Reason: ReasonTruncated}},
		{"inside multi-byte character", "[\"caf\xc3", SyntaxError{Offset: 6, Line: 1, Col: 7, Char: "EOF", Expected: `'"'`, Truncated: true, Reason: ReasonTruncated, Unclosed: `"]`}},
		{"after item", "[1,\n 2\n", SyntaxError{Offset: 7, Line: 3, Col: 1, Char: "EOF", Expected: "',' or ']'", Truncated: true, Reason: ReasonTruncated, Unclosed: "]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, %v; want *SyntaxError", abbrev(tt.in), v, err)
			}
			if diff := cmp.Diff(&tt.want, se, ignoreMsg); diff != "" {
				t.Errorf("Parse(%q) error mismatch (-want +got):\n%s", abbrev(tt.in), diff)
			}
			if se.Msg == "" || strings.Contains(se.Msg, "\n") {
				t.Errorf("Parse(%q): Msg = %q, want one non-empty line", abbrev(tt.in), se.Msg)
			}
			if json.Valid([]byte(tt.in)) && se.Reason != ReasonDuplicateKey && se.Reason != ReasonUTF8 {
				t.Errorf("Parse(%q) rejects what encoding/json accepts", abbrev(tt.in))
			}
		})
	}
}

// largeObjectWithDuplicate builds an object with n members k000…, whose
// last member repeats key k007, to exercise the map path of duplicate
// detection. Each member `"kNNN":1,` is 9 bytes, so for n < 1000 the
// repeat starts at byte 1 + 9n.
func largeObjectWithDuplicate(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		b.WriteString(`"k`)
		b.WriteString(pad3(i))
		b.WriteString(`":1,`)
	}
	b.WriteString(`"k007":2}`)
	return b.String()
}

func pad3(i int) string {
	s := "00" + itoa(i)
	return s[len(s)-3:]
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func abbrev(s string) string {
	if len(s) > 60 {
		return s[:40] + "…" + s[len(s)-15:]
	}
	return s
}

func TestSyntaxErrorError(t *testing.T) {
	_, err := Parse([]byte("{\n  \"a\": 1,\n}"))
	const want = "line 2, column 9: trailing comma before '}'"
	if err == nil || err.Error() != want {
		t.Errorf("Parse error = %v, want %q", err, want)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // canonical encoding
	}{
		{"empty object", `{}`, `{}`},
		{"empty array", ` [ ] `, `[]`},
		{"scalars", `[true,false,null]`, `[true,false,null]`},
		{"surrounding whitespace", " \t\r\n{\"a\" : 1 }\n\n", `{"a":1}`},
		{"top-level string", `"x"`, `"x"`},
		{"top-level number", `-0.5e-3`, `-0.5e-3`},
		{"number literal kept", `[1.370,1e400,-0,0.0,1E+2,1e-7,123456789012345678901234567890]`, `[1.370,1e400,-0,0.0,1E+2,1e-7,123456789012345678901234567890]`},
		{"key order kept", `{"z":1,"a":2,"m":3}`, `{"z":1,"a":2,"m":3}`},
		{"escapes decoded and re-encoded", `["\"\\\/\b\f\n\r\t\u0041\u00e9"]`, `["\"\\/\b\f\n\r\tAé"]`},
		{"html stays raw", `["<b>&amp;</b>"]`, `["<b>&amp;</b>"]`},
		{"non-ASCII raw", `["Grüße, мир, 世界 😀"]`, `["Grüße, мир, 世界 😀"]`},
		{"surrogate pair", `["\ud83d\ude00"]`, `["😀"]`},
		{"lone high surrogate", `["\ud800"]`, `["�"]`},
		{"lone low surrogate", `["\udc00x"]`, `["�x"]`},
		{"high surrogate then non-surrogate escape", `["\ud800\u0041"]`, `["�A"]`},
		{"reversed surrogates", `["\udc00\ud800"]`, `["��"]`},
		{"escaped NUL", `["a\u0000b"]`, `["a\u0000b"]`},
		{"line separators", "[\"\u2028\u2029\"]", `["\u2028\u2029"]`},
		{"DEL and U+FFFD raw", "[\"\x7f\uFFFD\"]", "[\"\x7f\uFFFD\"]"},
		{"BOM inside string", "[\"\uFEFF\"]", "[\"\uFEFF\"]"},
		{"empty key", `{"":1}`, `{"":1}`},
		{"keys differing in case", `{"a":1,"A":2}`, `{"a":1,"A":2}`},
		{"same key in sibling objects", `[{"id":1},{"id":2}]`, `[{"id":1},{"id":2}]`},
		{"same key at different depths", `{"a":{"a":{"a":1}}}`, `{"a":{"a":{"a":1}}}`},
		{"deepest arrays", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)},
		{"deepest objects", strings.Repeat(`{"a":`, MaxDepth-1) + "{}" + strings.Repeat("}", MaxDepth-1), strings.Repeat(`{"a":`, MaxDepth-1) + "{}" + strings.Repeat("}", MaxDepth-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q) = %v", abbrev(tt.in), err)
			}
			if got := string(Marshal(v)); got != tt.want {
				t.Errorf("Marshal(Parse(%q)) = %q, want %q", abbrev(tt.in), abbrev(got), abbrev(tt.want))
			}
			if !json.Valid([]byte(tt.in)) {
				t.Errorf("Parse(%q) accepts what encoding/json rejects", abbrev(tt.in))
			}
		})
	}
}

// TestParseDecodesLikeEncodingJSON checks string decoding, lone surrogates
// included, against encoding/json.
func TestParseDecodesLikeEncodingJSON(t *testing.T) {
	tests := []string{
		`"plain"`,
		`"\ud800"`,
		`"\ud800\ud800"`,
		`"\ud800\udc00"`,
		`"\udbff\udfff"`,
		`"\udc00\udc00"`,
		`"\ud800x"`,
		`"\ud800\n"`,
		`"\ud800\u0000"`,
		`"a\u00e9\u20ac\ud834\udd1e"`,
		`"\/\\\""`,
	}
	for _, in := range tests {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", in, err)
		}
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%q) = %v", in, err)
		}
		if v.Str != want {
			t.Errorf("Parse(%q).Str = %q, want %q", in, v.Str, want)
		}
	}
}

func TestParseOffsets(t *testing.T) {
	in := "{\"a\": [1, \"x\\n\"],\n \"b\": {\"c\": null}, \"d\": true}"
	v, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	type loc struct {
		Pointer   string
		Offset    int
		KeyOffset int
	}
	var got []loc
	var walk func(p string, v *Value, keyOff int)
	walk = func(p string, v *Value, keyOff int) {
		got = append(got, loc{p, v.Offset, keyOff})
		for i, it := range v.Items {
			walk(p+"/"+itoa(i), it, -1)
		}
		for _, m := range v.Members {
			walk(p+"/"+m.Key, m.Value, m.KeyOffset)
		}
	}
	walk("", v, -1)
	want := []loc{
		{"", 0, -1},
		{"/a", 6, 1},
		{"/a/0", 7, -1},
		{"/a/1", 10, -1},
		{"/b", 24, 19},
		{"/b/c", 30, 25},
		{"/d", 42, 37},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets mismatch (-want +got):\n%s", diff)
	}
	for _, l := range got {
		if l.KeyOffset >= 0 && in[l.KeyOffset] != '"' {
			t.Errorf("KeyOffset of %s = %d, which is %q, not '\"'", l.Pointer, l.KeyOffset, in[l.KeyOffset])
		}
	}
}

// TestParseCopiesInput makes sure the tree does not alias the caller's
// buffer, which the gateway reuses for the next response.
func TestParseCopiesInput(t *testing.T) {
	buf := []byte(`{"key":"value","n":12}`)
	v, err := Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'X'
	}
	if got := string(Marshal(v)); got != `{"key":"value","n":12}` {
		t.Errorf("after overwriting the input, Marshal = %s", got)
	}
}

// TestParseSlicesAreIndependent checks that appending to one parsed slice
// never overwrites a neighbour carved from the same slab.
func TestParseSlicesAreIndependent(t *testing.T) {
	v, err := Parse([]byte(`[[1,2],[3,4],{"a":1},{"b":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	first := v.Items[0]
	first.Items = append(first.Items, Int(99))
	obj := v.Items[2]
	obj.Members = append(obj.Members, Member{Key: "z", KeyOffset: -1, Value: Null()})
	if got, want := string(Marshal(v)), `[[1,2,99],[3,4],{"a":1,"z":null},{"b":2}]`; got != want {
		t.Errorf("Marshal after appends = %s, want %s", got, want)
	}
}

func TestReasonString(t *testing.T) {
	seen := map[string]Reason{}
	for r := ReasonUnexpected; r <= ReasonDepth; r++ {
		name := r.String()
		if name == "" || strings.HasPrefix(name, "reason(") {
			t.Errorf("Reason(%d).String() = %q, want a name", r, name)
		}
		if prev, ok := seen[name]; ok {
			t.Errorf("Reason(%d) and Reason(%d) share the name %q", prev, r, name)
		}
		seen[name] = r
	}
	if got := Reason(200).String(); got != "reason(200)" {
		t.Errorf("Reason(200).String() = %q", got)
	}
}

// TestLongEscapedStrings checks strings long enough to be decoded into a
// buffer of their own: the same decoding as short ones, escapes at either
// end, surrogate pairs, and a long string cut off before its quote.
func TestLongEscapedStrings(t *testing.T) {
	long := strings.Repeat("question \\\"one\\\" \\u00e9\\ud83d\\ude00\\n", 100)
	tests := []struct {
		name string
		in   string
	}{
		{"escapes throughout", `"` + long + `"`},
		{"escape first", `"\n` + long + `"`},
		{"escape last", `"` + strings.Repeat("x", 2000) + `\t"`},
		{"inside an envelope", `{"model":"m","response":"` + long + `","done":true}`},
	}
	for _, tt := range tests {
		v, err := Parse([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: Parse: %v", tt.name, err)
		}
		var want any
		if err := json.Unmarshal([]byte(tt.in), &want); err != nil {
			t.Fatal(err)
		}
		if got := v.Interface(); !cmp.Equal(got, want) {
			t.Errorf("%s: Parse decodes differently from encoding/json", tt.name)
		}
	}
	_, err := Parse([]byte(`{"response":"` + long))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Reason != ReasonTruncated {
		t.Errorf("a long string cut off: error %v, want a truncation", err)
	}
}
