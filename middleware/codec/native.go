package codec

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/strictjson"
)

// native is what Ollama's own APIs, generate and chat, share: the format
// member, the temperature in options, a stream of NDJSON chunks ending
// with a done chunk, Ollama's counters, done_reason "stop" and Ollama's
// error shape. Generate and Chat embed it.
type native struct{}

// Decode reads model, stream (true when absent) and format.
func (native) Decode(raw []byte) (*Request, error) {
	r, err := decodeCommon(raw, true)
	if err != nil {
		return nil, err
	}
	if fm := r.Body.Get("format"); fm != nil && !fm.IsNull() {
		r.HasFormat = !(fm.Kind == strictjson.KindString && fm.Str == "")
		if fm.Kind == strictjson.KindObject {
			r.Schema = strictjson.Marshal(fm)
			r.FormatSchema = true
		}
	}
	return r, nil
}

// SetFormat sets format to the schema.
func (native) SetFormat(r *Request, schema *strictjson.Value) {
	r.Body.Set("format", schema)
	r.Edited = true
	r.FormatSchema = true
}

// Temperature reports whether the request sets options.temperature.
func (native) Temperature(r *Request) bool {
	return r.Body.Get("options").Has("temperature")
}

// SetTemperature sets options.temperature.
func (native) SetTemperature(r *Request, t float64) {
	opts := r.Body.Get("options")
	if opts == nil || opts.Kind != strictjson.KindObject {
		opts = strictjson.Object()
		r.Body.Set("options", opts)
	}
	opts.Set("temperature", strictjson.Float(t))
	r.Edited = true
}

// Prompt renders system, prompt and messages.
func (native) Prompt(r *Request) string { return messagesPrompt(r.Body) }

// NormalStop sets done_reason "stop".
func (native) NormalStop(obj *strictjson.Value) string {
	return replaceString(obj, "done_reason", "stop")
}

// EncodeError writes Ollama's own shape, {"error": "…"}.
func (native) EncodeError(e *apierr.Error) []byte { return e.Body() }

// messagesPrompt renders the system, prompt and messages members of
// Ollama's APIs and OpenAI's (string contents) as text.
func messagesPrompt(body *strictjson.Value) string {
	var b strings.Builder
	if s := str(body.Get("system")); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(str(body.Get("prompt")))
	writeMessages(&b, body.Get("messages"), str)
	return b.String()
}

// writeMessages renders each message of msgs with content as "role:
// content", a blank line between parts; contentOf reads a message's
// content (a string, or an API's blocks).
func writeMessages(b *strings.Builder, msgs *strictjson.Value, contentOf func(*strictjson.Value) string) {
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
		b.WriteString(str(m.Get("role")))
		b.WriteString(": ")
		b.WriteString(content)
	}
}

// readNative reads a native answer: one object, or NDJSON chunks that
// asm assembles. The answer's counters are Ollama's.
func readNative(body []byte, asm *nativeStream) (*Answer, error) {
	trimmed := bytes.TrimSpace(body)
	if obj, err := strictjson.ParseOwned(trimmed); err == nil {
		if obj.Kind != strictjson.KindObject {
			return nil, errors.New("upstream answer is not a JSON object")
		}
		if _, err := asm.take(obj); err != nil {
			return nil, err
		}
		obj, err := asm.object(false, false)
		if err != nil {
			return nil, err
		}
		return asm.answer(obj)
	}
	for line := range bytes.SplitSeq(trimmed, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if _, err := asm.event(line); err != nil {
			return nil, err
		}
	}
	obj, err := asm.object(false, false)
	if err != nil {
		return nil, err
	}
	return asm.answer(obj)
}

// nativeStream assembles Ollama's NDJSON stream of generate or chat: the
// text, the thinking and (chat) the tool calls of every chunk, put into
// the final (done) chunk, which then reads as Ollama's answer to the same
// request without a stream. One object is read as it is.
type nativeStream struct {
	// chat says the chunks are chat's (message.content, message.thinking,
	// message.tool_calls), not generate's (response, thinking).
	chat bool

	// text is the stream's text: first alone while one chunk has
	// carried text (an answer read whole, a buffering proxy's), then
	// built up, so that one chunk's text of tens of kilobytes is not
	// copied for nothing.
	first          string
	text, thinking strings.Builder
	calls          []*strictjson.Value
	last           *strictjson.Value
	frames, chunks int
}

func (n *nativeStream) textOf(obj *strictjson.Value) string {
	if n.chat {
		return str(obj.Get("message").Get("content"))
	}
	return str(obj.Get("response"))
}

// event takes one chunk.
func (n *nativeStream) event(data []byte) (string, error) {
	obj, err := strictjson.ParseOwned(data)
	if err != nil || obj.Kind != strictjson.KindObject {
		return "", fmt.Errorf("%w: %v", errNotObject, err)
	}
	return n.take(obj)
}

