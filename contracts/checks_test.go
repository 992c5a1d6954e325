package contracts

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"cel.dev/cel-go/cel"

	"github.com/contractgateway/gateway/contracts/celenv"
)

const invoiceSchema = `{"type":"object","properties":{
 "items":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"number"},"price":{"type":"number"},"amount":{"type":"number"}}}},
 "total":{"type":"number"},"note":{"type":"string"}}}`

// checkContract is a contract.json with the given checks array, one check
// per line from line 3 on, so that tests can name lines.
func checkContract(checks ...string) string {
	return "{\"name\":\"inv\",\"version\":\"1\",\"schema\":\"s.json\",\n\"checks\":[\n" + strings.Join(checks, ",\n") + "\n]}"
}

func TestLoadCheckErrorsAreLocated(t *testing.T) {
	tests := []struct {
		name, check, want string
	}{
		{"syntax error", `{"code":"A","rule":"self.total == "}`, "inv/contract.json: line 3, column 35: checks[0].rule: Syntax error"},
		{"unknown function", `{"code":"A","rule":"nosuch(self.total)"}`, "inv/contract.json: line 3, column 27: checks[0].rule: undeclared reference to 'nosuch'"},
		{"wrong types", `{"code":"A","rule":"1 + 'a' == 2"}`, "inv/contract.json: line 3, column 23: checks[0].rule: found no matching overload for '_+_'"},
		{"rule not a bool", `{"code":"A","rule":"index + 1"}`, "inv/contract.json: line 3, column 20: checks[0].rule: the rule is of type int, want bool"},
		{"for_each the schema cannot have", `{"code":"A","for_each":"/total","rule":"true"}`, "inv/contract.json: line 3, column 24: checks[0]: for_each \"/total\": the schema has no array there"},
		{"for_each not a pointer", `{"code":"A","for_each":"items","rule":"true"}`, "line 3, column 24: checks[0]: for_each \"items\": must be a JSON Pointer"},
		{"code not upper snake", `{"code":"lineAmount","rule":"true"}`, "line 3, column 9: checks[0]: code \"lineAmount\": want upper snake case"},
		{"bad severity", `{"code":"A","rule":"true","severity":"fatal"}`, "line 3, column 38: checks[0]: severity \"fatal\": want error or warning"},
		{"path not a pointer", `{"code":"A","rule":"true","path":"total"}`, "line 3, column 34: checks[0]: path \"total\": must be a JSON Pointer"},
		{"empty rule", `{"code":"A"}`, "line 3, column 1: checks[0]: rule: must be a CEL expression"},
		{"expected does not compile", `{"code":"A","rule":"true","expected":"self.("}`, "line 3, column 44: checks[0].expected: Syntax error"},
		{"cost above the limit", `{"code":"A","rule":"self.items.all(i, self.items.all(j, self.items.all(k, i.qty <= j.qty + k.qty)))"}`, "line 3, column 20: checks[0].rule: estimated cost"},
		{"unknown field", `{"code":"A","rule":"true","fix":"x"}`, "line 3, column 27: unknown field \"checks[0].fix\""},
		{"string member multiplied", `{"code":"A","rule":"self.note * 2 == 4"}`, "inv/contract.json: line 3, column 31: checks[0].rule: found no matching overload for '_*_' applied to '(string, int)'"},
		{"member the schema does not have", `{"code":"A","rule":"self.totl > 0"}`, "inv/contract.json: line 3, column 25: checks[0].rule: undefined field 'totl'"},
		{"item member the schema does not have", `{"code":"A","for_each":"/items","rule":"self.qyt > 0"}`, "checks[0].rule: undefined field 'qyt'"},
		{"escaped rule keeps its column", `{"code":"A","rule":"self.note == \"a\" && nosuch()"}`, "line 3, column 49: checks[0].rule: undeclared reference to 'nosuch'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"inv/contract.json": {Data: []byte(checkContract(tt.check))},
				"inv/s.json":        {Data: []byte(invoiceSchema)},
			}
			_, err := Load(fsys, "inv")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(%s) = %v, want an error with %q", tt.check, err, tt.want)
			}
		})
	}
}

