package validators

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
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
		{"other keyword", `{"properties":{"a":{"contains":{"type":"string"}}}}`, `{"a":[1]}`,
			[]brief{{Code: "SCHEMA_OTHER", Path: "a", Pointer: "/a", Expected: "contains", Actual: "no items match contains schema"}}},
		{"keys with slash and tilde", `{"properties":{"a/b~c":{"type":"string"}}}`, `{"a/b~c":1}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "a/b~c", Pointer: "/a~1b~0c", Expected: "string", Actual: "number"}}},
		{"ordered by document position", `{"properties":{"x":{"type":"string"},"y":{"type":"string"}}}`, `{"y":1,"x":2}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "y", Pointer: "/y", Expected: "string", Actual: "number"},
				{Code: "SCHEMA_TYPE", Path: "x", Pointer: "/x", Expected: "string", Actual: "number"}}},
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
