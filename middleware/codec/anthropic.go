package codec

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/assemble"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/middleware/codec/toolcall"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Anthropic is Ollama's Anthropic-compatible POST /v1/messages: the task
// is `system` and `messages`, the text the content blocks of type text,
// the tool calls its tool_use blocks (input an object), the temperature
// top-level, and a stream is named server-sent events from message_start
// to message_stop. Ollama takes no output format on this endpoint, so the
// guard validates and repairs what the model writes but cannot constrain
// it. It lists no models: Ollama serves /v1/models in OpenAI's shape only,
// which OpenAI's codec writes.
type Anthropic struct{ topTemperature }

var (
	_ Codec     = Anthropic{}
	_ ToolCodec = Anthropic{}
)

// Path is /v1/messages.
func (Anthropic) Path() string { return "/v1/messages" }

// Decode reads model and stream (false when absent); messages must be an
// array.
func (Anthropic) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, false)
	if err != nil {
		return nil, err
	}
	if m := r.Body.Get("messages"); m != nil && m.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("%w: \"messages\" must be an array", ErrBadRequest)
	}
	return r, nil
}

// SetFormat does nothing: Ollama's /v1/messages has no format to set.
func (Anthropic) SetFormat(*Request, *strictjson.Value) {}

// Prompt renders system (a string or text blocks) and messages (content
// a string or blocks).
func (Anthropic) Prompt(r *Request) string {
	var b strings.Builder
	b.WriteString(contentText(r.Body.Get("system")))
	writeMessages(&b, r.Body.Get("messages"), contentText)
	return b.String()
}

// ReadAnswer reads one message or a stream of events.
func (Anthropic) ReadAnswer(body []byte) (*Answer, error) {
	obj, err := frame.ReadObjectOrSSE(body, assembleAnthropic)
	if err != nil {
		return nil, err
	}
	return anthropicAnswer(obj)
}

// NewStreamReader reads a stream of events as it arrives.
func (Anthropic) NewStreamReader() *StreamReader {
	return newStreamReader(true, &assemble.Anthropic{}, anthropicAnswer, Anthropic{}.ReadAnswer)
}

// anthropicCounters are a message's usage: in a stream, message_start's
// input and the output of the last message_delta.
var anthropicCounters = Counters{Prompt: "input_tokens", Output: "output_tokens", Usage: true}

// Counters returns a message's usage counters.
func (Anthropic) Counters() Counters { return anthropicCounters }

// anthropicAnswer checks a message and reads its text, reason and usage.
func anthropicAnswer(obj *strictjson.Value) (*Answer, error) {
	if str(obj.Get("type")) == "error" {
		return nil, fmt.Errorf("upstream: %s", str(obj.Get("error").Get("message")))
	}
	if c := obj.Get("content"); c == nil || c.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("upstream answer has no content")
	}
	a := &Answer{Obj: obj, Text: anthropicText(obj), DoneReason: str(obj.Get("stop_reason"))}
	return anthropicCounters.read(a, obj), nil
}

// anthropicText is the text of a message: its text blocks.
func anthropicText(obj *strictjson.Value) string {
	var b strings.Builder
	for _, block := range items(obj.Get("content")) {
		if str(block.Get("type")) == "text" {
			b.WriteString(str(block.Get("text")))
		}
	}
	return b.String()
}

// assembleAnthropic turns a whole Messages stream into the equivalent
// message.
func assembleAnthropic(body []byte) (*strictjson.Value, error) {
	datas, _ := frame.SSEData(body)
	asm := &assemble.Anthropic{}
	for _, data := range datas {
		if _, err := asm.Event(data); err != nil {
			return nil, err
		}
		if asm.Stopped() {
			break
		}
	}
	return asm.Object(false, false)
}

