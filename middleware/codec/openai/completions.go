package openai

import (
	"fmt"
	"net/http"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Completions is Ollama's OpenAI-compatible legacy POST /v1/completions:
// the task is `prompt`, the text `choices[0].text`, and a stream is
// server-sent events ending with [DONE]. Ollama takes no output format on
// this endpoint (its CompletionRequest has no response_format), so the
// guard validates and repairs what the model writes but cannot constrain
// it, and a client's response_format is not an ad-hoc contract here. The
// API declares no tools.
type Completions struct{ openAI }

var _ codec.Codec = Completions{}

// completionChoices are the choices of a completion: a text, in an answer
// and in a stream alike.
var completionChoices = choices{
	object: "text_completion", chunkObject: "text_completion",
	text:      completionText,
	deltaText: completionText,
	choice:    completionChoice,
	delta: func(text string, _, finish *strictjson.Value) *strictjson.Value {
		return completionChoice(text, finish)
	},
	idPrefix: "cmpl-",
}

func completionText(c *strictjson.Value) string { return codec.Str(c.Get("text")) }

func completionChoice(text string, finish *strictjson.Value) *strictjson.Value {
	return strictjson.Object(
		codec.Member("text", strictjson.String(text)),
		codec.Member("index", strictjson.Int(0)),
		codec.Member("finish_reason", finish),
	)
}

// Path is /v1/completions.
func (Completions) Path() string { return "/v1/completions" }

// Decode reads model, stream and stream_options.include_usage; prompt
// must be a string.
func (Completions) Decode(raw []byte) (*codec.Request, error) {
	r, err := decodeStreamOptions(raw)
	if err != nil {
		return nil, err
	}
	if p := r.Body.Get("prompt"); p != nil && p.Kind != strictjson.KindString && !p.IsNull() {
		return nil, fmt.Errorf("%w: \"prompt\" must be a string", codec.ErrBadRequest)
	}
	return r, nil
}

// SetFormat does nothing: Ollama's /v1/completions has no format to set.
func (Completions) SetFormat(*codec.Request, *strictjson.Value) {}

// Prompt renders the prompt.
func (Completions) Prompt(r *codec.Request) string { return codec.MessagesPrompt(r.Body) }

// ReadAnswer reads one object or a stream of chunks.
func (Completions) ReadAnswer(body []byte) (*codec.Answer, error) {
	return completionChoices.read(body)
}

// NewStreamReader reads a stream of chunks as it arrives.
func (Completions) NewStreamReader() *codec.StreamReader { return completionChoices.reader() }

// WithText sets choices[0].text; an answer without a choice gets one.
func (Completions) WithText(obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	if root, err := strictjson.Replace(out, "/choices/0/text", strictjson.String(text)); err == nil {
		return root
	}
	out.Set("choices", strictjson.Array(completionChoice(text, strictjson.String("stop"))))
	return out
}

// NormalStop sets finish_reason "stop".
func (Completions) NormalStop(obj *strictjson.Value) string { return completionChoices.normalStop(obj) }

// Encode re-emits a stream as Ollama streams a completion.
func (Completions) Encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return completionChoices.encode(w, r, obj, text)
}

// NewStreamWriter writes a stream of text_completion events.
func (Completions) NewStreamWriter(w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
	return completionChoices.writer(w, r, nil)
}
