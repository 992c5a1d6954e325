package openai

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// responsesAssembler reads a Responses stream event by event: the text of
// its output_text deltas as they come, and the final response of its
// response.completed event, after which nothing is read.
type responsesAssembler struct {
	// WithText puts the text into a response (the codec's WithText), for
	// the response of a stream the guard stopped.
	WithText func(obj *strictjson.Value, text string) *strictjson.Value

	created, final *strictjson.Value
	text           strings.Builder
	chunks         int
}

// Event takes the data of one event.
func (r *responsesAssembler) Event(data []byte) (string, error) {
	if r.final != nil {
		return "", nil
	}
	ev, err := frame.ParseEvent(data)
	if err != nil {
		return "", err
	}
	switch typ := codec.Str(ev.Get("type")); typ {
	case "response.created":
		if resp := ev.Get("response"); resp != nil && resp.Kind == strictjson.KindObject {
			r.created = resp
		}
	case "response.output_text.delta":
		d := codec.Str(ev.Get("delta"))
		if d != "" {
			r.chunks++
		}
		r.text.WriteString(d)
		return d, nil
	case "response.completed", "response.incomplete":
		resp := ev.Get("response")
		if resp == nil || resp.Kind != strictjson.KindObject {
			return "", fmt.Errorf("upstream %s event without a response", typ)
		}
		r.final = resp
	case "response.failed":
		return "", fmt.Errorf("upstream: %s", openAIErrorMessage(ev.Get("response").Get("error")))
	case "error":
		msg := codec.Str(ev.Get("message"))
		if msg == "" {
			msg = openAIErrorMessage(ev.Get("error"))
		}
		return "", fmt.Errorf("upstream: %s", msg)
	}
	return "", nil
}

// Object returns the final response; for a stream the guard stopped, the
// response of response.created completed with the text read so far and
// the output tokens counted from its deltas.
func (r *responsesAssembler) Object(_, stopped bool) (*strictjson.Value, error) {
	switch {
	case r.final != nil:
		return r.final, nil
	case !stopped:
		return nil, fmt.Errorf("%w: the stream ended before response.completed", codec.ErrIncomplete)
	}
	resp := strictjson.Object(codec.Member("object", strictjson.String("response")))
	if r.created != nil {
		resp = r.created.Clone()
	}
	resp.Set("status", strictjson.String("completed"))
	resp.Set("output", strictjson.Array())
	resp.Set("usage", strictjson.Object(codec.Member("output_tokens", strictjson.Int(int64(r.chunks)))))
	return r.WithText(resp, r.text.String()), nil
}
