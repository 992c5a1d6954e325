package openai

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// choicesAssembler assembles a stream of chat completion or completion
// chunks: the text, reasoning and tool calls of the first choice's deltas,
// the last finish reason and the last usage.
type choicesAssembler struct {
	// Name is the object name of the assembled answer
	// ("chat.completion", "text_completion"); DeltaText reads a chunk's
	// choice's text; Choice builds the answer's one choice.
	Name      string
	DeltaText func(choice *strictjson.Value) string
	Choice    func(text string, finish *strictjson.Value) *strictjson.Value

	text      strings.Builder
	reasoning strings.Builder
	calls     []*strictjson.Value
	last      *strictjson.Value
	usage     *strictjson.Value
	finish    *strictjson.Value
	chunks    int
}

// Event takes the data of one chunk.
func (c *choicesAssembler) Event(data []byte) (string, error) {
	obj, err := frame.ParseEvent(data)
	if err != nil {
		return "", err
	}
	if err := upstreamError(obj); err != nil {
		return "", err
	}
	choice := obj.Get("choices").Index(0)
	delta := c.DeltaText(choice)
	if delta != "" {
		c.chunks++
	}
	c.text.WriteString(delta)
	if d := choice.Get("delta"); d != nil && d.Kind == strictjson.KindObject {
		c.reasoning.WriteString(codec.Str(d.Get("reasoning")))
		c.addCalls(codec.Items(d.Get("tool_calls")))
	}
	if fr := choice.Get("finish_reason"); fr != nil && !fr.IsNull() {
		c.finish = fr
	}
	if u := obj.Get("usage"); u != nil && !u.IsNull() {
		c.usage = u
	}
	c.last = obj
	return delta, nil
}

// addCalls adds the tool calls of a delta: a piece without id and name
// whose index is a call already started continues its arguments (OpenAI
// streams them in pieces); any other is a call of its own (Ollama writes
// each call whole, and numbers the calls of each chunk from 0).
func (c *choicesAssembler) addCalls(calls []*strictjson.Value) {
	for _, call := range calls {
		if call.Kind != strictjson.KindObject {
			continue
		}
		piece := codec.Str(call.Get("id")) == "" && codec.Str(call.Get("function").Get("name")) == ""
		if i, ok := call.Get("index").AsInt(); piece && ok && i >= 0 && int(i) < len(c.calls) {
			prev := c.calls[i].Get("function")
			if prev != nil && prev.Kind == strictjson.KindObject {
				prev.Set("arguments", strictjson.String(codec.Str(prev.Get("arguments"))+codec.Str(call.Get("function").Get("arguments"))))
				continue
			}
		}
		c.calls = append(c.calls, call.Clone())
	}
}

// Object is the last chunk with the one choice of the whole text, the
// last finish reason and the last usage. A stream that ends before
// [DONE] is incomplete, unless the guard stopped it: then its reason is
// a normal stop and its usage the chunks read.
func (c *choicesAssembler) Object(done, stopped bool) (*strictjson.Value, error) {
	if c.last == nil {
		return nil, fmt.Errorf("%w: empty stream", codec.ErrIncomplete)
	}
	if !done && !stopped {
		return nil, fmt.Errorf("%w: the stream ended before [DONE]", codec.ErrIncomplete)
	}
	finish := c.finish
	if finish == nil || stopped {
		finish = strictjson.String("stop")
	}
	out := c.last.Clone()
	out.Set("object", strictjson.String(c.Name))
	choice := c.Choice(c.text.String(), finish)
	if msg := choice.Get("message"); msg != nil {
		if c.reasoning.Len() > 0 {
			msg.Set("reasoning", strictjson.String(c.reasoning.String()))
		}
		if len(c.calls) > 0 {
			msg.Set("tool_calls", strictjson.Array(c.calls...))
		}
	}
	out.Set("choices", strictjson.Array(choice))
	switch {
	case c.usage != nil:
		out.Set("usage", c.usage)
	case stopped:
		out.Set("usage", strictjson.Object(codec.Member("completion_tokens", strictjson.Int(int64(c.chunks)))))
	}
	return out, nil
}
