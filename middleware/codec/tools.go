package codec

import (
	"encoding/json"

	"github.com/contractgateway/gateway/strictjson"
)

// ToolCall is one function call in a model's answer.
type ToolCall struct {
	Name string
	// Args is the call's arguments as JSON text.
	Args string
}

// ToolCodec is implemented by a Codec whose API declares tools: the guard
// validates each call's arguments against its function's parameters
// schema and repairs them, and the codec reads the calls and writes the
// repaired arguments back.
type ToolCodec interface {
	// Tools returns the parameters schema of each declared function, by
	// name; nil when the request declares none. A function without
	// parameters takes an object.
	Tools(r *Request) map[string]json.RawMessage
	// ToolCalls returns the calls of an answer's object, in order.
	ToolCalls(obj *strictjson.Value) []ToolCall
	// WithToolArgs returns a copy of obj with the arguments of call i
	// replaced by args[i] (nil keeps the call's own).
	WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value
}

// objectSchema is the parameters schema of a function that declares none.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// toolSchemas collects the parameters schema of each declared function:
// nameOf and paramsOf read one tool of the request's tools array.
func toolSchemas(r *Request, nameOf, paramsOf func(*strictjson.Value) *strictjson.Value) map[string]json.RawMessage {
	tools := items(r.Body.Get("tools"))
	if len(tools) == 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	for _, t := range tools {
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

// functionTools reads Ollama's and OpenAI's chat tools:
// {"type":"function","function":{"name","parameters"}}.
func functionTools(r *Request) map[string]json.RawMessage {
	return toolSchemas(r,
		func(t *strictjson.Value) *strictjson.Value { return t.Get("function").Get("name") },
		func(t *strictjson.Value) *strictjson.Value { return t.Get("function").Get("parameters") })
}

// A callOf finds the call in an item of a list of calls or output items:
// the object holding the call's name and arguments, and false when the
// item is no call.
type callOf func(item *strictjson.Value) (*strictjson.Value, bool)

// function is the call of a chat tool_calls item: its function member.
func function(item *strictjson.Value) (*strictjson.Value, bool) { return item.Get("function"), true }

// typed is the call of an output item of type typ (the Responses API's
// function_call, Anthropic's tool_use): the item itself.
func typed(typ string) callOf {
	return func(item *strictjson.Value) (*strictjson.Value, bool) {
		return item, str(item.Get("type")) == typ
	}
}

// readCalls reads the calls of list: each one's name and its arguments,
// member args, as JSON text.
func readCalls(list *strictjson.Value, call callOf, args string) []ToolCall {
	var calls []ToolCall
	for _, item := range items(list) {
		if c, ok := call(item); ok {
			calls = append(calls, ToolCall{Name: str(c.Get("name")), Args: argsText(c.Get(args))})
		}
	}
	return calls
}

// writeCalls sets member args of the i-th call of list to newArgs[i] (nil
// keeps the call's own), through enc when the API writes arguments
// otherwise than as an object (nil: as an object).
func writeCalls(list *strictjson.Value, call callOf, args string, newArgs []*strictjson.Value, enc func(*strictjson.Value) *strictjson.Value) {
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

// argsText is the JSON text of arguments given as an object, or as a
// string holding JSON (OpenAI's).
func argsText(v *strictjson.Value) string {
	if s, ok := v.AsString(); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return string(strictjson.Marshal(v))
}

// jsonString is v as a string of JSON text, the way the OpenAI APIs write
// a call's arguments.
func jsonString(v *strictjson.Value) *strictjson.Value {
	return strictjson.String(string(strictjson.Marshal(v)))
}