// WithText puts text in the first text block, dropping the other text
// blocks; a message without one gets it after its thinking blocks.
func (Anthropic) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	content := out.Get("content")
	if content == nil || content.Kind != strictjson.KindArray {
		content = strictjson.Array()
		out.Set("content", content)
	}
	tb := strictjson.Object(Member("type", strictjson.String("text")), Member("text", strictjson.String(text)))
	blocks := content.Items[:0:0]
	placed := false
	for _, b := range content.Items {
		switch typ := str(b.Get("type")); {
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
func (Anthropic) NormalStop(obj *strictjson.Value) string {
	return replaceString(obj, "stop_reason", "end_turn", "tool_use")
}

// Encode re-emits a stream as Ollama streams a message: message_start
// with an empty content, each block's start, delta and stop events,
// message_delta with the stop reason, the usage and the contract summary,
// then message_stop.
func (Anthropic) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return frame.WriteObject(w, frame.JSONType, obj)
	}
	return encodeStream(newAnthropicWriter(w, r, obj), obj, text)
}

// NewStreamWriter writes a stream of Messages events.
func (Anthropic) NewStreamWriter(w http.ResponseWriter, r *Request) StreamWriter {
	return newAnthropicWriter(w, r, nil)
}

// anthropicWriter writes a Messages stream: message_start and the text
// block's start, a text_delta per piece of text, then the text block's
// stop, the answer's other blocks (thinking, tool use), message_delta and
// message_stop.
type anthropicWriter struct {
	r *Request
	// head is the whole answer when it is known before the stream opens
	// (Encode): message_start is its message, and its blocks before the
	// text block go out before it, in their places.
	head *strictjson.Value
	// index is the text block's; before the number of the head's blocks
	// sent before it.
	index, before int
}

func newAnthropicWriter(w http.ResponseWriter, r *Request, head *strictjson.Value) *streamWriter {
	return newStreamWriter(w, frame.SSEType, &anthropicWriter{r: r, head: head})
}

func (a *anthropicWriter) open(buf []byte) []byte {
	tb := strictjson.Object(Member("type", strictjson.String("text")), Member("text", strictjson.String("")))
	start := strictjson.Object(
		Member("id", strictjson.String(newID("msg_"))),
		Member("type", strictjson.String("message")),
		Member("role", strictjson.String("assistant")),
		Member("model", strictjson.String(a.r.Model)),
		Member("content", strictjson.Array()),
		Member("stop_reason", strictjson.Null()),
		Member("stop_sequence", strictjson.Null()),
		Member("usage", strictjson.Object(Member("input_tokens", strictjson.Int(0)), Member("output_tokens", strictjson.Int(0)))),
	)
	var blocks []*strictjson.Value
	if a.head != nil {
		start = cloneExcept(a.head, "content")
		start.Set("content", strictjson.Array())
		start.Delete("contract")
		start.Set("stop_reason", strictjson.Null())
		usage := strictjson.Object()
		if u := a.head.Get("usage"); u != nil && u.Kind == strictjson.KindObject {
			usage = u.Clone()
		}
		usage.Set("output_tokens", strictjson.Int(0))
		start.Set("usage", usage)
		blocks = items(a.head.Get("content"))
	}
	buf = frame.AppendNamed(buf, event("message_start", Member("message", start)))
	for i, b := range blocks {
		if str(b.Get("type")) == "text" {
			tb = b.Clone()
			tb.Set("text", strictjson.String(""))
			break
		}
		buf = blockEvents(buf, i, b)
		a.index, a.before = i+1, i+1
	}
	return frame.AppendNamed(buf, event("content_block_start", a.indexMember(a.index), Member("content_block", tb)))
}

func (a *anthropicWriter) indexMember(i int) strictjson.Member {
	return Member("index", strictjson.Int(int64(i)))
}

func (a *anthropicWriter) text(buf []byte, delta string) []byte {
	if delta == "" {
		return buf
	}
	d := strictjson.Object(Member("type", strictjson.String("text_delta")), Member("text", strictjson.String(delta)))
	return frame.AppendNamed(buf, event("content_block_delta", a.indexMember(a.index), Member("delta", d)))
}

