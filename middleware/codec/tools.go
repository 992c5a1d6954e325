package codec

import (
	"encoding/json"

	"github.com/contractgateway/gateway/middleware/codec/toolcall"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// ToolCall is one function call in a model's answer.
type ToolCall = toolcall.Call

// ToolCodec is implemented by a Codec whose API declares tools: the guard
// validates each call's arguments against its function's parameters
// schema and repairs them, and the codec reads the calls and writes the
// repaired arguments back (with package toolcall).
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
