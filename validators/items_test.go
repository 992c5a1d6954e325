package validators

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// itemsContract is an item contract whose checks are of every kind: one
// over the item array that reads only self (LINE_AMOUNT), one over the
// item array that reads root (LINE_OF: "line 1 of 3"), and one over the
// whole document (TOTAL).
var itemsContract = fstest.MapFS{
	"inv/contract.json": {Data: []byte(`{"name":"inv","version":"1","schema":"s.json","item_array":"/items","checks":[` +
		lineAmount + `,` +
		`{"code":"LINE_OF","for_each":"/items","rule":"self.of == root.items.size()","path":"/of","message":"of is the number of lines"},` +
		total + `]}`)},
	"inv/s.json": {Data: []byte(`{"type":"object","required":["items","total"],"properties":{
 "items":{"type":"array","items":{"type":"object","required":["qty","price","amount","of"],"properties":{"qty":{"type":"number"},"price":{"type":"number"},"amount":{"type":"number"},"of":{"type":"integer"}}}},
 "total":{"type":"number"}}}`)},
}

// TestItemsChecks: the validator of items in flight runs the checks over
// the item array that read only self, index and params, and leaves those
// that read root or other items to the whole document, which Validate
// still judges with every check.
func TestItemsChecks(t *testing.T) {
	c, err := contracts.Load(itemsContract, "inv")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	v, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The first three lines of five, as progressive release sees them
	// when the third closes: no total yet, and LINE_OF false on each.
	prefix := `{"items":[{"qty":1,"price":2,"amount":2,"of":5},{"qty":2,"price":2,"amount":4,"of":5},{"qty":3,"price":2,"amount":7,"of":5}]}`
	whole := `{"items":[{"qty":1,"price":2,"amount":2,"of":2},{"qty":3,"price":2,"amount":7,"of":2}],"total":8}`
	tests := []struct {
		name  string
		items bool
		doc   string
		want  []string
	}{
		{"item in flight: the local check only", true, prefix, []string{"SCHEMA_REQUIRED /total", "LINE_AMOUNT /items/2/amount"}},
		{"whole document: every check", false, whole, []string{"LINE_AMOUNT /items/1/amount", "TOTAL /total"}},
		{"prefix judged whole: the root check too", false, prefix,
			[]string{"SCHEMA_REQUIRED /total", "LINE_OF /items/0/of", "LINE_OF /items/1/of", "LINE_AMOUNT /items/2/amount", "LINE_OF /items/2/of"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := strictjson.ParseString(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			val := v
			if tt.items {
				val = v.Items()
			}
			_, r := val.CheckDoc(doc, nil)
			got := []string{}
			for _, x := range r.Violations {
				got = append(got, x.Code+" "+x.Pointer)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckDoc(%s) codes (-want +got):\n%s", tt.doc, diff)
			}
		})
	}
	if n := len(v.Contract.Checks); n != 3 {
		t.Errorf("the contract keeps %d checks, want 3", n)
	}
}
