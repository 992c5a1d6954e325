package codec

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/contractgateway/gateway/strictjson"
)

// The framing every API shares: one object, an NDJSON stream (Ollama's
// own APIs), a server-sent event stream, data-only and ending with
// [DONE] (OpenAI's chat completions and completions) or with named events
// (the Responses and Messages APIs), and an error at the end of a stream
// already started.

// Content types of the answers.
const (
	nativeContentType = "application/json; charset=utf-8"
	jsonContentType   = "application/json"
	ndjsonContentType = "application/x-ndjson"
	sseContentType    = "text/event-stream"
)

// writeObject writes a non-stream answer.
func writeObject(w http.ResponseWriter, contentType string, obj *strictjson.Value) error {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	return strictjson.WriteJSON(w, obj)
}

// writeNDJSON writes a native stream, one chunk a line.
func writeNDJSON(w http.ResponseWriter, chunks ...*strictjson.Value) error {
	var buf []byte
	for _, c := range chunks {
		buf = append(c.AppendJSON(buf), '\n')
	}
	return writeStream(w, ndjsonContentType, buf)
}

// writeSSE writes data-only server-sent events, then [DONE].
func writeSSE(w http.ResponseWriter, events []*strictjson.Value) error {
	var buf []byte
	for _, ev := range events {
		buf = append(buf, "data: "...)
		buf = ev.AppendJSON(buf)
		buf = append(buf, "\n\n"...)
	}
	buf = append(buf, "data: [DONE]\n\n"...)
	return writeStream(w, sseContentType, buf)
}

// writeNamedSSE writes server-sent events with an event line each, the
// event's name being its "type" member (the Responses and Messages
// streams).
func writeNamedSSE(w http.ResponseWriter, events []*strictjson.Value) error {
	var buf []byte
	for _, ev := range events {
		buf = append(buf, "event: "...)
		buf = append(buf, str(ev.Get("type"))...)
		buf = append(buf, "\ndata: "...)
		buf = ev.AppendJSON(buf)
		buf = append(buf, "\n\n"...)
	}
	return writeStream(w, sseContentType, buf)
}

// writeStream writes a whole stream at once and flushes it: the guard has
// the whole answer before it writes a byte.
func writeStream(w http.ResponseWriter, contentType string, buf []byte) error {
	w.Header().Set("Content-Type", contentType)
	if contentType == sseContentType {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(buf)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// readObjectOrSSE reads an upstream answer of an SSE API: one JSON object,
// or a server-sent event stream (a body starting with an event or data
// line), which assemble turns into the equivalent object.
func readObjectOrSSE(body []byte, assemble func([]byte) (*strictjson.Value, error)) (*strictjson.Value, error) {
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

// sseData returns the data of each data: line of a server-sent event
// stream, and whether the stream ended with [DONE].
func sseData(body []byte) (datas [][]byte, done bool) {
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

// parseEvent parses the data of a stream's event, which must be a JSON
// object.
func parseEvent(data []byte) (*strictjson.Value, error) {
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
		if typ := str(v.Get("type")); typ != "" {
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

// keepAliveNDJSON is the keep-alive of Ollama's streams: a chunk with
// the model's name, the time, empty content and done false, which clients
// append to their text as nothing.
func keepAliveNDJSON(r *Request, content strictjson.Member) []byte {
	chunk := strictjson.Object(
		Member("model", strictjson.String(r.Model)),
		Member("created_at", strictjson.String(time.Now().UTC().Format(time.RFC3339Nano))),
		content,
		Member("done", strictjson.BoolValue(false)),
	)
	return append(chunk.AppendJSON(nil), '\n')
}

// keepAliveComment is the keep-alive of a data-only SSE stream: a comment
// line, which every SSE parser skips.
var keepAliveComment = []byte(": keep-alive\n\n")

// namedEvent frames ev as a server-sent event named after its type.
func namedEvent(ev *strictjson.Value) []byte {
	buf := append([]byte("event: "), str(ev.Get("type"))...)
	buf = append(buf, "\ndata: "...)
	buf = ev.AppendJSON(buf)
	return append(buf, "\n\n"...)
}
