// Package frame is the framing the wire APIs share: one object, an NDJSON
// stream (Ollama's own APIs), a server-sent event stream, data-only and
// ending with [DONE] (OpenAI's chat completions and completions) or with
// named events (the Responses and Messages APIs), keep-alives, and an
// error at the end of a stream already started. It knows no API.
package frame

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/contractgateway/gateway/strictjson"
)

// Content types of the answers.
const (
	NativeType = "application/json; charset=utf-8"
	JSONType   = "application/json"
	NDJSONType = "application/x-ndjson"
	SSEType    = "text/event-stream"
)

// WriteObject writes a non-stream answer.
func WriteObject(w http.ResponseWriter, contentType string, obj *strictjson.Value) error {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	return strictjson.WriteJSON(w, obj)
}

// WriteNDJSON writes a native stream, one chunk a line.
func WriteNDJSON(w http.ResponseWriter, chunks ...*strictjson.Value) error {
	var buf []byte
	for _, c := range chunks {
		buf = append(c.AppendJSON(buf), '\n')
	}
	return WriteStream(w, NDJSONType, buf)
}

// WriteSSE writes data-only server-sent events, then [DONE].
func WriteSSE(w http.ResponseWriter, events []*strictjson.Value) error {
	var buf []byte
	for _, ev := range events {
		buf = append(buf, "data: "...)
		buf = ev.AppendJSON(buf)
		buf = append(buf, "\n\n"...)
	}
	buf = append(buf, "data: [DONE]\n\n"...)
	return WriteStream(w, SSEType, buf)
}

// WriteNamedSSE writes server-sent events with an event line each, the
// event's name being its "type" member (the Responses and Messages
// streams).
func WriteNamedSSE(w http.ResponseWriter, events []*strictjson.Value) error {
	var buf []byte
	for _, ev := range events {
		buf = append(buf, "event: "...)
		buf = append(buf, typeOf(ev)...)
		buf = append(buf, "\ndata: "...)
		buf = ev.AppendJSON(buf)
		buf = append(buf, "\n\n"...)
	}
	return WriteStream(w, SSEType, buf)
}

// WriteStream writes a whole stream at once and flushes it: the guard has
// the whole answer before it writes a byte.
func WriteStream(w http.ResponseWriter, contentType string, buf []byte) error {
	w.Header().Set("Content-Type", contentType)
	if contentType == SSEType {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(buf)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// ReadObjectOrSSE reads an upstream answer of an SSE API: one JSON object,
// or a server-sent event stream (a body starting with an event or data
// line), which assemble turns into the equivalent object.
func ReadObjectOrSSE(body []byte, assemble func([]byte) (*strictjson.Value, error)) (*strictjson.Value, error) {
	trimmed := bytes.TrimSpace(body)
	if bytes.HasPrefix(trimmed, []byte("event:")) || bytes.HasPrefix(trimmed, []byte("data:")) {
		return assemble(trimmed)
	}
	obj, err := strictjson.ParseOwned(trimmed)
	if err != nil || obj.Kind != strictjson.KindObject {
		return nil, fmt.Errorf("upstream answer is not a JSON object: %v", err)
	}
	return obj, nil
}

// SSEData returns the data of each data: line of a server-sent event
// stream, and whether the stream ended with [DONE].
func SSEData(body []byte) (datas [][]byte, done bool) {
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return datas, true
		}
		datas = append(datas, data)
	}
	return datas, false
}

// ParseEvent parses the data of a stream's event, which must be a JSON
// object.
func ParseEvent(data []byte) (*strictjson.Value, error) {
	obj, err := strictjson.ParseOwned(data)
	if err != nil || obj.Kind != strictjson.KindObject {
		return nil, fmt.Errorf("upstream stream is not JSON: %v", err)
	}
	return obj, nil
}

// SSEErrorEvent frames an error body (a codec's EncodeError) as the final
// event of a server-sent event stream already started, named after the
// body's "type" member when it has one (Anthropic's "error" event).
func SSEErrorEvent(body []byte) []byte {
	var line []byte
	if v, err := strictjson.Parse(body); err == nil {
		if typ := typeOf(v); typ != "" {
			line = append(append(append(line, "event: "...), typ...), '\n')
		}
	}
	line = append(line, "data: "...)
	line = append(line, body...)
	return append(line, "\n\n"...)
}

// NDJSONErrorLine frames an error body as the final line of an NDJSON
// stream already started, as Ollama ends a stream that failed.
func NDJSONErrorLine(body []byte) []byte { return append(body, '\n') }

// KeepAliveComment is the keep-alive of a data-only SSE stream: a comment
// line, which every SSE parser skips.
var KeepAliveComment = []byte(": keep-alive\n\n")

// NamedEvent frames ev as a server-sent event named after its type.
func NamedEvent(ev *strictjson.Value) []byte {
	buf := append([]byte("event: "), typeOf(ev)...)
	buf = append(buf, "\ndata: "...)
	buf = ev.AppendJSON(buf)
	return append(buf, "\n\n"...)
}

// typeOf is an event's "type" member, "" when it has none.
func typeOf(v *strictjson.Value) string {
	s, _ := v.Get("type").AsString()
	return s
}

// KeepAliveNDJSON is the keep-alive of Ollama's streams: a chunk with
// the model's name, the time, empty content and done false, which clients
// append to their text as nothing.
func KeepAliveNDJSON(model string, content strictjson.Member) []byte {
	chunk := strictjson.Object(
		strictjson.Member{Key: "model", KeyOffset: -1, Value: strictjson.String(model)},
		strictjson.Member{Key: "created_at", KeyOffset: -1, Value: strictjson.String(time.Now().UTC().Format(time.RFC3339Nano))},
		content,
		strictjson.Member{Key: "done", KeyOffset: -1, Value: strictjson.BoolValue(false)},
	)
	return append(chunk.AppendJSON(nil), '\n')
}
