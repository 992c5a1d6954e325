package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/middleware/codec/toolcall"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Responses is Ollama's OpenAI-compatible POST /v1/responses (the
// Responses API): the task is `instructions` and `input`, the format
// `text.format` (type json_schema), the text the output_text parts of the
// output's message items, the tool calls its function_call items
// (arguments a string of JSON), and a stream is named server-sent events
// from response.created to response.completed.
type Responses struct{ openAI }

var (
	_ codec.Codec     = Responses{}
	_ codec.ToolCodec = Responses{}
)

// Path is /v1/responses.
func (Responses) Path() string { return "/v1/responses" }

// Decode reads model, stream (false when absent) and text.format: a
// json_schema's schema, or plain JSON mode (json_object).
func (Responses) Decode(raw []byte) (*codec.Request, error) {
	r, err := codec.ParseRequest(raw, false)
	if err != nil {
		return nil, err
	}
	if f := r.Body.Get("text").Get("format"); f != nil && f.Kind == strictjson.KindObject {
		switch codec.Str(f.Get("type")) {
		case "json_schema":
			r.HasFormat = true
			if s := f.Get("schema"); s != nil && s.Kind == strictjson.KindObject {
				r.Schema = strictjson.Marshal(s)
				r.FormatSchema = true
			}
		case "json_object":
			r.HasFormat = true
		}
	}
	return r, nil
}

// SetFormat sets text.format to the schema, strict.
func (Responses) SetFormat(r *codec.Request, schema *strictjson.Value) {
	text := codec.Child(r.Body, "text", strictjson.KindObject)
	text.Set("format", strictjson.Object(
		codec.Member("type", strictjson.String("json_schema")),
		codec.Member("name", strictjson.String("contract")),
		codec.Member("schema", schema),
		codec.Member("strict", strictjson.BoolValue(true)),
	))
	r.Edited = true
	r.FormatSchema = true
}

// Prompt renders instructions and input: a string, or items whose content
// is a string or input_text parts.
func (Responses) Prompt(r *codec.Request) string {
	var b strings.Builder
	add := func(role, s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if role != "" {
			b.WriteString(role)
			b.WriteString(": ")
		}
		b.WriteString(s)
	}
	add("", codec.Str(r.Body.Get("instructions")))
	in := r.Body.Get("input")
	if s, ok := in.AsString(); ok {
		add("", s)
		return b.String()
	}
	if in == nil {
		return b.String()
	}
	for _, item := range in.Items {
		add(codec.Str(item.Get("role")), codec.ContentText(item.Get("content")))
	}
	return b.String()
}

// ReadAnswer reads one response or a stream of events. A response whose
// status is incomplete for max_output_tokens ends for "length", as a chat
// completion would.
func (Responses) ReadAnswer(body []byte) (*codec.Answer, error) {
	return codec.ReadSSE(body, newResponsesAssembler(), responsesAnswer)
}

// NewStreamReader reads a stream of events as it arrives.
func (Responses) NewStreamReader() *codec.StreamReader {
	return codec.NewStreamReader(true, newResponsesAssembler(), responsesAnswer, Responses{}.ReadAnswer)
}

// responsesCounters are a response's usage, in its response.completed
// event when streamed.
var responsesCounters = codec.Counters{Prompt: "input_tokens", Output: "output_tokens", Usage: true}

// Counters returns a response's usage counters.
func (Responses) Counters() codec.Counters { return responsesCounters }

// responsesAnswer checks a response and reads its text, reason and usage.
func responsesAnswer(obj *strictjson.Value) (*codec.Answer, error) {
	if err := upstreamError(obj); err != nil {
		return nil, err
	}
	if out := obj.Get("output"); out == nil || out.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("upstream answer has no output")
	}
	a := &codec.Answer{Obj: obj, Text: responsesText(obj)}
	if codec.Str(obj.Get("status")) == "incomplete" {
		a.DoneReason = codec.Str(obj.Get("incomplete_details").Get("reason"))
		if a.DoneReason == "max_output_tokens" {
			a.DoneReason = "length"
		}
	}
	return responsesCounters.Read(a, obj), nil
}

