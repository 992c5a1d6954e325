// Package anthropic holds Ollama's Anthropic-compatible wire API, POST
// /v1/messages (Messages), everything about it: decoding and editing the
// request, reading whole and streamed answers, encoding answers, errors and
// stream errors in Anthropic's shape, tool_use blocks, the normal stop and
// the usage counters.
package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/middleware/codec/toolcall"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Messages is Ollama's Anthropic-compatible POST /v1/messages: the task
// is `system` and `messages`, the text the content blocks of type text,
// the tool calls its tool_use blocks (input an object), the temperature
// top-level, and a stream is named server-sent events from message_start
// to message_stop. Ollama takes no output format on this endpoint, so the
// guard validates and repairs what the model writes but cannot constrain
// it. It lists no models: Ollama serves /v1/models in OpenAI's shape only,
// which OpenAI's codec writes.
type Messages struct{ codec.TopTemperature }

var (
	_ codec.Codec     = Messages{}
	_ codec.ToolCodec = Messages{}
)

// Path is /v1/messages.
func (Messages) Path() string { return "/v1/messages" }

// Decode reads model and stream (false when absent); messages must be an
// array.
func (Messages) Decode(raw []byte) (*codec.Request, error) {
	r, err := codec.ParseRequest(raw, false)
	if err != nil {
		return nil, err
	}
	if m := r.Body.Get("messages"); m != nil && m.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("%w: \"messages\" must be an array", codec.ErrBadRequest)
	}
	return r, nil
}

// SetFormat does nothing: Ollama's /v1/messages has no format to set.
func (Messages) SetFormat(*codec.Request, *strictjson.Value) {}

// Prompt renders system (a string or text blocks) and messages (content
// a string or blocks).
func (Messages) Prompt(r *codec.Request) string {
	var b strings.Builder
	b.WriteString(codec.ContentText(r.Body.Get("system")))
	codec.WriteMessages(&b, r.Body.Get("messages"), codec.ContentText)
	return b.String()
}

// ReadAnswer reads one message or a stream of events.
func (Messages) ReadAnswer(body []byte) (*codec.Answer, error) {
	return codec.ReadSSE(body, &messagesAssembler{}, anthropicAnswer)
}

// NewStreamReader reads a stream of events as it arrives.
func (Messages) NewStreamReader() *codec.StreamReader {
	return codec.NewStreamReader(true, &messagesAssembler{}, anthropicAnswer, Messages{}.ReadAnswer)
}

// anthropicCounters are a message's usage: in a stream, message_start's
// input and the output of the last message_delta.
var anthropicCounters = codec.Counters{Prompt: "input_tokens", Output: "output_tokens", Usage: true}

// Counters returns a message's usage counters.
func (Messages) Counters() codec.Counters { return anthropicCounters }

// anthropicAnswer checks a message and reads its text, reason and usage.
func anthropicAnswer(obj *strictjson.Value) (*codec.Answer, error) {
	if codec.Str(obj.Get("type")) == "error" {
		return nil, fmt.Errorf("upstream: %s", codec.Str(obj.Get("error").Get("message")))
	}
	if c := obj.Get("content"); c == nil || c.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("upstream answer has no content")
	}
	a := &codec.Answer{Obj: obj, Text: anthropicText(obj), DoneReason: codec.Str(obj.Get("stop_reason"))}
	return anthropicCounters.Read(a, obj), nil
}

// anthropicText is the text of a message: its text blocks.
func anthropicText(obj *strictjson.Value) string {
	var b strings.Builder
	for _, block := range codec.Items(obj.Get("content")) {
		if codec.Str(block.Get("type")) == "text" {
			b.WriteString(codec.Str(block.Get("text")))
		}
	}
	return b.String()
}

// WithText puts text in the first text block, dropping the other text
// blocks; a message without one gets it after its thinking blocks.
func (Messages) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	content := codec.Child(out, "content", strictjson.KindArray)
	tb := strictjson.Object(codec.Member("type", strictjson.String("text")), codec.Member("text", strictjson.String(text)))
	blocks := content.Items[:0:0]
	placed := false
	for _, b := range content.Items {
		switch typ := codec.Str(b.Get("type")); {
		case typ == "text" && placed:
			continue
		case typ == "text":
			b.Set("text", strictjson.String(text))
			placed = true
		case typ != "thinking" && typ != "redacted_thinking" && !placed:
			blocks = append(blocks, tb)
			placed = true
		}
		blocks = append(blocks, b)
	}
	if !placed {
		blocks = append(blocks, tb)
	}
	content.Items = blocks
	return out
}

