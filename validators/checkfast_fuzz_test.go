package validators

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/contracts/celfast"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators/celdoc"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// FuzzFastRule compiles arbitrary rule text and evaluates it on
// arbitrary documents both ways, compiled into Go (celfast.Rule)
// and by cel-go (the program without cost tracking): wherever the rule
// compiles into Go, both give the same value or the same error, at the
// document's root and on every item of its arrays, without a schema
// and typed by one.
func FuzzFastRule(f *testing.F) {
	f.Add("self.total == self.items.map(i, i.amount).sum()", `{"items":[{"amount":1}],"total":2}`)
	f.Add("self.items.filter(i, i.amount > 1).size() == 1", `{"items":[{"amount":1},{"amount":2},{"name":"x"}]}`)
	f.Add("self.items.map(i, i.amount).unique()", `{"items":[{"amount":1},{"amount":1.0}]}`)
	f.Add("index < 2 && root.items.size() > index", `{"items":[1,2,3]}`)
	f.Add("1 / 0 == 1 || self.a", `{"a":false}`)
	f.Add("self.a.b.c", `{"a":{"b":{"c":true}}}`)
	f.Add("has(self.a.b) && !has(self.a.c) && has(self.a.b.c)", `{"a":{"b":"s"}}`)
	f.Add("self.note.startsWith('a' + string(index)) && self.items.all(i, has(i.name) && i.name != '')", `{"note":"a0","items":[{"name":"x"},{"amount":1}],"total":1}`)
	f.Add("self.note.size() > 0", `{"note":3,"items":[]}`)
	f.Add("cel.bind(n, self.missing, true) && cel.bind(m, self.items, m.exists(x, x == 2))", `{"items":[1,2]}`)
	f.Add("self.items.exists(x, x.y) || self.items.all(x, x.y)", `{"items":[{"y":1},{"y":false}]}`)
	f.Add("self.m['a'] == 1 && self.m.exists(k, k == 'b') && self.m.b == 2", `{"m":{"a":1,"b":2}}`)
	f.Add("self.items.count(x, x > 1) == 2 && type(self.items) == list", `{"items":[1,2,3]}`)
	f.Add("math.greatest(1.0, self.a, 3) == self.a && math.abs(-self.a) == self.a", `{"a":4}`)
	f.Add("self.q.matches('^[a-z]+$') && self.q.containsPhrase(['all of the above'])", `{"q":"abc"}`)
	f.Add("optional.of(self.a).hasValue() && [self.a, 2][0] == 1", `{"a":1}`)
	f.Add("(self.l + self.l + [self.a]).size() == 3 && self.s < self.l[0]", `{"l":["x"],"a":1,"s":"a"}`)
	f.Add("self.m.all(k, k != 'z') && self.m.map(k, k).size() == 2", `{"m":{"a":1,"b":2}}`)
	raw, err := os.ReadFile(filepath.Join("..", "examples", "contracts", "mcq-cel", "contract.json"))
	if err != nil {
		f.Fatal(err)
	}
	var mcq struct {
		Checks []contracts.Check `json:"checks"`
	}
	if err := json.Unmarshal(raw, &mcq); err != nil {
		f.Fatal(err)
	}
	small := mcqgen.Doc(1 << 10)
	for _, c := range mcq.Checks {
		f.Add(c.Rule, small)
	}
	mcqSchema, err := os.ReadFile(filepath.Join("..", "examples", "contracts", "mcq-cel", "schema.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rule, doc string) {
		d, err := strictjson.ParseString(doc)
		if err != nil {
			return
		}
		for _, schema := range []struct {
			text  string
			paths []string
		}{{"", []string{"", "/items", "/questions"}}, {fuzzSchema, []string{"", "/items"}}, {string(mcqSchema), []string{"", "/questions"}}} {
			var checks []any
			for _, p := range schema.paths {
				checks = append(checks, map[string]any{"code": "FUZZ", "rule": rule, "for_each": p})
			}
			c, err := loadChecks(checks, schema.text)
			if err != nil {
				continue
			}
			compareFast(t, c.Checks, d, rule)
		}
	})
}

// compareFast evaluates every check that has a celfast.Rule both ways on
// doc, as runChecks binds its variables, and fails on a difference.
func compareFast(t *testing.T, checks []contracts.Check, doc *strictjson.Value, rule string) {
	t.Helper()
	vals, _, _ := celdoc.New(doc)
	pv, _ := paramsVal(Params{"options": "B"})
	act := &checkActivation{root: vals.Root(), params: pv}
	if act.root == nil {
		act.root = vals.Slot(-1, doc)
	}
	act.vars = &celfast.Vars{Root: act.root, Params: act.params}
	for i := range checks {
		c := &checks[i]
		if c.Fast == nil || c.Untracked == nil {
			continue
		}
		both := func(where string) {
			act.vars.Self, act.vars.Index = act.self, act.index
			fast, ok := c.Fast.Eval(act.vars)
			if !ok {
				return
			}
			slow, _, _ := c.Untracked.Eval(act)
			if !sameResult(fast, slow) {
				t.Fatalf("rule %q at %q: compiled gives %v (%T), cel-go %v (%T)", rule, where, fast, fast, slow, slow)
			}
		}
		if c.ForEach == "" {
			act.self, act.index = act.root, types.Int(0)
			both("")
			continue
		}
		arr, err := doc.At(c.ForEach)
		if err != nil || arr.Kind != strictjson.KindArray {
			continue
		}
		l := vals.ListAt(act.root, c.ForEach, arr)
		for j := range arr.Items {
			act.self, act.index = l.At(j), types.Int(j)
			both(c.ForEach)
		}
	}
}

// sameResult reports whether two results of a rule are the same: equal
// values of one type (NaN is NaN here), or errors with one message.
func sameResult(a, b ref.Val) bool {
	ae, aErr := a.(*types.Err)
	be, bErr := b.(*types.Err)
	if aErr || bErr {
		return aErr && bErr && ae.Error() == be.Error()
	}
	if a.Type() != b.Type() {
		return false
	}
	if x, ok := a.(types.Double); ok {
		y := b.(types.Double)
		return x == y || math.IsNaN(float64(x)) && math.IsNaN(float64(y))
	}
	return a.Equal(b) == types.True
}
