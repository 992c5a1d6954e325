package validators

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// schemaValidator builds a schema-only validator.
func schemaValidator(t *testing.T, schema string) *Validator {
	t.Helper()
	c, err := contracts.FromSchema([]byte(schema))
	if err != nil {
		t.Fatalf("FromSchema(%s): %v", schema, err)
	}
	v, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// brief is the part of a violation these tests compare.
type brief struct {
	Code, Path, Pointer string
	Expected, Actual    any
	Fixable             bool
	Fix                 string
}

func briefs(r Report) []brief {
	out := []brief{}
	for _, v := range r.Violations {
		b := brief{Code: v.Code, Path: v.Path, Pointer: v.Pointer, Fixable: v.Fixable}
		// Round-trip expected/actual through JSON so the table can use
		// plain literals.
		e, _ := json.Marshal(v.Expected)
		a, _ := json.Marshal(v.Actual)
		_ = json.Unmarshal(e, &b.Expected)
		_ = json.Unmarshal(a, &b.Actual)
		if v.Fix != nil {
			b.Fix = v.Fix.Op + " " + v.Fix.Path + " " + string(v.Fix.Value)
		}
		out = append(out, b)
	}
	return out
}

func TestSchemaCodes(t *testing.T) {
	tests := []struct {
		name, schema, doc string
		want              []brief
	}{
		{"required", `{"type":"object","properties":{"meta":{"type":"object","required":["title","created"]}}}`, `{"meta":{}}`,
			[]brief{{Code: "SCHEMA_REQUIRED", Path: "meta.title", Pointer: "/meta/title", Expected: "present", Actual: "missing"},
				{Code: "SCHEMA_REQUIRED", Path: "meta.created", Pointer: "/meta/created", Expected: "present", Actual: "missing"}}},
		{"type", `{"properties":{"a":{"type":"array"}}}`, `{"a":{}}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "a", Pointer: "/a", Expected: "array", Actual: "object"}}},
		{"number where a string is wanted", `{"type":"array","items":{"type":"string"}}`, `[1, 2.50, true]`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "[0]", Pointer: "/0", Expected: "string", Actual: "number", Fixable: true, Fix: `replace /0 "1"`},
				{Code: "SCHEMA_TYPE", Path: "[1]", Pointer: "/1", Expected: "string", Actual: "number", Fixable: true, Fix: `replace /1 "2.50"`},
				{Code: "SCHEMA_TYPE", Path: "[2]", Pointer: "/2", Expected: "string", Actual: "boolean", Fixable: true, Fix: `replace /2 "true"`}}},
		{"thousands separator is no number", `{"properties":{"n":{"type":"number"}}}`, `{"n":"12,111"}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "n", Pointer: "/n", Expected: "number", Actual: "string"}}},
		{"enum value with the same characters", `{"properties":{"a":{"enum":["1","2","x"]},"b":{"enum":[1,2]}}}`, `{"a":2,"b":"1"}`,
			[]brief{{Code: "SCHEMA_ENUM", Path: "a", Pointer: "/a", Expected: []any{"1", "2", "x"}, Actual: 2.0, Fixable: true, Fix: `replace /a "2"`},
				{Code: "SCHEMA_ENUM", Path: "b", Pointer: "/b", Expected: []any{1.0, 2.0}, Actual: "1", Fixable: true, Fix: `replace /b 1`}}},
		{"enum value ignoring case", `{"properties":{"a":{"enum":["Low","High"]},"c":{"const":"YES"}}}`, `{"a":"low","c":"yes"}`,
			[]brief{{Code: "SCHEMA_ENUM", Path: "a", Pointer: "/a", Expected: []any{"Low", "High"}, Actual: "low", Fixable: true, Fix: `replace /a "Low"`},
				{Code: "SCHEMA_CONST", Path: "c", Pointer: "/c", Expected: "YES", Actual: "yes", Fixable: true, Fix: `replace /c "YES"`}}},
		{"enum value matching two ignoring case", `{"properties":{"a":{"enum":["low","LOW","high"]}}}`, `{"a":"Low"}`,
			[]brief{{Code: "SCHEMA_ENUM", Path: "a", Pointer: "/a", Expected: []any{"low", "LOW", "high"}, Actual: "Low"}}},
		{"enum never matched by part or accent", `{"properties":{"a":{"enum":["café","medium"]}}}`, `{"a":"cafe"}`,
			[]brief{{Code: "SCHEMA_ENUM", Path: "a", Pointer: "/a", Expected: []any{"café", "medium"}, Actual: "cafe"}}},
		{"enum never matched by a prefix", `{"properties":{"a":{"enum":["medium"]}}}`, `{"a":"med"}`,
			[]brief{{Code: "SCHEMA_ENUM", Path: "a", Pointer: "/a", Expected: []any{"medium"}, Actual: "med"}}},
		{"type coercible integer", `{"properties":{"n":{"type":"integer"}}}`, `{"n":"42"}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "n", Pointer: "/n", Expected: "integer", Actual: "string", Fixable: true, Fix: "replace /n 42"}}},
		{"type coercible number keeps its text", `{"properties":{"n":{"type":"number"}}}`, `{"n":"1.370"}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "n", Pointer: "/n", Expected: "number", Actual: "string", Fixable: true, Fix: "replace /n 1.370"}}},
		{"type coercible boolean", `{"properties":{"b":{"type":"boolean"}}}`, `{"b":"true"}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "b", Pointer: "/b", Expected: "boolean", Actual: "string", Fixable: true, Fix: "replace /b true"}}},
		{"type not coercible", `{"properties":{"n":{"type":"integer"}}}`, `{"n":"2 apples"}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "n", Pointer: "/n", Expected: "integer", Actual: "string"}}},
		{"enum", `{"properties":{"i":{"enum":["low","normal","high"]}}}`, `{"i":"urgent"}`,
			[]brief{{Code: "SCHEMA_ENUM", Path: "i", Pointer: "/i", Expected: []any{"low", "normal", "high"}, Actual: "urgent"}}},
		{"const", `{"properties":{"v":{"const":"1.0"}}}`, `{"v":"2.0"}`,
			[]brief{{Code: "SCHEMA_CONST", Path: "v", Pointer: "/v", Expected: "1.0", Actual: "2.0"}}},
		{"minimum", `{"properties":{"s":{"minimum":0}}}`, `{"s":-1}`,
			[]brief{{Code: "SCHEMA_RANGE", Path: "s", Pointer: "/s", Expected: ">= 0", Actual: float64(-1)}}},
		{"maximum", `{"properties":{"s":{"maximum":1000}}}`, `{"s":1200}`,
			[]brief{{Code: "SCHEMA_RANGE", Path: "s", Pointer: "/s", Expected: "<= 1000", Actual: float64(1200)}}},
		{"multipleOf", `{"properties":{"s":{"multipleOf":5}}}`, `{"s":7}`,
			[]brief{{Code: "SCHEMA_RANGE", Path: "s", Pointer: "/s", Expected: "multiple of 5", Actual: float64(7)}}},
		{"minLength", `{"properties":{"r":{"minLength":10}}}`, `{"r":"short"}`,
			[]brief{{Code: "SCHEMA_LENGTH", Path: "r", Pointer: "/r", Expected: ">= 10", Actual: float64(5)}}},
		{"maxItems", `{"properties":{"m":{"maxItems":2}}}`, `{"m":[1,2,3]}`,
			[]brief{{Code: "SCHEMA_LENGTH", Path: "m", Pointer: "/m", Expected: "<= 2", Actual: float64(3)}}},
		{"minProperties", `{"minProperties":1}`, `{}`,
			[]brief{{Code: "SCHEMA_LENGTH", Path: "", Pointer: "", Expected: ">= 1", Actual: float64(0)}}},
		{"pattern", `{"properties":{"t":{"pattern":"^\\d\\d:\\d\\d$"}}}`, `{"t":"2pm"}`,
			[]brief{{Code: "SCHEMA_PATTERN", Path: "t", Pointer: "/t", Expected: `^\d\d:\d\d$`, Actual: "2pm"}}},
		{"format", `{"properties":{"d":{"format":"date"}}}`, `{"d":"14.03.2025"}`,
			[]brief{{Code: "SCHEMA_FORMAT", Path: "d", Pointer: "/d", Expected: "date", Actual: "14.03.2025"}}},
		{"additional", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":2}`,
			[]brief{{Code: "SCHEMA_ADDITIONAL", Path: "b", Pointer: "/b", Expected: "absent", Actual: "present"}}},
		{"unevaluated", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"zz":2}`,
			[]brief{{Code: "SCHEMA_ADDITIONAL", Path: "zz", Pointer: "/zz", Expected: "absent", Actual: "present"}}},
		{"unique", `{"uniqueItems":true}`, `[1,2,1]`,
			[]brief{{Code: "SCHEMA_UNIQUE", Path: "", Pointer: "", Expected: "unique items", Actual: []any{float64(0), float64(2)}}}},
		{"oneOf picks the discriminated branch", `{"items":{"oneOf":[
			{"type":"object","properties":{"type":{"const":"task"},"title":{"type":"string"}},"required":["type","title"]},
			{"type":"object","properties":{"type":{"const":"idea"},"title":{"type":"string"}},"required":["type","title"]}]}}`,
			`[{"type":"task"}]`,
			[]brief{{Code: "SCHEMA_REQUIRED", Path: "[0].title", Pointer: "/0/title", Expected: "present", Actual: "missing"}}},
		{"oneOf without a branch", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, `{}`,
			[]brief{{Code: "SCHEMA_COMPOSITION", Path: "", Pointer: "", Expected: "exactly one of the alternatives", Actual: "2 alternatives failed"}}},
		{"not", `{"properties":{"a":{"not":{"type":"string"}}}}`, `{"a":"x"}`,
			[]brief{{Code: "SCHEMA_COMPOSITION", Path: "a", Pointer: "/a", Expected: "match", Actual: "mismatch"}}},
		{"if-then", `{"if":{"properties":{"kind":{"const":"event"}}},"then":{"required":["start"]}}`, `{"kind":"event"}`,
			[]brief{{Code: "SCHEMA_REQUIRED", Path: "start", Pointer: "/start", Expected: "present", Actual: "missing"}}},
		{"contains counts matching items", `{"properties":{"a":{"contains":{"type":"string"}}}}`, `{"a":[1]}`,
			[]brief{{Code: "SCHEMA_OTHER", Path: "a", Pointer: "/a", Expected: ">= 1", Actual: float64(0)}}},
		{"minContains counts matching items", `{"properties":{"a":{"contains":{"type":"string"},"minContains":2}}}`, `{"a":["x",1,2]}`,
			[]brief{{Code: "SCHEMA_OTHER", Path: "a", Pointer: "/a", Expected: ">= 2", Actual: float64(1)}}},
		{"maxContains counts matching items", `{"properties":{"a":{"contains":{"type":"string"},"maxContains":1}}}`, `{"a":["x","y",1]}`,
			[]brief{{Code: "SCHEMA_OTHER", Path: "a", Pointer: "/a", Expected: "<= 1", Actual: float64(2)}}},
		{"dependentRequired", `{"dependentRequired":{"card":["billing","cvc"]}}`, `{"card":"4111"}`,
			[]brief{{Code: "SCHEMA_REQUIRED", Path: "billing", Pointer: "/billing", Expected: "present", Actual: "missing"},
				{Code: "SCHEMA_REQUIRED", Path: "cvc", Pointer: "/cvc", Expected: "present", Actual: "missing"}}},
		{"dependencies (draft 7)", `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"o":{"dependencies":{"card":["billing"]}}}}`, `{"o":{"card":"4111"}}`,
			[]brief{{Code: "SCHEMA_REQUIRED", Path: "o.billing", Pointer: "/o/billing", Expected: "present", Actual: "missing"}}},
		{"propertyNames at the property", `{"properties":{"m":{"propertyNames":{"pattern":"^[a-z]+$"}}}}`, `{"m":{"ok":1,"Bad":2}}`,
			[]brief{{Code: "SCHEMA_PATTERN", Path: "m.Bad", Pointer: "/m/Bad", Expected: "^[a-z]+$", Actual: "Bad"}}},
		{"propertyNames maxLength", `{"propertyNames":{"maxLength":3}}`, `{"long":1}`,
			[]brief{{Code: "SCHEMA_LENGTH", Path: "long", Pointer: "/long", Expected: "<= 3", Actual: float64(4)}}},
		{"oneOf matching two alternatives", `{"properties":{"n":{"oneOf":[{"type":"number"},{"type":"integer"}]}}}`, `{"n":3}`,
			[]brief{{Code: "SCHEMA_COMPOSITION", Path: "n", Pointer: "/n", Expected: "exactly one of the alternatives", Actual: []any{float64(0), float64(1)}}}},
		{"keys with slash and tilde", `{"properties":{"a/b~c":{"type":"string"}}}`, `{"a/b~c":1}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "a/b~c", Pointer: "/a~1b~0c", Expected: "string", Actual: "number", Fixable: true, Fix: `replace /a~1b~0c "1"`}}},
		{"ordered by document position", `{"properties":{"x":{"type":"string"},"y":{"type":"string"}}}`, `{"y":1,"x":2}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "y", Pointer: "/y", Expected: "string", Actual: "number", Fixable: true, Fix: `replace /y "1"`},
				{Code: "SCHEMA_TYPE", Path: "x", Pointer: "/x", Expected: "string", Actual: "number", Fixable: true, Fix: `replace /x "2"`}}},
		{"valid", `{"type":"object"}`, `{"a":1}`, []brief{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := schemaValidator(t, tt.schema)
			res := v.Validate(tt.doc, Params{})
			if diff := cmp.Diff(tt.want, briefs(res.Report)); diff != "" {
				t.Errorf("Validate(%s) violations (-want +got):\n%s", tt.doc, diff)
			}
			for _, viol := range res.Report.Violations {
				if viol.Class != ClassSchema || viol.Severity != SeverityError || viol.Hint == "" {
					t.Errorf("violation %+v: want class SCHEMA, severity error and a hint", viol)
				}
			}
			if got := res.Report.Valid; got != (len(tt.want) == 0) {
				t.Errorf("Valid = %v with %d violations", got, len(tt.want))
			}
		})
	}
}

func TestReportShape(t *testing.T) {
	v := schemaValidator(t, `{"type":"object","required":["a"]}`)
	res := v.Validate("```json\n{}\n```", Params{})
	b, err := json.Marshal(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["repair_type"] != "SCHEMA" || m["valid"] != false {
		t.Errorf("report = %s", b)
	}
	viol := m["violations"].([]any)[0].(map[string]any)
	for _, key := range []string{"class", "code", "severity", "path", "pointer", "expected", "actual", "hint", "fixable"} {
		if _, ok := viol[key]; !ok {
			t.Errorf("violation lacks %q: %s", key, b)
		}
	}
	valid := v.Validate(`{"a":1}`, Params{})
	b, _ = json.Marshal(valid.Report)
	if string(b) != `{"contract":"`+v.Contract.ID()+`","valid":true,"repair_type":null,"violations":[]}` {
		t.Errorf("valid report = %s", b)
	}
}

func TestSchemaHints(t *testing.T) {
	tests := []struct {
		name, schema, doc string
		want              []string
	}{
		{"propertyNames names the property", `{"propertyNames":{"pattern":"^[a-z]+$"}}`, `{"Bad":1}`,
			[]string{`Rename the property Bad so that its name matches the pattern "^[a-z]+$".`}},
		{"dependentRequired names the trigger", `{"dependentRequired":{"card":["billing"]}}`, `{"card":"4111"}`,
			[]string{"Add the required property billing (required when card is present)."}},
		{"oneOf matching two alternatives", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `3`,
			[]string{"Change the document so that it matches exactly one of the alternatives the schema allows (it matches alternatives 0 and 1)."}},
		{"propertyNames false", `{"properties":{"m":{"propertyNames":false}}}`, `{"m":{"x":1}}`,
			[]string{"Remove the property m.x: the schema does not allow it."}},
		{"percent in a pattern", `{"properties":{"p":{"pattern":"^[0-9]+%$"}}}`, `{"p":"50"}`,
			[]string{`Change p to match the pattern "^[0-9]+%$".`}},
		{"percent in enum values", `{"properties":{"e":{"enum":["50%","100%"]}}}`, `{"e":"75%"}`,
			[]string{`Set e to one of the allowed values ["50%","100%"].`}},
		{"minContains", `{"contains":{"type":"string"},"minContains":2}`, `["x",1]`,
			[]string{"Give the document at least 2 items that match its contains schema (it has 1)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := schemaValidator(t, tt.schema).Validate(tt.doc, Params{})
			got := []string{}
			for _, v := range res.Report.Violations {
				got = append(got, v.Hint)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%s) hints (-want +got):\n%s", tt.doc, diff)
			}
		})
	}
}

// TestSchemaDeterministic: keywords the schema library evaluates in map
// order (propertyNames, dependentRequired, patternProperties) still give
// byte-identical reports, run after run.
func TestSchemaDeterministic(t *testing.T) {
	v := schemaValidator(t, `{"type":"object","propertyNames":{"pattern":"^[a-z]+$"},
		"dependentRequired":{"a":["x"],"b":["y"],"c":["z"],"d":["w"]},
		"patternProperties":{"^q":{"type":"integer"},"^qq":{"type":"boolean"}}}`)
	doc := `{"a":1,"b":2,"c":3,"d":4,"Foo":1,"BAR":2,"Baz":3,"qq":"s"}`
	first := reportJSON(t, v.Validate(doc, Params{}).Report)
	for range 50 {
		if got := reportJSON(t, v.Validate(doc, Params{}).Report); !bytes.Equal(got, first) {
			t.Fatalf("Validate(%s) differs between runs:\n%s\n%s", doc, first, got)
		}
	}
}

func TestShapeUnwrappedPointer(t *testing.T) {
	c := &contracts.Contract{Name: "wrapped", Version: "1", Shape: contracts.Shape{Expect: "array", Unwrap: []string{"a/b~c"}}}
	v, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := v.Validate(`{"a/b~c":[1]}`, Params{}).Report
	want := []brief{{Code: "SHAPE_UNWRAPPED", Path: "a/b~c", Pointer: "/a~1b~0c", Expected: "array", Actual: "object with a/b~c", Fixable: true}}
	if diff := cmp.Diff(want, briefs(r)); diff != "" {
		t.Errorf("Validate violations (-want +got):\n%s", diff)
	}
}

// TestShapeUnwrapThenWrap checks the shape rules' order: a wrapper holding one
// object where an array is expected is unwrapped first, then the lone
// object is wrapped, and the document validates.
func TestShapeUnwrapThenWrap(t *testing.T) {
	v, err := builtinWithoutPacks("link-plan")
	if err != nil {
		t.Fatal(err)
	}
	const link = `{"anchor_text":"JSON Schema","query":"JSON Schema spec","section":"Why","ref_id":"ref-1"}`
	tests := []struct {
		text string
		want []brief
	}{
		{`{"link_plan":` + link + `}`, []brief{
			{Code: "SHAPE_UNWRAPPED", Path: "link_plan", Pointer: "/link_plan", Expected: "array", Actual: "object with link_plan", Fixable: true},
			{Code: "SHAPE_WRAPPED", Expected: "array", Actual: "object", Fixable: true},
		}},
		{`{"data":` + link + `}`, []brief{
			{Code: "SHAPE_UNWRAPPED", Path: "data", Pointer: "/data", Expected: "array", Actual: "object with data", Fixable: true},
			{Code: "SHAPE_WRAPPED", Expected: "array", Actual: "object", Fixable: true},
		}},
		{`{"data":[` + link + `]}`, []brief{
			{Code: "SHAPE_UNWRAPPED", Path: "data", Pointer: "/data", Expected: "array", Actual: "object with data", Fixable: true},
		}},
	}
	for _, tt := range tests {
		res := v.Validate(tt.text, Params{})
		if diff := cmp.Diff(tt.want, briefs(res.Report)); diff != "" || !res.Report.Valid {
			t.Errorf("Validate(%q) valid = %v, violations (-want +got):\n%s", tt.text, res.Report.Valid, diff)
		}
		if got := string(strictjson.Marshal(res.Doc)); got != "["+link+"]" {
			t.Errorf("Validate(%q).Doc = %s, want [%s]", tt.text, got, link)
		}
	}
}
