package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/strictjson"
)

// Codec is one wire API the guard speaks (Ollama's generate and chat, the
// OpenAI-compatible chat completions, …): where a request asks for a model,
// a format, a temperature and a stream; where the model's text and counters
// sit in an answer; and how the answer is written back to the client, as
// one object or as the API's own stream. Everything else of the guard is
// the same for every API, so adding an endpoint is adding a Codec to
// [Codecs].
//
// A Codec holds no state; its methods are called concurrently.
type Codec interface {
	// Path is the route the codec serves, such as "/api/chat".
	Path() string

	// Decode reads a client's request body. The error is the client's
	// (400).
	Decode(raw []byte) (*Request, error)
	// SetFormat asks for output constrained by a JSON Schema.
	SetFormat(r *Request, schema *strictjson.Value)
	// Temperature reports whether the client chose a sampling temperature.
	Temperature(r *Request) bool
	// SetTemperature sets the sampling temperature.
	SetTemperature(r *Request, t float64)
	// Prompt renders the request's task (system, prompt or messages) as
	// text, for partial regeneration.
	Prompt(r *Request) string

	// ReadAnswer reads the upstream's answer to a request with stream
	// false: one object, or — from an upstream that streams regardless — a
	// whole stream, assembled into the equivalent object. A stream without
	// its final chunk is an error wrapping ErrIncomplete.
	ReadAnswer(body []byte) (*Answer, error)
	// WithText returns a copy of the answer's object with the model's text
	// replaced.
	WithText(obj *strictjson.Value, text string) *strictjson.Value
	// Encode writes the final object (text replaced, contract summary
	// added) to the client: one object, or the API's stream when the
	// client asked for one.
	Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error
}

// Codecs returns the codecs of every guarded API: the registry, in one
// place.
func Codecs() []Codec {
	return []Codec{generateCodec{}, chatCodec{}, openAIChatCodec{},
		completionsCodec{}, responsesCodec{}, anthropicCodec{}}
}

// ErrIncomplete marks an upstream answer that ended before its end: a
// stream without its final chunk, a body cut short.
var ErrIncomplete = errors.New("upstream response incomplete")

// Request is a guarded request: the parsed body (edited in place when the
// guard must change something), the client's bytes, and the fields every
// codec reads.
type Request struct {
	Body *strictjson.Value
	Raw  []byte
	// Edited is set once Body differs from Raw.
	Edited bool

	// Model is the model the client named (perhaps a virtual one).
	Model string
	// Stream is whether the client asked for a stream (after the API's
	// own default).
	Stream bool
	// Schema is the JSON Schema the client sent as its output format, or
	// nil.
	Schema json.RawMessage
	// HasFormat is true when the client set any output format (schema or
	// plain JSON mode).
	HasFormat bool
	// IncludeUsage is OpenAI's stream_options.include_usage.
	IncludeUsage bool
}

// errBadRequest marks request problems that are the client's (400).
var errBadRequest = errors.New("bad request")

// decodeCommon parses raw and reads the members every API shares: model
// and stream (streamDefault when absent).
func decodeCommon(raw []byte, streamDefault bool) (*Request, error) {
	body, err := strictjson.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid JSON body: %v", errBadRequest, err)
	}
	if body.Kind != strictjson.KindObject {
		return nil, fmt.Errorf("%w: request body must be a JSON object", errBadRequest)
	}
	r := &Request{Body: body, Raw: raw, Stream: streamDefault}
	if m := body.Get("model"); m != nil {
		s, ok := m.AsString()
		if !ok {
			return nil, fmt.Errorf("%w: \"model\" must be a string", errBadRequest)
		}
		// A copy: the parsed string shares the body's memory, and the
		// model name outlives the request (metric labels, stats), where
		// it would keep a body of megabytes alive for good.
		r.Model = strings.Clone(s)
	}
	if s := body.Get("stream"); s != nil && s.Kind == strictjson.KindBool {
		r.Stream = s.Bool
	}
	return r, nil
}

// SetModel points the request at another model.
func (r *Request) SetModel(m string) {
	if m == "" || m == r.Model {
		return
	}
	r.Body.Set("model", strictjson.String(m))
	r.Edited = true
}

// SetStream sets the request's stream member. The guard asks the upstream
// for one object: it needs the whole answer before it can say anything.
func (r *Request) SetStream(stream bool) {
	r.Body.Set("stream", strictjson.BoolValue(stream))
	r.Edited = true
}

// Bytes returns the body to send upstream: the client's bytes when nothing
// was edited, else the edited tree (every other member kept as written).
func (r *Request) Bytes() []byte {
	if !r.Edited {
		return r.Raw
	}
	return strictjson.Marshal(r.Body)
}

// Clone returns an independent copy, for a re-run.
func (r *Request) Clone() *Request {
	c := *r
	c.Body = r.Body.Clone()
	return &c
}

