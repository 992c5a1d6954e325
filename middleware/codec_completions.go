package middleware

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/strictjson"
)

// completionsCodec is Ollama's OpenAI-compatible legacy POST
// /v1/completions: the task is `prompt`, the text `choices[0].text`, the
// temperature top-level, and a stream is server-sent events ending with
// [DONE]. Ollama takes no output format on this endpoint (its
// CompletionRequest has no response_format), so the guard validates and
// repairs what the model writes but cannot constrain it, and a client's
// response_format is not an ad-hoc contract here.
type completionsCodec struct{}

var (
	_ Codec        = completionsCodec{}
	_ ErrorEncoder = completionsCodec{}
)

func (completionsCodec) Path() string { return "/v1/completions" }

func (completionsCodec) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, false)
	if err != nil {
		return nil, err
	}
	if iu := r.Body.Get("stream_options").Get("include_usage"); iu != nil && iu.Kind == strictjson.KindBool {
		r.IncludeUsage = iu.Bool
	}
	if p := r.Body.Get("prompt"); p != nil && p.Kind != strictjson.KindString && !p.IsNull() {
		return nil, fmt.Errorf("%w: \"prompt\" must be a string", errBadRequest)
	}
	return r, nil
}

// SetFormat does nothing: Ollama's /v1/completions has no format to set.
func (completionsCodec) SetFormat(*Request, *strictjson.Value) {}

func (completionsCodec) Temperature(r *Request) bool { return r.Body.Has("temperature") }

func (completionsCodec) SetTemperature(r *Request, t float64) {
	r.Body.Set("temperature", strictjson.Number(trimFloat(t)))
	r.Edited = true
}

func (completionsCodec) Prompt(r *Request) string { return nativePrompt(r.Body) }

func (completionsCodec) ReadAnswer(body []byte) (*Answer, error) {
	trimmed := bytes.TrimSpace(body)
	var obj *strictjson.Value
	if bytes.HasPrefix(trimmed, []byte("data:")) {
		var err error
		if obj, err = assembleCompletionSSE(trimmed); err != nil {
			return nil, err
		}
	} else {
		var err error
		if obj, err = strictjson.Parse(trimmed); err != nil || obj.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream answer is not a JSON object: %v", err)
		}
		if e := obj.Get("error"); e != nil && !e.IsNull() {
			return nil, fmt.Errorf("upstream: %s", openAIErrorMessage(e))
		}
	}
	a := &Answer{Obj: obj}
	choice := obj.Get("choices").Index(0)
	a.Text, _ = choice.Get("text").AsString()
	a.DoneReason, _ = choice.Get("finish_reason").AsString()
	openAIUsage(a, obj)
	return a, nil
}

// openAIErrorMessage reads the message of an OpenAI error member (an
// object with a message, or Ollama's plain string).
func openAIErrorMessage(e *strictjson.Value) string {
	if s, ok := e.AsString(); ok {
		return s
	}
	msg, _ := e.Get("message").AsString()
	return msg
}

// openAIUsage reads OpenAI's usage counters.
func openAIUsage(a *Answer, obj *strictjson.Value) {
	if n, ok := obj.Get("usage").Get("prompt_tokens").AsInt(); ok {
		a.PromptTokens = int(n)
	}
	if n, ok := obj.Get("usage").Get("completion_tokens").AsInt(); ok {
		a.OutputTokens = int(n)
	}
}

// sseData returns the data of each data: line of a server-sent event
// stream, and whether the stream ended with [DONE].
func sseData(body []byte) (datas [][]byte, done bool) {
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return datas, true
		}
		datas = append(datas, data)
	}
	return datas, false
}

