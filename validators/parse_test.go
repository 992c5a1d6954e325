package validators

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestParseViolation(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Violation
	}{
		{"trailing comma", "{\n  \"a\": [1, 2],\n  \"b\": 3,\n}", Violation{
			Code: "JSON_SYNTAX", Path: "3:9", Expected: "'}'", Actual: ",",
			Hint: "Remove the trailing comma at line 3, column 9.", pos: 25,
		}},
		{"truncated", `{"questions": [{"question": "1. What`, Violation{
			Code: "JSON_TRUNCATED", Path: "1:37", Expected: `'"'`, Actual: "EOF",
			Hint: `The document ends inside a value: complete it and close every open bracket (still open, innermost first: "}]}).`, pos: 36,
		}},
		{"literal cut short", `{"ok": tru, "n": 1}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:11", Expected: "literal true", Actual: ",",
			Hint: "Write the literal true in full: it breaks off before line 1, column 11.", pos: 10,
		}},
		{"misspelt literal", `{"ok": Ture}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:8", Expected: "value", Actual: "T",
			Hint: "Replace the value at line 1, column 8 with true, false, null, a number or a double-quoted string.", pos: 7,
		}},
		{"empty", "  ", Violation{
			Code: "JSON_TRUNCATED", Path: "1:3", Expected: "value", Actual: "EOF",
			Hint: "The response holds no JSON: return the whole JSON document.", pos: 2,
		}},
		{"comment", "{\"a\": 1 /* one */}", Violation{
			Code: "JSON_SYNTAX", Path: "1:9", Expected: "',' or '}'", Actual: "/",
			Hint: "Remove the comment at line 1, column 9: JSON has no comments.", pos: 8,
		}},
		{"single quote", `{"a": 'x'}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:7", Expected: "value", Actual: "'",
			Hint: `Replace the quote ' at line 1, column 7 with a double quote ("): JSON strings and keys use double quotes only.`, pos: 6,
		}},
		{"unquoted key", `{a: 1}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:2", Expected: "string (object key)", Actual: "a",
			Hint: "Put the object key at line 1, column 2 in double quotes.", pos: 1,
		}},
		{"raw newline", "{\"q\": \"a\nb\"}", Violation{
			Code: "JSON_SYNTAX", Path: "1:9", Expected: `\n`, Actual: `\u000a`,
			Hint: `Replace the raw control character inside the string at line 1, column 9 with the escape \n.`, pos: 8,
		}},
		{"invalid escape", `{"p": "C:\Users"}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:10", Expected: `escape (\" \\ \/ \b \f \n \r \t \uXXXX)`, Actual: `\U`,
			Hint: `Fix the escape \U at line 1, column 10: only \" \\ \/ \b \f \n \r \t and \uXXXX are allowed; write a literal backslash as \\.`, pos: 9,
		}},
		{"bad unicode escape", `["\u00zz"]`, Violation{
			Code: "JSON_SYNTAX", Path: "1:7", Expected: "hex digit", Actual: "z",
			Hint: `Write the \u escape before line 1, column 7 with exactly four hex digits.`, pos: 6,
		}},
		{"duplicate key", "{\"id\": 1,\n \"id\": 2}", Violation{
			Code: "JSON_SYNTAX", Path: "2:2", Expected: "unique key", Actual: `"id"`,
			Hint: `Remove or rename the duplicate key "id" at line 2, column 2: keys must be unique within an object.`, pos: 11,
		}},
		{"invalid UTF-8", "[\"\xc3\x28\"]", Violation{
			Code: "JSON_SYNTAX", Path: "1:3", Expected: "UTF-8 character", Actual: `\xc3`,
			Hint: `Replace the invalid UTF-8 byte \xc3 at line 1, column 3 with valid UTF-8 text.`, pos: 2,
		}},
		{"byte order mark", "\uFEFF[]", Violation{
			Code: "JSON_SYNTAX", Path: "1:1", Expected: "value", Actual: `\ufeff`,
			Hint: "Remove the byte order mark at the start of the document.", pos: 0,
		}},
		{"trailing data", "{}\n```", Violation{
			Code: "JSON_SYNTAX", Path: "2:1", Expected: "end of input", Actual: "`",
			Hint: "Remove everything from line 2, column 1 on: the response must hold exactly one JSON value.", pos: 3,
		}},
		{"leading zero", `{"n": 007}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:8", Expected: "'.', 'e' or end of number", Actual: "0",
			Hint: "Fix the number at line 1, column 8: a number must not have leading zeros.", pos: 7,
		}},
		{"Python literal", `{"ok": None}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:8", Expected: "value", Actual: "N",
			Hint: "Replace the value at line 1, column 8 with true, false, null, a number or a double-quoted string.", pos: 7,
		}},
		{"missing comma", `[{"a": 1} {"b": 2}]`, Violation{
			Code: "JSON_SYNTAX", Path: "1:11", Expected: "',' or ']'", Actual: "{",
			Hint: "Insert a comma before line 1, column 11.", pos: 10,
		}},
		{"missing colon", `{"key" "value"}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:8", Expected: "':'", Actual: `"`,
			Hint: "Insert a colon (:) after the object key, before line 1, column 8.", pos: 7,
		}},
		{"unexpected", `[1}`, Violation{
			Code: "JSON_SYNTAX", Path: "1:3", Expected: "',' or ']'", Actual: "}",
			Hint: "Replace } at line 1, column 3 with ',' or ']'.", pos: 2,
		}},
		{"unexpected at value", `[1, :]`, Violation{
			Code: "JSON_SYNTAX", Path: "1:5", Expected: "value", Actual: ":",
			Hint: "Replace : at line 1, column 5 with a JSON value.", pos: 4,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := strictjson.Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tt.in)
			}
			want := tt.want
			want.Class, want.Severity = ClassParse, SeverityError
			got := ParseViolation(err)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(Violation{})); diff != "" {
				t.Errorf("ParseViolation(Parse(%q)) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseViolationDepth(t *testing.T) {
	in := make([]byte, strictjson.MaxDepth+1)
	for i := range in {
		in[i] = '['
	}
	_, err := strictjson.Parse(in)
	got := ParseViolation(err)
	if got.Code != "JSON_SYNTAX" || got.Hint != "Nest arrays and objects at most 10000 levels deep." {
		t.Errorf("ParseViolation(too deep) = %+v", got)
	}
}

// TestParseViolationWrapped accepts a SyntaxError wrapped with context, as
// callers do with %w.
func TestParseViolationWrapped(t *testing.T) {
	_, err := strictjson.Parse([]byte(`[1,]`))
	got := ParseViolation(fmt.Errorf("repair round 2: %w", err))
	if got.Code != "JSON_SYNTAX" || got.Path != "1:3" || got.Actual != "," {
		t.Errorf("ParseViolation(wrapped) = %+v", got)
	}
}

func TestParseViolationOtherError(t *testing.T) {
	got := ParseViolation(errors.New("boom"))
	want := Violation{
		Class: ClassParse, Code: "JSON_SYNTAX", Severity: SeverityError, Path: "1:1",
		Expected: "valid JSON", Actual: "boom", Hint: "Return strictly valid JSON (RFC 8259): boom.",
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Violation{})); diff != "" {
		t.Errorf("ParseViolation(other) mismatch (-want +got):\n%s", diff)
	}
}

