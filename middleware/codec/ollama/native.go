// Package ollama holds Ollama's own wire APIs, POST /api/generate
// (Generate) and POST /api/chat (Chat), everything about each: decoding
// and editing the request, reading whole and streamed NDJSON answers,
// encoding answers, errors and stream errors in Ollama's shape, tool calls,
// the normal stop, Ollama's counters and its listing of models (/api/tags).
package ollama

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// native is what Ollama's own APIs, generate and chat, share: the format
// member, the temperature in options, a stream of NDJSON chunks ending
// with a done chunk, Ollama's counters, done_reason "stop" and Ollama's
// error shape. Generate and Chat embed it.
type native struct{}

// Decode reads model, stream (true when absent) and format.
func (native) Decode(raw []byte) (*codec.Request, error) {
	r, err := codec.ParseRequest(raw, true)
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
func (native) SetFormat(r *codec.Request, schema *strictjson.Value) {
	r.Body.Set("format", schema)
	r.Edited = true
	r.FormatSchema = true
}

// Temperature reports whether the request sets options.temperature.
func (native) Temperature(r *codec.Request) bool {
	return r.Body.Get("options").Has("temperature")
}

// SetTemperature sets options.temperature.
func (native) SetTemperature(r *codec.Request, t float64) {
	opts := codec.Child(r.Body, "options", strictjson.KindObject)
	opts.Set("temperature", strictjson.Float(t))
	r.Edited = true
}

// Prompt renders system, prompt and messages.
func (native) Prompt(r *codec.Request) string { return codec.MessagesPrompt(r.Body) }

// NormalStop sets done_reason "stop".
func (native) NormalStop(obj *strictjson.Value) string {
	return codec.ReplaceString(obj, "done_reason", "stop")
}

// EncodeError writes Ollama's own shape, {"error": "…"}.
func (native) EncodeError(e *apierr.Error) []byte { return e.Body() }

// StreamError is Ollama's: a final NDJSON line with the error object.
func (native) StreamError(e *apierr.Error) []byte { return frame.NDJSONErrorLine(e.Body()) }

// ollamaModels is Ollama's listing, /api/tags: {"models":[{"name",
// "model", "size", "details", …}]}, a model named in both name and model.
var ollamaModels = codec.NewListing("/api/tags", "", "models", "name", "model")

// Models returns Ollama's listing.
func (native) Models() *codec.Listing { return ollamaModels }

// ollamaCounters are Ollama's, at the top of an answer and of a stream's
// final chunk (as in /api/embed's answer).
var ollamaCounters = codec.Counters{Prompt: "prompt_eval_count", Output: "eval_count"}

// Counters returns Ollama's counters.
func (native) Counters() codec.Counters { return ollamaCounters }

// readNative reads a native answer: one object, or NDJSON chunks that
// asm assembles. The answer's counters are Ollama's.
func readNative(body []byte, asm *nativeAssembler) (*codec.Answer, error) {
	trimmed := bytes.TrimSpace(body)
	if obj, err := strictjson.ParseOwned(trimmed); err == nil {
		if obj.Kind != strictjson.KindObject {
			return nil, errors.New("upstream answer is not a JSON object")
		}
		if _, err := asm.Take(obj); err != nil {
			return nil, err
		}
	} else {
		for line := range bytes.SplitSeq(trimmed, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if _, err := asm.Event(line); err != nil {
				return nil, err
			}
		}
	}
	obj, err := asm.Object(false, false)
	if err != nil {
		return nil, err
	}
	return nativeAnswer(asm, obj)
}

// nativeAnswer reads the answer of the final object: its text and
// Ollama's counters.
func nativeAnswer(asm *nativeAssembler, obj *strictjson.Value) (*codec.Answer, error) {
	a := &codec.Answer{Obj: obj, Text: asm.TextOf(obj), DoneReason: codec.Str(obj.Get("done_reason"))}
	return ollamaCounters.Read(a, obj), nil
}

// nativeReader is the StreamReader of generate (chat false) or chat.
func nativeReader(chat bool) *codec.StreamReader {
	asm := &nativeAssembler{Chat: chat}
	return codec.NewStreamReader(false, asm, func(obj *strictjson.Value) (*codec.Answer, error) { return nativeAnswer(asm, obj) },
		func(body []byte) (*codec.Answer, error) { return readNative(body, &nativeAssembler{Chat: chat}) })
}

// nativeWriter writes Ollama's NDJSON stream of generate (chat false) or
// chat, as Ollama writes one: a chunk per piece of text (done false), what
// the answer has besides its text (thinking, tool calls) in a chunk before
// the done chunk, and the done chunk with the counters and the contract
// summary but no text.
type nativeWriter struct {
	r    *codec.Request
	chat bool
	// head is the whole answer when it is known before the stream opens
	// (Encode): its model and created_at stamp every chunk, and the first
	// chunk carries its thinking and tool calls with the text.
	head *strictjson.Value
	codec.Chunks
}

func newNativeWriter(w http.ResponseWriter, r *codec.Request, chat bool, head *strictjson.Value) *codec.Stream {
	return codec.NewStream(w, frame.NDJSONType, &nativeWriter{r: r, chat: chat, head: head})
}

// chunk starts a chunk: the head's model and created_at, else the
// client's model and the time.
func (n *nativeWriter) chunk() *strictjson.Value {
	if n.head == nil {
		return strictjson.Object(codec.Member("model", strictjson.String(n.r.Model)),
			codec.Member("created_at", strictjson.String(time.Now().UTC().Format(time.RFC3339Nano))))
	}
	ch := strictjson.Object()
	for _, m := range n.head.Members {
		if m.Key == "model" || m.Key == "created_at" {
			ch.Members = append(ch.Members, m)
		}
	}
	return ch
}

// role is the role of the chat messages of the stream: the answer's.
func (n *nativeWriter) role(obj *strictjson.Value) *strictjson.Value {
	if rv := obj.Get("message").Get("role"); rv != nil {
		return rv
	}
	return strictjson.String("assistant")
}

// content returns a chunk with text; with (not nil) is the answer whose
// thinking and tool calls go with the text.
func (n *nativeWriter) content(text string, with *strictjson.Value) *strictjson.Value {
	ch := n.chunk()
	if !n.chat {
		ch.Set("response", strictjson.String(text))
		if th := with.Get("thinking"); th != nil {
			ch.Set("thinking", th)
		}
	} else {
		role := strictjson.String("assistant")
		if n.head != nil {
			role = n.role(n.head)
		}
		msg := strictjson.Object(codec.Member("role", role), codec.Member("content", strictjson.String(text)))
		if m := with.Get("message"); m != nil && m.Kind == strictjson.KindObject {
			msg = m.Clone()
			msg.Set("content", strictjson.String(text))
		}
		ch.Set("message", msg)
	}
	ch.Set("done", strictjson.BoolValue(false))
	return ch
}

// extras reports whether obj has what Ollama streams besides the text.
func (n *nativeWriter) extras(obj *strictjson.Value) bool {
	if n.chat {
		return codec.HasOther(obj.Get("message"), "role", "content")
	}
	return obj.Has("thinking")
}

func (n *nativeWriter) Text(buf []byte, delta string) []byte {
	send, with := n.Next(delta, n.head)
	if !send {
		return buf
	}
	return frame.AppendNDJSON(buf, n.content(delta, with))
}

func (n *nativeWriter) End(buf []byte, obj *strictjson.Value, _ string) []byte {
	if !n.ExtrasSent() && n.extras(obj) {
		buf = frame.AppendNDJSON(buf, n.content("", obj))
	}
	var last *strictjson.Value
	if n.chat {
		last = codec.CloneExcept(obj, "message")
		last.Set("message", strictjson.Object(codec.Member("role", n.role(obj)), codec.Member("content", strictjson.String(""))))
	} else {
		last = codec.CloneExcept(obj, "response")
		last.Set("response", strictjson.String(""))
		last.Delete("thinking")
	}
	if n.head == nil && n.r.Model != "" {
		last.Set("model", strictjson.String(n.r.Model))
	}
	return frame.AppendNDJSON(buf, last)
}

// Fail is Ollama's error line, {"error": …, "contract": report}.
func (n *nativeWriter) Fail(buf []byte, e *apierr.Error) []byte {
	return append(buf, native{}.StreamError(e)...)
}

// encodeNative writes a native answer: the object, or — to a client that
// asked for a stream — the stream of its writer, as Ollama writes one.
func encodeNative(w http.ResponseWriter, r *codec.Request, obj *strictjson.Value, text string, chat bool) error {
	return codec.Encode(w, r, obj, text, frame.NativeType, func(w http.ResponseWriter, r *codec.Request, head *strictjson.Value) *codec.Stream {
		return newNativeWriter(w, r, chat, head)
	})
}