// responsesText is the text of a response: its message items'
// output_text parts.
func responsesText(obj *strictjson.Value) string {
	var b strings.Builder
	for _, item := range codec.Items(obj.Get("output")) {
		if codec.Str(item.Get("type")) != "message" {
			continue
		}
		for _, part := range codec.Items(item.Get("content")) {
			if codec.Str(part.Get("type")) == "output_text" {
				b.WriteString(codec.Str(part.Get("text")))
			}
		}
	}
	return b.String()
}

// newResponsesAssembler returns the assembler of a Responses stream.
func newResponsesAssembler() *responsesAssembler {
	return &responsesAssembler{WithText: Responses{}.WithText}
}

// WithText puts text in the first output_text part of the first message
// item, dropping the item's other text parts; a response without a message
// gets one.
func (Responses) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	output := codec.Child(out, "output", strictjson.KindArray)
	for _, item := range output.Items {
		if codec.Str(item.Get("type")) != "message" {
			continue
		}
		content := codec.Child(item, "content", strictjson.KindArray)
		parts := content.Items[:0:0]
		placed := false
		for _, part := range content.Items {
			if codec.Str(part.Get("type")) == "output_text" {
				if placed {
					continue
				}
				part.Set("text", strictjson.String(text))
				placed = true
			}
			parts = append(parts, part)
		}
		if !placed {
			parts = append(parts, outputTextPart(text))
		}
		content.Items = parts
		return out
	}
	output.Items = append(output.Items, strictjson.Object(
		codec.Member("id", strictjson.String("msg_contract")),
		codec.Member("type", strictjson.String("message")),
		codec.Member("status", strictjson.String("completed")),
		codec.Member("role", strictjson.String("assistant")),
		codec.Member("content", strictjson.Array(outputTextPart(text))),
	))
	return out
}

func outputTextPart(text string) *strictjson.Value {
	return strictjson.Object(
		codec.Member("type", strictjson.String("output_text")),
		codec.Member("text", strictjson.String(text)),
		codec.Member("annotations", strictjson.Array()),
		codec.Member("logprobs", strictjson.Array()),
	)
}

// NormalStop marks an incomplete response completed; its reason
// (max_output_tokens) is the upstream's.
func (Responses) NormalStop(obj *strictjson.Value) string {
	if codec.Str(obj.Get("status")) != "incomplete" {
		return ""
	}
	was := codec.Str(obj.Get("incomplete_details").Get("reason"))
	obj.Set("status", strictjson.String("completed"))
	obj.Set("incomplete_details", strictjson.Null())
	if was == "" {
		was = "incomplete"
	}
	return was
}

// Encode re-emits a stream as Ollama streams a response:
// response.created and response.in_progress with an empty output; for
// each output item its added event, the text's part, delta and done
// events for a message, its done event; then response.completed with the
// whole response, the contract summary included.
func (Responses) Encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return codec.Encode(w, r, obj, text, frame.JSONType, newResponsesWriter)
}

// NewStreamWriter writes a stream of Responses events.
func (Responses) NewStreamWriter(w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
	return newResponsesWriter(w, r, nil)
}

// responsesWriter writes a Responses stream: response.created and
// response.in_progress, the message item's added event and its
// output_text part's, an output_text.delta per piece of text, then the
// text's done events, the answer's other parts and items, and
// response.completed (or response.incomplete) with the whole response.
type responsesWriter struct {
	r *codec.Request
	// head is the whole answer when it is known before the stream opens
	// (Encode): the created events carry it, and its items before the
	// message (and the message's parts before the text) go out before it,
	// in their places.
	head *strictjson.Value
	// id is the response's, itemID the message item's; seq numbers the
	// events.
	id, itemID *strictjson.Value
	seq        int
	// item and part are the output and content index of the text; items
	// and parts count the head's items and parts sent before them.
	item, part   int
	items, parts int
}

func newResponsesWriter(w http.ResponseWriter, r *codec.Request, head *strictjson.Value) *codec.Stream {
	return codec.NewStream(w, frame.SSEType, &responsesWriter{r: r, head: head,
		id: strictjson.String(codec.NewID("resp_")), itemID: strictjson.String(codec.NewID("msg_"))})
}

