// Package toolcall reads and writes the function calls of the wire APIs'
// answers and the parameters schemas of their requests' tools: where a
// call sits (a chat tool_calls item's function member, an output item of
// its own type) and how its arguments are written (an object, or a
// string of JSON) differ by API, and the codec of each API says which;
// the walking is the same for all.
package toolcall

import (
	"encoding/json"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// Call is one function call in a model's answer.
type Call struct {
	Name string
	// Args is the call's arguments as JSON text.
	Args string
}

// objectSchema is the parameters schema of a function that declares none.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// Schemas collects the parameters schema of each function declared in
// tools (a request's tools array), by name: nameOf and paramsOf read one
// tool. A function without parameters takes an object; nil when none is
// declared.
func Schemas(tools *strictjson.Value, nameOf, paramsOf func(*strictjson.Value) *strictjson.Value) map[string]json.RawMessage {
	list := items(tools)
	if len(list) == 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	for _, t := range list {
		name, ok := nameOf(t).AsString()
		if !ok || name == "" {
			continue
		}
		if p := paramsOf(t); p != nil && p.Kind == strictjson.KindObject {
			out[name] = strictjson.Marshal(p)
		} else {
			out[name] = objectSchema
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// FunctionSchemas reads Ollama's and OpenAI's chat tools:
// {"type":"function","function":{"name","parameters"}}.
func FunctionSchemas(tools *strictjson.Value) map[string]json.RawMessage {
	return Schemas(tools,
		func(t *strictjson.Value) *strictjson.Value { return t.Get("function").Get("name") },
		func(t *strictjson.Value) *strictjson.Value { return t.Get("function").Get("parameters") })
}

// An Of finds the call in an item of a list of calls or output items:
// the object holding the call's name and arguments, and false when the
// item is no call.
type Of func(item *strictjson.Value) (*strictjson.Value, bool)

// Function is the call of a chat tool_calls item: its function member.
func Function(item *strictjson.Value) (*strictjson.Value, bool) { return item.Get("function"), true }

// Typed is the call of an output item of type typ (the Responses API's
// function_call, Anthropic's tool_use): the item itself.
func Typed(typ string) Of {
	return func(item *strictjson.Value) (*strictjson.Value, bool) {
		s, _ := item.Get("type").AsString()
		return item, s == typ
	}
}

// Read reads the calls of list: each one's name and its arguments,
// member args, as JSON text (an object, or a string holding JSON as
// OpenAI writes it).
func Read(list *strictjson.Value, call Of, args string) []Call {
	var calls []Call
	for _, item := range items(list) {
		if c, ok := call(item); ok {
			name, _ := c.Get("name").AsString()
			calls = append(calls, Call{Name: name, Args: c.Get(args).Text()})
		}
	}
	return calls
}

// Write sets member args of the i-th call of list to newArgs[i] (nil
// keeps the call's own), through enc when the API writes arguments
// otherwise than as an object (nil: as an object).
func Write(list *strictjson.Value, call Of, args string, newArgs []*strictjson.Value, enc func(*strictjson.Value) *strictjson.Value) {
	i := 0
	for _, item := range items(list) {
		c, ok := call(item)
		if !ok {
			continue
		}
		if i < len(newArgs) && newArgs[i] != nil && c != nil && c.Kind == strictjson.KindObject {
			v := newArgs[i]
			if enc != nil {
				v = enc(v)
			}
			c.Set(args, v)
		}
		i++
	}
}

// JSONString is v as a string of JSON text, the way the OpenAI APIs write
// a call's arguments.
func JSONString(v *strictjson.Value) *strictjson.Value {
	return strictjson.String(string(strictjson.Marshal(v)))
}

// items returns the items of an array, nil for anything else (nil
// included).
func items(v *strictjson.Value) []*strictjson.Value {
	if v == nil || v.Kind != strictjson.KindArray {
		return nil
	}
	return v.Items
}