func (a *anthropicWriter) end(buf []byte, obj *strictjson.Value, _ string) []byte {
	buf = frame.AppendNamed(buf, event("content_block_stop", a.indexMember(a.index)))
	i, streamed := a.index+1, false
	for j, b := range items(obj.Get("content")) {
		switch {
		case a.head != nil && j < a.before:
		case !streamed && str(b.Get("type")) == "text":
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
		Member("delta", strictjson.Object(Member("stop_reason", stop), Member("stop_sequence", strictjson.Null()))),
		Member("usage", usage),
	}
	if s := obj.Get("contract"); s != nil {
		md = append(md, Member("contract", s))
	}
	buf = frame.AppendNamed(buf, event("message_delta", md...))
	return frame.AppendNamed(buf, event("message_stop"))
}

// fail is Anthropic's error event, which its libraries raise.
func (a *anthropicWriter) fail(buf []byte, e *apierr.Error) []byte {
	return append(buf, Anthropic{}.StreamError(e)...)
}

// StreamError is Anthropic's: an event named error with the error object.
func (Anthropic) StreamError(e *apierr.Error) []byte {
	return frame.SSEErrorEvent(Anthropic{}.EncodeError(e))
}

// blockEvents appends the start, delta and stop events of block b, the
// i-th, as Ollama streams a whole block.
func blockEvents(buf []byte, i int, b *strictjson.Value) []byte {
	idx := Member("index", strictjson.Int(int64(i)))
	empty := b.Clone()
	var delta *strictjson.Value
	switch str(b.Get("type")) {
	case "text":
		empty.Set("text", strictjson.String(""))
		delta = strictjson.Object(Member("type", strictjson.String("text_delta")), Member("text", strictjson.String(str(b.Get("text")))))
	case "thinking":
		empty.Set("thinking", strictjson.String(""))
		delta = strictjson.Object(Member("type", strictjson.String("thinking_delta")), Member("thinking", strictjson.String(str(b.Get("thinking")))))
	case "tool_use":
		in := b.Get("input")
		if in == nil {
			in = strictjson.Object()
		}
		empty.Set("input", strictjson.Object())
		delta = strictjson.Object(Member("type", strictjson.String("input_json_delta")),
			Member("partial_json", strictjson.String(string(strictjson.Marshal(in)))))
	}
	buf = frame.AppendNamed(buf, event("content_block_start", idx, Member("content_block", empty)))
	if delta != nil {
		buf = frame.AppendNamed(buf, event("content_block_delta", idx, Member("delta", delta)))
	}
	return frame.AppendNamed(buf, event("content_block_stop", idx))
}

// KeepAlive is Anthropic's ping event.
func (Anthropic) KeepAlive(*Request, int) (string, []byte) {
	return frame.SSEType, []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")
}

// EncodeError writes Anthropic's shape, {"type":"error","error":{"type",
// "message"}}, which the Anthropic client libraries parse.
func (Anthropic) EncodeError(e *apierr.Error) []byte {
	return strictjson.Marshal(e.WithReport(strictjson.Object(
		Member("type", strictjson.String("error")),
		Member("error", strictjson.Object(
			Member("type", strictjson.String(anthropicErrorType(e.Status()))),
			Member("message", strictjson.String(e.Message())),
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
func (Anthropic) Tools(r *Request) map[string]json.RawMessage {
	return toolcall.Schemas(r.Body.Get("tools"),
		func(t *strictjson.Value) *strictjson.Value { return t.Get("name") },
		func(t *strictjson.Value) *strictjson.Value { return t.Get("input_schema") })
}

// ToolCalls reads the tool_use blocks of the content.
func (Anthropic) ToolCalls(obj *strictjson.Value) []ToolCall {
	return toolcall.Read(obj.Get("content"), toolcall.Typed("tool_use"), "input")
}

// WithToolArgs writes each call's input, an object.
func (Anthropic) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	toolcall.Write(out.Get("content"), toolcall.Typed("tool_use"), "input", args, nil)
	return out
}
