// Package openai holds Ollama's OpenAI-compatible wire APIs, everything
// about each: chat completions (Chat), legacy completions (Completions) and
// the Responses API (Responses) — decoding and editing the request, reading
// whole and streamed answers, encoding answers, errors and stream errors in
// OpenAI's shapes, tool calls, the normal stop, the usage counters and
// OpenAI's listing of models (/v1/models).
package openai

import (
	"fmt"
	"net/http"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// openAI is what Ollama's OpenAI-compatible APIs (chat completions,
// completions, Responses) share: a top-level temperature, no stream unless
// asked for, and OpenAI's error shape. Chat, Completions and
// Responses embed it.
type openAI struct{ codec.TopTemperature }

// EncodeError writes OpenAI's shape, {"error":{"message","type","param",
// "code"}}, as Ollama's own compatible endpoints do, which the OpenAI
// client libraries parse; a contract failure has the code
// "contract_violation".
func (openAI) EncodeError(e *apierr.Error) []byte {
	inner := strictjson.Object(
		codec.Member("message", strictjson.String(e.Message())),
		codec.Member("type", strictjson.String(openAIErrorType(e.Status()))),
		codec.Member("param", strictjson.Null()),
		codec.Member("code", strictjson.Null()),
	)
	if e.Status() == http.StatusUnprocessableEntity && e.Report != nil {
		inner.Set("code", strictjson.String("contract_violation"))
	}
	return strictjson.Marshal(e.WithReport(strictjson.Object(codec.Member("error", inner))))
}

// openAIModels is OpenAI's listing, /v1/models: {"object":"list",
// "data":[{"id","object","created","owned_by"}]}, and one model's entry,
// /v1/models/{id}.
var openAIModels = codec.NewListing("/v1/models", "/v1/models/", "data", "id")

// Models returns OpenAI's listing.
func (openAI) Models() *codec.Listing { return openAIModels }

// openAICounters are the usage of a chat completion and a completion (and
// of /v1/embeddings' answer, prompt only); a stream has it in its last
// chunk when stream_options.include_usage asks for it.
var openAICounters = codec.Counters{Prompt: "prompt_tokens", Output: "completion_tokens", Usage: true}

// Counters returns OpenAI's usage counters; Responses has its own.
func (openAI) Counters() codec.Counters { return openAICounters }

// openAIErrorType is the error type OpenAI's API (and Ollama's
// compatible one) gives a status.
func openAIErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return "invalid_request_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	return "api_error"
}

// decodeStreamOptions reads a chat completion or completion request: no
// stream unless asked for, and stream_options.include_usage.
func decodeStreamOptions(raw []byte) (*codec.Request, error) {
	r, err := codec.ParseRequest(raw, false)
	if err != nil {
		return nil, err
	}
	if iu := r.Body.Get("stream_options").Get("include_usage"); iu != nil && iu.Kind == strictjson.KindBool {
		r.IncludeUsage = iu.Bool
	}
	r.UsageOption = true
	return r, nil
}

// choices is how a chat completion and a completion differ: the object
// names of the answer and of its stream's chunks, and where a choice's
// text sits (message.content, text) in an answer (message) and in a
// stream's chunk (delta).
type choices struct {
	object, chunkObject string
	text, deltaText     func(choice *strictjson.Value) string
	// choice builds the one choice of an answer assembled from a stream.
	choice func(text string, finish *strictjson.Value) *strictjson.Value
	// delta builds the choice of a stream's chunk with text; msg, when
	// not nil, is the answer's message whose other members (reasoning,
	// tool calls) go with the text.
	delta func(text string, msg, finish *strictjson.Value) *strictjson.Value
	// idPrefix starts the id of a stream whose answer is not known yet.
	idPrefix string
}

// read reads a chat completion or completion: one object, or a stream of
// chunks ending with [DONE].
func (cs choices) read(body []byte) (*codec.Answer, error) {
	return codec.ReadSSE(body, cs.assembler(), cs.answer)
}

// answer checks an answer's object and reads its text, reason and usage.
func (cs choices) answer(obj *strictjson.Value) (*codec.Answer, error) {
	if err := upstreamError(obj); err != nil {
		return nil, err
	}
	choice := obj.Get("choices").Index(0)
	a := &codec.Answer{Obj: obj, Text: cs.text(choice), DoneReason: codec.Str(choice.Get("finish_reason"))}
	return openAICounters.Read(a, obj), nil
}

// reader is the StreamReader of the choices' API.
func (cs choices) reader() *codec.StreamReader {
	return codec.NewStreamReader(true, cs.assembler(), cs.answer, cs.read)
}

// assembler assembles a stream of the choices' chunks.
func (cs choices) assembler() *choicesAssembler {
	return &choicesAssembler{Name: cs.object, DeltaText: cs.deltaText, Choice: cs.choice}
}