// event appends an event of the stream, numbered.
func (rw *responsesWriter) event(buf []byte, typ string, members ...strictjson.Member) []byte {
	ev := codec.Event(typ, members...)
	ev.Set("sequence_number", strictjson.Int(int64(rw.seq)))
	rw.seq++
	return frame.AppendNamed(buf, ev)
}

// at are the item_id, output_index and content_index members of the text.
func (rw *responsesWriter) at() []strictjson.Member {
	return []strictjson.Member{codec.Member("item_id", rw.itemID), codec.Member("output_index", strictjson.Int(int64(rw.item))),
		codec.Member("content_index", strictjson.Int(int64(rw.part)))}
}

// firstMessage is the index of obj's first message item, -1 for none.
func firstMessage(obj *strictjson.Value) int {
	for i, item := range codec.Items(obj.Get("output")) {
		if codec.Str(item.Get("type")) == "message" {
			return i
		}
	}
	return -1
}

func (rw *responsesWriter) Open(buf []byte) []byte {
	pending := strictjson.Object(
		codec.Member("id", rw.id),
		codec.Member("object", strictjson.String("response")),
		codec.Member("created_at", strictjson.Int(time.Now().Unix())),
		codec.Member("status", strictjson.String("in_progress")),
		codec.Member("model", strictjson.String(rw.r.Model)),
		codec.Member("output", strictjson.Array()),
	)
	added := strictjson.Object(codec.Member("id", rw.itemID), codec.Member("type", strictjson.String("message")),
		codec.Member("status", strictjson.String("in_progress")), codec.Member("role", strictjson.String("assistant")),
		codec.Member("content", strictjson.Array()))
	part := outputTextPart("")
	var before, parts []*strictjson.Value
	if rw.head != nil {
		pending = codec.CloneExcept(rw.head, "output")
		pending.Set("status", strictjson.String("in_progress"))
		pending.Set("output", strictjson.Array())
		pending.Set("usage", strictjson.Null())
		pending.Delete("contract")
		if pending.Has("completed_at") {
			pending.Set("completed_at", strictjson.Null())
		}
		if m := firstMessage(rw.head); m >= 0 {
			msg := codec.Items(rw.head.Get("output"))[m]
			before, parts = codec.Items(rw.head.Get("output"))[:m], codec.Items(msg.Get("content"))
			added = codec.CloneExcept(msg, "content")
			added.Set("status", strictjson.String("in_progress"))
			added.Set("content", strictjson.Array())
			if id := msg.Get("id"); id != nil {
				rw.itemID = id
			} else {
				rw.itemID = strictjson.String("")
			}
		}
	}
	buf = rw.event(buf, "response.created", codec.Member("response", pending))
	buf = rw.event(buf, "response.in_progress", codec.Member("response", pending))
	for i, item := range before {
		buf = rw.itemEvents(buf, i, item)
	}
	rw.item, rw.items = len(before), len(before)
	buf = rw.event(buf, "response.output_item.added", codec.Member("output_index", strictjson.Int(int64(rw.item))), codec.Member("item", added))
	for j, p := range parts {
		if codec.Str(p.Get("type")) == "output_text" {
			part = p.Clone()
			part.Set("text", strictjson.String(""))
			break
		}
		buf = rw.partEvents(buf, rw.itemID, rw.item, j, p)
		rw.part, rw.parts = j+1, j+1
	}
	return rw.event(buf, "response.content_part.added", append(rw.at(), codec.Member("part", part))...)
}

func (rw *responsesWriter) Text(buf []byte, delta string) []byte {
	if delta == "" {
		return buf
	}
	return rw.event(buf, "response.output_text.delta", append(rw.at(), codec.Member("delta", strictjson.String(delta)), codec.Member("logprobs", strictjson.Array()))...)
}

