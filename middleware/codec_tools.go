package middleware

import (
	"encoding/json"

	"github.com/contractgateway/gateway/strictjson"
)

var (
	_ ToolCodec = chatCodec{}
	_ ToolCodec = openAIChatCodec{}
	_ ToolCodec = responsesCodec{}
	_ ToolCodec = anthropicCodec{}
)

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

func (chatCodec) Tools(r *Request) map[string]json.RawMessage { return functionTools(r) }

func (chatCodec) ToolCalls(obj *strictjson.Value) []ToolCall {
	var calls []ToolCall
	for _, c := range items(obj.Get("message").Get("tool_calls")) {
		name, _ := c.Get("function").Get("name").AsString()
		calls = append(calls, ToolCall{Name: name, Args: argsText(c.Get("function").Get("arguments"))})
	}
	return calls
}

func (chatCodec) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	for i, c := range items(out.Get("message").Get("tool_calls")) {
		if i < len(args) && args[i] != nil {
			if f := c.Get("function"); f != nil && f.Kind == strictjson.KindObject {
				f.Set("arguments", args[i])
			}
		}
	}
	return out
}

func (openAIChatCodec) Tools(r *Request) map[string]json.RawMessage { return functionTools(r) }

func (openAIChatCodec) ToolCalls(obj *strictjson.Value) []ToolCall {
	var calls []ToolCall
	for _, c := range items(obj.Get("choices").Index(0).Get("message").Get("tool_calls")) {
		name, _ := c.Get("function").Get("name").AsString()
		calls = append(calls, ToolCall{Name: name, Args: argsText(c.Get("function").Get("arguments"))})
	}
	return calls
}

// WithToolArgs writes arguments as OpenAI does: a string of JSON.
func (openAIChatCodec) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	for i, c := range items(out.Get("choices").Index(0).Get("message").Get("tool_calls")) {
		if i < len(args) && args[i] != nil {
			if f := c.Get("function"); f != nil && f.Kind == strictjson.KindObject {
				f.Set("arguments", strictjson.String(string(strictjson.Marshal(args[i]))))
			}
		}
	}
	return out
}

// Tools reads the Responses API's tools: {"type":"function","name",
// "parameters"}.
func (responsesCodec) Tools(r *Request) map[string]json.RawMessage {
	return toolSchemas(r,
		func(t *strictjson.Value) *strictjson.Value {
			if typ, _ := t.Get("type").AsString(); typ != "function" {
				return nil
			}
			return t.Get("name")
		},
		func(t *strictjson.Value) *strictjson.Value { return t.Get("parameters") })
}

func (responsesCodec) ToolCalls(obj *strictjson.Value) []ToolCall {
	var calls []ToolCall
	for _, it := range items(obj.Get("output")) {
		if typ, _ := it.Get("type").AsString(); typ == "function_call" {
			name, _ := it.Get("name").AsString()
			calls = append(calls, ToolCall{Name: name, Args: argsText(it.Get("arguments"))})
		}
	}
	return calls
}

func (responsesCodec) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	i := 0
	for _, it := range items(out.Get("output")) {
		if typ, _ := it.Get("type").AsString(); typ != "function_call" {
			continue
		}
		if i < len(args) && args[i] != nil {
			it.Set("arguments", strictjson.String(string(strictjson.Marshal(args[i]))))
		}
		i++
	}
	return out
}

// Tools reads Anthropic's tools: {"name","input_schema"}.
func (anthropicCodec) Tools(r *Request) map[string]json.RawMessage {
	return toolSchemas(r,
		func(t *strictjson.Value) *strictjson.Value { return t.Get("name") },
		func(t *strictjson.Value) *strictjson.Value { return t.Get("input_schema") })
}

func (anthropicCodec) ToolCalls(obj *strictjson.Value) []ToolCall {
	var calls []ToolCall
	for _, b := range items(obj.Get("content")) {
		if typ, _ := b.Get("type").AsString(); typ == "tool_use" {
			name, _ := b.Get("name").AsString()
			calls = append(calls, ToolCall{Name: name, Args: argsText(b.Get("input"))})
		}
	}
	return calls
}

func (anthropicCodec) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	i := 0
	for _, b := range items(out.Get("content")) {
		if typ, _ := b.Get("type").AsString(); typ != "tool_use" {
			continue
		}
		if i < len(args) && args[i] != nil {
			b.Set("input", args[i])
		}
		i++
	}
	return out
}
