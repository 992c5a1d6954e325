package middleware

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// answer is what writeClient needs to know about the client's request.
type answer struct {
	flavour flavour
	stream  bool
	// includeUsage is OpenAI's stream_options.include_usage: a stream then
	// ends with a usage chunk that has no choices, as Ollama sends it.
	includeUsage bool
	// contentType is the upstream's Content-Type for a non-stream answer
	// ("" means application/json; charset=utf-8).
	contentType string
}

// writeClient answers a guarded request in the client's shape. obj is the
// final object (text replaced, contract summary added). A stream is
// re-emitted after validation: one chunk with the text and everything else
// the model produced (thinking, tool calls), then the final chunk that
// keeps the upstream's counters — Ollama's NDJSON for the native APIs,
// server-sent events for the OpenAI API.
func writeClient(c echo.Context, a answer, obj *strictjson.Value, text string) error {
	if !a.stream {
		ct := a.contentType
		if ct == "" {
			ct = "application/json; charset=utf-8"
		}
		return c.Blob(http.StatusOK, ct, strictjson.Marshal(obj))
	}
	if a.flavour == flavourOpenAI {
		return writeSSE(c, a, obj, text)
	}
	first := object()
	for _, m := range obj.Members {
		switch m.Key {
		case "model", "created_at":
			first.Members = append(first.Members, m)
		}
	}
	last := obj.Clone()
	if a.flavour == flavourGenerate {
		set(first, "response", strictjson.String(text))
		set(last, "response", strictjson.String(""))
		// Ollama streams the thinking in the chunks before the done
		// chunk, never in it.
		if th := obj.Get("thinking"); th != nil {
			set(first, "thinking", th)
			remove(last, "thinking")
		}
	} else {
		role := strictjson.String("assistant")
		if r := obj.Get("message").Get("role"); r != nil {
			role = r
		}
		// The content chunk carries the whole message (thinking, tool
		// calls, …) with the validated text; the done chunk an empty one,
		// as Ollama's.
		msg := object(member("role", role), member("content", strictjson.String(text)))
		if m := obj.Get("message"); m != nil && m.Kind == strictjson.KindObject {
			msg = m.Clone()
			set(msg, "content", strictjson.String(text))
		}
		set(first, "message", msg)
		set(last, "message", object(member("role", role), member("content", strictjson.String(""))))
	}
	set(first, "done", strictjson.BoolValue(false))
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	buf := append(strictjson.Marshal(first), '\n')
	buf = append(last.AppendJSON(buf), '\n')
	_, err := w.Write(buf)
	w.Flush()
	return err
}

// writeSSE re-emits an OpenAI chat completion as Ollama streams one: the
// chunk with the text (and reasoning, tool calls), the chunk with the
// finish reason and the contract summary, the usage chunk when the client
// asked for it, then [DONE].
func writeSSE(c echo.Context, a answer, obj *strictjson.Value, text string) error {
	chunk := func(choices *strictjson.Value, extra ...strictjson.Member) []byte {
		ch := object(member("id", strictjson.String("")), member("object", strictjson.String("chat.completion.chunk")))
		for _, m := range obj.Members {
			switch m.Key {
			case "id", "created", "model", "system_fingerprint":
				set(ch, m.Key, m.Value)
			}
		}
		set(ch, "choices", choices)
		for _, m := range extra {
			set(ch, m.Key, m.Value)
		}
		return strictjson.Marshal(ch)
	}
	choice := func(delta, finish *strictjson.Value) *strictjson.Value {
		return strictjson.Array(object(
			member("index", strictjson.Int(0)),
			member("delta", delta),
			member("finish_reason", finish),
		))
	}
	finish := obj.Get("choices").Index(0).Get("finish_reason")
	if finish == nil || finish.IsNull() {
		finish = strictjson.String("stop")
	}
	delta := object(member("role", strictjson.String("assistant")), member("content", strictjson.String(text)))
	if m := obj.Get("choices").Index(0).Get("message"); m != nil && m.Kind == strictjson.KindObject {
		delta = m.Clone()
		set(delta, "content", strictjson.String(text))
	}
	var tail []strictjson.Member
	if s := obj.Get("contract"); s != nil {
		tail = append(tail, member("contract", s))
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	buf = append(buf, "data: "...)
	buf = append(buf, chunk(choice(delta, strictjson.Null()))...)
	buf = append(buf, "\n\ndata: "...)
	buf = append(buf, chunk(choice(object(member("role", strictjson.String("assistant")), member("content", strictjson.String(""))), finish), tail...)...)
	if u := obj.Get("usage"); a.includeUsage && u != nil {
		buf = append(buf, "\n\ndata: "...)
		buf = append(buf, chunk(strictjson.Array(), member("usage", u))...)
	}
	buf = append(buf, "\n\ndata: [DONE]\n\n"...)
	_, err := w.Write(buf)
	w.Flush()
	return err
}

// remove deletes the top-level member key, if present.
func remove(obj *strictjson.Value, key string) {
	for i := range obj.Members {
		if obj.Members[i].Key == key {
			obj.Members = append(obj.Members[:i:i], obj.Members[i+1:]...)
			return
		}
	}
}