func (rw *responsesWriter) End(buf []byte, obj *strictjson.Value, text string) []byte {
	msg := strictjson.Object(codec.Member("id", rw.itemID), codec.Member("type", strictjson.String("message")),
		codec.Member("status", strictjson.String("completed")), codec.Member("role", strictjson.String("assistant")),
		codec.Member("content", strictjson.Array(outputTextPart(text))))
	output := codec.Items(obj.Get("output"))
	m := firstMessage(obj)
	switch {
	case m >= 0 && rw.head != nil:
		msg = output[m]
	case m >= 0:
		msg = shallow(output[m])
		msg.Set("id", rw.itemID)
	}
	part, streamed := outputTextPart(text), -1
	for j, p := range codec.Items(msg.Get("content")) {
		if j >= rw.parts && codec.Str(p.Get("type")) == "output_text" {
			part, streamed = p, j
			break
		}
	}
	buf = rw.event(buf, "response.output_text.done", append(rw.at(), codec.Member("text", strictjson.String(text)), codec.Member("logprobs", strictjson.Array()))...)
	buf = rw.event(buf, "response.content_part.done", append(rw.at(), codec.Member("part", part))...)
	k := rw.part + 1
	for j, p := range codec.Items(msg.Get("content")) {
		if j >= rw.parts && j != streamed {
			buf = rw.partEvents(buf, rw.itemID, rw.item, k, p)
			k++
		}
	}
	buf = rw.event(buf, "response.output_item.done", codec.Member("output_index", strictjson.Int(int64(rw.item))), codec.Member("item", msg))
	final := obj
	if rw.head == nil {
		// The stream's own order: the message first, as it went out.
		list := []*strictjson.Value{msg}
		for i, item := range output {
			if i != m {
				list = append(list, item)
			}
		}
		final = shallow(obj)
		final.Set("id", rw.id)
		if rw.r.Model != "" {
			final.Set("model", strictjson.String(rw.r.Model))
		}
		final.Set("output", strictjson.Array(list...))
	}
	i := rw.item + 1
	for j, item := range output {
		if j < rw.items || j == m {
			continue
		}
		buf = rw.itemEvents(buf, i, item)
		i++
	}
	typ := "response.completed"
	if codec.Str(obj.Get("status")) == "incomplete" {
		typ = "response.incomplete"
	}
	return rw.event(buf, typ, codec.Member("response", final))
}

// Fail is the Responses API's error event — its type, code, message and
// param — with OpenAI's error member, which the OpenAI libraries raise as
// the stream's error, and the contract report.
func (rw *responsesWriter) Fail(buf []byte, e *apierr.Error) []byte {
	return append(buf, responsesError(e, rw.seq)...)
}

// StreamError is the Responses API's error event. Its sequence number is
// 0: only keep-alives, which are not the answer's events, went before it.
func (Responses) StreamError(e *apierr.Error) []byte { return responsesError(e, 0) }

// responsesError is the Responses API's error event with e, the seq-th
// event of its stream: the event's code, message and param, and the error
// object OpenAI's other APIs send.
func responsesError(e *apierr.Error, seq int) []byte {
	body, _ := strictjson.Parse(openAI{}.EncodeError(e))
	ev := codec.Event("error", codec.Member("code", body.Get("error").Get("code")),
		codec.Member("message", strictjson.String(e.Message())), codec.Member("param", strictjson.Null()))
	ev.Members = append(ev.Members, body.Members...)
	ev.Set("sequence_number", strictjson.Int(int64(seq)))
	return frame.SSEErrorEvent(strictjson.Marshal(ev))
}

// itemEvents appends the events of output item i, whole, as Ollama
// streams it.
func (rw *responsesWriter) itemEvents(buf []byte, i int, item *strictjson.Value) []byte {
	idx := codec.Member("output_index", strictjson.Int(int64(i)))
	id := item.Get("id")
	if id == nil {
		id = strictjson.String("")
	}
	switch codec.Str(item.Get("type")) {
	case "function_call":
		// As Ollama streams a call: the item without its arguments,
		// the arguments, the item.
		args := item.Get("arguments")
		if args == nil {
			args = strictjson.String("")
		}
		added := item.Clone()
		added.Set("status", strictjson.String("in_progress"))
		added.Set("arguments", strictjson.String(""))
		buf = rw.event(buf, "response.output_item.added", idx, codec.Member("item", added))
		buf = rw.event(buf, "response.function_call_arguments.delta", codec.Member("item_id", id), idx, codec.Member("delta", args))
		buf = rw.event(buf, "response.function_call_arguments.done", codec.Member("item_id", id), idx, codec.Member("arguments", args))
	case "message":
		added := item.Clone()
		added.Set("status", strictjson.String("in_progress"))
		added.Set("content", strictjson.Array())
		buf = rw.event(buf, "response.output_item.added", idx, codec.Member("item", added))
		for j, part := range codec.Items(item.Get("content")) {
			buf = rw.partEvents(buf, id, i, j, part)
		}
	default:
		buf = rw.event(buf, "response.output_item.added", idx, codec.Member("item", item))
	}
	return rw.event(buf, "response.output_item.done", idx, codec.Member("item", item))
}

