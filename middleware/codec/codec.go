// Package codec is what every wire API the guard speaks shares: the
// [Codec] interface, the guarded [Request] and the upstream's [Answer],
// the [StreamWriter] base ([Stream]) and the [StreamReader], the
// [Counters] and [Listing] shapes, and the helpers the APIs' packages
// build on. The APIs themselves live beneath it, one package per API
// family — ollama (generate, chat), openai (chat completions, completions,
// Responses) and anthropic (Messages) — and package apis holds their
// registry. A codec knows everything about its API — how a request is read
// and edited for the upstream, how an answer is read (whole or streamed),
// how an answer and an error are written back (one object, or the API's
// stream: whole, or piece by piece as the guard releases it, through a
// [StreamWriter]), the API's tool calls, its normal stop, the members that
// count its tokens ([Counters]) and its listing of models ([Listing]) — so
// that the guard, the gateway's model routes and its token limits are the
// same for every API and adding one is one package (or one file in its
// family's) and one line in apis.All.
package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Codec is one wire API the guard speaks: where a request asks for a
// model, a format, a temperature and a stream; where the model's text and
// counters sit in an answer; how the answer and errors are written back to
// the client, as one object or as the API's own stream.
//
// A Codec holds no state; its methods are called concurrently.
type Codec interface {
	// Path is the route the codec serves, such as "/api/chat".
	Path() string

	// Decode reads a client's request body. The error, which wraps
	// ErrBadRequest, is the client's (400).
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
	// its final chunk is an error wrapping ErrIncomplete. ReadAnswer takes
	// body over: the answer shares its memory rather than copying tens of
	// kilobytes, so the caller must not change body afterwards.
	ReadAnswer(body []byte) (*Answer, error)
	// NewStreamReader returns a reader of the upstream's answer as it
	// arrives, which ends with the Answer ReadAnswer makes of the same
	// bytes (see StreamReader).
	NewStreamReader() *StreamReader
	// WithText returns a copy of the answer's object with the model's text
	// replaced.
	WithText(obj *strictjson.Value, text string) *strictjson.Value
	// NormalStop sets obj's stop reason to the API's normal stop and
	// returns the reason it had, "" when it had none or the normal one.
	// An answer the guard brought into contract is whole, however the
	// model's own text ended, and clients treat any other reason as a cut
	// answer (the OpenAI library's parse refuses "length"). Tool calls
	// keep their own reason.
	NormalStop(obj *strictjson.Value) (upstream string)
	// Encode writes the final object (text replaced, contract summary
	// added) to the client: one object, or the API's stream when the
	// client asked for one — the stream of NewStreamWriter, with the
	// whole text as its one piece.
	Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text string) error
	// NewStreamWriter returns the writer of an answer released to a
	// client that asked for a stream piece by piece, as the pieces
	// validate. Its frames carry one id, generated here, and the model
	// the client named. For a response already committed (by keep-alives)
	// w must drop header and status writes, as the guard's held writer
	// does; the frames then follow the keep-alives.
	NewStreamWriter(w http.ResponseWriter, r *Request) StreamWriter
	// EncodeError returns the body of an error answer in the API's own
	// shape, the one its client libraries parse: e's status and message,
	// and its report as the "contract" member when there is one. On a
	// stream already started StreamError's frame is sent instead.
	EncodeError(e *apierr.Error) []byte
	// StreamError returns the frame that ends a started stream of the API
	// with e: the one shape of the API's stream errors, whichever path
	// failed — a stream writer's Fail sends it, and so does the error
	// handler for a stream that only keep-alives began.
	StreamError(e *apierr.Error) []byte
	// KeepAlive returns the content type of the API's stream and the n-th
	// (from 0) keep-alive the guard writes to a client that asked for a
	// stream while it holds the answer: the API's own harmless event,
	// which its clients take as no text. The stream's answer or error
	// follows the keep-alives.
	KeepAlive(r *Request, n int) (contentType string, frame []byte)
	// Counters names the members of the API's answers that count their
	// tokens: ReadAnswer reads them, and the gateway's token limits read
	// them at the end of an answer passed through.
	Counters() Counters
}

