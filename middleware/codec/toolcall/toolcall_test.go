package toolcall

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestReadWrite: the calls of each API's list are read with their name and
// arguments as JSON text, and written back as the API writes arguments
// (an object, or a string of JSON), a nil argument keeping the call's own.
func TestReadWrite(t *testing.T) {
	tests := []struct {
		name, list string
		call       Of
		enc        func(*strictjson.Value) *strictjson.Value
		want       []Call
		written    string
	}{
		{"chat, object arguments", `[{"function":{"name":"f","arguments":{"a":1}}},{"function":{"name":"g","arguments":{}}}]`,
			Function, nil, []Call{{"f", `{"a":1}`}, {"g", `{}`}},
			`[{"function":{"name":"f","arguments":{"x":true}}},{"function":{"name":"g","arguments":{}}}]`},
		{"openai, string arguments", `[{"function":{"name":"f","arguments":"{\"a\":1"}}]`,
			Function, JSONString, []Call{{"f", `{"a":1`}},
			`[{"function":{"name":"f","arguments":"{\"x\":true}"}}]`},
		{"typed items among others", `[{"type":"message"},{"type":"tool_use","name":"f","input":{"a":1}}]`,
			Typed("tool_use"), nil, []Call{{"f", `{"a":1}`}},
			`[{"type":"message"},{"type":"tool_use","name":"f","input":{"x":true}}]`},
	}
	x, _ := strictjson.Parse([]byte(`{"x":true}`))
	for _, tt := range tests {
		list, err := strictjson.Parse([]byte(tt.list))
		if err != nil {
			t.Fatal(err)
		}
		args := "arguments"
		if tt.name == "typed items among others" {
			args = "input"
		}
		if diff := cmp.Diff(tt.want, Read(list, tt.call, args)); diff != "" {
			t.Errorf("%s: Read (-want +got):\n%s", tt.name, diff)
		}
		Write(list, tt.call, args, []*strictjson.Value{x, nil}, tt.enc)
		if got := string(strictjson.Marshal(list)); got != tt.written {
			t.Errorf("%s: after Write = %s, want %s", tt.name, got, tt.written)
		}
	}
}

// TestSchemas: each declared function's parameters schema by name, an
// object schema for one without parameters, nil when none is declared.
func TestSchemas(t *testing.T) {
	tests := []struct {
		tools string
		want  map[string]string
	}{
		{`[{"type":"function","function":{"name":"f","parameters":{"type":"object","required":["a"]}}},{"function":{"name":"g"}}]`,
			map[string]string{"f": `{"type":"object","required":["a"]}`, "g": `{"type":"object"}`}},
		{`[{"function":{"name":""}},3]`, nil},
		{`{}`, nil},
	}
	for _, tt := range tests {
		tools, err := strictjson.Parse([]byte(tt.tools))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		for k, v := range FunctionSchemas(tools) {
			if got == nil {
				got = map[string]string{}
			}
			got[k] = string(v)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("FunctionSchemas(%s) (-want +got):\n%s", tt.tools, diff)
		}
	}
}