// assembleCompletionSSE turns a completion stream into the equivalent
// non-stream completion. A stream that ends before [DONE] is incomplete.
func assembleCompletionSSE(body []byte) (*strictjson.Value, error) {
	datas, done := sseData(body)
	var text strings.Builder
	var last, usage *strictjson.Value
	finish := strictjson.String("stop")
	for _, data := range datas {
		obj, err := strictjson.Parse(data)
		if err != nil || obj.Kind != strictjson.KindObject {
			return nil, fmt.Errorf("upstream stream is not JSON: %v", err)
		}
		if e := obj.Get("error"); e != nil && !e.IsNull() {
			return nil, fmt.Errorf("upstream: %s", openAIErrorMessage(e))
		}
		choice := obj.Get("choices").Index(0)
		if s, ok := choice.Get("text").AsString(); ok {
			text.WriteString(s)
		}
		if fr := choice.Get("finish_reason"); fr != nil && !fr.IsNull() {
			finish = fr
		}
		if u := obj.Get("usage"); u != nil && !u.IsNull() && u.Has("total_tokens") {
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
	out := last.Clone()
	out.Set("object", strictjson.String("text_completion"))
	out.Set("choices", strictjson.Array(object(
		member("text", strictjson.String(text.String())),
		member("index", strictjson.Int(0)),
		member("finish_reason", finish),
	)))
	if usage != nil {
		out.Set("usage", usage)
	}
	return out, nil
}

func (completionsCodec) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	if root, err := strictjson.Replace(out, "/choices/0/text", strictjson.String(text)); err == nil {
		return root
	}
	out.Set("choices", strictjson.Array(object(
		member("text", strictjson.String(text)),
		member("index", strictjson.Int(0)),
		member("finish_reason", strictjson.String("stop")),
	)))
	return out
}

// Encode re-emits a stream as Ollama streams a completion: the chunk with
// the text, the chunk with the finish reason and the contract summary, the
// usage chunk when the client asked for it, then [DONE].
func (completionsCodec) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return writeObject(w, "application/json", obj)
	}
	chunk := func(choices *strictjson.Value, extra ...strictjson.Member) *strictjson.Value {
		ch := object(member("id", strictjson.String("")), member("object", strictjson.String("text_completion")))
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
		return ch
	}
	choice := func(text string, finish *strictjson.Value) *strictjson.Value {
		return strictjson.Array(object(
			member("text", strictjson.String(text)),
			member("index", strictjson.Int(0)),
			member("finish_reason", finish),
		))
	}
	finish := obj.Get("choices").Index(0).Get("finish_reason")
	if finish == nil || finish.IsNull() {
		finish = strictjson.String("stop")
	}
	var tail []strictjson.Member
	if s := obj.Get("contract"); s != nil {
		tail = append(tail, member("contract", s))
	}
	chunks := []*strictjson.Value{chunk(choice(text, strictjson.Null())), chunk(choice("", finish), tail...)}
	if u := obj.Get("usage"); r.IncludeUsage && u != nil {
		chunks = append(chunks, chunk(strictjson.Array(), member("usage", u)))
	}
	return writeSSE(w, chunks, true)
}

// EncodeError writes errors in OpenAI's shape, which the OpenAI client
// libraries parse.
func (completionsCodec) EncodeError(e *apierr.Error) []byte { return openAIErrorBody(e) }

// writeSSE writes data-only server-sent events, then [DONE] when done is
// set.
func writeSSE(w http.ResponseWriter, events []*strictjson.Value, done bool) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	for _, ev := range events {
		buf = append(buf, "data: "...)
		buf = ev.AppendJSON(buf)
		buf = append(buf, "\n\n"...)
	}
	if done {
		buf = append(buf, "data: [DONE]\n\n"...)
	}
	_, err := w.Write(buf)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// writeNamedSSE writes server-sent events with an event line each, the
// event's name being its "type" member (the Responses and Anthropic
// streams).
func writeNamedSSE(w http.ResponseWriter, events []*strictjson.Value) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	for _, ev := range events {
		typ, _ := ev.Get("type").AsString()
		buf = append(buf, "event: "...)
		buf = append(buf, typ...)
		buf = append(buf, "\ndata: "...)
		buf = ev.AppendJSON(buf)
		buf = append(buf, "\n\n"...)
	}
	_, err := w.Write(buf)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// items returns the items of an array, nil for anything else (nil
// included).
func items(v *strictjson.Value) []*strictjson.Value {
	if v == nil || v.Kind != strictjson.KindArray {
		return nil
	}
	return v.Items
}
