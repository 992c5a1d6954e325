package validators

import (
	"encoding/json"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/strictjson"
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
	f.Fuzz(func(t *testing.T, rule, expected, doc string) {
		check := map[string]any{"code": "FUZZ", "rule": rule, "path": "/total"}
		if expected != "" {
			check["expected"] = expected
		}
		each := map[string]any{"code": "EACH", "for_each": "/items", "rule": rule}
		raw, _ := json.Marshal(map[string]any{"name": "f", "version": "1", "checks": []any{check, each}})
		c, err := contracts.Load(fstest.MapFS{"f/contract.json": {Data: raw}}, "f")
		if err != nil {
			return
		}
		v, err := New(c, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		d, err := strictjson.ParseString(doc)
		if err != nil {
			return
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
	})
}
