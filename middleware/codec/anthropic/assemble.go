package anthropic

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// messagesAssembler reads a Messages stream event by event: message_start's
// message, each block from its start event and deltas, the stop reason
// and usage of message_delta, up to message_stop, after which nothing is
// read. A stream without message_stop is incomplete; an error event is
// the upstream's error.
type messagesAssembler struct {
	msg     *strictjson.Value
	blocks  []*strictjson.Value
	partial []strings.Builder
	stopped bool
	chunks  int
}

// Event takes the data of one event.
func (s *messagesAssembler) Event(data []byte) (string, error) {
	if s.stopped {
		return "", nil
	}
	ev, err := frame.ParseEvent(data)
	if err != nil {
		return "", err
	}
	typ := codec.Str(ev.Get("type"))
	if typ == "error" {
		return "", fmt.Errorf("upstream: %s", codec.Str(ev.Get("error").Get("message")))
	}
	if typ != "message_start" && s.msg == nil {
		if typ == "ping" {
			return "", nil
		}
		return "", fmt.Errorf("upstream stream: %s before message_start", typ)
	}
	idx64, _ := ev.Get("index").AsInt()
	idx := int(idx64)
	switch typ {
	case "message_start":
		msg := ev.Get("message")
		if msg == nil || msg.Kind != strictjson.KindObject {
			return "", fmt.Errorf("upstream message_start without a message")
		}
		s.msg = msg.Clone()
	case "content_block_start":
		if idx < 0 || idx > len(s.blocks) || idx > 1<<16 {
			return "", fmt.Errorf("upstream stream: block %d out of order", idx)
		}
		if idx == len(s.blocks) {
			s.blocks = append(s.blocks, nil)
			s.partial = append(s.partial, strings.Builder{})
		}
		b := ev.Get("content_block")
		if b == nil || b.Kind != strictjson.KindObject {
			return "", fmt.Errorf("upstream content_block_start without a block")
		}
		s.blocks[idx] = b.Clone()
	case "content_block_delta":
		if idx < 0 || idx >= len(s.blocks) {
			return "", fmt.Errorf("upstream stream: delta of unknown block %d", idx)
		}
		d := ev.Get("delta")
		b := s.blocks[idx]
		switch codec.Str(d.Get("type")) {
		case "text_delta":
			t := codec.Str(d.Get("text"))
			b.Set("text", strictjson.String(codec.Str(b.Get("text"))+t))
			if codec.Str(b.Get("type")) == "text" && t != "" {
				s.chunks++
				return t, nil
			}
		case "thinking_delta":
			b.Set("thinking", strictjson.String(codec.Str(b.Get("thinking"))+codec.Str(d.Get("thinking"))))
		case "input_json_delta":
			s.partial[idx].WriteString(codec.Str(d.Get("partial_json")))
		}
	case "message_delta":
		if d := ev.Get("delta"); d != nil && d.Kind == strictjson.KindObject {
			for _, m := range d.Members {
				s.msg.Set(m.Key, m.Value)
			}
		}
		if u := ev.Get("usage"); u != nil && u.Kind == strictjson.KindObject {
			usage := codec.Child(s.msg, "usage", strictjson.KindObject)
			for _, m := range u.Members {
				usage.Set(m.Key, m.Value)
			}
		}
	case "message_stop":
		s.stopped = true
	}
	return "", nil
}

// Object returns the message of a stream that reached message_stop; for
// a stream the guard stopped, the blocks read so far, stop reason
// end_turn, and the output tokens counted from the text deltas.
func (s *messagesAssembler) Object(_, stopped bool) (*strictjson.Value, error) {
	if !s.stopped && !stopped {
		return nil, fmt.Errorf("%w: the stream ended before message_stop", codec.ErrIncomplete)
	}
	if s.msg == nil {
		return nil, fmt.Errorf("%w: the stream ended before message_start", codec.ErrIncomplete)
	}
	blocks := make([]*strictjson.Value, 0, len(s.blocks))
	for i, b := range s.blocks {
		if b == nil {
			if stopped {
				continue
			}
			return nil, fmt.Errorf("upstream stream: block %d never started", i)
		}
		if s.partial[i].Len() > 0 {
			in, err := strictjson.Parse([]byte(s.partial[i].String()))
			if err != nil {
				return nil, fmt.Errorf("upstream stream: tool input is not JSON: %v", err)
			}
			b.Set("input", in)
		}
		blocks = append(blocks, b)
	}
	s.msg.Set("content", strictjson.Array(blocks...))
	if stopped && !s.stopped {
		s.msg.Set("stop_reason", strictjson.String("end_turn"))
		usage := codec.Child(s.msg, "usage", strictjson.KindObject)
		usage.Set("output_tokens", strictjson.Int(int64(s.chunks)))
	}
	return s.msg, nil
}