func TestLoadReportsEveryCheckErrorAtOnce(t *testing.T) {
	fsys := fstest.MapFS{
		"inv/contract.json": {Data: []byte(checkContract(`{"code":"A","rule":"nosuch()"}`, `{"code":"b","rule":"true"}`, `{"code":"C","for_each":"/nope","rule":"true"}`))},
		"inv/s.json":        {Data: []byte(invoiceSchema)},
	}
	_, err := Load(fsys, "inv")
	for _, want := range []string{"line 3, column 27: checks[0].rule", "line 4, column 9: checks[1]: code", "line 5, column 24: checks[2]: for_each"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load = %v, want %q among the problems", err, want)
		}
	}
}

func TestLoadCompilesChecks(t *testing.T) {
	fsys := fstest.MapFS{
		"inv/contract.json": {Data: []byte(checkContract(
			`{"code":"LINE_AMOUNT","for_each":"/items","rule":"self.amount == self.qty * self.price","path":"/amount","expected":"self.qty * self.price"}`,
			`{"code":"TOTAL","rule":"self.total == self.items.map(i, i.amount).sum()","severity":"warning"}`,
			`{"code":"FIRST","for_each":"/items","rule":"index > 0 || self.qty == root.items[0].qty"}`,
			`{"code":"UNIQUE","rule":"self.items.map(i, i.price).unique()"}`))},
		"inv/s.json": {Data: []byte(invoiceSchema)},
	}
	c, err := Load(fsys, "inv")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code     string
		local    bool
		severity string
		expected bool
	}{
		{"LINE_AMOUNT", true, "error", true},
		{"TOTAL", false, "warning", false},
		{"FIRST", false, "error", false},
		{"UNIQUE", false, "error", false},
	}
	for i, tt := range tests {
		ch := c.Checks[i]
		if ch.Code != tt.code || ch.Local != tt.local || ch.Severity != tt.severity || (ch.ExpectedProgram != nil) != tt.expected || ch.Program == nil {
			t.Errorf("check %d = {%s local=%v %s expected=%v}, want %+v", i, ch.Code, ch.Local, ch.Severity, ch.ExpectedProgram != nil, tt)
		}
	}
}

// TestLoadTypesChecksFromTheSchema checks which parts of a schema give
// rules types at load: strings, objects with properties (recursive ones
// too) and arrays of them do; numbers, unions and objects open to other
// members stay dynamic.
func TestLoadTypesChecksFromTheSchema(t *testing.T) {
	const schema = `{"type":"object","properties":{
 "a":{"type":"string"},"b":{"type":["string","null"]},"n":{"type":"number"},
 "m":{"type":"object","additionalProperties":true,"properties":{"x":{"type":"string"}}},
 "k":{"type":"object","properties":{"not-an-ident":{"type":"string"}}},
 "l":{"type":"array","items":{"type":"object","properties":{"s":{"type":"string"}}}},
 "r":{"$ref":"#/$defs/r"}},
 "$defs":{"r":{"type":"object","properties":{"s":{"type":"string"},"r":{"$ref":"#/$defs/r"}}}}}`
	tests := []struct {
		rule string
		want string // "" for no error
	}{
		{`self.b * 2 == 2`, ""},
		{`self.n * 2.0 > 1.0 && self.n == 1`, ""},
		{`self.m.anything == 1 && self.m.x == 'y'`, ""},
		{`self.k['not-an-ident'] == 'y'`, ""},
		{`self.r.r.r.s.startsWith('x') && has(self.a)`, ""},
		{`self.l.all(e, e.s.size() > 0)`, ""},
		{`root.a == self.a`, ""},
		{`self.a * 2 == 2`, "found no matching overload for '_*_' applied to '(string, int)'"},
		{`self.r.r.t == 1`, "undefined field 't'"},
		{`self.l.all(e, e.t == 1)`, "undefined field 't'"},
		{`self.c == 1`, "undefined field 'c'"},
	}
	for _, tt := range tests {
		fsys := fstest.MapFS{
			"inv/contract.json": {Data: []byte(checkContract(`{"code":"A","rule":` + strconv.Quote(tt.rule) + `}`))},
			"inv/s.json":        {Data: []byte(schema)},
		}
		_, err := Load(fsys, "inv")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Load(%s) = %v, want no error", tt.rule, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Load(%s) = %v, want an error with %q", tt.rule, err, tt.want)
		}
	}
}

