package ollama

import (
	"net/http"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Generate is Ollama's POST /api/generate: the task is system and prompt,
// the text `response`, a stream NDJSON. The API declares no tools.
type Generate struct{ native }

var _ codec.Codec = Generate{}

// Path is /api/generate.
func (Generate) Path() string { return "/api/generate" }

// ReadAnswer reads one object or an NDJSON stream.
func (Generate) ReadAnswer(body []byte) (*codec.Answer, error) {
	return readNative(body, &nativeAssembler{})
}

// NewStreamReader reads an NDJSON stream as it arrives.
func (Generate) NewStreamReader() *codec.StreamReader { return nativeReader(false) }

// WithText sets response.
func (Generate) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := codec.CloneExcept(obj, "response")
	out.Set("response", strictjson.String(text))
	return out
}

// KeepAlive is a chunk with an empty response and done false.
func (Generate) KeepAlive(r *codec.Request, _ int) (string, []byte) {
	return frame.NDJSONType, frame.KeepAliveNDJSON(r.Model, codec.Member("response", strictjson.String("")))
}

// Encode re-emits a stream as Ollama writes one: a chunk with the text
// (and the thinking, which Ollama streams before the done chunk, never in
// it), then the done chunk with the counters and the contract summary.
func (Generate) Encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return encodeNative(w, r, obj, text, false)
}

// NewStreamWriter writes an NDJSON stream of response chunks.
func (Generate) NewStreamWriter(w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
	return newNativeWriter(w, r, false, nil)
}
