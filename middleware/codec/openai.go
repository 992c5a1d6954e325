package codec

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/apierr"
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

// openAIErrorMessage reads the message of an OpenAI error member (an
// object with a message, or Ollama's plain string).
func openAIErrorMessage(e *strictjson.Value) string {
	if s, ok := e.AsString(); ok {
		return s
	}
	return str(e.Get("message"))
}

// upstreamError is the error of an answer whose error member is set.
func upstreamError(obj *strictjson.Value) error {
	if e := obj.Get("error"); e != nil && !e.IsNull() {
		return fmt.Errorf("upstream: %s", openAIErrorMessage(e))
	}
	return nil
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
	obj, err := readObjectOrSSE(body, cs.assemble)
	if err != nil {
		return nil, err
	}
	if err := upstreamError(obj); err != nil {
		return nil, err
	}
	choice := obj.Get("choices").Index(0)
	a := &Answer{Obj: obj, Text: cs.text(choice), DoneReason: str(choice.Get("finish_reason"))}
	return a.usage(obj, "prompt_tokens", "completion_tokens"), nil
}

// assemble turns a stream into the equivalent non-stream answer: the last
// chunk with the whole text, the last finish reason and the last usage. A
// stream that ends before [DONE] is incomplete.
func (cs choices) assemble(body []byte) (*strictjson.Value, error) {
	datas, done := sseData(body)
	var text strings.Builder
	var last, usage *strictjson.Value
	finish := strictjson.String("stop")
	for _, data := range datas {
		obj, err := parseEvent(data)
		if err != nil {
			return nil, err
		}
		if err := upstreamError(obj); err != nil {
			return nil, err
		}
		choice := obj.Get("choices").Index(0)
		text.WriteString(cs.deltaText(choice))
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
	out := last.Clone()
	out.Set("object", strictjson.String(cs.object))
	out.Set("choices", strictjson.Array(cs.choice(text.String(), finish)))
	if usage != nil {
		out.Set("usage", usage)
	}
	return out, nil
}

// encode writes a chat completion or completion: the object, or — to a
// client that asked for a stream — the stream Ollama writes: the chunk of
// the choice with the text, the chunk of the choice without it, the
// finish reason and the contract summary, the usage chunk when the client
// asked for it, then [DONE]. choice builds the first or the closing
// choice.
func (cs choices) encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, choice func(first bool, finish *strictjson.Value) *strictjson.Value) error {
	if !r.Stream {
		return writeObject(w, jsonContentType, obj)
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
	return writeSSE(w, chunks)
}

// normalStop sets the first choice's finish_reason "stop", but for the
// keep reasons.
func (choices) normalStop(obj *strictjson.Value, keep ...string) string {
	choice := obj.Get("choices").Index(0)
	if choice == nil || choice.Kind != strictjson.KindObject {
		return ""
	}
	return replaceString(choice, "finish_reason", "stop", keep...)
}
