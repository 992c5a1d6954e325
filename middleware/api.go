package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// flavour is one of the three guarded Ollama APIs. It knows where the
// model's text sits in a response, how the request asks for streaming,
// format and temperature, and how to write the client's response shape.
type flavour int

const (
	flavourGenerate flavour = iota // POST /api/generate
	flavourChat                    // POST /api/chat
	flavourOpenAI                  // POST /v1/chat/completions
)

func flavourOf(path string) (flavour, bool) {
	switch strings.TrimSuffix(path, "/") {
	case "/api/generate":
		return flavourGenerate, true
	case "/api/chat":
		return flavourChat, true
	case "/v1/chat/completions":
		return flavourOpenAI, true
	}
	return 0, false
}

// request is a guarded request body: the parsed tree (edited in place when
// the gateway must change something) and the fields the guard reads.
type request struct {
	flavour flavour
	body    *strictjson.Value
	raw     []byte
	edited  bool

	Model  string
	Stream bool
	// Schema is the JSON Schema the client passed as `format` (or OpenAI
	// response_format.json_schema.schema); nil when none.
	Schema json.RawMessage
	// HasFormat is true when the client set any format (schema or "json").
	HasFormat bool
	// IncludeUsage is OpenAI's stream_options.include_usage.
	IncludeUsage bool
}

// errBadRequest marks request problems that are the client's (400).
var errBadRequest = errors.New("bad request")

func parseRequest(f flavour, raw []byte) (*request, error) {
	body, err := strictjson.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid JSON body: %v", errBadRequest, err)
	}
	if body.Kind != strictjson.KindObject {
		return nil, fmt.Errorf("%w: request body must be a JSON object", errBadRequest)
	}
	r := &request{flavour: f, body: body, raw: raw}
	if m := body.Get("model"); m != nil {
		s, ok := m.AsString()
		if !ok {
			return nil, fmt.Errorf("%w: \"model\" must be a string", errBadRequest)
		}
		r.Model = s
	}
	// Ollama's native APIs stream unless told not to; OpenAI's do not
	// unless told to.
	r.Stream = f != flavourOpenAI
	if s := body.Get("stream"); s != nil && s.Kind == strictjson.KindBool {
		r.Stream = s.Bool
	}
	switch f {
	case flavourOpenAI:
		if iu := body.Get("stream_options").Get("include_usage"); iu != nil && iu.Kind == strictjson.KindBool {
			r.IncludeUsage = iu.Bool
		}
		if rf := body.Get("response_format"); rf != nil && rf.Kind == strictjson.KindObject {
			r.HasFormat = true
			if js := rf.Get("json_schema"); js != nil {
				if s := js.Get("schema"); s != nil && s.Kind == strictjson.KindObject {
					r.Schema = strictjson.Marshal(s)
				}
			}
		}
	default:
		if fm := body.Get("format"); fm != nil && !fm.IsNull() {
			r.HasFormat = !(fm.Kind == strictjson.KindString && fm.Str == "")
			if fm.Kind == strictjson.KindObject {
				r.Schema = strictjson.Marshal(fm)
			}
		}
	}
	return r, nil
}

// set replaces or appends the top-level member key.
func set(obj *strictjson.Value, key string, v *strictjson.Value) {
	for i := range obj.Members {
		if obj.Members[i].Key == key {
			obj.Members[i].Value = v
			return
		}
	}
	obj.Members = append(obj.Members, strictjson.Member{Key: key, KeyOffset: -1, Value: v})
}

func object(members ...strictjson.Member) *strictjson.Value {
	return &strictjson.Value{Kind: strictjson.KindObject, Members: members, Offset: -1}
}

func member(key string, v *strictjson.Value) strictjson.Member {
	return strictjson.Member{Key: key, KeyOffset: -1, Value: v}
}

// setModel points the request at the route's upstream model.
func (r *request) setModel(m string) {
	if m == "" || m == r.Model {
		return
	}
	set(r.body, "model", strictjson.String(m))
	r.edited = true
}

// setFormat passes schema as the grammar constraint of the first attempt.
func (r *request) setFormat(schema json.RawMessage) error {
	s, err := strictjson.Parse(schema)
	if err != nil {
		return err
	}
	if r.flavour == flavourOpenAI {
		set(r.body, "response_format", object(
			member("type", strictjson.String("json_schema")),
			member("json_schema", object(member("name", strictjson.String("contract")), member("schema", s))),
		))
	} else {
		set(r.body, "format", s)
	}
	r.edited = true
	return nil
}

// setStream asks the upstream for one JSON object: the guard needs the
// whole answer before it can say anything, and one object is cheaper to
// read than a stream to assemble.
func (r *request) setStream(stream bool) {
	set(r.body, "stream", strictjson.BoolValue(stream))
	r.edited = true
}

