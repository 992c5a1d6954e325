package syntax

import (
	"bytes"

	"github.com/contractgateway/gateway/repair/syntax/lex"
	"github.com/contractgateway/gateway/validators/extract"
)

// fenceMark is extract.FenceMarker as bytes, for finding a code block's
// closing fence.
var fenceMark = []byte(extract.FenceMarker)

// codeBlockAt reports whether the fence at s.i opens a code block used as
// a value ({"code": ```python …```}): a container waits for a value and a
// closing fence follows. Anywhere else a fence ends the document.
func (s *scanner) codeBlockAt() bool {
	f := s.cur()
	if f == nil || f.state != stValue {
		return false
	}
	_, _, _, ok := s.codeBlockSpan()
	return ok
}

// codeBlockSpan locates the parts of the code block whose fence starts at
// s.i: the content src[cs:ce] and the end of the closing fence; ok is false
// when no closing fence follows.
func (s *scanner) codeBlockSpan() (cs, ce, closeEnd int, ok bool) {
	src, end := s.src, len(s.src)
	e := s.i
	for e < end && src[e] == '`' {
		e++
	}
	cs = e
	t := e
	for t < end && (lex.IsIdent(src[t]) || src[t] == '-' || src[t] == '+') {
		t++
	}
	l := t
	for l < end && (src[l] == ' ' || src[l] == '\t') {
		l++
	}
	if l < end && (src[l] == '\n' || src[l] == '\r') {
		cs = l + 1 // a language and the line break after the opener
		if src[l] == '\r' && cs < end && src[cs] == '\n' {
			cs++
		}
	}
	c := bytes.Index(src[cs:], fenceMark)
	if c < 0 {
		return 0, 0, 0, false
	}
	c += cs
	ce = c
	if ce > cs && src[ce-1] == '\n' {
		ce--
		if ce > cs && src[ce-1] == '\r' {
			ce--
		}
	}
	closeEnd = c
	for closeEnd < end && src[closeEnd] == '`' {
		closeEnd++
	}
	return cs, ce, closeEnd, true
}

// codeBlock writes the fenced code block at s.i as a string: its content,
// without the fence's language and the line breaks next to the markers.
// Backslashes in code are literal ones. It reports false when no closing
// fence follows, which the caller treats as the end of the document.
func (s *scanner) codeBlock() bool {
	open := s.i
	cs, ce, closeEnd, ok := s.codeBlockSpan()
	if !ok {
		return false
	}
	s.flush()
	s.out = append(s.out, '"')
	s.add(open, cs, fxCodeBlock, s.fragIn(open, cs), s.lit(`"`))
	s.rawContent(cs, ce, false)
	s.out = append(s.out, '"')
	s.add(ce, closeEnd, fxCodeBlock, s.fragIn(ce, closeEnd), s.lit(`"`))
	s.i = closeEnd
	return true
}
