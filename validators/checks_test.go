package validators

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/strictjson"
)

const invoiceSchema = `{"type":"object","properties":{
 "items":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"number"},"price":{"type":"number"},"amount":{"type":"number"}}}},
 "total":{"type":"number"},"tags":{"type":"array"},"n":{"type":"number"}}}`

// checksValidator loads a contract with the given checks over the invoice
// schema and builds its validator.
func checksValidator(t testing.TB, checks ...string) *Validator {
	t.Helper()
	fsys := fstest.MapFS{
		"inv/contract.json": {Data: []byte(`{"name":"inv","version":"1","schema":"s.json","params":{"currency":"EUR"},"checks":[` + strings.Join(checks, ",") + `]}`)},
		"inv/s.json":        {Data: []byte(invoiceSchema)},
	}
	c, err := contracts.Load(fsys, "inv")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	v, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	lineAmount = `{"code":"LINE_AMOUNT","for_each":"/items","rule":"self.amount == self.qty * self.price","path":"/amount","expected":"self.qty * self.price","message":"amount is qty × price"}`
	total      = `{"code":"TOTAL","rule":"self.total == self.items.map(i, i.amount).sum()","path":"/total","expected":"self.items.map(i, i.amount).sum()","message":"total is the sum"}`
)

func TestChecks(t *testing.T) {
	tests := []struct {
		name   string
		checks []string
		doc    string
		want   []brief
	}{
		{"right document", []string{lineAmount, total},
			`{"items":[{"qty":2,"price":1.5,"amount":3}],"total":3.0}`, []brief{}},
		{"numbers compare as numbers", []string{`{"code":"EQ","rule":"self.n == 1 && self.n == 1.0 && self.n < 2 && self.n in [1, 2]"}`},
			`{"n":1.0}`, []brief{}},
		{"wrong line amount and total, in document order", []string{total, lineAmount},
			`{"items":[{"qty":2,"price":1.5,"amount":4},{"qty":1,"price":2,"amount":2}],"total":5}`,
			[]brief{
				{Code: "LINE_AMOUNT", Path: "items[0].amount", Pointer: "/items/0/amount", Expected: 3.0, Actual: 4.0, Fixable: true, Fix: "replace /items/0/amount 3"},
				{Code: "TOTAL", Path: "total", Pointer: "/total", Expected: 6.0, Actual: 5.0, Fixable: true, Fix: "replace /total 6"},
			}},
		{"missing member is not reported", []string{lineAmount, total},
			`{"items":[{"qty":2,"amount":4}]}`, []brief{}},
		{"wrong type the schema reports is not reported twice", []string{lineAmount},
			`{"items":[{"qty":"2","price":1,"amount":4}]}`,
			[]brief{{Code: "SCHEMA_TYPE", Path: "items[0].qty", Pointer: "/items/0/qty", Expected: "number", Actual: "string", Fixable: true, Fix: "replace /items/0/qty 2"}}},
		{"type error the schema does not explain is CHECK_ERROR", []string{`{"code":"MIXED","rule":"self.n * 2 == 4"}`},
			`{"n":2}`,
			[]brief{{Code: "CHECK_ERROR", Expected: "MIXED", Actual: "no such overload"}}},
		{"division by zero is CHECK_ERROR", []string{`{"code":"DIV","rule":"1 / (index - index) == 1"}`},
			`{}`,
			[]brief{{Code: "CHECK_ERROR", Expected: "DIV", Actual: "division by zero"}}},
		{"index and root", []string{`{"code":"SEQ","for_each":"/items","rule":"index == 0 || self.qty > root.items[index - 1].qty","path":"/qty","severity":"warning"}`},
			`{"items":[{"qty":1},{"qty":3},{"qty":2}]}`,
			[]brief{{Code: "SEQ", Path: "items[2].qty", Pointer: "/items/2/qty", Actual: 2.0}}},
		{"params", []string{`{"code":"CUR","rule":"params.currency == 'EUR'"}`}, `{}`, []brief{}},
		{"unique and sets", []string{`{"code":"UNIQ","rule":"self.tags.unique()","path":"/tags"}`, `{"code":"SUB","rule":"sets.contains(['a','b','c'], self.tags)"}`},
			`{"tags":["a","b","a"]}`,
			[]brief{{Code: "UNIQ", Path: "tags", Pointer: "/tags", Actual: []any{"a", "b", "a"}}}},
		{"expected that already holds gives no fix", []string{`{"code":"ODD","rule":"false","path":"/n","expected":"self.n"}`},
			`{"n":2}`, []brief{{Code: "ODD", Path: "n", Pointer: "/n", Expected: 2.0, Actual: 2.0}}},
		{"words", []string{`{"code":"WORDS","for_each":"/tags","rule":"!(self.words().join(' ') in ['all of the above', 'все перечисленные'])"}`},
			`{"tags":["All of the ABOVE!","Все перечисленные.","All of it"]}`,
			[]brief{{Code: "WORDS", Path: "tags[0]", Pointer: "/tags/0", Actual: "All of the ABOVE!"}, {Code: "WORDS", Path: "tags[1]", Pointer: "/tags/1", Actual: "Все перечисленные."}}},
		{"optional none gives no fix", []string{`{"code":"OPT","rule":"self.n == 3","path":"/n","expected":"self.n > 5 ? optional.of(3) : optional.none()"}`},
			`{"n":2}`, []brief{{Code: "OPT", Path: "n", Pointer: "/n", Actual: 2.0}}},
		{"the documented extensions", []string{`{"code":"EXT","rule":"[3, 1].sort() == [1, 3] && [1, 1.0].distinct().size() == 1 && lists.range(3).size() == 3 && 'abc'.indexOf('b') == 1 && math.round(1.5) == 2.0 && '%d'.format([1]) == '1' && regex.replace('a1', '[0-9]', '') == 'a' && sets.equivalent([1, 2], [2, 1]) && [1, [2]].flatten().size() == 2 && [1, 2, 3].slice(1, 2) == [2] && 'a b'.split(' ').join('-') == 'a-b'"}`},
			`{}`, []brief{}},
		{"whole numbers small and large, fractions and exponents", []string{`{"code":"NUM","rule":"self.tags == [0, 7, 999, 1000, 1000, 12.5, -3, 0.5] && self.tags[1] + 1.0 == 8.0 && self.n == 1"}`},
			`{"tags":[0,7,999,1000,1e3,12.5,-3,5e-1],"n":1.0}`, []brief{}},
		{"phrases and distinct texts", []string{`{"code":"CATCH_ALL","for_each":"/tags","rule":"!self.containsPhrase(['all of the above', 'none of these'])"}`, `{"code":"DISTINCT","rule":"self.tags.uniqueText()","path":"/tags"}`},
			`{"tags":["Paris","None of these!"," paris"]}`,
			[]brief{{Code: "DISTINCT", Path: "tags", Pointer: "/tags", Actual: []any{"Paris", "None of these!", " paris"}}, {Code: "CATCH_ALL", Path: "tags[1]", Pointer: "/tags/1", Actual: "None of these!"}}},
		{"strings extension", []string{`{"code":"STR","for_each":"/tags","rule":"self.startsWith('Q') && self.substring(1) == string(index + 1)"}`},
			`{"tags":["Q1","Q3"]}`, []brief{{Code: "STR", Path: "tags[1]", Pointer: "/tags/1", Actual: "Q3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := checksValidator(t, tt.checks...)
			doc, err := strictjson.ParseString(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			p, err := v.Params(nil)
			if err != nil {
				t.Fatal(err)
			}
			_, r := v.CheckDoc(doc, p)
			if diff := cmp.Diff(tt.want, briefs(r)); diff != "" {
				t.Errorf("CheckDoc(%s) (-want +got):\n%s", tt.doc, diff)
			}
		})
	}
}

func TestCheckCostLimit(t *testing.T) {
	// A rule within the load-time estimate (one pass over a list of
	// CheckAssumedListSize) stops at the runtime limit on a document
	// much longer than that.
	v := checksValidator(t, `{"code":"BIG","rule":"self.tags.filter(a, a > 0.0).size() > 0"}`)
	if v.Contract.Checks[0].Fast == nil {
		t.Fatal("the rule is not compiled into Go; the test wants a compiled rule to stop at the limit too")
	}
	var b strings.Builder
	b.WriteString(`{"tags":[`)
	for i := range 500_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('1')
	}
	b.WriteString(`]}`)
	doc, err := strictjson.ParseString(b.String())
	if err != nil {
		t.Fatal(err)
	}
	_, r := v.CheckDoc(doc, Params{})
	if got := r.Codes(); len(got) != 1 || got[0] != "CHECK_ERROR" || !strings.Contains(r.Violations[0].Actual.(string), "cost limit") {
		t.Errorf("CheckDoc = %+v, want one CHECK_ERROR over the cost limit", r.Violations)
	}
	small, _ := strictjson.ParseString(`{"tags":[1,2,3]}`)
	if _, r := v.CheckDoc(small, Params{}); len(r.Violations) != 0 {
		t.Errorf("CheckDoc(small) = %v, want none", r.Codes())
	}
}
