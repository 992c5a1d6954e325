package validators

import "testing"

// TestSchemaLengthHints checks the hint of each length and count keyword,
// which the six share one function to write: the bound, what is counted
// and the member's path in the hint's words.
func TestSchemaLengthHints(t *testing.T) {
	tests := []struct {
		name, schema, doc, want string
	}{
		{"minLength", `{"properties":{"r":{"minLength":10}}}`, `{"r":"short"}`, "Make r at least 10 characters long."},
		{"maxLength", `{"properties":{"r":{"maxLength":2}}}`, `{"r":"long"}`, "Shorten r to at most 2 characters."},
		{"minItems", `{"properties":{"a":{"minItems":3}}}`, `{"a":[1]}`, "Give a at least 3 items."},
		{"maxItems", `{"properties":{"a":{"maxItems":1}}}`, `{"a":[1,2]}`, "Reduce a to at most 1 items."},
		{"minProperties", `{"properties":{"o":{"minProperties":2}}}`, `{"o":{}}`, "Give o at least 2 properties."},
		{"maxProperties", `{"properties":{"o":{"maxProperties":1}}}`, `{"o":{"x":1,"y":2}}`, "Reduce o to at most 1 properties."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := schemaValidator(t, tt.schema).Validate(tt.doc, Params{})
			if len(res.Report.Violations) != 1 {
				t.Fatalf("Validate(%s) = %d violations, want 1", tt.doc, len(res.Report.Violations))
			}
			if got := res.Report.Violations[0].Hint; got != tt.want {
				t.Errorf("Validate(%s) hint = %q, want %q", tt.doc, got, tt.want)
			}
		})
	}
}
