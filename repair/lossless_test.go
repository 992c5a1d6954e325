package repair

import (
	"strings"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// schemaOnly builds a validator for a bare JSON Schema.
func schemaOnly(t *testing.T, schema string) *validators.Validator {
	t.Helper()
	c, err := contracts.FromSchema([]byte(schema))
	if err != nil {
		t.Fatalf("FromSchema(%s): %v", schema, err)
	}
	v, err := validators.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLocalLossless runs rung 1 on the shapes of model output that used to
// come back valid but saying something else than the model wrote, and on
// the lossless repairs that were missing: want is the document local repair
// returns as valid, "" when it must refuse (not valid), and fixer a fixer
// its changes must hold.
func TestLocalLossless(t *testing.T) {
	code := "import { query } from './server';\nexport async function rows() {\n  const r = await query('SELECT 1');\n  return { r };\n}"
	codeJSON := string(strictjson.Marshal(strictjson.String(code)))
	const (
		codeSchema = `{"type":"object","properties":{"code":{"type":"string"}},"required":["code"],"additionalProperties":false}`
		strMap     = `{"type":"object","additionalProperties":{"type":"string"}}`
		numA       = `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`
		strA       = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`
		numOrStrA  = `{"type":"object","properties":{"a":{"type":["number","string"]}},"required":["a"],"additionalProperties":false}`
	)
	tests := []struct {
		name, schema, text string
		want               string
		fixer              string
	}{
		{"backtick string holding code", codeSchema, "{\"code\": `" + code + "`}", `{"code":` + codeJSON + `}`, "backtick_string"},
		{"code in a fenced block as the value", codeSchema, "{\"code\": ```js\n" + code + "\n```\n}", `{"code":` + codeJSON + `}`, "code_block"},
		{"unquoted numeric keys", strMap, "{5: \"b\",\n    2.17: \"e\",\n    null: \"n\"}", `{"5":"b","2.17":"e","null":"n"}`, "quote_key"},
		{"python triple-quoted string", codeSchema, `{"code": """print("Hi")"""}`, `{"code":"print(\"Hi\")"}`, "triple_quote"},
		{"triple-quoted string with raw newlines", codeSchema, "{\"code\": \"\"\"print(\"Hi\")\nprint(\"Bye\")\"\"\"}", `{"code":"print(\"Hi\")\nprint(\"Bye\")"}`, "triple_quote"},
		{"thousands separator where a number is wanted", numA, `{"a": 12,111}`, "", ""},
		{"thousands separator and fraction where a number is wanted", numA, `{"a": 12,111.123}`, "", ""},
		{"fraction where a number is wanted", numA, `{"a": 1/5}`, "", ""},
		{"number and unit where a number or a string would do", numOrStrA, `{"a": 1 cup butter}`, `{"a":"1 cup butter"}`, "quote_value"},
		{"two numbers where a number is wanted", numA, `{"a": 2 or 3}`, "", ""},
		{"two numbers where a string is wanted", strA, `{"a": 2 or 3}`, `{"a":"2 or 3"}`, "quote_value"},
		{"top-level True", `{"type":"boolean"}`, `True`, `true`, "literal"},
		{"top-level False", `{"type":"boolean"}`, "False\n", `false`, "literal"},
		{"numbers where strings are wanted", `{"type":"array","items":{"type":"string"}}`, `[1, 2, 3]`, `["1","2","3"]`, "coerce"},
		{"boolean where a string is wanted", strA, `{"a": true}`, `{"a":"true"}`, "coerce"},
		{"bare token equal to one enum value", `{"type":"object","properties":{"level":{"enum":["1","2","3"]}}}`, `{"level": 2}`, `{"level":"2"}`, "enum_token"},
		{"bare token equal to the const value", `{"type":"object","properties":{"v":{"const":"true"}}}`, `{"v": true}`, `{"v":"true"}`, "enum_token"},
		{"enum value differing in case", `{"type":"object","properties":{"answer":{"enum":["A","B","C","D"]}}}`, `{"answer": b}`, `{"answer":"B"}`, "enum_case"},
		{"enum value matching two in case", `{"type":"object","properties":{"s":{"enum":["on","ON","off"]}}}`, `{"s": "On"}`, "", ""},
		{"enum value that is only a prefix", `{"type":"object","properties":{"s":{"enum":["medium","high"]}}}`, `{"s": "med"}`, "", ""},
		{"digits no token can take", `{"type":"object"}`, `{"a": 2 5}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := schemaOnly(t, tt.schema)
			params, _ := v.Params(nil)
			res := Local(v, tt.text, params)
			got := ""
			if res.Report.Valid {
				got = string(strictjson.Marshal(res.Doc))
			}
			if got != tt.want {
				t.Fatalf("Local(%q) = %s (valid %v, codes %v), want %s", tt.text, got, res.Report.Valid, res.Report.Codes(), orRefused(tt.want))
			}
			if tt.fixer == "" {
				return
			}
			var fixers []string
			for _, c := range res.Changes {
				fixers = append(fixers, c.Fixer)
			}
			if !strings.Contains(" "+strings.Join(fixers, " ")+" ", " "+tt.fixer+" ") {
				t.Errorf("Local(%q) fixers = %v, want %s among them", tt.text, fixers, tt.fixer)
			}
		})
	}
}

func orRefused(s string) string {
	if s == "" {
		return "a refusal"
	}
	return s
}
