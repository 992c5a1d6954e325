package middleware

import (
	"net/http"

	"github.com/contractgateway/gateway/strictjson"
)

// generateCodec is Ollama's POST /api/generate: the text is `response`,
// a stream is NDJSON.
type generateCodec struct{}

var _ Codec = generateCodec{}

func (generateCodec) Path() string { return "/api/generate" }

func (generateCodec) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, true)
	if err != nil {
		return nil, err
	}
	nativeFormat(r)
	return r, nil
}

func (generateCodec) SetFormat(r *Request, schema *strictjson.Value) {
	r.Body.Set("format", schema)
	r.Edited = true
}

func (generateCodec) Temperature(r *Request) bool {
	return r.Body.Get("options").Has("temperature")
}

func (generateCodec) SetTemperature(r *Request, t float64) { nativeSetTemperature(r, t) }

func (generateCodec) Prompt(r *Request) string { return nativePrompt(r.Body) }

func generateText(obj *strictjson.Value) string {
	s, _ := obj.Get("response").AsString()
	return s
}

func (generateCodec) ReadAnswer(body []byte) (*Answer, error) {
	obj, text, err := readObjectOrNDJSON(body, generateText)
	if err != nil {
		return nil, err
	}
	return nativeCounters(&Answer{Obj: obj, Text: text}), nil
}

func (generateCodec) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	out.Set("response", strictjson.String(text))
	return out
}

// Encode re-emits a stream as Ollama writes one: a chunk with the text
// (and the thinking, which Ollama streams before the done chunk, never in
// it), then the done chunk with the counters and the contract summary.
func (generateCodec) Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error {
	if !r.Stream {
		return writeObject(w, nativeContentType, obj)
	}
	first := nativeFirstChunk(obj)
	first.Set("response", strictjson.String(text))
	last := obj.Clone()
	last.Set("response", strictjson.String(""))
	if th := obj.Get("thinking"); th != nil {
		first.Set("thinking", th)
		last.Delete("thinking")
	}
	first.Set("done", strictjson.BoolValue(false))
	return writeNDJSON(w, first, last)
}

// nativeFirstChunk starts a content chunk with the final object's model
// and created_at.
func nativeFirstChunk(obj *strictjson.Value) *strictjson.Value {
	first := object()
	for _, m := range obj.Members {
		switch m.Key {
		case "model", "created_at":
			first.Members = append(first.Members, m)
		}
	}
	return first
}
