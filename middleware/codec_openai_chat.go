package middleware

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/strictjson"
)

// openAIChatCodec is Ollama's OpenAI-compatible POST /v1/chat/completions:
// the text is `choices[0].message.content`, the format
// `response_format.json_schema.schema`, the temperature top-level, and a
// stream is server-sent events ending with [DONE].
type openAIChatCodec struct{}

var _ Codec = openAIChatCodec{}

func (openAIChatCodec) Path() string { return "/v1/chat/completions" }

func (openAIChatCodec) Decode(raw []byte) (*Request, error) {
	// OpenAI's API does not stream unless told to.
	r, err := decodeCommon(raw, false)
	if err != nil {
		return nil, err
	}
	if iu := r.Body.Get("stream_options").Get("include_usage"); iu != nil && iu.Kind == strictjson.KindBool {
		r.IncludeUsage = iu.Bool
	}
	if rf := r.Body.Get("response_format"); rf != nil && rf.Kind == strictjson.KindObject {
		r.HasFormat = true
		if s := rf.Get("json_schema").Get("schema"); s != nil && s.Kind == strictjson.KindObject {
			r.Schema = strictjson.Marshal(s)
		}
	}
	return r, nil
}

func (openAIChatCodec) SetFormat(r *Request, schema *strictjson.Value) {
	r.Body.Set("response_format", object(
		member("type", strictjson.String("json_schema")),
		member("json_schema", object(member("name", strictjson.String("contract")), member("schema", schema))),
	))
	r.Edited = true
}

func (openAIChatCodec) Temperature(r *Request) bool { return r.Body.Has("temperature") }

func (openAIChatCodec) SetTemperature(r *Request, t float64) {
	r.Body.Set("temperature", strictjson.Number(trimFloat(t)))
	r.Edited = true
}

func (openAIChatCodec) Prompt(r *Request) string { return nativePrompt(r.Body) }

func (openAIChatCodec) ReadAnswer(body []byte) (*Answer, error) {
	trimmed := bytes.TrimSpace(body)
	var obj *strictjson.Value
	if bytes.HasPrefix(trimmed, []byte("data:")) {
		var err error
		if obj, err = assembleSSE(trimmed); err != nil {
			return nil, err
		}
	} else {
		var err error
		if obj, err = strictjson.Parse(trimmed); err != nil || obj.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream answer is not a JSON object: %v", err)
		}
		if e := obj.Get("error"); e != nil {
			msg, _ := e.Get("message").AsString()
			return nil, fmt.Errorf("upstream: %s", msg)
		}
	}
	a := &Answer{Obj: obj}
	choice := obj.Get("choices").Index(0)
	a.Text, _ = choice.Get("message").Get("content").AsString()
	a.DoneReason, _ = choice.Get("finish_reason").AsString()
	if n, ok := obj.Get("usage").Get("prompt_tokens").AsInt(); ok {
		a.PromptTokens = int(n)
	}
	if n, ok := obj.Get("usage").Get("completion_tokens").AsInt(); ok {
		a.OutputTokens = int(n)
	}
	return a, nil
}

// assembleSSE turns a chat completion stream into the equivalent
// non-stream completion. A stream that ends before [DONE] is incomplete.
func assembleSSE(body []byte) (*strictjson.Value, error) {
	var text strings.Builder
	var last, usage *strictjson.Value
	finish := strictjson.String("stop")
	done := false
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		obj, err := strictjson.Parse(data)
		if err != nil || obj.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream stream is not JSON: %v", err)
		}
		if e := obj.Get("error"); e != nil {
			msg, _ := e.Get("message").AsString()
			return nil, fmt.Errorf("upstream: %s", msg)
		}
		choice := obj.Get("choices").Index(0)
		if s, ok := choice.Get("delta").Get("content").AsString(); ok {
			text.WriteString(s)
		}
		if fr := choice.Get("finish_reason"); fr != nil && !fr.IsNull() {
			finish = fr
		}
		if u := obj.Get("usage"); u != nil && !u.IsNull() {
			usage = u
		}
		last = obj
	}
	if last == nil {
		return nil, fmt.Errorf("%w: empty stream", ErrIncomplete)
	}
	if !done {
		return nil, fmt.Errorf("%w: the stream ended before [DONE]", ErrIncomplete)
	}
	choice := object(
		member("index", strictjson.Int(0)),
		member("message", object(member("role", strictjson.String("assistant")), member("content", strictjson.String(text.String())))),
		member("finish_reason", finish),
	)
	out := last.Clone()
	out.Set("object", strictjson.String("chat.completion"))
	out.Set("choices", strictjson.Array(choice))
	if usage != nil {
		out.Set("usage", usage)
	}
	return out, nil
}

func (openAIChatCodec) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	if root, err := strictjson.Replace(out, "/choices/0/message/content", strictjson.String(text)); err == nil {
		return root
	}
	return out
}

// Encode re-emits a stream as Ollama streams a chat completion: the chunk
// with the text (and reasoning, tool calls), the chunk with the finish
// reason and the contract summary, the usage chunk when the client asked
// for it, then [DONE].
func (openAIChatCodec) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return writeObject(w, "application/json", obj)
	}
	chunk := func(choices *strictjson.Value, extra ...strictjson.Member) []byte {
		ch := object(member("id", strictjson.String("")), member("object", strictjson.String("chat.completion.chunk")))
		for _, m := range obj.Members {
			switch m.Key {
			case "id", "created", "model", "system_fingerprint":
				ch.Set(m.Key, m.Value)
			}
		}
		ch.Set("choices", choices)
		for _, m := range extra {
			ch.Set(m.Key, m.Value)
		}
		return strictjson.Marshal(ch)
	}
	choice := func(delta, finish *strictjson.Value) *strictjson.Value {
		return strictjson.Array(object(
			member("index", strictjson.Int(0)),
			member("delta", delta),
			member("finish_reason", finish),
		))
	}
	finish := obj.Get("choices").Index(0).Get("finish_reason")
	if finish == nil || finish.IsNull() {
		finish = strictjson.String("stop")
	}
	delta := object(member("role", strictjson.String("assistant")), member("content", strictjson.String(text)))
	if m := obj.Get("choices").Index(0).Get("message"); m != nil && m.Kind == strictjson.KindObject {
		delta = m.Clone()
		delta.Set("content", strictjson.String(text))
	}
	var tail []strictjson.Member
	if s := obj.Get("contract"); s != nil {
		tail = append(tail, member("contract", s))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	buf = append(buf, "data: "...)
	buf = append(buf, chunk(choice(delta, strictjson.Null()))...)
	buf = append(buf, "\n\ndata: "...)
	buf = append(buf, chunk(choice(object(member("role", strictjson.String("assistant")), member("content", strictjson.String(""))), finish), tail...)...)
	if u := obj.Get("usage"); r.IncludeUsage && u != nil {
		buf = append(buf, "\n\ndata: "...)
		buf = append(buf, chunk(strictjson.Array(), member("usage", u))...)
	}
	buf = append(buf, "\n\ndata: [DONE]\n\n"...)
	_, err := w.Write(buf)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}
