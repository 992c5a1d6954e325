package middleware

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/strictjson"
)

// anthropicCodec is Ollama's Anthropic-compatible POST /v1/messages: the
// task is `system` and `messages`, the text the content blocks of type
// text, the temperature top-level, and a stream is named server-sent
// events from message_start to message_stop. Ollama takes no output
// format on this endpoint, so the guard validates and repairs what the
// model writes but cannot constrain it.
type anthropicCodec struct{}

var (
	_ Codec        = anthropicCodec{}
	_ ErrorEncoder = anthropicCodec{}
)

func (anthropicCodec) Path() string { return "/v1/messages" }

func (anthropicCodec) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, false)
	if err != nil {
		return nil, err
	}
	if m := r.Body.Get("messages"); m != nil && m.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("%w: \"messages\" must be an array", errBadRequest)
	}
	return r, nil
}

// SetFormat does nothing: Ollama's /v1/messages has no format to set.
func (anthropicCodec) SetFormat(*Request, *strictjson.Value) {}

func (anthropicCodec) Temperature(r *Request) bool { return r.Body.Has("temperature") }

func (anthropicCodec) SetTemperature(r *Request, t float64) {
	r.Body.Set("temperature", strictjson.Number(trimFloat(t)))
	r.Edited = true
}

// Prompt renders system (a string or text blocks) and messages (content
// a string or blocks).
func (anthropicCodec) Prompt(r *Request) string {
	var b strings.Builder
	if s := contentText(r.Body.Get("system")); s != "" {
		b.WriteString(s)
	}
	if msgs := r.Body.Get("messages"); msgs != nil {
		for _, m := range msgs.Items {
			role, _ := m.Get("role").AsString()
			content := contentText(m.Get("content"))
			if content == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(role)
			b.WriteString(": ")
			b.WriteString(content)
		}
	}
	return b.String()
}

func (anthropicCodec) ReadAnswer(body []byte) (*Answer, error) {
	trimmed := bytes.TrimSpace(body)
	var obj *strictjson.Value
	if bytes.HasPrefix(trimmed, []byte("event:")) || bytes.HasPrefix(trimmed, []byte("data:")) {
		var err error
		if obj, err = assembleAnthropicSSE(trimmed); err != nil {
			return nil, err
		}
	} else {
		var err error
		if obj, err = strictjson.Parse(trimmed); err != nil || obj.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream answer is not a JSON object: %v", err)
		}
	}
	if typ, _ := obj.Get("type").AsString(); typ == "error" {
		msg, _ := obj.Get("error").Get("message").AsString()
		return nil, fmt.Errorf("upstream: %s", msg)
	}
	if c := obj.Get("content"); c == nil || c.Kind != strictjson.KindArray {
		return nil, fmt.Errorf("upstream answer has no content")
	}
	a := &Answer{Obj: obj, Text: anthropicText(obj)}
	a.DoneReason, _ = obj.Get("stop_reason").AsString()
	if n, ok := obj.Get("usage").Get("input_tokens").AsInt(); ok {
		a.PromptTokens = int(n)
	}
	if n, ok := obj.Get("usage").Get("output_tokens").AsInt(); ok {
		a.OutputTokens = int(n)
	}
	return a, nil
}

// anthropicText is the text of a message: its text blocks.
func anthropicText(obj *strictjson.Value) string {
	var b strings.Builder
	for _, block := range items(obj.Get("content")) {
		if typ, _ := block.Get("type").AsString(); typ == "text" {
			s, _ := block.Get("text").AsString()
			b.WriteString(s)
		}
	}
	return b.String()
}