// TestPlainStringsAgreeWithCEL checks that the planning step that
// compares joined strings in place and makes string(n) once gives what
// CEL's own steps give, for strings, numbers outside the cached range,
// values that are not strings and missing members.
func TestPlainStringsAgreeWithCEL(t *testing.T) {
	tests := []struct {
		rule string
		self map[string]any
	}{
		{"self.s == 'Q00' + string(int(self.n))", map[string]any{"s": "Q007", "n": 7}},
		{"self.s == 'Q00' + string(int(self.n))", map[string]any{"s": "Q008", "n": 7}},
		{"self.s == 'Q00' + string(int(self.n))", map[string]any{"s": "Q00", "n": 7}},
		{"self.s == 'Q00' + string(int(self.n))", map[string]any{"s": "Q002000", "n": 2000}},
		{"self.s == 'Q' + string(int(self.n))", map[string]any{"s": "Q-3", "n": -3}},
		{"self.s == 'Q00' + string(int(self.n))", map[string]any{"n": 7}},
		{"self.s == 'Q00' + string(int(self.n))", map[string]any{"s": 7, "n": 7}},
		{"self.s == 'a' + self.t", map[string]any{"s": "a1", "t": 1}},
		{"self.s.startsWith(string(int(self.n)) + '. ')", map[string]any{"s": "3. Why?", "n": 3}},
		{"self.s.startsWith(string(int(self.n)) + '. ')", map[string]any{"s": "3.Why?", "n": 3}},
		{"self.s.startsWith(string(int(self.n)) + '. ')", map[string]any{"s": "", "n": 3}},
		{"self.s.startsWith(string(int(self.n)) + '. ')", map[string]any{"s": "13. Why?", "n": 3}},
		{"string(int(self.n)) == '5'", map[string]any{"n": 5}},
		{"string(int(self.n)) == '5'", map[string]any{"n": "x"}},
		{"self.s == string(self.s) + 'x'", map[string]any{"s": "a"}},
	}
	for _, tt := range tests {
		ast, iss := celenv.Env.Compile(strings.ReplaceAll(strings.ReplaceAll(tt.rule, "string(int(self.n))", "string(int(self.n))"), "self.t", "string(self.t)"))
		if iss != nil && iss.Err() != nil {
			ast, iss = celenv.Env.Compile(tt.rule)
			if iss != nil && iss.Err() != nil {
				t.Fatalf("compile %q: %v", tt.rule, iss.Err())
			}
		}
		eval := func(opts ...cel.ProgramOption) string {
			prg, err := celenv.Env.Program(ast, opts...)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(map[string]any{"self": tt.self, "root": tt.self, "index": 0, "params": map[string]string{}})
			if err != nil {
				return "error: " + err.Error()
			}
			return fmt.Sprint(out)
		}
		want := eval()
		if got := eval(celenv.Strings); got != want {
			t.Errorf("%q on %v = %s, want %s", tt.rule, tt.self, got, want)
		}
		if got := eval(celenv.Strings, cel.CostLimit(CheckRuntimeCostLimit)); got != want {
			t.Errorf("%q on %v with a cost limit = %s, want %s", tt.rule, tt.self, got, want)
		}
	}
}

// TestCountMacro checks list.count(x, p) against filter(x, p).size()
// and its errors.
func TestCountMacro(t *testing.T) {
	tests := []struct {
		rule string
		want string
	}{
		{"[1, 2, 3, 2].count(x, x == 2) == [1, 2, 3, 2].filter(x, x == 2).size()", "true"},
		{"[1, 2, 3, 2].count(x, x == 2)", "2"},
		{"[].count(x, x == 2)", "0"},
		{"self.l.count(q, q.w == 1)", "2"},
		{"self.l.count(q, q.v == 1)", "error: no such key: v"},
		{"type(self.l.count(q, true))", "int"},
	}
	self := map[string]any{"l": []any{map[string]any{"w": 1}, map[string]any{"w": 2}, map[string]any{"w": 1.0}}}
	for _, tt := range tests {
		ast, iss := celenv.Env.Compile(tt.rule)
		if iss != nil && iss.Err() != nil {
			t.Fatalf("compile %q: %v", tt.rule, iss.Err())
		}
		prg, err := celenv.Env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		out, _, err := prg.Eval(map[string]any{"self": self, "root": self, "index": 0, "params": map[string]string{}})
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = fmt.Sprint(out)
		}
		if got != tt.want {
			t.Errorf("%s = %s, want %s", tt.rule, got, tt.want)
		}
	}
	if _, iss := celenv.Env.Compile("[1].count(@result, true)"); iss == nil || iss.Err() == nil {
		t.Errorf("count over the accumulator's name compiled, want an error")
	}
}