// Answer is an upstream answer: the object (the final one, for an
// assembled stream), the model's text and its counters.
type Answer struct {
	Obj  *strictjson.Value
	Text string
	// PromptTokens and OutputTokens are the answer's prompt_eval_count and
	// eval_count (OpenAI: usage.prompt_tokens, completion_tokens); zero
	// when absent.
	PromptTokens int
	OutputTokens int
	// DoneReason is Ollama's done_reason or OpenAI's finish_reason.
	DoneReason string
}

// readObjectOrNDJSON reads a native Ollama answer: one object, or NDJSON
// chunks whose text textOf concatenates. The last chunk must say done.
func readObjectOrNDJSON(body []byte, textOf func(*strictjson.Value) string) (*strictjson.Value, string, error) {
	trimmed := bytes.TrimSpace(body)
	if obj, err := strictjson.Parse(trimmed); err == nil {
		if obj.Kind != strictjson.KindObject {
			return nil, "", errors.New("upstream answer is not a JSON object")
		}
		if e, ok := obj.Get("error").AsString(); ok {
			return nil, "", fmt.Errorf("upstream: %s", e)
		}
		if d := obj.Get("done"); d != nil && d.Kind == strictjson.KindBool && !d.Bool {
			return nil, "", fmt.Errorf("%w: no final chunk", ErrIncomplete)
		}
		return obj, textOf(obj), nil
	}
	var text strings.Builder
	var last *strictjson.Value
	for line := range bytes.SplitSeq(trimmed, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		obj, err := strictjson.Parse(line)
		if err != nil || obj.Kind != strictjson.KindObject {
			return nil, "", fmt.Errorf("upstream answer is not JSON: %v", err)
		}
		if e, ok := obj.Get("error").AsString(); ok {
			return nil, "", fmt.Errorf("upstream: %s", e)
		}
		text.WriteString(textOf(obj))
		last = obj
	}
	if last == nil {
		return nil, "", fmt.Errorf("%w: empty body", ErrIncomplete)
	}
	if d := last.Get("done"); d == nil || d.Kind != strictjson.KindBool || !d.Bool {
		return nil, "", fmt.Errorf("%w: the stream ended without its final chunk", ErrIncomplete)
	}
	return last, text.String(), nil
}

// nativeCounters reads Ollama's counters from a final object.
func nativeCounters(a *Answer) *Answer {
	if n, ok := a.Obj.Get("prompt_eval_count").AsInt(); ok {
		a.PromptTokens = int(n)
	}
	if n, ok := a.Obj.Get("eval_count").AsInt(); ok {
		a.OutputTokens = int(n)
	}
	a.DoneReason, _ = a.Obj.Get("done_reason").AsString()
	return a
}

func object(members ...strictjson.Member) *strictjson.Value {
	return &strictjson.Value{Kind: strictjson.KindObject, Members: members, Offset: -1}
}

func member(key string, v *strictjson.Value) strictjson.Member {
	return strictjson.Member{Key: key, KeyOffset: -1, Value: v}
}

func trimFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// writeNDJSON writes a native stream: the content chunk, then the done
// chunk.
func writeNDJSON(w http.ResponseWriter, chunks ...*strictjson.Value) error {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	for _, c := range chunks {
		buf = append(c.AppendJSON(buf), '\n')
	}
	_, err := w.Write(buf)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// writeObject writes a non-stream answer.
func writeObject(w http.ResponseWriter, contentType string, obj *strictjson.Value) error {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(strictjson.Marshal(obj))
	return err
}

// nativePrompt renders system, prompt and messages as text.
func nativePrompt(body *strictjson.Value) string {
	var b strings.Builder
	if s, ok := body.Get("system").AsString(); ok && s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if s, ok := body.Get("prompt").AsString(); ok {
		b.WriteString(s)
	}
	if msgs := body.Get("messages"); msgs != nil {
		for _, m := range msgs.Items {
			role, _ := m.Get("role").AsString()
			content, _ := m.Get("content").AsString()
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

// nativeFormat reads Ollama's `format`: a schema object, "json", or none.
func nativeFormat(r *Request) {
	if fm := r.Body.Get("format"); fm != nil && !fm.IsNull() {
		r.HasFormat = !(fm.Kind == strictjson.KindString && fm.Str == "")
		if fm.Kind == strictjson.KindObject {
			r.Schema = strictjson.Marshal(fm)
		}
	}
}

// nativeSetTemperature sets options.temperature.
func nativeSetTemperature(r *Request, t float64) {
	opts := r.Body.Get("options")
	if opts == nil || opts.Kind != strictjson.KindObject {
		opts = object()
		r.Body.Set("options", opts)
	}
	opts.Set("temperature", strictjson.Number(trimFloat(t)))
	r.Edited = true
}

// nativeContentType is the Content-Type of Ollama's native answers.
const nativeContentType = "application/json; charset=utf-8"
