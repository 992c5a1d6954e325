package syntax

import (
	"bytes"
	"unicode/utf8"

	"github.com/contractgateway/gateway/repair/syntax/lex"
)

// state is what the scanner expects next inside a container (or at the top).
type state uint8

const (
	stValue state = iota // a value: at the top, after ':', after '[' or ','
	stKey                // a key or '}': after '{' or ','
	stColon              // the ':' after a key
	stAfter              // ',' or the closer, after a value
)

// frame is one open container.
type frame struct {
	kind    byte // '{' or '['
	state   state
	first   bool // nothing inside yet
	lastObj bool // the last element closed was an object, for `}], {`
	// outStart and srcStart locate the current member in the output and the
	// input, including the comma before it, so that a member the input broke
	// off can be dropped whole.
	outStart, srcStart int
}

// keyResult says how far parsing a key went: DeepSeek's swallowed colon
// ("key: "value") means the key string holds the colon, or even that the
// closing quote of the key is the opening quote of the value.
type keyResult uint8

const (
	keyOnly  keyResult = iota // the key; the colon comes next
	keyColon                  // the key and its colon
	keyValue                  // the key, its colon and a string value
)

// scanner repairs one JSON value in a single left-to-right pass. It reads
// tokens and the text ahead through package lex and keeps a stack of open
// containers: each byte is looked at a bounded number of times (lookaheads
// stop at the first byte they cannot skip, and what they skip is never a
// place the next lookahead starts from), so time and memory are linear in
// the input whatever it holds. The files of the package split it by job:
// scan.go the states and containers, strings.go the strings, scalars.go
// numbers, words and bare keys, codeblock.go fences used as values.
type scanner struct {
	src []byte
	i   int
	out []byte
	// pend holds whitespace read since the last token. It is written out
	// just before the next token, so that a comma or colon inserted between
	// two tokens lands right after the first one, and a trailing comma is
	// always the last byte of out when it has to go.
	pend       []byte
	stack      []frame
	nObj, nArr int   // open objects and arrays, so a stray closer is judged in O(1)
	top        state // the state when no container is open
	changeLog
	lastEnd     int  // input offset after the last complete token, where insertions go
	lastBad     int  // index in raw of the last remove_invalid change, or -1
	badOut      int  // len(out) when it was recorded: unchanged means it may grow
	stop        int  // input offset where parsing ended
	eofCut      bool // the input ended inside a token
	eofInString bool // … inside a string, which str closed
	truncated   bool
	missing     string
	err         error
	// lossy says a fix dropped letters or digits of the value.
	lossy bool
	// noTriple caches, per quote byte, the offset from which no closing
	// triple quote follows, so that a string that only starts like one
	// costs one search however many there are.
	noTriple [2]int
	// gapLook caches innerGapBreaks: the text from gapFrom to gapEnd holds
	// no quote, and gapNL says whether a line break ends it.
	gapFrom, gapEnd int
	gapNL           bool
	// inner counts the inner quotes escaped in the string being read.
	inner int
	// literalBS says the string being read kept a backslash as a literal
	// one (escape_backslash), so that a backslash before its closing quote
	// is read as one too.
	literalBS bool
	// keyLook caches keyCloses: no quote or line end lies in (from, end),
	// and closes says whether the key ends at end with a colon after it.
	keyLook struct {
		from, end int
		closes    bool
	}
	// traceOn makes str record where each string came from and went, for
	// the test that no string content is lost.
	traceOn bool
	trace   []strTrace
}

// strTrace maps one string token of the input to its place in the output.
type strTrace struct{ srcOff, srcEnd, outOff, outEnd int }

// run parses the value starting at s.i.
func (s *scanner) run() error {
	defer s.describeDrops()
	for {
		if !s.trivia() {
			return s.finish()
		}
		done := s.step()
		if s.err != nil {
			return s.err
		}
		if done {
			if s.eofCut {
				return s.finish()
			}
			s.stop = s.i
			return nil
		}
	}
}