// NormalStop sets stop_reason "end_turn", but for tool use.
func (Messages) NormalStop(obj *strictjson.Value) string {
	return codec.ReplaceString(obj, "stop_reason", "end_turn", "tool_use")
}

// Encode re-emits a stream as Ollama streams a message: message_start
// with an empty content, each block's start, delta and stop events,
// message_delta with the stop reason, the usage and the contract summary,
// then message_stop.
func (Messages) Encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return codec.Encode(w, r, obj, text, frame.JSONType, newAnthropicWriter)
}

// NewStreamWriter writes a stream of Messages events.
func (Messages) NewStreamWriter(w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
	return newAnthropicWriter(w, r, nil)
}

// anthropicWriter writes a Messages stream: message_start and the text
// block's start, a text_delta per piece of text, then the text block's
// stop, the answer's other blocks (thinking, tool use), message_delta and
// message_stop.
type anthropicWriter struct {
	r *codec.Request
	// head is the whole answer when it is known before the stream opens
	// (Encode): message_start is its message, and its blocks before the
	// text block go out before it, in their places.
	head *strictjson.Value
	// index is the text block's; before the number of the head's blocks
	// sent before it.
	index, before int
}

func newAnthropicWriter(w http.ResponseWriter, r *codec.Request, head *strictjson.Value) *codec.Stream {
	return codec.NewStream(w, frame.SSEType, &anthropicWriter{r: r, head: head})
}

func (a *anthropicWriter) Open(buf []byte) []byte {
	tb := strictjson.Object(codec.Member("type", strictjson.String("text")), codec.Member("text", strictjson.String("")))
	start := strictjson.Object(
		codec.Member("id", strictjson.String(codec.NewID("msg_"))),
		codec.Member("type", strictjson.String("message")),
		codec.Member("role", strictjson.String("assistant")),
		codec.Member("model", strictjson.String(a.r.Model)),
		codec.Member("content", strictjson.Array()),
		codec.Member("stop_reason", strictjson.Null()),
		codec.Member("stop_sequence", strictjson.Null()),
		codec.Member("usage", strictjson.Object(codec.Member("input_tokens", strictjson.Int(0)), codec.Member("output_tokens", strictjson.Int(0)))),
	)
	var blocks []*strictjson.Value
	if a.head != nil {
		start = codec.CloneExcept(a.head, "content")
		start.Set("content", strictjson.Array())
		start.Delete("contract")
		start.Set("stop_reason", strictjson.Null())
		usage := strictjson.Object()
		if u := a.head.Get("usage"); u != nil && u.Kind == strictjson.KindObject {
			usage = u.Clone()
		}
		usage.Set("output_tokens", strictjson.Int(0))
		start.Set("usage", usage)
		blocks = codec.Items(a.head.Get("content"))
	}
	buf = frame.AppendNamed(buf, codec.Event("message_start", codec.Member("message", start)))
	for i, b := range blocks {
		if codec.Str(b.Get("type")) == "text" {
			tb = b.Clone()
			tb.Set("text", strictjson.String(""))
			break
		}
		buf = blockEvents(buf, i, b)
		a.index, a.before = i+1, i+1
	}
	return frame.AppendNamed(buf, codec.Event("content_block_start", a.indexMember(a.index), codec.Member("content_block", tb)))
}

func (a *anthropicWriter) indexMember(i int) strictjson.Member {
	return codec.Member("index", strictjson.Int(int64(i)))
}

func (a *anthropicWriter) Text(buf []byte, delta string) []byte {
	if delta == "" {
		return buf
	}
	d := strictjson.Object(codec.Member("type", strictjson.String("text_delta")), codec.Member("text", strictjson.String(delta)))
	return frame.AppendNamed(buf, codec.Event("content_block_delta", a.indexMember(a.index), codec.Member("delta", d)))
}

