package codec

import (
	"net/http"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware/codec/assemble"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/strictjson"
)

// openAI is what Ollama's OpenAI-compatible APIs (chat completions,
// completions, Responses) share: a top-level temperature, no stream unless
// asked for, and OpenAI's error shape. OpenAIChat, Completions and
// Responses embed it.
type openAI struct{ topTemperature }

// EncodeError writes OpenAI's shape, {"error":{"message","type","param",
// "code"}}, as Ollama's own compatible endpoints do, which the OpenAI
// client libraries parse; a contract failure has the code
// "contract_violation".
func (openAI) EncodeError(e *apierr.Error) []byte {
	inner := strictjson.Object(
		Member("message", strictjson.String(e.Message())),
		Member("type", strictjson.String(openAIErrorType(e.Status()))),
		Member("param", strictjson.Null()),
		Member("code", strictjson.Null()),
	)
	if e.Status() == http.StatusUnprocessableEntity && e.Report != nil {
		inner.Set("code", strictjson.String("contract_violation"))
	}
	return strictjson.Marshal(e.WithReport(strictjson.Object(Member("error", inner))))
}

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
func decodeStreamOptions(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, false)
	if err != nil {
		return nil, err
	}
	if iu := r.Body.Get("stream_options").Get("include_usage"); iu != nil && iu.Kind == strictjson.KindBool {
		r.IncludeUsage = iu.Bool
	}
	r.usageOption = true
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
}

// read reads a chat completion or completion: one object, or a stream of
// chunks ending with [DONE].
func (cs choices) read(body []byte) (*Answer, error) {
	obj, err := frame.ReadObjectOrSSE(body, cs.assemble)
	if err != nil {
		return nil, err
	}
	return cs.answer(obj)
}

// answer checks an answer's object and reads its text, reason and usage.
func (cs choices) answer(obj *strictjson.Value) (*Answer, error) {
	if err := assemble.UpstreamError(obj); err != nil {
		return nil, err
	}
	choice := obj.Get("choices").Index(0)
	a := &Answer{Obj: obj, Text: cs.text(choice), DoneReason: str(choice.Get("finish_reason"))}
	return a.usage(obj, "prompt_tokens", "completion_tokens"), nil
}

// assemble turns a whole stream into the equivalent non-stream answer.
func (cs choices) assemble(body []byte) (*strictjson.Value, error) {
	datas, done := frame.SSEData(body)
	asm := cs.assembler()
	for _, data := range datas {
		if _, err := asm.Event(data); err != nil {
			return nil, err
		}
	}
	return asm.Object(done, false)
}

// reader is the StreamReader of the choices' API.
func (cs choices) reader() *StreamReader {
	return newStreamReader(true, cs.assembler(), cs.answer, cs.read)
}

// assembler assembles a stream of the choices' chunks.
func (cs choices) assembler() *assemble.Choices {
	return &assemble.Choices{Name: cs.object, DeltaText: cs.deltaText, Choice: cs.choice}
}

// encode writes a chat completion or completion: the object, or — to a
// client that asked for a stream — the stream Ollama writes: the chunk of
// the choice with the text, the chunk of the choice without it, the
// finish reason and the contract summary, the usage chunk when the client
// asked for it, then [DONE]. choice builds the first or the closing
// choice.
func (cs choices) encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, choice func(first bool, finish *strictjson.Value) *strictjson.Value) error {
	if !r.Stream {
		return frame.WriteObject(w, frame.JSONType, obj)
	}
	chunk := func(list *strictjson.Value, extra ...strictjson.Member) *strictjson.Value {
		ch := strictjson.Object(Member("id", strictjson.String("")), Member("object", strictjson.String(cs.chunkObject)))
		for _, m := range obj.Members {
			switch m.Key {
			case "id", "created", "model", "system_fingerprint":
				ch.Set(m.Key, m.Value)
			}
		}
		ch.Set("choices", list)
		for _, m := range extra {
			ch.Set(m.Key, m.Value)
		}
		return ch
	}
	finish := obj.Get("choices").Index(0).Get("finish_reason")
	if finish == nil || finish.IsNull() {
		finish = strictjson.String("stop")
	}
	var tail []strictjson.Member
	if s := obj.Get("contract"); s != nil {
		tail = append(tail, Member("contract", s))
	}
	chunks := []*strictjson.Value{
		chunk(strictjson.Array(choice(true, strictjson.Null()))),
		chunk(strictjson.Array(choice(false, finish)), tail...),
	}
	if u := obj.Get("usage"); r.IncludeUsage && u != nil {
		chunks = append(chunks, chunk(strictjson.Array(), Member("usage", u)))
	}
	return frame.WriteSSE(w, chunks)
}

// KeepAlive is an SSE comment line.
func (openAI) KeepAlive(*Request, int) (string, []byte) { return frame.SSEType, frame.KeepAliveComment }

// normalStop sets the first choice's finish_reason "stop", but for the
// keep reasons.
func (choices) normalStop(obj *strictjson.Value, keep ...string) string {
	choice := obj.Get("choices").Index(0)
	if choice == nil || choice.Kind != strictjson.KindObject {
		return ""
	}
	return replaceString(choice, "finish_reason", "stop", keep...)
}