// assembleAnthropicSSE turns a Messages stream into the equivalent
// message: message_start's message, each block from its start event and
// deltas, the stop reason and usage of message_delta. A stream without
// message_stop is incomplete; an error event is the upstream's error.
func assembleAnthropicSSE(body []byte) (*strictjson.Value, error) {
	datas, _ := sseData(body)
	var msg *strictjson.Value
	var blocks []*strictjson.Value
	var partial []strings.Builder
	for _, data := range datas {
		ev, err := strictjson.Parse(data)
		if err != nil || ev.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream stream is not JSON: %v", err)
		}
		typ, _ := ev.Get("type").AsString()
		if typ == "error" {
			m, _ := ev.Get("error").Get("message").AsString()
			return nil, fmt.Errorf("upstream: %s", m)
		}
		if typ != "message_start" && msg == nil {
			if typ == "ping" {
				continue
			}
			return nil, fmt.Errorf("upstream stream: %s before message_start", typ)
		}
		idx64, _ := ev.Get("index").AsInt()
		idx := int(idx64)
		switch typ {
		case "message_start":
			msg = ev.Get("message")
			if msg == nil || msg.Kind != strictjson.KindObject {
				return nil, fmt.Errorf("upstream message_start without a message")
			}
			msg = msg.Clone()
		case "content_block_start":
			if idx < 0 || idx > len(blocks) || idx > 1<<16 {
				return nil, fmt.Errorf("upstream stream: block %d out of order", idx)
			}
			if idx == len(blocks) {
				blocks = append(blocks, nil)
				partial = append(partial, strings.Builder{})
			}
			b := ev.Get("content_block")
			if b == nil || b.Kind != strictjson.KindObject {
				return nil, fmt.Errorf("upstream content_block_start without a block")
			}
			blocks[idx] = b.Clone()
		case "content_block_delta":
			if idx < 0 || idx >= len(blocks) {
				return nil, fmt.Errorf("upstream stream: delta of unknown block %d", idx)
			}
			d := ev.Get("delta")
			switch dt, _ := d.Get("type").AsString(); dt {
			case "text_delta":
				s, _ := d.Get("text").AsString()
				prev, _ := blocks[idx].Get("text").AsString()
				blocks[idx].Set("text", strictjson.String(prev+s))
			case "thinking_delta":
				s, _ := d.Get("thinking").AsString()
				prev, _ := blocks[idx].Get("thinking").AsString()
				blocks[idx].Set("thinking", strictjson.String(prev+s))
			case "input_json_delta":
				s, _ := d.Get("partial_json").AsString()
				partial[idx].WriteString(s)
			}
		case "message_delta":
			if d := ev.Get("delta"); d != nil && d.Kind == strictjson.KindObject {
				for _, m := range d.Members {
					msg.Set(m.Key, m.Value)
				}
			}
			if u := ev.Get("usage"); u != nil && u.Kind == strictjson.KindObject {
				usage := msg.Get("usage")
				if usage == nil || usage.Kind != strictjson.KindObject {
					usage = object()
					msg.Set("usage", usage)
				}
				for _, m := range u.Members {
					usage.Set(m.Key, m.Value)
				}
			}
		case "message_stop":
			for i, b := range blocks {
				if b == nil {
					return nil, fmt.Errorf("upstream stream: block %d never started", i)
				}
				if partial[i].Len() > 0 {
					in, err := strictjson.Parse([]byte(partial[i].String()))
					if err != nil {
						return nil, fmt.Errorf("upstream stream: tool input is not JSON: %v", err)
					}
					b.Set("input", in)
				}
			}
			msg.Set("content", strictjson.Array(blocks...))
			return msg, nil
		}
	}
	return nil, fmt.Errorf("%w: the stream ended before message_stop", ErrIncomplete)
}

// WithText puts text in the first text block, dropping the other text
// blocks; a message without one gets it after its thinking blocks.
func (anthropicCodec) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	content := out.Get("content")
	if content == nil || content.Kind != strictjson.KindArray {
		content = strictjson.Array()
		out.Set("content", content)
	}
	tb := object(member("type", strictjson.String("text")), member("text", strictjson.String(text)))
	blocks := content.Items[:0:0]
	placed := false
	for _, b := range content.Items {
		switch typ, _ := b.Get("type").AsString(); {
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

// Encode re-emits a stream as Ollama streams a message: message_start
// with an empty content, each block's start, delta and stop events,
// message_delta with the stop reason, the usage and the contract summary,
// then message_stop.
func (anthropicCodec) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return writeObject(w, "application/json", obj)
	}
	var events []*strictjson.Value
	emit := func(typ string, members ...strictjson.Member) {
		ev := object(member("type", strictjson.String(typ)))
		ev.Members = append(ev.Members, members...)
		events = append(events, ev)
	}
	start := obj.Clone()
	start.Set("content", strictjson.Array())
	start.Delete("contract")
	start.Set("stop_reason", strictjson.Null())
	usage := object()
	if u := obj.Get("usage"); u != nil && u.Kind == strictjson.KindObject {
		usage = u
	}
	startUsage := usage.Clone()
	startUsage.Set("output_tokens", strictjson.Int(0))
	start.Set("usage", startUsage)
	emit("message_start", member("message", start))
	for i, b := range items(obj.Get("content")) {
		idx := member("index", strictjson.Int(int64(i)))
		empty := b.Clone()
		var delta *strictjson.Value
		switch typ, _ := b.Get("type").AsString(); typ {
		case "text":
			s, _ := b.Get("text").AsString()
			empty.Set("text", strictjson.String(""))
			delta = object(member("type", strictjson.String("text_delta")), member("text", strictjson.String(s)))
		case "thinking":
			s, _ := b.Get("thinking").AsString()
			empty.Set("thinking", strictjson.String(""))
			delta = object(member("type", strictjson.String("thinking_delta")), member("thinking", strictjson.String(s)))
		case "tool_use":
			in := b.Get("input")
			if in == nil {
				in = object()
			}
			empty.Set("input", object())
			delta = object(member("type", strictjson.String("input_json_delta")),
				member("partial_json", strictjson.String(string(strictjson.Marshal(in)))))
		}
		emit("content_block_start", idx, member("content_block", empty))
		if delta != nil {
			emit("content_block_delta", idx, member("delta", delta))
		}
		emit("content_block_stop", idx)
	}
	stop := obj.Get("stop_reason")
	if stop == nil {
		stop = strictjson.Null()
	}
	md := []strictjson.Member{
		member("delta", object(member("stop_reason", stop), member("stop_sequence", strictjson.Null()))),
		member("usage", usage),
	}
	if s := obj.Get("contract"); s != nil {
		md = append(md, member("contract", s))
	}
	emit("message_delta", md...)
	emit("message_stop")
	return writeNamedSSE(w, events)
}

// EncodeError writes errors in Anthropic's shape, which the Anthropic
// client libraries parse.
func (anthropicCodec) EncodeError(e *apierr.Error) []byte { return anthropicErrorBody(e) }
