package codec

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// StreamWriter writes one guarded answer as the API's stream, piece by
// piece, so that the client sees each validated item as soon as it is
// released; the text deltas concatenate to the final text. It is used by
// one goroutine.
type StreamWriter interface {
	// Text sends delta as the next piece of the model's text. The first
	// call sends the response headers (unless the response is already
	// committed, e.g. by keep-alives: then only the frames) and the API's
	// opening frames (OpenAI's role chunk, Anthropic's message_start +
	// content_block_start, the Responses API's created/in_progress/
	// output_item.added/content_part.added events, …). An empty delta
	// sends only the opening.
	Text(delta string) error
	// End sends the final frames: obj is the final answer object exactly
	// as Encode receives it (text replaced by the whole text, contract
	// summary member added, counters, stop reason), text the whole text
	// (the concatenation of the deltas). For Ollama: the final chunk has
	// the API's done:true fields and the summary but no repeated text;
	// OpenAI: finish chunk (+ usage chunk when include_usage) and [DONE];
	// Anthropic: content_block_stop, message_delta, message_stop;
	// Responses: the done events with the whole text and
	// response.completed.
	End(obj *strictjson.Value, text string) error
	// Fail ends the stream with e in the API's own stream error shape
	// (Ollama: a final NDJSON line {"error": …, "contract": report};
	// OpenAI SSE: an error chunk as today's stream errors; Anthropic:
	// event: error; Responses: its error/failed event). After Fail
	// nothing more is written.
	Fail(e *apierr.Error) error
}

// ErrStreamEnded is what a StreamWriter returns once End or Fail has
// ended its stream: nothing may follow the API's last frame.
var ErrStreamEnded = errors.New("codec: the stream has ended")

// StreamAPI is what a [Stream] needs of its API: the frames that open
// the stream, carry a piece of text, end it, and end it with an error,
// each appended to buf. What an API knows of the answer before its end —
// nothing, for an answer released as it validates; the whole answer, for
// Encode — is the API writer's own (its head).
type StreamAPI interface {
	// Open appends the frames that open the stream.
	Open(buf []byte) []byte
	// Text appends the frames of one piece of text.
	Text(buf []byte, delta string) []byte
	// End appends the final frames (see StreamWriter's End).
	End(buf []byte, obj *strictjson.Value, text string) []byte
	// Fail appends the API's stream error frame.
	Fail(buf []byte, e *apierr.Error) []byte
}

// Stream is the StreamWriter of every API: it opens the stream
// once, sends each call's frames as one flushed write, and refuses to
// write past the end.
type Stream struct {
	out           *frame.Stream
	api           StreamAPI
	buf           []byte
	opened, ended bool
}

// NewStream returns the stream of api's frames on w, of contentType: the
// StreamWriter an API's NewStreamWriter returns, and what its Encode
// writes a whole answer with.
func NewStream(w http.ResponseWriter, contentType string, api StreamAPI) *Stream {
	return &Stream{out: frame.NewStream(w, contentType), api: api}
}

// opening appends the opening frames to buf, once.
func (s *Stream) opening(buf []byte) []byte {
	if s.opened {
		return buf
	}
	s.opened = true
	return s.api.Open(buf)
}

// Text sends the opening frames with the first call, then delta's.
func (s *Stream) Text(delta string) error {
	if s.ended {
		return ErrStreamEnded
	}
	s.buf = s.api.Text(s.opening(s.buf[:0]), delta)
	return s.out.Write(s.buf)
}

// End sends the final frames (the opening first, when no Text did).
func (s *Stream) End(obj *strictjson.Value, text string) error {
	if s.ended {
		return ErrStreamEnded
	}
	s.ended = true
	s.buf = s.api.End(s.opening(s.buf[:0]), obj, text)
	return s.out.Write(s.buf)
}

// Fail sends the API's error frame, the headers first when nothing went
// out yet.
func (s *Stream) Fail(e *apierr.Error) error {
	if s.ended {
		return ErrStreamEnded
	}
	s.ended = true
	s.buf = s.api.Fail(s.buf[:0], e)
	return s.out.Write(s.buf)
}

// Encode writes a whole answer as r asks for it: the object alone, of
// type objType, or — to a client that asked for a stream — the stream
// newStream opens on w with obj as its head. Every API's Encode is this,
// with its own types and stream writer.
func Encode(w http.ResponseWriter, r *Request, obj *strictjson.Value, text, objType string, newStream func(http.ResponseWriter, *Request, *strictjson.Value) *Stream) error {
	if !r.Stream {
		return frame.WriteObject(w, objType, obj)
	}
	return newStream(w, r, obj).Encode(obj, text)
}

// Encode writes a whole answer as its API's stream: the frames of
// Text(text) and of End(obj, text), in one write, as the guard has the
// whole answer before it writes a byte. It is Encode's stream, made by
// the same frames as a stream released piece by piece.
func (s *Stream) Encode(obj *strictjson.Value, text string) error {
	buf := s.api.Text(s.opening(nil), text)
	s.ended = true
	return s.out.Write(s.api.End(buf, obj, text))
}

// Chunks is what the streams of chunks, Ollama's NDJSON and OpenAI's
// chat completion and completion chunks, share: no opening of their own
// (the first piece's chunk, empty or not, opens the stream), no chunk for
// a later empty piece, and the whole answer's other members (thinking,
// tool calls), when the answer is known before the stream opens (Encode),
// sent with the first piece. An API's writer embeds it.
type Chunks struct {
	sent       bool // a chunk went out
	extrasSent bool // and the whole answer's other members with it
}

// Open sends nothing: the first piece's chunk opens the stream.
func (*Chunks) Open(buf []byte) []byte { return buf }

// Next reports whether a piece with delta is to be sent, and returns the
// whole answer (head, nil when there is none) when the piece is the
// stream's first, which carries the answer's other members: nil for
// every later piece.
func (c *Chunks) Next(delta string, head *strictjson.Value) (send bool, with *strictjson.Value) {
	if delta == "" && c.sent {
		return false, nil
	}
	if c.sent {
		return true, nil
	}
	c.sent = true
	c.extrasSent = head != nil
	return true, head
}

// ExtrasSent reports whether the whole answer's other members went out
// with the first piece, so that the end need not send them.
func (c *Chunks) ExtrasSent() bool { return c.extrasSent }

// NewID returns prefix followed by 24 random hex digits: the id of a
// stream whose frames go out before the answer (and its upstream's id)
// is known.
func NewID(prefix string) string {
	var b [12]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return prefix + hex.EncodeToString(b[:])
}

// HasOther reports whether obj is an object with a member besides keys:
// what an answer carries besides its text (thinking, tool calls), which
// its stream sends in a frame of its own when it was not sent with the
// text.
func HasOther(obj *strictjson.Value, keys ...string) bool {
	if obj == nil || obj.Kind != strictjson.KindObject {
		return false
	}
	for _, m := range obj.Members {
		if !slices.Contains(keys, m.Key) {
			return true
		}
	}
	return false
}

// Event returns an object of type typ with members, the events of the
// Messages and Responses streams.
func Event(typ string, members ...strictjson.Member) *strictjson.Value {
	ev := strictjson.Object(Member("type", strictjson.String(typ)))
	ev.Members = append(ev.Members, members...)
	return ev
}