// Counters names the members of an API's answers that count the tokens of
// the prompt and of the output, as the API writes them: Ollama's
// prompt_eval_count and eval_count at the top of its final chunk, the
// OpenAI-compatible and Anthropic APIs' inside "usage".
type Counters struct {
	Prompt, Output string
	// Usage is set where the counters sit inside "usage".
	Usage bool
}

// Read sets a's counters from obj's members named by cs and returns a:
// the counters of an answer, read where its API writes them.
func (cs Counters) Read(a *Answer, obj *strictjson.Value) *Answer {
	if cs.Usage {
		obj = obj.Get("usage")
	}
	if n, ok := obj.Get(cs.Prompt).AsInt(); ok {
		a.PromptTokens = int(n)
	}
	if n, ok := obj.Get(cs.Output).AsInt(); ok {
		a.OutputTokens = int(n)
	}
	return a
}

// ErrIncomplete marks an upstream answer that ended before its end: a
// stream without its final chunk, a body cut short.
var ErrIncomplete = frame.ErrIncomplete

// ErrBadRequest marks request problems that are the client's (400).
var ErrBadRequest = errors.New("bad request")

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
	// FormatSchema says that the body asks the upstream for output
	// constrained by a JSON Schema (the client's, or the contract's set by
	// SetFormat): the answer is then one JSON value by grammar, and the
	// guard may stop the call once that value has closed.
	FormatSchema bool
	// UsageOption marks the APIs whose streams carry usage only when
	// stream_options.include_usage asks for it.
	UsageOption bool
}

