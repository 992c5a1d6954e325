package codec

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"

	"github.com/contractgateway/gateway/internal/bufpool"
	"github.com/contractgateway/gateway/strictjson"
)

// errNotObject is a line of an answer that is no JSON object: on the
// first line, the sign of an answer that is no stream of objects.
var errNotObject = errors.New("upstream answer is not JSON")

// StreamReader reads an upstream's answer as it arrives: bytes in, in
// pieces of any size, the model's text out as it grows, and at the end
// the same Answer that ReadAnswer makes of the whole body. The guard asks
// every model call with stream true and reads it through a StreamReader,
// so that it sees the text while the model writes it (to stop a model
// whose JSON value has closed, to keep a held client alive) rather than
// when the model has finished.
//
// An upstream that answers one object regardless (Ollama does for a
// load or unload request; a proxy may buffer) is read whole, as
// ReadAnswer reads it. A StreamReader is used by one goroutine.
type StreamReader struct {
	sse bool
	asm assembler
	// answerOf checks the assembled object and reads its answer: the
	// codec's ReadAnswer past the framing.
	answerOf func(*strictjson.Value) (*Answer, error)
	// whole is the codec's ReadAnswer, for an answer that is no stream.
	whole func([]byte) (*Answer, error)

	mode streamMode
	// buf holds the bytes not framed yet: the start of a line, or the
	// whole body of an answer read whole.
	buf []byte
	// scanned is how much of buf is known to hold no line end: a long
	// line is searched once, not again with every piece.
	scanned int
	// events counts the events taken; done is set by an SSE stream's
	// [DONE], after which nothing is read.
	events int
	done   bool
	err    error
}

type streamMode int

const (
	modeUndecided streamMode = iota
	modeFrames
	modeWhole
)

// assembler builds an answer from a stream's events, one at a time: an
// NDJSON chunk, or the data of a server-sent event.
type assembler interface {
	// event takes the raw data of one event and returns the model text
	// it adds.
	event(data []byte) (delta string, err error)
	// object returns the object equivalent to the whole stream: done says
	// that an SSE stream ended with [DONE]; stopped that the guard ended
	// the stream itself once the answer was complete (early stop), so
	// that no final event is to be expected, and the object says a normal
	// stop with the output tokens counted from the chunks read.
	object(done, stopped bool) (*strictjson.Value, error)
}

func newStreamReader(sse bool, asm assembler, answerOf func(*strictjson.Value) (*Answer, error), whole func([]byte) (*Answer, error)) *StreamReader {
	return &StreamReader{sse: sse, asm: asm, answerOf: answerOf, whole: whole}
}

// Feed takes the next bytes of the answer and returns the model text
// they complete, "" when they complete none (a partial line, an event
// without text, an answer read whole). An error ends the reading: the
// answer is unreadable.
func (s *StreamReader) Feed(p []byte) (delta string, err error) {
	if s.err != nil {
		return "", s.err
	}
	if s.done {
		return "", nil
	}
	if s.buf == nil {
		s.buf = streamBuffers.Get()
	}
	s.buf = append(s.buf, p...)
	if s.mode == modeUndecided {
		s.decide(false)
	}
	if s.mode != modeFrames {
		return "", nil
	}
	var (
		out   []byte
		first string // the first delta, as long as it is the only one
		n     int    // deltas taken
		start int    // the start of the next line in buf
	)
	for !s.done {
		i := bytes.IndexByte(s.buf[start+s.scanned:], '\n')
		if i < 0 {
			s.scanned = len(s.buf) - start
			break
		}
		i += start + s.scanned
		s.scanned = 0
		// The line is parsed from a copy at its exact size: the events
		// keep its memory, and buf is reused.
		d, err := s.line(bytes.Clone(s.buf[start:i]))
		if err != nil {
			s.err = err
			return "", err
		}
		if s.mode == modeWhole {
			return "", nil
		}
		switch {
		case d == "":
		case n == 0:
			first, n = d, 1
		default:
			if n == 1 {
				out = append(out, first...)
			}
			out, n = append(out, d...), n+1
		}
		start = i + 1
	}
	if start > 0 {
		s.buf = s.buf[:copy(s.buf, s.buf[start:])]
	}
	if n <= 1 {
		return first, nil
	}
	return string(out), nil
}

