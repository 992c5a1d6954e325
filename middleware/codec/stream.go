package codec

import (
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// StreamReader reads an upstream's answer as it arrives: bytes in, in
// pieces of any size, the model's text out as it grows, and at the end
// the same Answer that ReadAnswer makes of the whole body. The guard asks
// every model call with stream true and reads it through a StreamReader,
// so that it sees the text while the model writes it (to stop a model
// whose JSON value has closed, to keep a held client alive) rather than
// when the model has finished.
//
// The framing is frame.Reader's; the codec's assembler reads the events.
// An upstream that answers one object regardless is read whole, as
// ReadAnswer reads it. A StreamReader is used by one goroutine.
type StreamReader struct {
	rd  *frame.Reader
	asm Assembler
	// answerOf checks the assembled object and reads its answer: the
	// codec's ReadAnswer past the framing.
	answerOf func(*strictjson.Value) (*Answer, error)
	// whole is the codec's ReadAnswer, for an answer that is no stream.
	whole func([]byte) (*Answer, error)
}

// Assembler builds an answer from a stream's events, one at a time: an
// NDJSON chunk, or the data of a server-sent event (each API package has
// its own).
type Assembler interface {
	// Event takes the raw data of one event and returns the model text
	// it adds.
	Event(data []byte) (delta string, err error)
	// Object returns the object equivalent to the whole stream: done says
	// that an SSE stream ended with [DONE]; stopped that the guard ended
	// the stream itself once the answer was complete (early stop), so
	// that no final event is to be expected, and the object says a normal
	// stop with the output tokens counted from the chunks read.
	Object(done, stopped bool) (*strictjson.Value, error)
}

// NewStreamReader returns the reader of a stream framed as SSE (sse) or
// NDJSON whose events asm assembles: answerOf reads the assembled object,
// whole an answer that is no stream (the API's ReadAnswer).
func NewStreamReader(sse bool, asm Assembler, answerOf func(*strictjson.Value) (*Answer, error), whole func([]byte) (*Answer, error)) *StreamReader {
	return &StreamReader{rd: frame.NewReader(sse, asm.Event), asm: asm, answerOf: answerOf, whole: whole}
}

// ReadSSE reads the whole answer of an SSE API, as its ReadAnswer: one
// JSON object, or a stream whose events asm assembles, as a StreamReader
// assembles them piece by piece, so that both readings of the same bytes
// give the same Answer; answerOf checks the object and reads its answer.
// An assembler takes no event after its stream's last.
func ReadSSE(body []byte, asm Assembler, answerOf func(*strictjson.Value) (*Answer, error)) (*Answer, error) {
	obj, err := frame.ReadObjectOrSSE(body, func(stream []byte) (*strictjson.Value, error) {
		datas, done := frame.SSEData(stream)
		for _, data := range datas {
			if _, err := asm.Event(data); err != nil {
				return nil, err
			}
		}
		return asm.Object(done, false)
	})
	if err != nil {
		return nil, err
	}
	return answerOf(obj)
}

// Feed takes the next bytes of the answer and returns the model text
// they complete, "" when they complete none (a partial line, an event
// without text, an answer read whole). An error ends the reading: the
// answer is unreadable.
func (s *StreamReader) Feed(p []byte) (delta string, err error) { return s.rd.Feed(p) }

// Close ends the answer at the end of the body and returns it: the
// Answer ReadAnswer makes of the same bytes, or its error (a stream
// without its final chunk wraps ErrIncomplete).
func (s *StreamReader) Close() (*Answer, error) {
	end, err := s.rd.Close()
	return s.answer(end, err, false)
}

// Stop ends the answer before the body's end, when the guard stopped the
// call itself because the model's answer was complete: the answer of the
// events read so far (a partial line is dropped), with the API's normal
// stop and the output tokens counted from the chunks that carried text.
func (s *StreamReader) Stop() (*Answer, error) {
	end, err := s.rd.Stop()
	return s.answer(end, err, true)
}

func (s *StreamReader) answer(end frame.Ending, err error, stopped bool) (*Answer, error) {
	switch {
	case err != nil:
		return nil, err
	case end.Whole:
		return s.whole(end.Body)
	}
	obj, err := s.asm.Object(end.Done, stopped)
	if err != nil {
		return nil, err
	}
	return s.answerOf(obj)
}