// ParseRequest parses raw and reads the members every API shares: model
// and stream (streamDefault when absent). An API's Decode starts with it
// and reads its own members after.
func ParseRequest(raw []byte, streamDefault bool) (*Request, error) {
	body, err := strictjson.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid JSON body: %v", ErrBadRequest, err)
	}
	if body.Kind != strictjson.KindObject {
		return nil, fmt.Errorf("%w: request body must be a JSON object", ErrBadRequest)
	}
	r := &Request{Body: body, Raw: raw, Stream: streamDefault}
	if m := body.Get("model"); m != nil {
		s, ok := m.AsString()
		if !ok {
			return nil, fmt.Errorf("%w: \"model\" must be a string", ErrBadRequest)
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

// SetModel points the request at another model: its body's member, and
// Model, by which the upstream pool routes the call (a virtual model's
// route, a fallback model, a repair model go to an upstream that has
// that model, not the name the client sent).
func (r *Request) SetModel(m string) {
	if m == "" || m == r.Model {
		return
	}
	r.Body.Set("model", strictjson.String(m))
	r.Model = m
	r.Edited = true
}

// SetStream sets the request's stream member. The guard asks every
// upstream call for a stream, whatever the client asked, and reads it as
// it arrives (StreamReader). On the OpenAI APIs whose streams carry usage
// only when asked (chat completions, completions), a stream also asks
// for the usage: the guard counts tokens, and a client that asked for no
// stream gets the usage Ollama's single answer has. What the client
// itself asked stays in the Request's Stream and IncludeUsage.
func (r *Request) SetStream(stream bool) {
	r.Body.Set("stream", strictjson.BoolValue(stream))
	if stream && r.UsageOption {
		opts := r.Body.Get("stream_options")
		if opts == nil || opts.Kind != strictjson.KindObject {
			opts = strictjson.Object()
		} else {
			opts = opts.Clone()
		}
		opts.Set("include_usage", strictjson.BoolValue(true))
		r.Body.Set("stream_options", opts)
	}
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
	// PromptTokens and OutputTokens are the answer's counters (the
	// codec's Counters); zero when absent.
	PromptTokens int
	OutputTokens int
	// DoneReason is Ollama's done_reason or OpenAI's finish_reason.
	DoneReason string
}

// TopTemperature is the temperature of the APIs that take it as a
// top-level member (all but Ollama's native ones, which take it in
// options).
type TopTemperature struct{}

// Temperature reports whether the request sets temperature.
func (TopTemperature) Temperature(r *Request) bool { return r.Body.Has("temperature") }

// SetTemperature sets the top-level temperature.
func (TopTemperature) SetTemperature(r *Request, t float64) {
	r.Body.Set("temperature", strictjson.Float(t))
	r.Edited = true
}

// Member is an object member built in code, for strictjson.Object.
func Member(key string, v *strictjson.Value) strictjson.Member {
	return strictjson.Member{Key: key, KeyOffset: -1, Value: v}
}

// Items returns the items of an array, nil for anything else (nil
// included).
func Items(v *strictjson.Value) []*strictjson.Value {
	if v == nil || v.Kind != strictjson.KindArray {
		return nil
	}
	return v.Items
}

// Str is the string v holds, "" for anything else.
func Str(v *strictjson.Value) string {
	s, _ := v.AsString()
	return s
}

// ContentText is the text of a message content (the Responses and
// Anthropic APIs): a string, or the text of its text parts (input_text,
// output_text, text).
func ContentText(content *strictjson.Value) string {
	if s, ok := content.AsString(); ok {
		return s
	}
	if content == nil {
		return ""
	}
	var b strings.Builder
	for _, part := range content.Items {
		switch Str(part.Get("type")) {
		case "input_text", "output_text", "text":
			b.WriteString(Str(part.Get("text")))
		}
	}
	return b.String()
}

// ReplaceString sets member key of obj to want when obj has it as another
// string (or null) than want and the keep values, and returns what it was
// ("" for null): the normal stop of most APIs.
func ReplaceString(obj *strictjson.Value, key, want string, keep ...string) string {
	v := obj.Get(key)
	if v == nil || (v.Kind != strictjson.KindString && !v.IsNull()) {
		return ""
	}
	was, _ := v.AsString()
	if was == want {
		return ""
	}
	for _, k := range keep {
		if was == k {
			return ""
		}
	}
	obj.Set(key, strictjson.String(want))
	if v.IsNull() {
		return ""
	}
	return was
}

// MessagesPrompt renders the system, prompt and messages members of
// Ollama's APIs and OpenAI's (string contents) as text.
func MessagesPrompt(body *strictjson.Value) string {
	var b strings.Builder
	if s := Str(body.Get("system")); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(Str(body.Get("prompt")))
	WriteMessages(&b, body.Get("messages"), Str)
	return b.String()
}

// WriteMessages renders each message of msgs with content as "role:
// content", a blank line between parts; contentOf reads a message's
// content (a string, or an API's blocks).
func WriteMessages(b *strings.Builder, msgs *strictjson.Value, contentOf func(*strictjson.Value) string) {
	if msgs == nil {
		return
	}
	for _, m := range msgs.Items {
		content := contentOf(m.Get("content"))
		if content == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(Str(m.Get("role")))
		b.WriteString(": ")
		b.WriteString(content)
	}
}

// CloneExcept returns a deep copy of the object obj whose member key, if
// any, holds null in its place, for the caller to set anew: the member
// replaced is the model's text, tens of kilobytes that a whole Clone
// would copy only to drop.
func CloneExcept(obj *strictjson.Value, key string) *strictjson.Value {
	out := &strictjson.Value{Kind: strictjson.KindObject, Offset: obj.Offset,
		Members: make([]strictjson.Member, len(obj.Members))}
	for i, m := range obj.Members {
		v := strictjson.Null()
		if m.Key != key {
			v = m.Value.Clone()
		}
		out.Members[i] = strictjson.Member{Key: strings.Clone(m.Key), KeyOffset: m.KeyOffset, Value: v}
	}
	return out
}

// Child returns the object obj's member key when it is of kind (an object
// or an array), else an empty one of kind set in its place: where an edit
// writes, whatever the client or the upstream sent there.
func Child(obj *strictjson.Value, key string, kind strictjson.Kind) *strictjson.Value {
	if c := obj.Get(key); c != nil && c.Kind == kind {
		return c
	}
	c := &strictjson.Value{Kind: kind, Offset: -1}
	obj.Set(key, c)
	return c
}
