package frame

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"

	"github.com/contractgateway/gateway/internal/bufpool"
)

// ErrIncomplete marks an upstream answer that ended before its end: a
// stream without its final chunk, a body cut short.
var ErrIncomplete = errors.New("upstream response incomplete")

// ErrNotObject is what an NDJSON stream's event function returns for a
// line that is no JSON object: on the first line, the sign of an answer
// that is no stream of objects, which the Reader then reads whole.
var ErrNotObject = errors.New("upstream answer is not JSON")

// Reader frames an upstream's answer as it arrives: bytes in, in pieces of
// any size, each whole event out to the API's event function (an NDJSON
// line, or the data of a server-sent event), and the model text the
// events add back. It knows no API: the codec's event function reads an
// event, and the codec makes the answer of the events (or of the whole
// body, for an answer that is no stream) once the Reader has ended.
//
// An upstream that answers one object regardless (Ollama does for a load
// or unload request; a proxy may buffer) is read whole. A Reader is used
// by one goroutine.
type Reader struct {
	sse   bool
	event func(data []byte) (delta string, err error)

	mode readMode
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

type readMode int

const (
	modeUndecided readMode = iota
	modeFrames
	modeWhole
)

// NewReader returns a Reader of a server-sent event stream (sse) or of an
// NDJSON one, which hands each event to event.
func NewReader(sse bool, event func(data []byte) (delta string, err error)) *Reader {
	return &Reader{sse: sse, event: event}
}

// Feed takes the next bytes of the answer and returns the model text
// they complete, "" when they complete none (a partial line, an event
// without text, an answer read whole). An error ends the reading: the
// answer is unreadable.
func (s *Reader) Feed(p []byte) (delta string, err error) {
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
func (s *Reader) release() {
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
func (s *Reader) decide(final bool) {
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
func (s *Reader) line(line []byte) (string, error) {
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
		return s.event(data)
	}
	if len(line) == 0 {
		return "", nil
	}
	delta, err := s.event(line)
	if s.events == 0 && errors.Is(err, ErrNotObject) {
		// Not a stream of objects: the answer is read whole.
		s.mode = modeWhole
		return "", nil
	}
	s.events++
	return delta, err
}

// Ending is how an answer read by a Reader ended.
type Ending struct {
	// Whole says the answer is no stream: Body is all of it, for the
	// codec to read as one answer.
	Whole bool
	Body  []byte
	// Done says an SSE stream ended with [DONE].
	Done bool
}

// Close ends the answer at the end of the body: its last line is taken,
// or the whole body handed back when the answer is no stream.
func (s *Reader) Close() (Ending, error) {
	if s.err != nil {
		return Ending{}, s.err
	}
	if s.mode == modeUndecided {
		s.decide(true)
	}
	defer s.release()
	if s.mode == modeFrames && !s.done && len(s.buf) > 0 {
		if _, err := s.line(bytes.Clone(s.buf)); err != nil {
			return Ending{}, err
		}
	}
	if s.mode == modeWhole {
		// The body is a copy, as buf is reused.
		return Ending{Whole: true, Body: bytes.Clone(s.buf)}, nil
	}
	return Ending{Done: s.done}, nil
}

// Stop ends the answer before the body's end, when the guard stopped the
// call itself because the model's answer was complete: the events read so
// far stand (a partial line is dropped). A stream stopped before its
// first event is an error wrapping ErrIncomplete.
func (s *Reader) Stop() (Ending, error) {
	defer s.release()
	if s.err != nil {
		return Ending{}, s.err
	}
	if s.mode != modeFrames || s.events == 0 {
		return Ending{}, fmt.Errorf("%w: stopped before the first chunk", ErrIncomplete)
	}
	return Ending{Done: s.done}, nil
}