// choiceWriter writes the stream of a chat completion or completion, as
// Ollama streams one: a chunk of the choice per piece of text, what the
// answer's message has besides its text (reasoning, tool calls) in a chunk
// of its own when it did not go with the text, the chunk of the choice
// without text with the finish reason and the contract summary, the usage
// chunk when the client asked for it, then [DONE].
type choiceWriter struct {
	cs choices
	r  *codec.Request
	// head is the whole answer when it is known before the stream opens
	// (Encode): its id, created, model and system_fingerprint stamp every
	// chunk, and the first chunk carries its message with the text.
	head  *strictjson.Value
	ident []strictjson.Member
	codec.Chunks
}

func (cs choices) writer(w http.ResponseWriter, r *codec.Request, head *strictjson.Value) *codec.Stream {
	c := &choiceWriter{cs: cs, r: r, head: head}
	if head == nil {
		c.ident = []strictjson.Member{
			codec.Member("id", strictjson.String(codec.NewID(cs.idPrefix))),
			codec.Member("created", strictjson.Int(time.Now().Unix())),
			codec.Member("model", strictjson.String(r.Model)),
			codec.Member("system_fingerprint", strictjson.String("fp_ollama")),
		}
		return codec.NewStream(w, frame.SSEType, c)
	}
	for _, m := range head.Members {
		switch m.Key {
		case "id", "created", "model", "system_fingerprint":
			c.ident = append(c.ident, m)
		}
	}
	return codec.NewStream(w, frame.SSEType, c)
}

// chunk is a chunk of the stream with the choices list and extra members.
func (c *choiceWriter) chunk(list *strictjson.Value, extra ...strictjson.Member) *strictjson.Value {
	ch := strictjson.Object(codec.Member("id", strictjson.String("")), codec.Member("object", strictjson.String(c.cs.chunkObject)))
	for _, m := range c.ident {
		ch.Set(m.Key, m.Value)
	}
	ch.Set("choices", list)
	for _, m := range extra {
		ch.Set(m.Key, m.Value)
	}
	return ch
}

// message is the message of an answer's first choice (chat's), nil for
// none.
func message(obj *strictjson.Value) *strictjson.Value {
	return obj.Get("choices").Index(0).Get("message")
}

func (c *choiceWriter) Text(buf []byte, delta string) []byte {
	send, with := c.Next(delta, c.head)
	if !send {
		return buf
	}
	return frame.AppendData(buf, c.chunk(strictjson.Array(c.cs.delta(delta, message(with), strictjson.Null()))))
}

func (c *choiceWriter) End(buf []byte, obj *strictjson.Value, _ string) []byte {
	if msg := message(obj); !c.ExtrasSent() && codec.HasOther(msg, "role", "content") {
		buf = frame.AppendData(buf, c.chunk(strictjson.Array(c.cs.delta("", msg, strictjson.Null()))))
	}
	finish := obj.Get("choices").Index(0).Get("finish_reason")
	if finish == nil || finish.IsNull() {
		finish = strictjson.String("stop")
	}
	var tail []strictjson.Member
	if s := obj.Get("contract"); s != nil {
		tail = append(tail, codec.Member("contract", s))
	}
	buf = frame.AppendData(buf, c.chunk(strictjson.Array(c.cs.delta("", nil, finish)), tail...))
	if u := obj.Get("usage"); c.r.IncludeUsage && u != nil {
		buf = frame.AppendData(buf, c.chunk(strictjson.Array(), codec.Member("usage", u)))
	}
	return append(buf, frame.Done...)
}

// Fail is an error chunk, {"error": {…}, "contract": report}, which the
// OpenAI libraries raise as the stream's error.
func (c *choiceWriter) Fail(buf []byte, e *apierr.Error) []byte {
	return append(buf, openAI{}.StreamError(e)...)
}

// StreamError is OpenAI's: a data-only event with the error object, as
// Ollama's OpenAI streams end on an error.
func (openAI) StreamError(e *apierr.Error) []byte {
	return frame.SSEErrorEvent(openAI{}.EncodeError(e))
}

// encode writes a chat completion or completion: the object, or — to a
// client that asked for a stream — the stream of its writer.
func (cs choices) encode(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string) error {
	return codec.Encode(w, r, obj, text, frame.JSONType, cs.writer)
}

// KeepAlive is an SSE comment line.
func (openAI) KeepAlive(*codec.Request, int) (string, []byte) {
	return frame.SSEType, frame.KeepAliveComment
}

// normalStop sets the first choice's finish_reason "stop", but for the
// keep reasons.
func (choices) normalStop(obj *strictjson.Value, keep ...string) string {
	choice := obj.Get("choices").Index(0)
	if choice == nil || choice.Kind != strictjson.KindObject {
		return ""
	}
	return codec.ReplaceString(choice, "finish_reason", "stop", keep...)
}

// openAIErrorMessage reads the message of an OpenAI error member (an
// object with a message, or Ollama's plain string).
func openAIErrorMessage(e *strictjson.Value) string {
	if s, ok := e.AsString(); ok {
		return s
	}
	return codec.Str(e.Get("message"))
}

// upstreamError is the error of an OpenAI answer or chunk whose error
// member is set, nil for one without.
func upstreamError(obj *strictjson.Value) error {
	if e := obj.Get("error"); e != nil && !e.IsNull() {
		return fmt.Errorf("upstream: %s", openAIErrorMessage(e))
	}
	return nil
}
