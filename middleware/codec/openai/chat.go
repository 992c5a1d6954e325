package openai

import (
	"encoding/json"
	"net/http"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/toolcall"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Chat is Ollama's OpenAI-compatible POST /v1/chat/completions: the
// task is messages, the format `response_format.json_schema.schema`, the
// text `choices[0].message.content`, the tool calls its tool_calls
// (arguments a string of JSON), and a stream is server-sent events ending
// with [DONE].
type Chat struct{ openAI }

var (
	_ codec.Codec        = Chat{}
	_ codec.ToolCodec    = Chat{}
	_ codec.ListingCodec = Chat{}
)

// chatChoices are the choices of a chat completion: a message, and in a
// stream a delta.
var chatChoices = choices{
	object: "chat.completion", chunkObject: "chat.completion.chunk",
	text:      func(c *strictjson.Value) string { return codec.Str(c.Get("message").Get("content")) },
	deltaText: func(c *strictjson.Value) string { return codec.Str(c.Get("delta").Get("content")) },
	choice: func(text string, finish *strictjson.Value) *strictjson.Value {
		return strictjson.Object(
			codec.Member("index", strictjson.Int(0)),
			codec.Member("message", assistant(text)),
			codec.Member("finish_reason", finish),
		)
	},
	delta: func(text string, msg, finish *strictjson.Value) *strictjson.Value {
		d := assistant(text)
		if msg != nil && msg.Kind == strictjson.KindObject {
			d = msg.Clone()
			d.Set("content", strictjson.String(text))
		}
		return strictjson.Object(codec.Member("index", strictjson.Int(0)), codec.Member("delta", d), codec.Member("finish_reason", finish))
	},
	idPrefix: "chatcmpl-",
}

// assistant is an assistant message with content text.
func assistant(text string) *strictjson.Value {
	return strictjson.Object(codec.Member("role", strictjson.String("assistant")), codec.Member("content", strictjson.String(text)))
}

// Path is /v1/chat/completions.
func (Chat) Path() string { return "/v1/chat/completions" }

// Decode reads model, stream, stream_options.include_usage and
// response_format (a json_schema's schema, or plain JSON mode).
func (Chat) Decode(raw []byte) (*codec.Request, error) {
	r, err := decodeStreamOptions(raw)
	if err != nil {
		return nil, err
	}
	if rf := r.Body.Get("response_format"); rf != nil && rf.Kind == strictjson.KindObject {
		r.HasFormat = true
		if s := rf.Get("json_schema").Get("schema"); s != nil && s.Kind == strictjson.KindObject {
			r.Schema = strictjson.Marshal(s)
			r.FormatSchema = true
		}
	}
	return r, nil
}

// SetFormat sets response_format to the schema.
func (Chat) SetFormat(r *codec.Request, schema *strictjson.Value) {
	r.Body.Set("response_format", strictjson.Object(
		codec.Member("type", strictjson.String("json_schema")),
		codec.Member("json_schema", strictjson.Object(codec.Member("name", strictjson.String("contract")), codec.Member("schema", schema))),
	))
	r.Edited = true
	r.FormatSchema = true
}

// Prompt renders the messages.
func (Chat) Prompt(r *codec.Request) string { return codec.MessagesPrompt(r.Body) }

// ReadAnswer reads one object or a stream of chunks.
func (Chat) ReadAnswer(body []byte) (*codec.Answer, error) { return chatChoices.read(body) }

// NewStreamReader reads a stream of chunks as it arrives.
func (Chat) NewStreamReader() *codec.StreamReader { return chatChoices.reader() }

// WithText sets choices[0].message.content.
func (Chat) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	if root, err := strictjson.Replace(out, "/choices/0/message/content", strictjson.String(text)); err == nil {
		return root
	}
	return out
}

// NormalStop sets finish_reason "stop", but for tool calls.
func (Chat) NormalStop(obj *strictjson.Value) string {
	return chatChoices.normalStop(obj, "tool_calls", "function_call")
}

// Encode re-emits a stream as Ollama streams a chat completion; its first
// chunk's delta carries the whole message (reasoning, tool calls) with the
// validated text.
func (Chat) Encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return chatChoices.encode(w, r, obj, text)
}

// NewStreamWriter writes a stream of chat.completion.chunk events.
func (Chat) NewStreamWriter(w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
	return chatChoices.writer(w, r, nil)
}

// Tools reads {"type":"function","function":{"name","parameters"}}.
func (Chat) Tools(r *codec.Request) map[string]json.RawMessage {
	return toolcall.FunctionSchemas(r.Body.Get("tools"))
}

// ToolCalls reads choices[0].message.tool_calls.
func (Chat) ToolCalls(obj *strictjson.Value) []codec.ToolCall {
	return toolcall.Read(obj.Get("choices").Index(0).Get("message").Get("tool_calls"), toolcall.Function, "arguments")
}

// WithToolArgs writes arguments as OpenAI does: a string of JSON.
func (Chat) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	toolcall.Write(out.Get("choices").Index(0).Get("message").Get("tool_calls"), toolcall.Function, "arguments", args, toolcall.JSONString)
	return out
}
