package contracts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/contracts/celenv"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// evalCheckExpr compiles src as a check's rule is compiled (folding,
// constant lists, prepared phrases) and evaluates it with self bound to
// self; tracked picks the program with the runtime cost limit.
func evalCheckExpr(t *testing.T, src string, self any, tracked bool) any {
	t.Helper()
	var errs []error
	prg, untracked, _, _, _ := compileExpr(celenv.Env, 0, "rule", src, nil, nil, func(int, string) *strictjson.Value { return nil }, "t", &errs)
	if len(errs) > 0 {
		t.Fatalf("compile %q: %v", src, errs)
	}
	if !tracked {
		prg = untracked
	}
	out, _, err := prg.Eval(map[string]any{"self": self, "root": self, "index": 0, "params": map[string]string{}})
	if err != nil {
		return "error: " + err.Error()
	}
	return out.Value()
}

func TestCheckFunctions(t *testing.T) {
	forbidden := `['all of the above', 'none of the above', 'keine der genannten', 'все перечисленные']`
	tests := []struct {
		src  string
		self any
		want any
	}{
		{`self.containsPhrase(` + forbidden + `)`, "All of the ABOVE!", true},
		{`self.containsPhrase(` + forbidden + `)`, "  (all)  of -- the above.", true},
		{`self.containsPhrase(` + forbidden + `)`, "Keine der GENANNTEN", true},
		{`self.containsPhrase(` + forbidden + `)`, "Все перечисленные", true},
		{`self.containsPhrase(` + forbidden + `)`, "It is one of the above", false},
		{`self.containsPhrase(` + forbidden + `)`, "ball of the above", false},
		{`self.containsPhrase(` + forbidden + `)`, "all of theabove", false},
		{`self.containsPhrase(` + forbidden + `)`, "all of the", false},
		{`self.containsPhrase(` + forbidden + `)`, "", false},
		{`self.containsPhrase(['both'])`, "Both A and B", true},
		{`self.containsPhrase([])`, "anything", false},
		{`self.words()`, "All of the ABOVE! (Straße, ÉCOLE) İx 42nd—ё", "[all of the above straße école ix 42nd ё]"},
		{`self.words()`, " -- ", "[]"},
		{`self.containsPhrase(` + forbidden + `)`, []any{"Paris", 3.0, "None of the above."}, true},
		{`self.containsPhrase(` + forbidden + `)`, []any{"Paris", 3.0, "London"}, false},
		{`self.containsPhrase(self.map(x, string(x)))`, []any{"a b", "b"}, true},
		// A list that is not constant is prepared on every call.
		{`self.containsPhrase([self.substring(0, 3) + ' of the above'])`, "all of the above", true},
		{`self.containsPhrase(self.split(',').filter(p, p != ''))`, "x,none of the above", true},
		{`self.uniqueText()`, []any{"Paris", "London"}, true},
		{`self.uniqueText()`, []any{"Paris", " paris "}, false},
		{`self.uniqueText()`, []any{"Straße", "STRASSE"}, false},
		{`self.uniqueText()`, []any{"STRASSE", "Straße"}, false},
		{`self.uniqueText()`, []any{"a", 1.0, "b", 1}, false},
		{`self.uniqueText()`, []any{"a", 1.0, "b", 2}, true},
		{`self.uniqueText()`, []any{}, true},
		{`self.uniqueText()`, longList(40, ""), true},
		{`self.uniqueText()`, append(longList(40, ""), " V7 "), false},
		{`self.unique()`, longList(40, ""), true},
		{`self.unique()`, append(longList(40, ""), "v7"), false},
		{`self.unique()`, []any{1.0, 2.0, 1}, false},
		{`self.unique()`, []any{"a", "A"}, true},
		{`self.codeBlocks()`, "no code here", "[]"},
		{`self.codeBlocks().map(b, [b.lang, b.lines, b.closed, b.inline])`, "Run:\n```python\n\nx = 1\nprint(x)\n\n```\nand ```y``` too\n```\nz", "[[python, [x = 1, print(x)], true, false] [, [y], true, true] [, [z], false, false]]"},
		{`self.codeBlocks()[0].code`, "```go\na := 1\nb := 2```", "a := 1\nb := 2"},
		{`self.unfencedText()`, "a\n```go\nx\n```\nb ```c``` d\ne", "a\n\n\n\n\ne"},
		{`self.unfencedText()`, "one line", "one line"},
		{`self.numberCodeLines()`, "Run:\n```python\n\nx = 1\n3) y = 2\n7:\n\n```\nx = 1", "Run:\n```python\n\n1: x = 1\n2: y = 2\n3:\n\n```\nx = 1"},
		{`self.numberCodeLines()`, "```js\n1: let x;\n2: x = 1;\n```", "```js\n1: let x;\n2: x = 1;\n```"},
		{`self.numberCodeLines()`, "```js\nlet x;", "```js\n1: let x;"},
		{`self.numberCodeLines()`, []any{"plain", 1.0, "```py\nx = 1\n```"}, "[plain 1 ```py\n1: x = 1\n```]"},
		{`self.numberCodeLines() == self`, []any{"plain", "```py\n1: x = 1\n```"}, true},
		// Constant lists are made once and read as any list.
		{`['Reproduction', 'Application', 'Analysis'][self]`, 1, "Application"},
		{`self in ['a', 'b'] && ['a', 'b'] + [self] == ['a', 'b', self]`, "b", true},
		{`[1, 2, 3].map(x, x * 2)`, 0, nil},
	}
	for _, tt := range tests {
		for _, tracked := range []bool{true, false} {
			got := evalCheckExpr(t, tt.src, tt.self, tracked)
			if tt.want == nil {
				if s, ok := got.(string); ok && strings.HasPrefix(s, "error") {
					t.Errorf("%s with self=%v (tracked %v) = %v", tt.src, tt.self, tracked, got)
				}
				continue
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s with self=%v (tracked %v) = %v, want %v", tt.src, tt.self, tracked, got, tt.want)
			}
		}
	}
}

// longList is n distinct strings v0, v1, … with suffix.
func longList(n int, suffix string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("v%d%s", i, suffix)
	}
	return out
}