// take takes one parsed chunk.
func (n *nativeStream) take(obj *strictjson.Value) (string, error) {
	if e, ok := obj.Get("error").AsString(); ok {
		return "", fmt.Errorf("upstream: %s", e)
	}
	n.frames++
	n.last = obj
	delta := n.textOf(obj)
	if delta != "" {
		n.chunks++
	}
	switch {
	case delta == "":
	case n.first == "" && n.text.Len() == 0:
		n.first = delta
	default:
		if n.first != "" {
			n.text.WriteString(n.first)
			n.first = ""
		}
		n.text.WriteString(delta)
	}
	if n.chat {
		n.thinking.WriteString(str(obj.Get("message").Get("thinking")))
		n.calls = append(n.calls, items(obj.Get("message").Get("tool_calls"))...)
	} else {
		n.thinking.WriteString(str(obj.Get("thinking")))
	}
	return delta, nil
}

// object returns the final chunk with the stream's text, thinking and
// tool calls; one object as it is. A stream must end with a done chunk,
// an object must not say done false — unless the guard stopped it, when
// the last chunk is made the final one: done, a normal stop, and the
// chunks read as its output tokens.
func (n *nativeStream) object(_, stopped bool) (*strictjson.Value, error) {
	if n.last == nil {
		return nil, fmt.Errorf("%w: empty body", ErrIncomplete)
	}
	obj := n.last
	d := obj.Get("done")
	switch {
	case stopped:
		obj.Set("done", strictjson.BoolValue(true))
		obj.Set("done_reason", strictjson.String("stop"))
		if !obj.Has("eval_count") {
			obj.Set("eval_count", strictjson.Int(int64(n.chunks)))
		}
	case n.frames == 1:
		if d != nil && d.Kind == strictjson.KindBool && !d.Bool {
			return nil, fmt.Errorf("%w: no final chunk", ErrIncomplete)
		}
		return obj, nil
	case d == nil || d.Kind != strictjson.KindBool || !d.Bool:
		return nil, fmt.Errorf("%w: the stream ended without its final chunk", ErrIncomplete)
	}
	text := strictjson.String(n.first + n.text.String())
	if !n.chat {
		obj.Set("response", text)
		if n.thinking.Len() > 0 {
			obj.Set("thinking", strictjson.String(n.thinking.String()))
		}
		return obj, nil
	}
	msg := obj.Get("message")
	if msg == nil || msg.Kind != strictjson.KindObject {
		msg = strictjson.Object(Member("role", strictjson.String("assistant")))
		obj.Set("message", msg)
	}
	msg.Set("content", text)
	if n.thinking.Len() > 0 {
		msg.Set("thinking", strictjson.String(n.thinking.String()))
	}
	if len(n.calls) > 0 {
		msg.Set("tool_calls", strictjson.Array(n.calls...))
	}
	return obj, nil
}

// answer reads the answer of the final object: its text and Ollama's
// counters.
func (n *nativeStream) answer(obj *strictjson.Value) (*Answer, error) {
	a := &Answer{Obj: obj, Text: n.textOf(obj), DoneReason: str(obj.Get("done_reason"))}
	if v, ok := obj.Get("prompt_eval_count").AsInt(); ok {
		a.PromptTokens = int(v)
	}
	if v, ok := obj.Get("eval_count").AsInt(); ok {
		a.OutputTokens = int(v)
	}
	return a, nil
}

// nativeReader is the StreamReader of generate (chat false) or chat.
func nativeReader(chat bool) *StreamReader {
	asm := &nativeStream{chat: chat}
	return newStreamReader(false, asm, asm.answer, func(body []byte) (*Answer, error) {
		return readNative(body, &nativeStream{chat: chat})
	})
}

// encodeNative writes a native answer: the object, or — to a client that
// asked for a stream — the content chunk first (done false, started with
// the final object's model and created_at) and the done chunk last, as
// Ollama writes one.
func encodeNative(w http.ResponseWriter, r *Request, obj *strictjson.Value, content func(first, last *strictjson.Value)) error {
	if !r.Stream {
		return frame.WriteObject(w, frame.NativeType, obj)
	}
	first := strictjson.Object()
	for _, m := range obj.Members {
		switch m.Key {
		case "model", "created_at":
			first.Members = append(first.Members, m)
		}
	}
	last := obj.Clone()
	content(first, last)
	first.Set("done", strictjson.BoolValue(false))
	return frame.WriteNDJSON(w, first, last)
}

// cloneExcept returns a deep copy of the object obj whose member key, if
// any, holds null in its place, for the caller to set anew: the member
// replaced is the model's text, tens of kilobytes that a whole Clone
// would copy only to drop.
func cloneExcept(obj *strictjson.Value, key string) *strictjson.Value {
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