// partEvents appends the events of content part j of message item i,
// whole.
func (rw *responsesWriter) partEvents(buf []byte, id *strictjson.Value, i, j int, part *strictjson.Value) []byte {
	at := []strictjson.Member{codec.Member("item_id", id), codec.Member("output_index", strictjson.Int(int64(i))), codec.Member("content_index", strictjson.Int(int64(j)))}
	empty := part.Clone()
	if empty.Has("text") {
		empty.Set("text", strictjson.String(""))
	}
	buf = rw.event(buf, "response.content_part.added", append(at, codec.Member("part", empty))...)
	if codec.Str(part.Get("type")) == "output_text" {
		s := strictjson.String(codec.Str(part.Get("text")))
		buf = rw.event(buf, "response.output_text.delta", append(at, codec.Member("delta", s), codec.Member("logprobs", strictjson.Array()))...)
		buf = rw.event(buf, "response.output_text.done", append(at, codec.Member("text", s), codec.Member("logprobs", strictjson.Array()))...)
	}
	return rw.event(buf, "response.content_part.done", append(at, codec.Member("part", part))...)
}

// KeepAlive is the Responses API's response.in_progress event, of a
// response with the client's model and no output yet; the first comes
// after response.created, without which the OpenAI libraries take no
// event. The answer's own events follow from response.created again.
func (Responses) KeepAlive(r *codec.Request, n int) (string, []byte) {
	pending := strictjson.Object(
		codec.Member("id", strictjson.String("resp_pending")),
		codec.Member("object", strictjson.String("response")),
		codec.Member("created_at", strictjson.Int(time.Now().Unix())),
		codec.Member("status", strictjson.String("in_progress")),
		codec.Member("model", strictjson.String(r.Model)),
		codec.Member("output", strictjson.Array()),
	)
	event := func(typ string, seq int) []byte {
		return frame.NamedEvent(strictjson.Object(codec.Member("type", strictjson.String(typ)),
			codec.Member("sequence_number", strictjson.Int(int64(seq))), codec.Member("response", pending)))
	}
	if n == 0 {
		return frame.SSEType, append(event("response.created", 0), event("response.in_progress", 1)...)
	}
	return frame.SSEType, event("response.in_progress", n+1)
}

// Tools reads the Responses API's tools: {"type":"function","name",
// "parameters"}.
func (Responses) Tools(r *codec.Request) map[string]json.RawMessage {
	return toolcall.Schemas(r.Body.Get("tools"),
		func(t *strictjson.Value) *strictjson.Value {
			if codec.Str(t.Get("type")) != "function" {
				return nil
			}
			return t.Get("name")
		},
		func(t *strictjson.Value) *strictjson.Value { return t.Get("parameters") })
}

// ToolCalls reads the function_call items of the output.
func (Responses) ToolCalls(obj *strictjson.Value) []codec.ToolCall {
	return toolcall.Read(obj.Get("output"), toolcall.Typed("function_call"), "arguments")
}

// WithToolArgs writes arguments as OpenAI does: a string of JSON.
func (Responses) WithToolArgs(obj *strictjson.Value, args []*strictjson.Value) *strictjson.Value {
	out := obj.Clone()
	toolcall.Write(out.Get("output"), toolcall.Typed("function_call"), "arguments", args, toolcall.JSONString)
	return out
}

// shallow copies an object's member list, not its values: the member
// edits of an answer's stream frames must not reach the answer, which
// coalesced requests and the cache share.
func shallow(obj *strictjson.Value) *strictjson.Value {
	out := *obj
	out.Members = slices.Clone(obj.Members)
	return &out
}