func (s *scanner) cur() *frame {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

func (s *scanner) step() bool {
	f := s.cur()
	st := s.top
	if f != nil {
		st = f.state
	}
	switch st {
	case stValue:
		return s.stepValue(f)
	case stKey:
		s.stepKey(f)
	case stColon:
		s.stepColon(f)
	default:
		return s.stepAfter(f)
	}
	return false
}

// trivia skips whitespace (kept for the output) and comments (dropped). It
// reports false when the input ends here: at its end, or at a closing code
// fence, which can never be part of JSON outside a string.
func (s *scanner) trivia() bool {
	src, end := s.src, len(s.src)
	for s.i < end {
		switch src[s.i] {
		case ' ', '\t', '\n', '\r':
			j := s.i + 1
			for j < end && lex.IsWS(src[j]) {
				j++
			}
			s.pend = append(s.pend, src[s.i:j]...)
			s.i = j
		case '/':
			if s.i+1 >= end {
				return true
			}
			var j int
			switch src[s.i+1] {
			case '/':
				j = bytes.IndexByte(src[s.i:], '\n')
				if j < 0 {
					j = end
				} else {
					j += s.i
				}
			case '*':
				j = bytes.Index(src[s.i+2:], []byte("*/"))
				if j < 0 {
					j = end
				} else {
					j += s.i + 4
				}
			default:
				return true
			}
			s.add(s.i, j, fxRemoveComment, s.fragIn(s.i, j), txt{})
			s.i = j
		case '`':
			return !lex.FenceAt(src, s.i) || s.codeBlockAt()
		default:
			return true
		}
	}
	return false
}

func (s *scanner) stepValue(f *frame) bool {
	src := s.src
	c := src[s.i]
	switch {
	case c == '{' || c == '[':
		s.open(c)
		return false
	case c == '-' || c == '+' || lex.IsDigit(c) || c == '.' && s.i+1 < len(src) && lex.IsDigit(src[s.i+1]):
		return s.number()
	case c == ',':
		if f == nil {
			s.garbage()
			return false
		}
		if f.kind == '[' {
			s.add(s.i, s.i+1, fxRemoveExtraComma, s.in(s.i, s.i+1), txt{})
			s.i++
			return false
		}
		return s.missingValue()
	case c == ']' || c == '}':
		if !s.closerUsable(f, c) {
			s.garbage()
			return false
		}
		if f.kind == '{' {
			return s.missingValue()
		}
		if !f.first {
			s.dropComma(f)
		}
		f.state = stAfter
		return false
	}
	if c == '`' && lex.FenceAt(src, s.i) {
		if s.codeBlock() {
			return s.valueDone()
		}
		s.garbage() // unreachable: trivia ends the document at such a fence
		return false
	}
	if lex.QuoteKindAt(src, s.i) != lex.NoQuote {
		s.str(valueCtx(f))
		return s.valueDone()
	}
	if lex.IsIdent(c) || c >= utf8.RuneSelf && lex.IsLetterAt(src, s.i) {
		return s.word()
	}
	s.garbage()
	return false
}

func (s *scanner) stepKey(f *frame) {
	src := s.src
	c := src[s.i]
	switch {
	case (c == '}' || c == ']') && s.closerUsable(f, c):
		if !f.first {
			s.dropComma(f)
		}
		f.state = stAfter
		return
	case c == ',':
		s.add(s.i, s.i+1, fxRemoveExtraComma, s.in(s.i, s.i+1), txt{})
		s.i++
		return
	}
	if lex.QuoteKindAt(src, s.i) != lex.NoQuote {
		switch s.str(lex.CtxKey) {
		case keyOnly:
			f.state = stColon
			s.lastEnd = s.i
		case keyColon:
			f.state = stValue
		case keyValue:
			s.valueDone()
		}
		return
	}
	if lex.IsIdent(c) || c >= utf8.RuneSelf && lex.IsLetterAt(src, s.i) {
		s.unquotedKey(f)
		return
	}
	s.garbage()
}

func (s *scanner) stepColon(f *frame) {
	c := s.src[s.i]
	switch {
	case c == ':':
		s.flush()
		s.out = append(s.out, ':')
		s.i++
		f.state = stValue
	case c == ',' || (c == '}' || c == ']') && s.closerUsable(f, c):
		s.out = append(s.out, ":null"...)
		s.add(s.lastEnd, s.lastEnd, fxMissingValue, txt{}, s.lit(":null"))
		f.state, f.first, f.lastObj = stAfter, false, false
	case s.valueStart():
		s.out = append(s.out, ':')
		s.add(s.lastEnd, s.lastEnd, fxInsertColon, txt{}, s.lit(":"))
		f.state = stValue
	default:
		s.garbage()
	}
}

func (s *scanner) stepAfter(f *frame) bool {
	c := s.src[s.i]
	switch c {
	case ',':
		f.outStart, f.srcStart = len(s.out), s.i
		s.flush()
		s.out = append(s.out, ',')
		s.i++
		f.state = stValue
		if f.kind == '{' {
			f.state = stKey
		}
		return false
	case '}', ']':
		if c == closerOf(f.kind) {
			if c == ']' && s.arraySeparator(f) {
				return false
			}
			s.i++
			return s.close(false)
		}
		if s.wrongCloser(f, c) {
			cl := closerOf(f.kind)
			s.add(s.i, s.i+1, fxWrongCloser, s.in(s.i, s.i+1), s.litB([]byte{cl}))
			s.i++
			return s.close(false)
		}
		if c == '}' && s.nObj > 0 || c == ']' && s.nArr > 0 {
			// The closer belongs to an outer container: this one was left
			// open, as in {"a": [1, 2}.
			s.add(s.i, s.i, fxInsertCloser, txt{}, s.litB([]byte{closerOf(f.kind)}))
			return s.close(true)
		}
		s.garbage()
		return false
	}
	if f.kind == '[' && s.valueStart() || f.kind == '{' && s.keyStart() {
		f.outStart, f.srcStart = len(s.out), s.lastEnd
		s.out = append(s.out, ',')
		s.add(s.lastEnd, s.lastEnd, fxInsertComma, txt{}, s.lit(","))
		f.state = stValue
		if f.kind == '{' {
			f.state = stKey
		}
		return false
	}
	s.garbage()
	return false
}

// wrongCloser decides between the two readings of a closer that does not
// match the innermost container f: f was left open (and the closer belongs
// to an outer container), or the closer is a typo for f's own. It is a typo
// when nothing outside could take it, or when what follows proves the
// container around f goes on: ["a", "b"}, "next": 1} continues an object,
// [{"a": 1], {"b": 2}] continues an array. The lookahead reads at most one
// short key (lex.ShortKeyAt), so it stays bounded.
func (s *scanner) wrongCloser(f *frame, c byte) bool {
	if c == '}' && s.nObj == 0 || c == ']' && s.nArr == 0 {
		return true
	}
	n := len(s.stack)
	if n < 2 || s.stack[n-2].kind != openerOf(c) {
		return false
	}
	src := s.src
	_, k, ok := lex.CommaAfter(s.src, s.i)
	if !ok {
		return false
	}
	if c == ']' {
		// The array around f goes on with another object, which the
		// container around that array could not take.
		return src[k] == '{' && (n < 3 || s.stack[n-3].kind == '{')
	}
	// The object around f goes on with another key.
	return lex.ShortKeyAt(src, k)
}

// arraySeparator fixes DeepSeek's `}], {` inside an array of objects: the
// ']' closes the array only to be followed by ", {", which the container
// around it cannot accept (an object wants a key, the top level nothing).
// Inside another array the same bytes are valid JSON and are left alone.
func (s *scanner) arraySeparator(f *frame) bool {
	if !f.lastObj {
		return false
	}
	src := s.src
	j, k, ok := lex.CommaAfter(s.src, s.i)
	if !ok || src[k] != '{' {
		return false
	}
	if n := len(s.stack); n >= 2 && s.stack[n-2].kind == '[' {
		return false
	}
	s.add(s.i, j+1, fxArraySeparator, s.in(s.i, j+1), s.lit(","))
	f.outStart, f.srcStart = len(s.out), j
	s.out = append(s.out, ',')
	s.i = j + 1
	f.state = stValue
	return true
}

func (s *scanner) open(c byte) {
	if len(s.stack) >= maxDepth {
		s.err = ErrTooDeep
		return
	}
	s.flush()
	s.out = append(s.out, c)
	s.i++
	fr := frame{kind: c, first: true, outStart: len(s.out), srcStart: s.i, state: stValue}
	if c == '{' {
		fr.state = stKey
		s.nObj++
	} else {
		s.nArr++
	}
	s.stack = append(s.stack, fr)
}

// close closes the innermost container; inserted closers go before the
// pending whitespace, next to the value they close.
func (s *scanner) close(inserted bool) bool {
	n := len(s.stack)
	kind := s.stack[n-1].kind
	if !inserted {
		s.flush()
	}
	s.out = append(s.out, closerOf(kind))
	if kind == '{' {
		s.nObj--
	} else {
		s.nArr--
	}
	s.stack = s.stack[:n-1]
	s.lastEnd = s.i
	p := s.cur()
	if p == nil {
		s.top = stAfter
		return true
	}
	p.state, p.first, p.lastObj = stAfter, false, kind == '{'
	return false
}

// valueDone moves on after a complete value; it reports whether that value
// was the whole document.
func (s *scanner) valueDone() bool {
	s.lastEnd = s.i
	f := s.cur()
	if f == nil {
		s.top = stAfter
		return true
	}
	f.state, f.first, f.lastObj = stAfter, false, false
	return false
}

// missingValue writes null for a member whose value the model left out
// ({"a": , "b": 1}). The key stays, so nothing the model wrote is lost and
// the schema check reports the member by its path.
func (s *scanner) missingValue() bool {
	s.flush()
	s.out = append(s.out, "null"...)
	s.add(s.i, s.i, fxMissingValue, txt{}, s.lit("null"))
	return s.valueDone()
}

// dropComma removes a trailing comma before a closer ([1,2,]).
func (s *scanner) dropComma(f *frame) {
	if n := len(s.out); n > 0 && s.out[n-1] == ',' {
		s.out = s.out[:n-1]
		s.add(f.srcStart, f.srcStart+1, fxRemoveTrailingComma, s.lit(","), txt{})
	}
}

// closerUsable reports whether the closer c can close f or, when the model
// left f open, an outer container. Any other closer is garbage, and the state
// must not change before that is known.
func (s *scanner) closerUsable(f *frame, c byte) bool {
	if f == nil {
		return false
	}
	return c == closerOf(f.kind) || c == '}' && s.nObj > 0 || c == ']' && s.nArr > 0
}

// valueStart reports whether the byte at s.i can start a value.
func (s *scanner) valueStart() bool {
	src := s.src
	c := src[s.i]
	switch {
	case c == '{' || c == '[' || c == '-' || c == '+' || lex.IsIdent(c):
		return true
	case c == '.':
		return s.i+1 < len(src) && lex.IsDigit(src[s.i+1])
	}
	return lex.QuoteKindAt(src, s.i) != lex.NoQuote || c >= utf8.RuneSelf && lex.IsLetterAt(src, s.i)
}

// keyStart reports whether the byte at s.i can start a key after a value
// whose comma is missing. Digits and brackets there are garbage rather than
// the start of a member.
func (s *scanner) keyStart() bool {
	src := s.src
	c := src[s.i]
	if lex.IsIdent(c) && !lex.IsDigit(c) {
		return true
	}
	return lex.QuoteKindAt(src, s.i) != lex.NoQuote || c >= utf8.RuneSelf && lex.IsLetterAt(src, s.i)
}

// garbage drops one character that can start no token where it stands.
// Consecutive drops with nothing written in between make one change.
func (s *scanner) garbage() {
	_, n := utf8.DecodeRune(s.src[s.i:])
	if s.lastBad >= 0 && s.lastBad == len(s.raw)-1 && s.badOut == len(s.out) {
		s.raw[s.lastBad].end = s.i + n
	} else {
		s.lastBad = len(s.raw)
		s.badOut = len(s.out)
		s.raw = append(s.raw, rawSpan{off: s.i, end: s.i + n, fixer: fxRemoveInvalid})
	}
	s.i += n
}

// in is the input text src[lo:hi] as a fragment.
func (s *scanner) in(lo, hi int) txt { return txt{lo: lo, hi: hi} }

// fragIn is src[lo:hi], shortened when long.
func (s *scanner) fragIn(lo, hi int) txt { return s.fragOf(s.src, lo, hi) }

// describeDrops fills in the text of the remove_invalid changes, which
// garbage grows while it drops characters.
func (s *scanner) describeDrops() {
	for k := range s.raw {
		if r := &s.raw[k]; r.fixer == fxRemoveInvalid {
			r.before = s.fragIn(r.off, r.end)
			if lex.HasWordChar(s.src[r.off:r.end]) {
				s.lossy = true
			}
		}
	}
}

func (s *scanner) flush() {
	if len(s.pend) > 0 {
		s.out = append(s.out, s.pend...)
		s.pend = s.pend[:0]
	}
}

// finish ends the document where the input ended (its end or a closing
// fence). Inside a container that is truncation: a partial member is dropped
// (a key without a value, a dangling comma, a cut literal), the containers
// are closed, and Truncated and Missing say so.
func (s *scanner) finish() error {
	stop := s.i
	s.stop = stop
	if len(s.stack) == 0 {
		if s.top != stAfter {
			return ErrNoJSON
		}
		if s.eofCut {
			s.truncated = true
			if s.eofInString {
				s.missing = `"`
			}
			s.add(stop, stop, fxCloseTruncated, txt{}, s.lit(s.missing))
		}
		return nil
	}
	s.pend = s.pend[:0]
	f := s.cur()
	keepQuote := s.eofInString
	dangle := -1
	switch f.state {
	case stColon:
		s.out = s.out[:f.outStart]
		dangle, keepQuote = f.srcStart, false
	case stValue, stKey:
		dangle = f.srcStart
		if f.kind == '{' && f.state == stValue {
			s.out = s.out[:f.outStart]
		} else if n := len(s.out); !f.first && n > 0 && s.out[n-1] == ',' {
			s.out = s.out[:n-1]
		}
	}
	var m []byte
	if keepQuote {
		m = append(m, '"')
	}
	for k := len(s.stack) - 1; k >= 0; k-- {
		m = append(m, closerOf(s.stack[k].kind))
	}
	if keepQuote {
		s.out = append(s.out, m[1:]...) // the quote is already there
	} else {
		s.out = append(s.out, m...)
	}
	s.missing = string(m)
	s.truncated = true
	s.stack = s.stack[:0]
	off, before := stop, txt{}
	if dangle >= 0 {
		a, b := lex.TrimBounds(s.src[dangle:stop])
		if a < b {
			off, before = dangle+a, s.fragIn(dangle+a, dangle+b)
		}
	}
	s.add(off, stop, fxCloseTruncated, before, s.lit(s.missing))
	return nil
}

func valueCtx(f *frame) lex.Ctx {
	switch {
	case f == nil:
		return lex.CtxTop
	case f.kind == '{':
		return lex.CtxObj
	}
	return lex.CtxArr
}

func openerOf(closer byte) byte {
	if closer == '}' {
		return '{'
	}
	return '['
}

func closerOf(kind byte) byte {
	if kind == '{' {
		return '}'
	}
	return ']'
}
