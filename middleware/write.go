package middleware

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// writeClient answers a guarded request in the client's shape. obj is the
// final object (text replaced, contract summary added). A stream is
// re-emitted after validation: the text in one chunk, then the final chunk
// that keeps the upstream's counters — Ollama's NDJSON for the native APIs,
// server-sent events for the OpenAI API.
func writeClient(c echo.Context, f flavour, stream bool, obj *strictjson.Value, text string) error {
	if !stream {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSONCharsetUTF8, strictjson.Marshal(obj))
	}
	if f == flavourOpenAI {
		return writeSSE(c, obj, text)
	}
	first := object()
	for _, m := range obj.Members {
		switch m.Key {
		case "model", "created_at":
			first.Members = append(first.Members, m)
		}
	}
	last := obj.Clone()
	if f == flavourGenerate {
		set(first, "response", strictjson.String(text))
		set(last, "response", strictjson.String(""))
	} else {
		role := strictjson.String("assistant")
		if r := obj.Get("message").Get("role"); r != nil {
			role = r
		}
		set(first, "message", object(member("role", role), member("content", strictjson.String(text))))
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

func writeSSE(c echo.Context, obj *strictjson.Value, text string) error {
	chunk := func(delta *strictjson.Value, finish *strictjson.Value, extra bool) []byte {
		ch := object()
		for _, m := range obj.Members {
			switch m.Key {
			case "id", "created", "model", "system_fingerprint":
				ch.Members = append(ch.Members, m)
			case "contract":
				if extra {
					ch.Members = append(ch.Members, m)
				}
			}
		}
		set(ch, "object", strictjson.String("chat.completion.chunk"))
		set(ch, "choices", strictjson.Array(object(
			member("index", strictjson.Int(0)),
			member("delta", delta),
			member("finish_reason", finish),
		)))
		if extra {
			if u := obj.Get("usage"); u != nil {
				set(ch, "usage", u)
			}
		}
		return strictjson.Marshal(ch)
	}
	finish := obj.Get("choices").Index(0).Get("finish_reason")
	if finish == nil || finish.IsNull() {
		finish = strictjson.String("stop")
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	buf = append(buf, "data: "...)
	buf = append(buf, chunk(object(member("role", strictjson.String("assistant")), member("content", strictjson.String(text))), strictjson.Null(), false)...)
	buf = append(buf, "\n\ndata: "...)
	buf = append(buf, chunk(object(), finish, true)...)
	buf = append(buf, "\n\ndata: [DONE]\n\n"...)
	_, err := w.Write(buf)
	w.Flush()
	return err
}