func (a *anthropicWriter) End(buf []byte, obj *strictjson.Value, _ string) []byte {
	buf = frame.AppendNamed(buf, codec.Event("content_block_stop", a.indexMember(a.index)))
	i, streamed := a.index+1, false
	for j, b := range codec.Items(obj.Get("content")) {
		switch {
		case a.head != nil && j < a.before:
		case !streamed && codec.Str(b.Get("type")) == "text":
			streamed = true
		default:
			buf = blockEvents(buf, i, b)
			i++
		}
	}
	stop := obj.Get("stop_reason")
	if stop == nil {
		stop = strictjson.Null()
	}
	usage := strictjson.Object()
	if u := obj.Get("usage"); u != nil && u.Kind == strictjson.KindObject {
		usage = u
	}
	md := []strictjson.Member{
		codec.Member("delta", strictjson.Object(codec.Member("stop_reason", stop), codec.Member("stop_sequence", strictjson.Null()))),
		codec.Member("usage", usage),
	}
	if s := obj.Get("contract"); s != nil {
		md = append(md, codec.Member("contract", s))
	}
	buf = frame.AppendNamed(buf, codec.Event("message_delta", md...))
	return frame.AppendNamed(buf, codec.Event("message_stop"))
}

// Fail is Anthropic's error event, which its libraries raise.
func (a *anthropicWriter) Fail(buf []byte, e *apierr.Error) []byte {
	return append(buf, Messages{}.StreamError(e)...)
}

// StreamError is Anthropic's: an event named error with the error object.
func (Messages) StreamError(e *apierr.Error) []byte {
	return frame.SSEErrorEvent(Messages{}.EncodeError(e))
}

// blockEvents appends the start, delta and stop events of block b, the
// i-th, as Ollama streams a whole block.
func blockEvents(buf []byte, i int, b *strictjson.Value) []byte {
	idx := codec.Member("index", strictjson.Int(int64(i)))
	empty := b.Clone()
	var delta *strictjson.Value
	switch codec.Str(b.Get("type")) {
	case "text":
		empty.Set("text", strictjson.String(""))
		delta = strictjson.Object(codec.Member("type", strictjson.String("text_delta")), codec.Member("text", strictjson.String(codec.Str(b.Get("text")))))
	case "thinking":
		empty.Set("thinking", strictjson.String(""))
		delta = strictjson.Object(codec.Member("type", strictjson.String("thinking_delta")), codec.Member("thinking", strictjson.String(codec.Str(b.Get("thinking")))))
	case "tool_use":
		in := b.Get("input")
		if in == nil {
			in = strictjson.Object()
		}
		empty.Set("input", strictjson.Object())
		delta = strictjson.Object(codec.Member("type", strictjson.String("input_json_delta")),
			codec.Member("partial_json", strictjson.String(string(strictjson.Marshal(in)))))
	}
	buf = frame.AppendNamed(buf, codec.Event("content_block_start", idx, codec.Member("content_block", empty)))
	if delta != nil {
		buf = frame.AppendNamed(buf, codec.Event("content_block_delta", idx, codec.Member("delta", delta)))
	}
	return frame.AppendNamed(buf, codec.Event("content_block_stop", idx))
}

// KeepAlive is Anthropic's ping event.
func (Messages) KeepAlive(*codec.Request, int) (string, []byte) {
	return frame.SSEType, []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")
}

// EncodeError writes Anthropic's shape, {"type":"error","error":{"type",
// "message"}}, which the Anthropic client libraries parse.
func (Messages) EncodeError(e *apierr.Error) []byte {
	return strictjson.Marshal(e.WithReport(strictjson.Object(
		codec.Member("type", strictjson.String("error")),
		codec.Member("error", strictjson.Object(
			codec.Member("type", strictjson.String(anthropicErrorType(e.Status()))),
			codec.Member("message", strictjson.String(e.Message())),
		)),
	)))
}

// anthropicErrorType is the error type Anthropic's API gives a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	return "api_error"
}

// Tools reads Anthropic's tools: {"name","input_schema"}.
func (Messages) Tools(r *codec.Request) map[string]json.RawMessage {
	return toolcall.Schemas(r.Body.Get("tools"),
		func(t *strictjson.Value) *strictjson.Value { return t.Get("name") },
		func(t *strictjson.Value) *strictjson.Value { return t.Get("input_schema") })
}

// ToolCalls reads the tool_use blocks of the content.
func (Messages) ToolCalls(obj *strictjson.Value) []codec.ToolCall {
	return toolcall.Read(obj.Get("content"), toolcall.Typed("tool_use"), "input")
}

// WithToolArgs writes each call's input, an object.
func (Messages) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	toolcall.Write(out.Get("content"), toolcall.Typed("tool_use"), "input", args, nil)
	return out
}
