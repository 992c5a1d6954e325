// Package frame is the framing the wire APIs share: one object, an NDJSON
// stream (Ollama's own APIs), a server-sent event stream, data-only and
// ending with [DONE] (OpenAI's chat completions and completions) or with
// named events (the Responses and Messages APIs), keep-alives, and an
// error at the end of a stream already started — written in pieces as
// the guard has them (Stream), and read as they arrive (Reader). It knows
// no API.
package frame

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/contractgateway/gateway/validators/strictjson"
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

// Stream writes an answer's stream in pieces as the guard has them: the
// status and headers go out before the first piece, and every piece is
// flushed at once, so that the client sees it while the guard works on
// the next. A response already committed (by keep-alives) is given as a
// writer that drops the header and status writes.
type Stream struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

// NewStream returns a Stream of contentType on w.
func NewStream(w http.ResponseWriter, contentType string) *Stream {
	return &Stream{w: w, contentType: contentType}
}

// Write sends buf, the headers first, and flushes it; an empty buf sends
// only the headers.
func (s *Stream) Write(buf []byte) error {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", s.contentType)
		if s.contentType == SSEType {
			s.w.Header().Set("Cache-Control", "no-cache")
		}
		s.w.WriteHeader(http.StatusOK)
	}
	var err error
	if len(buf) > 0 {
		_, err = s.w.Write(buf)
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// AppendNDJSON appends v as a line of an NDJSON stream (Ollama's).
func AppendNDJSON(buf []byte, v *strictjson.Value) []byte {
	return append(v.AppendJSON(buf), '\n')
}

// AppendData appends v as a data-only server-sent event (OpenAI's chat
// completions and completions).
func AppendData(buf []byte, v *strictjson.Value) []byte {
	buf = append(buf, "data: "...)
	return append(v.AppendJSON(buf), "\n\n"...)
}

// AppendNamed appends v as a server-sent event named after its "type"
// member (the Responses and Messages streams).
func AppendNamed(buf []byte, v *strictjson.Value) []byte {
	buf = append(append(append(buf, "event: "...), typeOf(v)...), "\ndata: "...)
	return append(v.AppendJSON(buf), "\n\n"...)
}

// Done is the last event of a data-only SSE stream.
const Done = "data: [DONE]\n\n"

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
func NamedEvent(ev *strictjson.Value) []byte { return AppendNamed(nil, ev) }

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
	return AppendNDJSON(nil, chunk)
}