// TestRawPath checks that a parse violation gives the offending
// character's position in the model's raw text beside the one in the
// extracted block.
func TestRawPath(t *testing.T) {
	v, err := builtinWithoutPacks("json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text    string
		path, wantRaw string
	}{
		{"bare", `{"a": 1,}`, "1:8", "1:8"},
		{"fenced after prose", "Here you go:\n\n```json\n{\n  \"a\": 1,\n}\n```", "2:9", "5:9"},
		{"think section before", "<think>\nplan\n</think>\n```json\n{\"ä\": 1 2}\n```", "1:9", "5:9"},
		{"block repeated in the think section", "<think>{\"a\": 1 2}</think>\n```json\n{\"a\": 1 2}\n```", "1:9", "3:9"},
		{"truncated", "```json\n{\"a\": [1,", "1:10", "2:10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := v.Validate(tt.text, Params{}).Report
			if len(r.Violations) != 1 {
				t.Fatalf("Validate(%q) = %v, want one violation", tt.text, r.Codes())
			}
			got := r.Violations[0]
			if got.Path != tt.path || got.RawPath != tt.wantRaw {
				t.Errorf("Validate(%q) path, raw_path = %q, %q; want %q, %q", tt.text, got.Path, got.RawPath, tt.path, tt.wantRaw)
			}
		})
	}
}
