package middleware

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/strictjson"
)

// responsesCodec is Ollama's OpenAI-compatible POST /v1/responses (the
// Responses API): the task is `instructions` and `input`, the format
// `text.format` (type json_schema), the text the output_text parts of the
// output's message items, and a stream is named server-sent events from
// response.created to response.completed.
type responsesCodec struct{}

var (
	_ Codec        = responsesCodec{}
	_ ErrorEncoder = responsesCodec{}
)

func (responsesCodec) Path() string { return "/v1/responses" }

func (responsesCodec) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, false)
	if err != nil {
		return nil, err
	}
	if f := r.Body.Get("text").Get("format"); f != nil && f.Kind == strictjson.KindObject {
		switch typ, _ := f.Get("type").AsString(); typ {
		case "json_schema":
			r.HasFormat = true
			if s := f.Get("schema"); s != nil && s.Kind == strictjson.KindObject {
				r.Schema = strictjson.Marshal(s)
			}
		case "json_object":
			r.HasFormat = true
		}
	}
	return r, nil
}

func (responsesCodec) SetFormat(r *Request, schema *strictjson.Value) {
	text := r.Body.Get("text")
	if text == nil || text.Kind != strictjson.KindObject {
		text = object()
		r.Body.Set("text", text)
	}
	text.Set("format", object(
		member("type", strictjson.String("json_schema")),
		member("name", strictjson.String("contract")),
		member("schema", schema),
		member("strict", strictjson.BoolValue(true)),
	))
	r.Edited = true
}

func (responsesCodec) Temperature(r *Request) bool { return r.Body.Has("temperature") }

func (responsesCodec) SetTemperature(r *Request, t float64) {
	r.Body.Set("temperature", strictjson.Number(trimFloat(t)))
	r.Edited = true
}

// Prompt renders instructions and input: a string, or items whose content
// is a string or input_text parts.
func (responsesCodec) Prompt(r *Request) string {
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
	if s, ok := r.Body.Get("instructions").AsString(); ok {
		add("", s)
	}
	in := r.Body.Get("input")
	if s, ok := in.AsString(); ok {
		add("", s)
		return b.String()
	}
	if in == nil {
		return b.String()
	}
	for _, item := range in.Items {
		role, _ := item.Get("role").AsString()
		add(role, contentText(item.Get("content")))
	}
	return b.String()
}

// contentText is the text of a message content: a string, or the text of
// its text parts (input_text, output_text, text).
func contentText(content *strictjson.Value) string {
	if s, ok := content.AsString(); ok {
		return s
	}
	if content == nil {
		return ""
	}
	var b strings.Builder
	for _, part := range content.Items {
		switch typ, _ := part.Get("type").AsString(); typ {
		case "input_text", "output_text", "text":
			s, _ := part.Get("text").AsString()
			b.WriteString(s)
		}
	}
	return b.String()
}

func (responsesCodec) ReadAnswer(body []byte) (*Answer, error) {
	trimmed := bytes.TrimSpace(body)
	var obj *strictjson.Value
	if bytes.HasPrefix(trimmed, []byte("event:")) || bytes.HasPrefix(trimmed, []byte("data:")) {
		var err error
		if obj, err = assembleResponsesSSE(trimmed); err != nil {
			return nil, err
		}
	} else {
		var err error
		if obj, err = strictjson.Parse(trimmed); err != nil || obj.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream answer is not a JSON object: %v", err)
		}
	}
	if e := obj.Get("error"); e != nil && !e.IsNull() {
		return nil, fmt.Errorf("upstream: %s", openAIErrorMessage(e))
	}
	if out := obj.Get("output"); out == nil || out.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("upstream answer has no output")
	}
	a := &Answer{Obj: obj, Text: responsesText(obj)}
	if st, _ := obj.Get("status").AsString(); st == "incomplete" {
		a.DoneReason, _ = obj.Get("incomplete_details").Get("reason").AsString()
		if a.DoneReason == "max_output_tokens" {
			a.DoneReason = "length"
		}
	}
	if n, ok := obj.Get("usage").Get("input_tokens").AsInt(); ok {
		a.PromptTokens = int(n)
	}
	if n, ok := obj.Get("usage").Get("output_tokens").AsInt(); ok {
		a.OutputTokens = int(n)
	}
	return a, nil
}

