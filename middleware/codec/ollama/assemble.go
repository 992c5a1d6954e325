package ollama

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// nativeAssembler assembles Ollama's NDJSON stream of generate or chat:
// the text, the thinking and (chat) the tool calls of every chunk, put
// into the final (done) chunk, which then reads as Ollama's answer to the
// same request without a stream. One object is read as it is.
type nativeAssembler struct {
	// Chat says the chunks are chat's (message.content, message.thinking,
	// message.tool_calls), not generate's (response, thinking).
	Chat bool

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

// TextOf is the text of a chunk or answer.
func (n *nativeAssembler) TextOf(obj *strictjson.Value) string {
	if n.Chat {
		return codec.Str(obj.Get("message").Get("content"))
	}
	return codec.Str(obj.Get("response"))
}

// Event takes one chunk; a line that is no object is frame.ErrNotObject.
func (n *nativeAssembler) Event(data []byte) (string, error) {
	obj, err := strictjson.ParseOwned(data)
	if err != nil || obj.Kind != strictjson.KindObject {
		return "", fmt.Errorf("%w: %v", frame.ErrNotObject, err)
	}
	return n.Take(obj)
}

// Take takes one parsed chunk.
func (n *nativeAssembler) Take(obj *strictjson.Value) (string, error) {
	if e, ok := obj.Get("error").AsString(); ok {
		return "", fmt.Errorf("upstream: %s", e)
	}
	n.frames++
	n.last = obj
	delta := n.TextOf(obj)
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
	if n.Chat {
		n.thinking.WriteString(codec.Str(obj.Get("message").Get("thinking")))
		n.calls = append(n.calls, codec.Items(obj.Get("message").Get("tool_calls"))...)
	} else {
		n.thinking.WriteString(codec.Str(obj.Get("thinking")))
	}
	return delta, nil
}

// Object returns the final chunk with the stream's text, thinking and
// tool calls; one object as it is. A stream must end with a done chunk,
// an object must not say done false — unless the guard stopped it, when
// the last chunk is made the final one: done, a normal stop, and the
// chunks read as its output tokens.
func (n *nativeAssembler) Object(_, stopped bool) (*strictjson.Value, error) {
	if n.last == nil {
		return nil, fmt.Errorf("%w: empty body", codec.ErrIncomplete)
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
			return nil, fmt.Errorf("%w: no final chunk", codec.ErrIncomplete)
		}
		return obj, nil
	case d == nil || d.Kind != strictjson.KindBool || !d.Bool:
		return nil, fmt.Errorf("%w: the stream ended without its final chunk", codec.ErrIncomplete)
	}
	text := strictjson.String(n.first + n.text.String())
	if !n.Chat {
		obj.Set("response", text)
		if n.thinking.Len() > 0 {
			obj.Set("thinking", strictjson.String(n.thinking.String()))
		}
		return obj, nil
	}
	msg := obj.Get("message")
	if msg == nil || msg.Kind != strictjson.KindObject {
		msg = strictjson.Object(codec.Member("role", strictjson.String("assistant")))
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
