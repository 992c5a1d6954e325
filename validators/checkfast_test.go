package validators

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestFastRuleAgreesWithCELGo evaluates rules that reach the corners of
// cel-go's semantics both ways, compiled into Go and by cel-go, at the
// root and on every item, without a schema and typed by one, and wants
// the same value or the same error.
func TestFastRuleAgreesWithCELGo(t *testing.T) {
	tests := []struct {
		rule, doc string
	}{
		{"self.a.b.c", `{"a":{"b":{"c":true}}}`},
		{"self.a.b.c", `{"a":{"b":"s"}}`},
		{"self.a.missing == 1 || true", `{"a":{}}`},
		{"true && self.a.missing", `{"a":{}}`},
		{"has(self.a.b) && !has(self.a.c) && has(self.a.b.c)", `{"a":{"b":"s"}}`},
		{"has(self.m.x) && !has(self.m.y)", `{"m":{"x":1}}`},
		{"self.m['a'] == 1 && self.m['zz'] == 2", `{"m":{"a":1,"b":2}}`},
		{"cel.bind(n, self.missing, true) && cel.bind(m, self.items, m.exists(x, x == 2))", `{"items":[1,2]}`},
		{"cel.bind(n, 1 / 0, n == 1)", `{}`},
		{"self.items.all(x, x > 1)", `{"items":[2,"a",0]}`},
		{"self.items.all(x, x > 1)", `{"items":["a",2,3]}`},
		{"self.items.exists(x, x > 1)", `{"items":["a",0,3]}`},
		{"self.items.exists(x, x > 1)", `{"items":["a",0]}`},
		{"self.items.count(x, x > 1) == 1", `{"items":[1,"a",3]}`},
		{"self.items.count(x, x > 1) == 2", `{"items":[1,2,3]}`},
		{"self.items.map(i, i.amount).sum() == 3.0", `{"items":[{"amount":1},{"amount":2}]}`},
		{"self.items.map(i, i.amount).sum() == 3.0", `{"items":[{"amount":1},{"x":2}]}`},
		{"self.items.filter(i, i.amount > 1).size() == 1", `{"items":[{"amount":1},{"amount":2},{"name":"x"}]}`},
		{"self.items.filter(i, i > 1) == [2, 3]", `{"items":[1,2,3]}`},
		{"self.m.exists(k, k == 'b') && self.m.all(k, k != 'c')", `{"m":{"a":1,"b":2}}`},
		{"self.n < 1 || self.n >= 2.5 || self.n != self.n", `{"n":2}`},
		{"self.n < self.s", `{"n":2,"s":"x"}`},
		{"self.n + 1.0 == 3.0 && self.n - 1 < 2 && self.s + 'b' == 'ab' && self.l + [2] == [1, 2]", `{"n":2,"s":"a","l":[1]}`},
		{"math.greatest(1.0, self.a, 3) == self.a && math.abs(-self.a) == self.a && math.least([self.a, 2]) == 2", `{"a":4}`},
		{"math.greatest(self.items) == 3", `{"items":[1,3,2]}`},
		{"math.greatest(self.items) == 3", `{"items":[]}`},
		{"type(self.a) == string && type(self.items) == list && type(self.m) == map && type(self.n) == double && type(self.z) == null_type", `{"a":"x","items":[],"m":{},"n":1,"z":null}`},
		{"self.q.matches('^[a-z]+$') && self.q.contains('b') && self.q.startsWith('a') && self.q.endsWith('c')", `{"q":"abc"}`},
		{"self.q.contains('b')", `{"q":3}`},
		{"self.q.containsPhrase(['all of the above']) || self.q.containsPhrase(['both'])", `{"q":"Both A and B"}`},
		{"self.items.containsPhrase(['all of the above']) || !self.items.containsPhrase(['both'])", `{"items":["x","all of the ABOVE!"]}`},
		{"self.items.containsPhrase(['a'])", `{"items":3}`},
		{"self.items.uniqueText() && self.items.numberCodeLines() == self.items", `{"items":["a","b"]}`},
		{"self.items.uniqueText()", `{"items":[]}`},
		{"self.items.sum() > 0", `{"items":[1,"a"]}`},
		{"self.id == 'Q00' + string(index + 1) && string(index).startsWith('0' + '')", `{"id":"Q001","items":[{"id":"Q001"},{"id":"Q002"}]}`},
		{"optional.of(self.a).hasValue() && optional.of(self.a).value() == 1", `{"a":1}`},
		{"dyn(optional.of(self.m)).x == 1 || has(dyn(optional.none()).x)", `{"m":{"x":1}}`},
		{"!self.a", `{"a":"x"}`},
		{"self.a ? 1 == 1 : false", `{"a":"x"}`},
		{"size(self.a) == 2 && self.items.size() == 2 && self.m.size() == 1", `{"a":"ab","items":[1,2],"m":{"a":1}}`},
		{"size(self.n) == 1", `{"n":1}`},
		{"params.options == 'B' && params.missing == 'x'", `{}`},
		{"self.l + self.l + [self.n] == [1, 1, 2] && (self.l + self.l).size() == 2", `{"l":[1],"n":2}`},
		{"(self.l + self.missing).size() == 1", `{"l":[1]}`},
		{"(self.missing + self.l).size() == 1", `{"l":[1]}`},
		{"self.s < self.t && self.s <= 'b' && !(self.t > 'c') && self.l >= self.l", `{"s":"a","t":"b","l":[1]}`},
		{"self.missing < 1 || 1 < self.missing", `{}`},
		{"self.m.all(k, k != 'z') && self.m.map(k, k).size() == 2 && self.m.filter(k, k == 'a') == ['a']", `{"m":{"a":1,"b":2}}`},
		{"math.greatest(self.m) == 1 || math.greatest(self.missing) == 1", `{"m":{"a":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			d, err := strictjson.ParseString(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			compiled := 0
			for _, schema := range []string{"", fuzzSchema} {
				checks := []any{map[string]any{"code": "ROOT", "rule": tt.rule}, map[string]any{"code": "EACH", "for_each": "/items", "rule": tt.rule}}
				c, err := loadChecks(checks, schema)
				if err != nil {
					continue
				}
				for _, ch := range c.Checks {
					if ch.Fast != nil {
						compiled++
					}
				}
				compareFast(t, c.Checks, d, tt.rule)
			}
			if compiled == 0 {
				t.Errorf("rule %q: no check compiled into Go, want the comparison to run", tt.rule)
			}
		})
	}
}

// TestMCQCELRulesAreCompiled wants every rule of the mcq-cel contract
// compiled into Go, so that BenchmarkChecks measures the compiled rules,
// and both ways agreeing on the benchmark's documents and on documents
// that break the rules.
func TestMCQCELRulesAreCompiled(t *testing.T) {
	cs, err := contracts.LoadPath(filepath.Join("..", "examples", "contracts", "mcq-cel"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs[0].Checks {
		if c.Fast == nil {
			t.Errorf("check %s (%s): rule not compiled into Go", c.Code, c.ForEach)
		}
	}
	docs := []string{mcqgen.Doc(2 << 10), mcqgen.Doc(20 << 10)}
	broken := strings.NewReplacer(`"weight": 2`, `"weight": 7`, `"weight":2`, `"weight":7`,
		`"Q002"`, `"Q001"`, `"answer": 1`, `"answer": 9`, `"answer":1`, `"answer":9`).Replace(docs[0])
	docs = append(docs, broken, `{"questions":[{"weight":"x","options":3}],"meta":{}}`, `[]`, `{}`)
	for _, doc := range docs {
		d, err := strictjson.ParseString(doc)
		if err != nil {
			t.Fatal(err)
		}
		compareFast(t, cs[0].Checks, d, "mcq-cel")
	}
}