// responsesText is the text of a response: its message items'
// output_text parts.
func responsesText(obj *strictjson.Value) string {
	var b strings.Builder
	for _, item := range items(obj.Get("output")) {
		if typ, _ := item.Get("type").AsString(); typ != "message" {
			continue
		}
		for _, part := range items(item.Get("content")) {
			if typ, _ := part.Get("type").AsString(); typ == "output_text" {
				s, _ := part.Get("text").AsString()
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// assembleResponsesSSE reads a Responses stream: the response of its
// response.completed (or response.incomplete) event. A stream without it
// is incomplete; a response.failed or error event is the upstream's error.
func assembleResponsesSSE(body []byte) (*strictjson.Value, error) {
	datas, _ := sseData(body)
	for _, data := range datas {
		ev, err := strictjson.Parse(data)
		if err != nil || ev.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream stream is not JSON: %v", err)
		}
		switch typ, _ := ev.Get("type").AsString(); typ {
		case "response.completed", "response.incomplete":
			resp := ev.Get("response")
			if resp == nil || resp.Kind != strictjson.KindObject {
				return nil, fmt.Errorf("upstream %s event without a response", typ)
			}
			return resp, nil
		case "response.failed":
			return nil, fmt.Errorf("upstream: %s", openAIErrorMessage(ev.Get("response").Get("error")))
		case "error":
			msg, _ := ev.Get("message").AsString()
			if msg == "" {
				msg = openAIErrorMessage(ev.Get("error"))
			}
			return nil, fmt.Errorf("upstream: %s", msg)
		}
	}
	return nil, fmt.Errorf("%w: the stream ended before response.completed", ErrIncomplete)
}

// WithText puts text in the first output_text part of the first message
// item, dropping the item's other text parts; a response without a message
// gets one.
func (responsesCodec) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	output := out.Get("output")
	if output == nil || output.Kind != strictjson.KindArray {
		output = strictjson.Array()
		out.Set("output", output)
	}
	for _, item := range output.Items {
		if typ, _ := item.Get("type").AsString(); typ != "message" {
			continue
		}
		content := item.Get("content")
		if content == nil || content.Kind != strictjson.KindArray {
			content = strictjson.Array()
			item.Set("content", content)
		}
		parts := content.Items[:0:0]
		placed := false
		for _, part := range content.Items {
			if typ, _ := part.Get("type").AsString(); typ == "output_text" {
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
	output.Items = append(output.Items, object(
		member("id", strictjson.String("msg_contract")),
		member("type", strictjson.String("message")),
		member("status", strictjson.String("completed")),
		member("role", strictjson.String("assistant")),
		member("content", strictjson.Array(outputTextPart(text))),
	))
	return out
}

func outputTextPart(text string) *strictjson.Value {
	return object(
		member("type", strictjson.String("output_text")),
		member("text", strictjson.String(text)),
		member("annotations", strictjson.Array()),
		member("logprobs", strictjson.Array()),
	)
}

// Encode re-emits a stream as Ollama streams a response:
// response.created and response.in_progress with an empty output; for
// each output item its added event, the text's part, delta and done
// events for a message, its done event; then response.completed with the
// whole response, the contract summary included.
func (responsesCodec) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return writeObject(w, "application/json", obj)
	}
	seq := 0
	var events []*strictjson.Value
	emit := func(typ string, members ...strictjson.Member) {
		ev := object(member("type", strictjson.String(typ)))
		ev.Members = append(ev.Members, members...)
		ev.Set("sequence_number", strictjson.Int(int64(seq)))
		seq++
		events = append(events, ev)
	}
	pending := obj.Clone()
	pending.Set("status", strictjson.String("in_progress"))
	pending.Set("output", strictjson.Array())
	pending.Set("usage", strictjson.Null())
	pending.Delete("contract")
	if pending.Has("completed_at") {
		pending.Set("completed_at", strictjson.Null())
	}
	emit("response.created", member("response", pending))
	emit("response.in_progress", member("response", pending))
	for i, item := range items(obj.Get("output")) {
		idx := member("output_index", strictjson.Int(int64(i)))
		typ, _ := item.Get("type").AsString()
		if typ == "function_call" {
			// As Ollama streams a call: the item without its arguments,
			// the arguments, the item.
			id := item.Get("id")
			if id == nil {
				id = strictjson.String("")
			}
			args := item.Get("arguments")
			if args == nil {
				args = strictjson.String("")
			}
			added := item.Clone()
			added.Set("status", strictjson.String("in_progress"))
			added.Set("arguments", strictjson.String(""))
			emit("response.output_item.added", idx, member("item", added))
			emit("response.function_call_arguments.delta", member("item_id", id), idx, member("delta", args))
			emit("response.function_call_arguments.done", member("item_id", id), idx, member("arguments", args))
			emit("response.output_item.done", idx, member("item", item))
			continue
		}
		if typ != "message" {
			emit("response.output_item.added", idx, member("item", item))
			emit("response.output_item.done", idx, member("item", item))
			continue
		}
		id := item.Get("id")
		if id == nil {
			id = strictjson.String("")
		}
		added := item.Clone()
		added.Set("status", strictjson.String("in_progress"))
		added.Set("content", strictjson.Array())
		emit("response.output_item.added", idx, member("item", added))
		for j, part := range items(item.Get("content")) {
			ci := member("content_index", strictjson.Int(int64(j)))
			empty := part.Clone()
			if empty.Has("text") {
				empty.Set("text", strictjson.String(""))
			}
			emit("response.content_part.added", member("item_id", id), idx, ci, member("part", empty))
			if pt, _ := part.Get("type").AsString(); pt == "output_text" {
				s, _ := part.Get("text").AsString()
				emit("response.output_text.delta", member("item_id", id), idx, ci,
					member("delta", strictjson.String(s)), member("logprobs", strictjson.Array()))
				emit("response.output_text.done", member("item_id", id), idx, ci,
					member("text", strictjson.String(s)), member("logprobs", strictjson.Array()))
			}
			emit("response.content_part.done", member("item_id", id), idx, ci, member("part", part))
		}
		emit("response.output_item.done", idx, member("item", item))
	}
	final := "response.completed"
	if st, _ := obj.Get("status").AsString(); st == "incomplete" {
		final = "response.incomplete"
	}
	emit(final, member("response", obj))
	return writeNamedSSE(w, events)
}

// EncodeError writes errors in OpenAI's shape, which the OpenAI client
// libraries parse.
func (responsesCodec) EncodeError(e *apierr.Error) []byte { return openAIErrorBody(e) }
