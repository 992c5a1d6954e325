package middleware

import (
	"net/http"

	"github.com/contractgateway/gateway/strictjson"
)

// chatCodec is Ollama's POST /api/chat: the text is `message.content`, a
// stream is NDJSON.
type chatCodec struct{}

var _ Codec = chatCodec{}

func (chatCodec) Path() string { return "/api/chat" }

func (chatCodec) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, true)
	if err != nil {
		return nil, err
	}
	nativeFormat(r)
	return r, nil
}

func (chatCodec) SetFormat(r *Request, schema *strictjson.Value) {
	r.Body.Set("format", schema)
	r.Edited = true
}

func (chatCodec) Temperature(r *Request) bool {
	return r.Body.Get("options").Has("temperature")
}

func (chatCodec) SetTemperature(r *Request, t float64) { nativeSetTemperature(r, t) }

func (chatCodec) Prompt(r *Request) string { return nativePrompt(r.Body) }

func chatText(obj *strictjson.Value) string {
	s, _ := obj.Get("message").Get("content").AsString()
	return s
}

func (chatCodec) ReadAnswer(body []byte) (*Answer, error) {
	obj, text, err := readObjectOrNDJSON(body, chatText)
	if err != nil {
		return nil, err
	}
	return nativeCounters(&Answer{Obj: obj, Text: text}), nil
}

func (chatCodec) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	msg := out.Get("message")
	if msg == nil || msg.Kind != strictjson.KindObject {
		msg = object(member("role", strictjson.String("assistant")))
		out.Set("message", msg)
	}
	msg.Set("content", strictjson.String(text))
	return out
}

// Encode re-emits a stream as Ollama writes one: the content chunk carries
// the whole message (thinking, tool calls, …) with the validated text, the
// done chunk an empty message, the counters and the contract summary.
func (chatCodec) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return writeObject(w, nativeContentType, obj)
	}
	role := strictjson.String("assistant")
	if rv := obj.Get("message").Get("role"); rv != nil {
		role = rv
	}
	msg := object(member("role", role), member("content", strictjson.String(text)))
	if m := obj.Get("message"); m != nil && m.Kind == strictjson.KindObject {
		msg = m.Clone()
		msg.Set("content", strictjson.String(text))
	}
	first := nativeFirstChunk(obj)
	first.Set("message", msg)
	first.Set("done", strictjson.BoolValue(false))
	last := obj.Clone()
	last.Set("message", object(member("role", role), member("content", strictjson.String(""))))
	return writeNDJSON(w, first, last)
}
