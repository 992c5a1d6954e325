package validators

import (
	"encoding/json"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// FuzzChecks compiles arbitrary rule text and evaluates it on arbitrary
// documents: loading either succeeds or returns errors, evaluation never
// panics, and the same document gives the same report twice.
func FuzzChecks(f *testing.F) {
	f.Add("self.total == self.items.map(i, i.amount).sum()", "self.total", `{"items":[{"amount":1}],"total":2}`)
	f.Add("self.items.map(i, i.amount).unique()", "", `{"items":[{"amount":1},{"amount":1.0}]}`)
	f.Add("index < 2 && root.items.size() > index", "index", `{"items":[1,2,3]}`)
	f.Add("1 / 0 == 1", "self", `{}`)
	f.Add("self.a.b.c", "", `{"a":{"b":{"c":true}}}`)
	f.Add("(self.", "", `[`)
	f.Add("self.note.startsWith('a') && self.items.all(i, has(i.name) && i.name != '')", "self.note", `{"note":"ab","items":[{"name":"x"},{"amount":1}],"total":1}`)
	f.Add("self.note.size() > 0", "", `{"note":3,"items":[]}`)
	f.Fuzz(func(t *testing.T, rule, expected, doc string) {
		check := map[string]any{"code": "FUZZ", "rule": rule, "path": "/total"}
		if expected != "" {
			check["expected"] = expected
		}
		each := map[string]any{"code": "EACH", "for_each": "/items", "rule": rule}
		d, err := strictjson.ParseString(doc)
		if err != nil {
			return
		}
		// Without a schema every value is dynamic; with one, rules are
		// typed by it and read objects through their fields.
		for _, schema := range []string{"", fuzzSchema} {
			c, err := loadChecks([]any{check, each}, schema)
			if err != nil {
				continue
			}
			v, err := New(c, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			_, r1 := v.CheckDoc(d, Params{})
			_, r2 := v.CheckDoc(d, Params{})
			if !reflect.DeepEqual(r1, r2) {
				t.Fatalf("CheckDoc(%q) on %s gave two reports:\n%+v\n%+v", rule, doc, r1, r2)
			}
			for _, viol := range r1.Violations {
				if viol.Fix != nil && !json.Valid(viol.Fix.Value) {
					t.Fatalf("fix %s is not JSON", viol.Fix.Value)
				}
			}
		}
	})
}

// fuzzSchema types the fuzzed documents' total, note and items.
const fuzzSchema = `{"type":"object","properties":{"total":{"type":"number"},"note":{"type":"string"},
 "items":{"type":"array","items":{"type":"object","properties":{"amount":{"type":"number"},"name":{"type":"string"}}}}}}`

// loadChecks loads a contract of the checks given, with schema as its
// JSON Schema ("" for none), as contracts.Load reads it from a folder.
func loadChecks(checks []any, schema string) (*contracts.Contract, error) {
	contract := map[string]any{"name": "f", "version": "1", "checks": checks}
	fsys := fstest.MapFS{}
	if schema != "" {
		contract["schema"] = "s.json"
		fsys["f/s.json"] = &fstest.MapFile{Data: []byte(schema)}
	}
	raw, err := json.Marshal(contract)
	if err != nil {
		return nil, err
	}
	fsys["f/contract.json"] = &fstest.MapFile{Data: raw}
	return contracts.Load(fsys, "f")
}
