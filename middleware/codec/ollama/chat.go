package ollama

import (
	"encoding/json"
	"net/http"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/middleware/codec/toolcall"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Chat is Ollama's POST /api/chat: the task is messages, the text
// `message.content`, the tool calls `message.tool_calls` (arguments an
// object), a stream NDJSON.
type Chat struct{ native }

var (
	_ codec.Codec        = Chat{}
	_ codec.ToolCodec    = Chat{}
	_ codec.ListingCodec = Chat{}
)

// Path is /api/chat.
func (Chat) Path() string { return "/api/chat" }

// ReadAnswer reads one object or an NDJSON stream.
func (Chat) ReadAnswer(body []byte) (*codec.Answer, error) {
	return readNative(body, &nativeAssembler{Chat: true})
}

// NewStreamReader reads an NDJSON stream as it arrives.
func (Chat) NewStreamReader() *codec.StreamReader { return nativeReader(true) }

// WithText sets message.content; an answer without a message gets one.
func (Chat) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := codec.CloneExcept(obj, "message")
	msg := obj.Get("message")
	if msg == nil || msg.Kind != strictjson.KindObject {
		msg = strictjson.Object(codec.Member("role", strictjson.String("assistant")))
	} else {
		msg = codec.CloneExcept(msg, "content")
	}
	msg.Set("content", strictjson.String(text))
	out.Set("message", msg)
	return out
}

// KeepAlive is a chunk with an empty assistant message and done false.
func (Chat) KeepAlive(r *codec.Request, _ int) (string, []byte) {
	return frame.NDJSONType, frame.KeepAliveNDJSON(r.Model, codec.Member("message", assistantMessage("")))
}

// assistantMessage is Ollama's assistant message with content text.
func assistantMessage(text string) *strictjson.Value {
	return strictjson.Object(codec.Member("role", strictjson.String("assistant")), codec.Member("content", strictjson.String(text)))
}

// Encode re-emits a stream as Ollama writes one: the content chunk carries
// the whole message (thinking, tool calls, …) with the validated text, the
// done chunk an empty message, the counters and the contract summary.
func (Chat) Encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return encodeNative(w, r, obj, text, true)
}

// NewStreamWriter writes an NDJSON stream of message chunks.
func (Chat) NewStreamWriter(w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
	return newNativeWriter(w, r, true, nil)
}

// Tools reads {"type":"function","function":{"name","parameters"}}.
func (Chat) Tools(r *codec.Request) map[string]json.RawMessage {
	return toolcall.FunctionSchemas(r.Body.Get("tools"))
}

// ToolCalls reads message.tool_calls.
func (Chat) ToolCalls(obj *strictjson.Value) []codec.ToolCall {
	return toolcall.Read(obj.Get("message").Get("tool_calls"), toolcall.Function, "arguments")
}

// WithToolArgs writes arguments as Ollama does: an object.
func (Chat) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	toolcall.Write(out.Get("message").Get("tool_calls"), toolcall.Function, "arguments", args, nil)
	return out
}