// release gives buf back for another answer.
func (s *StreamReader) release() {
	streamBuffers.Put(s.buf)
	s.buf = nil
}

// streamBuffers holds the buffers of the lines of answers being read: one
// per answer in flight, up to a few per core, kept across garbage
// collections. A line grown in a fresh buffer by doubling would cost
// twice its size; from a kept one it costs its exact copy.
var streamBuffers = bufpool.New(min(4*runtime.GOMAXPROCS(0), 32), 256<<10)

// decide chooses how to read the answer from its first bytes: an SSE API's
// stream starts with an event or data line, Ollama's with an object on a
// line of its own; anything else is read whole. final is set at the end
// of the body, when no more bytes can change the decision.
func (s *StreamReader) decide(final bool) {
	t := bytes.TrimLeft(s.buf, " \t\r\n")
	if len(t) == 0 {
		if final {
			s.mode = modeWhole
		}
		return
	}
	if !s.sse {
		s.mode = modeWhole
		if t[0] == '{' {
			s.mode = modeFrames
		}
		return
	}
	for _, prefix := range []string{"event:", "data:"} {
		if bytes.HasPrefix(t, []byte(prefix)) {
			s.mode = modeFrames
			return
		}
		if !final && len(t) < len(prefix) && bytes.HasPrefix([]byte(prefix), t) {
			return // too early to tell
		}
	}
	s.mode = modeWhole
}

// line takes one line of a stream in frames mode. A native stream whose
// first line is no object is read whole (an object written over several
// lines).
func (s *StreamReader) line(line []byte) (string, error) {
	line = bytes.TrimSpace(line)
	if s.sse {
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			return "", nil
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			s.done = true
			return "", nil
		}
		s.events++
		return s.asm.event(data)
	}
	if len(line) == 0 {
		return "", nil
	}
	delta, err := s.asm.event(line)
	if s.events == 0 && errors.Is(err, errNotObject) {
		// Not a stream of objects: the answer is read whole.
		s.mode = modeWhole
		return "", nil
	}
	s.events++
	return delta, err
}

// Close ends the answer at the end of the body and returns it: the
// Answer ReadAnswer makes of the same bytes, or its error (a stream
// without its final chunk wraps ErrIncomplete).
func (s *StreamReader) Close() (*Answer, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.mode == modeUndecided {
		s.decide(true)
	}
	defer s.release()
	if s.mode == modeFrames && !s.done && len(s.buf) > 0 {
		if _, err := s.line(bytes.Clone(s.buf)); err != nil {
			return nil, err
		}
	}
	if s.mode == modeWhole {
		// ReadAnswer takes its body over: a copy, as buf is reused.
		return s.whole(bytes.Clone(s.buf))
	}
	obj, err := s.asm.object(s.done, false)
	if err != nil {
		return nil, err
	}
	return s.answerOf(obj)
}

// Stop ends the answer before the body's end, when the guard stopped the
// call itself because the model's answer was complete: the answer of the
// events read so far (a partial line is dropped), with the API's normal
// stop and the output tokens counted from the chunks that carried text.
func (s *StreamReader) Stop() (*Answer, error) {
	defer s.release()
	if s.err != nil {
		return nil, s.err
	}
	if s.mode != modeFrames || s.events == 0 {
		return nil, fmt.Errorf("%w: stopped before the first chunk", ErrIncomplete)
	}
	obj, err := s.asm.object(s.done, true)
	if err != nil {
		return nil, err
	}
	return s.answerOf(obj)
}