// hasTemperature reports whether the client chose a temperature.
func (r *request) hasTemperature() bool {
	if r.flavour == flavourOpenAI {
		return r.body.Has("temperature")
	}
	return r.body.Get("options").Has("temperature")
}

// setTemperature sets the sampling temperature for a re-run.
func (r *request) setTemperature(t float64) {
	lit := strictjson.Number(trimFloat(t))
	if r.flavour == flavourOpenAI {
		set(r.body, "temperature", lit)
	} else {
		opts := r.body.Get("options")
		if opts == nil || opts.Kind != strictjson.KindObject {
			opts = object()
			set(r.body, "options", opts)
		}
		set(opts, "temperature", lit)
	}
	r.edited = true
}

// bytes returns the body to send upstream: the client's bytes when nothing
// was edited, else the edited tree (every other member kept as written).
func (r *request) bytes() []byte {
	if !r.edited {
		return r.raw
	}
	return strictjson.Marshal(r.body)
}

// clone returns an independent copy for a re-run.
func (r *request) clone() *request {
	c := *r
	c.body = r.body.Clone()
	return &c
}

// promptText renders the request's task (system, prompt or messages) as
// text, for partial regeneration.
func (r *request) promptText() string {
	var b strings.Builder
	if s, ok := r.body.Get("system").AsString(); ok && s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if s, ok := r.body.Get("prompt").AsString(); ok {
		b.WriteString(s)
	}
	if msgs := r.body.Get("messages"); msgs != nil {
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

func trimFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// response is an upstream answer: the object (the final one, for an
// assembled stream) and the model's text.
type response struct {
	obj  *strictjson.Value
	text string
	// contentType is the upstream's Content-Type header.
	contentType string
}

// parseResponse reads a non-stream upstream body, or assembles an NDJSON
// (native) or SSE (OpenAI) stream into the equivalent single object.
func parseResponse(f flavour, body []byte) (*response, error) {
	trimmed := bytes.TrimSpace(body)
	if f == flavourOpenAI && bytes.HasPrefix(trimmed, []byte("data:")) {
		return assembleSSE(trimmed)
	}
	if obj, err := strictjson.Parse(trimmed); err == nil {
		return &response{obj: obj, text: textOf(f, obj)}, nil
	}
	return assembleNDJSON(f, trimmed)
}

func textOf(f flavour, obj *strictjson.Value) string {
	var s string
	switch f {
	case flavourGenerate:
		s, _ = obj.Get("response").AsString()
	case flavourChat:
		s, _ = obj.Get("message").Get("content").AsString()
	case flavourOpenAI:
		s, _ = obj.Get("choices").Index(0).Get("message").Get("content").AsString()
	}
	return s
}

func assembleNDJSON(f flavour, body []byte) (*response, error) {
	var text strings.Builder
	var last *strictjson.Value
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		obj, err := strictjson.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("upstream stream: %v", err)
		}
		if e, ok := obj.Get("error").AsString(); ok {
			return nil, fmt.Errorf("upstream: %s", e)
		}
		text.WriteString(textOf(f, obj))
		last = obj
	}
	if last == nil {
		return nil, errors.New("upstream sent an empty response")
	}
	return &response{obj: last, text: text.String()}, nil
}

func assembleSSE(body []byte) (*response, error) {
	var text strings.Builder
	var last *strictjson.Value
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		obj, err := strictjson.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("upstream stream: %v", err)
		}
		if s, ok := obj.Get("choices").Index(0).Get("delta").Get("content").AsString(); ok {
			text.WriteString(s)
		}
		last = obj
	}
	if last == nil {
		return nil, errors.New("upstream sent an empty stream")
	}
	// Present the assembled stream as a non-stream completion.
	choice := object(
		member("index", strictjson.Int(0)),
		member("message", object(member("role", strictjson.String("assistant")), member("content", strictjson.String(text.String())))),
		member("finish_reason", strictjson.String("stop")),
	)
	if fr := last.Get("choices").Index(0).Get("finish_reason"); fr != nil && !fr.IsNull() {
		set(choice, "finish_reason", fr)
	}
	set(last, "object", strictjson.String("chat.completion"))
	set(last, "choices", strictjson.Array(choice))
	return &response{obj: last, text: text.String()}, nil
}

// withText returns a copy of the response object with the model's text
// replaced by text.
func withText(f flavour, obj *strictjson.Value, text string) *strictjson.Value {
	out := obj.Clone()
	ptr := map[flavour]string{flavourGenerate: "/response", flavourChat: "/message/content", flavourOpenAI: "/choices/0/message/content"}[f]
	if root, err := strictjson.Replace(out, ptr, strictjson.String(text)); err == nil {
		return root
	}
	return out
}
