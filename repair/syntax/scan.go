package syntax

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
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

// strCtx is where a string stands; deciding whether a quote ends a string
// depends on what may follow it there.
type strCtx uint8

const (
	ctxTop strCtx = iota
	ctxKey
	ctxObj // a member's value
	ctxArr // an array element
)

// keyResult says how far parsing a key went: DeepSeek's swallowed colon
// ("key: "value") means the key string holds the colon, or even that the
// closing quote of the key is the opening quote of the value.
type keyResult uint8

const (
	keyOnly  keyResult = iota // the key; the colon comes next
	keyColon                  // the key and its colon
	keyValue                  // the key, its colon and a string value
)

// scanner repairs one JSON value in a single left-to-right pass. It is a
// tokenizer with a stack of open containers: each byte is looked at a bounded
// number of times (lookaheads stop at the first byte they cannot skip, and
// what they skip is never a place the next lookahead starts from), so time
// and memory are linear in the input whatever it holds.
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
			for j < end && isWS(src[j]) {
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
			return !bytes.HasPrefix(src[s.i:], fenceMark) || s.codeBlockAt()
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
	case c == '-' || c == '+' || isDigit(c) || c == '.' && s.i+1 < len(src) && isDigit(src[s.i+1]):
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
	if c == '`' && bytes.HasPrefix(src[s.i:], fenceMark) {
		if s.codeBlock() {
			return s.valueDone()
		}
		s.garbage() // unreachable: trivia ends the document at such a fence
		return false
	}
	if quoteKindAt(src, s.i) != qNone {
		s.str(valueCtx(f))
		return s.valueDone()
	}
	if isIdent(c) || c >= utf8.RuneSelf && isLetterAt(src, s.i) {
		return s.word()
	}
	s.garbage()
	return false
}

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
	for t < end && (isIdent(src[t]) || src[t] == '-' || src[t] == '+') {
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

// rawContent writes src[a:b] as the content of a JSON string: quotes are
// escaped, control characters and bytes that are not UTF-8 fixed as in any
// string, and backslashes read as escapes (escapes) or kept as literal ones.
func (s *scanner) rawContent(a, b int, escapes bool) {
	src := s.src
	i := a
	for i < b {
		j := i
		for j < b && classes[src[j]]&cStr == 0 {
			j++
		}
		s.out = append(s.out, src[i:j]...)
		i = j
		if i >= b {
			return
		}
		switch c := src[i]; {
		case c == '"':
			s.out = append(s.out, '\\', '"')
			i++
		case c == '\\' && escapes && i+1 < b:
			i = s.escape(i, qBacktick, ctxObj)
		case c == '\\':
			s.out = append(s.out, '\\', '\\')
			i++
		case c < 0x20:
			k := i
			for k < b && src[k] < 0x20 {
				k++
			}
			s.controlRun(i, k)
			i = k
		default:
			r, sz := utf8.DecodeRune(src[i:b])
			if r == utf8.RuneError && sz == 1 {
				k := i
				for k < b {
					if r, sz := utf8.DecodeRune(src[k:b]); r != utf8.RuneError || sz != 1 {
						break
					}
					k++
				}
				s.badUTF8Run(i, k)
				i = k
				continue
			}
			s.out = append(s.out, src[i:i+sz]...)
			i += sz
		}
	}
}

// delimited parses a string whose delimiters are not JSON's: a triple
// quote (three double or three single quotes, as Python writes them,
// closed by the same three) or a backtick (closed by
// the next backtick that no backslash escapes). Its content is kept as it
// is, only escaped. It reports false when no closer follows.
func (s *scanner) delimited(q qkind) bool {
	src, end := s.src, len(s.src)
	open := s.i
	var n, a, b, closeEnd int
	var fixer fixID
	if q == qBacktick {
		n, fixer = 1, fxBacktickString
		k := open + 1
		for k < end && src[k] != '`' {
			if src[k] == '\\' {
				k++
			}
			k++
		}
		if k >= end {
			return false
		}
		a, b, closeEnd = open+1, k, k+1
	} else {
		qc := src[open]
		slot := 0
		if qc == '\'' {
			slot = 1
		}
		if s.noTriple[slot] > 0 && open+3 >= s.noTriple[slot] {
			return false
		}
		k := bytes.Index(src[open+3:], src[open:open+3])
		if k < 0 {
			s.noTriple[slot] = open + 3
			return false
		}
		k += open + 3
		for k+3 < end && src[k+3] == qc {
			k++ // the closer is the last three of a run of quotes
		}
		n, fixer = 3, fxTripleQuote
		a, b, closeEnd = open+3, k, k+3
	}
	s.flush()
	o := len(s.out)
	if s.traceOn {
		defer func() { s.trace = append(s.trace, strTrace{open, closeEnd, o, len(s.out)}) }()
	}
	s.out = append(s.out, '"')
	s.add(open, open+n, fixer, s.in(open, open+n), s.lit(`"`))
	s.rawContent(a, b, true)
	s.out = append(s.out, '"')
	s.add(b, closeEnd, fixer, s.in(b, closeEnd), s.lit(`"`))
	s.i = closeEnd
	return true
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
	if quoteKindAt(src, s.i) != qNone {
		switch s.str(ctxKey) {
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
	if isIdent(c) || c >= utf8.RuneSelf && isLetterAt(src, s.i) {
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
// short key, so it stays bounded.
func (s *scanner) wrongCloser(f *frame, c byte) bool {
	if c == '}' && s.nObj == 0 || c == ']' && s.nArr == 0 {
		return true
	}
	n := len(s.stack)
	if n < 2 || s.stack[n-2].kind != openerOf(c) {
		return false
	}
	src := s.src
	_, k, ok := s.commaThen()
	if !ok {
		return false
	}
	if c == ']' {
		// The array around f goes on with another object, which the
		// container around that array could not take.
		return src[k] == '{' && (n < 3 || s.stack[n-3].kind == '{')
	}
	// The object around f goes on with another key.
	e := k
	if src[k] == '"' {
		e = k + 1
		for e < len(src) && e-k < maxKeyLookahead && src[e] != '"' && src[e] != '\n' {
			e++
		}
		if e >= len(src) || src[e] != '"' {
			return false
		}
		e++
	} else {
		for e < len(src) && e-k < maxKeyLookahead && isIdent(src[e]) {
			e++
		}
		if e == k {
			return false
		}
	}
	e = skipWS(src, e)
	return e < len(src) && src[e] == ':'
}

// commaThen looks past the current closer: it reports the offset of a
// following ',' (j) and of the first byte after it (k), skipping white
// space; ok is false when no comma and byte follow.
func (s *scanner) commaThen() (j, k int, ok bool) {
	j = skipWS(s.src, s.i+1)
	if j >= len(s.src) || s.src[j] != ',' {
		return 0, 0, false
	}
	k = skipWS(s.src, j+1)
	return j, k, k < len(s.src)
}

// maxKeyLookahead bounds how far wrongCloser reads to recognise a key.
const maxKeyLookahead = 256

// arraySeparator fixes DeepSeek's `}], {` inside an array of objects: the
// ']' closes the array only to be followed by ", {", which the container
// around it cannot accept (an object wants a key, the top level nothing).
// Inside another array the same bytes are valid JSON and are left alone.
func (s *scanner) arraySeparator(f *frame) bool {
	if !f.lastObj {
		return false
	}
	src := s.src
	j, k, ok := s.commaThen()
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
	case c == '{' || c == '[' || c == '-' || c == '+' || isIdent(c):
		return true
	case c == '.':
		return s.i+1 < len(src) && isDigit(src[s.i+1])
	}
	return quoteKindAt(src, s.i) != qNone || c >= utf8.RuneSelf && isLetterAt(src, s.i)
}

// keyStart reports whether the byte at s.i can start a key after a value
// whose comma is missing. Digits and brackets there are garbage rather than
// the start of a member.
func (s *scanner) keyStart() bool {
	src := s.src
	c := src[s.i]
	if isIdent(c) && !isDigit(c) {
		return true
	}
	return quoteKindAt(src, s.i) != qNone || c >= utf8.RuneSelf && isLetterAt(src, s.i)
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
			if hasWordChar(s.src[r.off:r.end]) {
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
		a, b := trimBounds(s.src[dangle:stop])
		if a < b {
			off, before = dangle+a, s.fragIn(dangle+a, dangle+b)
		}
	}
	s.add(off, stop, fxCloseTruncated, before, s.lit(s.missing))
	return nil
}

// str parses a string whose opening delimiter is at s.i and writes it as a
// JSON string, fixing delimiters, escapes, control characters, invalid UTF-8
// and unescaped inner quotes on the way.
func (s *scanner) str(ctx strCtx) keyResult {
	src := s.src
	end := len(src)
	open := s.i
	q, n := quoteAt(src, open)
	if q == qBacktick || (q == qDouble || q == qSingle) && open+2 < end && src[open+1] == src[open] && src[open+2] == src[open] {
		if s.delimited(q) {
			return keyOnly
		}
		if q == qBacktick {
			// No closing backtick: the string goes on as a "…" one.
			s.add(open, open+1, fxBacktickString, s.in(open, open+1), s.lit(`"`))
			q = qDouble
		} else {
			// Three quotes that no three close: which of them are text is
			// a guess, so the result must not be taken as the model's.
			s.lossy = true
		}
	}
	s.flush()
	o := len(s.out)
	if s.traceOn {
		defer func() { s.trace = append(s.trace, strTrace{open, s.i, o, len(s.out)}) }()
	}
	s.out = append(s.out, '"')
	if q != qDouble {
		s.add(open, open+n, fxNormalizeQuotes, s.in(open, open+n), s.lit(`"`))
	}
	s.literalBS = false
	s.inner = 0
	content := len(s.out)
	mask := uint8(cStr)
	if ctx == ctxKey && q == qDouble {
		mask |= cColon
	}
	if q == qSingle || q == qCurlyS {
		mask |= cApos
	}
	i := open + n
	for i < end {
		j := i
		for j < end && classes[src[j]]&mask == 0 {
			j++
		}
		s.out = append(s.out, src[i:j]...)
		i = j
		if i >= end {
			break
		}
		c := src[i]
		switch {
		case c == '"':
			if q == qDouble || q == qCurly {
				if s.isEnd(i+1, ctx) || ctx != ctxKey && s.inner%2 == 0 && s.innerGapBreaks(i+1) {
					if ctx == ctxKey && q == qDouble {
						if s.swallowedColon(i, content) {
							return keyValue
						}
						if s.quotedColon(i, content) {
							return keyColon
						}
					}
					s.closeStr(i, 1, q)
					return keyOnly
				}
				s.out = append(s.out, '\\', '"')
				s.add(i, i+1, fxEscapeInnerQuote, s.in(i, i+1), s.lit(`\"`))
				s.inner++
			} else {
				s.out = append(s.out, '\\', '"')
				s.add(i, i+1, fxNormalizeQuotes, s.in(i, i+1), s.lit(`\"`))
			}
			i++
		case c == '\'': // a possible closer of a single-quoted string
			if s.isEnd(i+1, ctx) {
				s.closeStr(i, 1, q)
				return keyOnly
			}
			s.out = append(s.out, '\'')
			i++
		case c == ':': // inside a double-quoted key
			if s.colonInKey(i, content) {
				return keyColon
			}
			s.out = append(s.out, ':')
			i++
		case c == '\\':
			i = s.escape(i, q, ctx)
		case c < 0x20:
			i = s.control(i)
		default:
			r, sz := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && sz == 1 {
				i = s.badUTF8(i)
				continue
			}
			if q >= qCurly && isCloser(q, r) && s.isEnd(i+sz, ctx) {
				s.closeStr(i, sz, q)
				return keyOnly
			}
			s.out = append(s.out, src[i:i+sz]...)
			i += sz
		}
	}
	// The input ended inside the string.
	s.out = append(s.out, '"')
	s.i = end
	s.eofCut, s.eofInString = true, true
	return keyOnly
}

// innerGapBreaks reports whether the text from k, after a quote inside a
// string that would open a quotation in it (the first, third … inner
// quote), reaches a line break before the next quote. Escaping that quote
// would run the string across the line into what follows, which is how two
// members merge into one value ({5: "b",\n 2.17: "e"}): the quote ends the
// string instead. The answer holds for every k in the same gap, so each
// byte is looked at once.
func (s *scanner) innerGapBreaks(k int) bool {
	if k >= s.gapFrom && k <= s.gapEnd && s.gapEnd > 0 {
		return s.gapNL
	}
	src := s.src
	j := k
	for j < len(src) && src[j] != '"' && src[j] != '\n' && src[j] != '\r' {
		if src[j] == '\\' && j+1 < len(src) && src[j+1] == '"' {
			j++ // an escaped quote is text, not the next quote
		}
		j++
	}
	s.gapFrom, s.gapEnd = k, j
	s.gapNL = j < len(src) && src[j] != '"'
	return s.gapNL
}

func (s *scanner) closeStr(i, size int, q qkind) {
	s.out = append(s.out, '"')
	if q != qDouble {
		s.add(i, i+size, fxNormalizeQuotes, s.in(i, i+size), s.lit(`"`))
	}
	s.i = i + size
}

// isEnd decides whether the quote just before q closes the string. A quote
// inside a value is taken as the end only when what follows it could follow
// a string there: a closer, a colon, a comma that is itself followed by
// another member or element, a comment, the next string after a missing
// comma, or the end of the input. Anything else (a letter, '>', '.') means
// the quote is part of the text, as in "He said "hi"" or <a href="x">.
func (s *scanner) isEnd(q int, ctx strCtx) bool {
	src, end := s.src, len(s.src)
	j, nl := q, false
	for j < end && isWS(src[j]) {
		if src[j] == '\n' {
			nl = true
		}
		j++
	}
	if j >= end {
		return true
	}
	c := src[j]
	if c == '`' && bytes.HasPrefix(src[j:], fenceMark) {
		return true
	}
	switch ctx {
	case ctxKey:
		return true // keys are short names; a quote inside one is not worth guessing about
	case ctxTop:
		return nl
	}
	switch c {
	case '}', ']', ':':
		return true
	case ',':
		return s.memberFollows(j+1, ctx)
	case '/':
		return j+1 < end && (src[j+1] == '/' || src[j+1] == '*')
	}
	if j > q && quoteKindAt(src, j) != qNone {
		return true // the next string, after a missing comma
	}
	// A line break and then the start of the next element or member is a
	// missing comma too; a line break inside text continues with words.
	return nl && (ctx == ctxArr && s.elementAt(j) || ctx == ctxObj && s.bareKeyAt(j))
}

// elementAt reports whether an array element (other than a string) starts
// at k.
func (s *scanner) elementAt(k int) bool {
	c := s.src[k]
	return c == '{' || c == '[' || c == '-' || isDigit(c) || literalAt(s.src, k)
}

// bareKeyAt reports whether an unquoted key and its colon start at k.
func (s *scanner) bareKeyAt(k int) bool {
	src := s.src
	e := k
	for e < len(src) && (isIdent(src[e]) || src[e] == '.' && e > k && e+1 < len(src) && isDigit(src[e+1])) {
		e++
	}
	if e == k {
		return false
	}
	e = skipWS(src, e)
	return e < len(src) && src[e] == ':'
}

// memberFollows reports whether what comes after a comma at k looks like the
// next member (ctxObj) or element (ctxArr), rather than more prose.
func (s *scanner) memberFollows(k int, ctx strCtx) bool {
	src := s.src
	for k < len(src) && (isWS(src[k]) || src[k] == ',') {
		k++ // a doubled comma is still a separator
	}
	if k >= len(src) {
		return true
	}
	if q := quoteKindAt(src, k); q != qNone {
		return ctx != ctxObj || q != qDouble || s.keyFollows(k)
	}
	c := src[k]
	if c == '`' && bytes.HasPrefix(src[k:], fenceMark) || c == '/' && k+1 < len(src) && (src[k+1] == '/' || src[k+1] == '*') {
		return true
	}
	if ctx == ctxObj {
		return c == '}' || c == ']' || s.bareKeyAt(k)
	}
	return c == ']' || s.elementAt(k)
}

// keyFollows reports whether the double-quoted string at k can be the key of
// the next member: it closes on its line with a colon after it, or the colon
// went missing ("key" "value") or inside the quotes ("key: "value",
// "count: 5, …), or the value did ("key"}). A string followed by other text
// or by a comma is a quoted word of the value before it, as in
// {"q": "Which of "a", "b" is valid?"}. A key longer than maxKeyLookahead is
// taken as one unseen. The scan stops at the next quote, where the next
// lookahead can start at the earliest, so each byte is looked at once.
func (s *scanner) keyFollows(k int) bool {
	src := s.src
	e := k + 1
	colon := false
	for e < len(src) && src[e] != '"' && src[e] != '\n' {
		if e-k > maxKeyLookahead {
			return true
		}
		colon = colon || src[e] == ':'
		if src[e] == '\\' {
			e++ // an escaped quote does not end the key
		}
		e++
	}
	if e >= len(src) || src[e] != '"' || colon {
		return true
	}
	m := skipWS(src, e+1)
	return m >= len(src) || src[m] == ':' || src[m] == '}' || m > e+1 && quoteKindAt(src, m) != qNone ||
		src[m] == '`' && bytes.HasPrefix(src[m:], fenceMark) || m > e+1 && s.bareValueAt(m)
}

// bareValueAt reports whether a value other than a string starts at k and,
// for a scalar, ends where a member ends: the value of "key" 30 or
// "key" true, whose colon went missing. A word of text such as "b" is
// valid never ends at a comma or a closer this way, so quoted words inside a
// value stay text.
func (s *scanner) bareValueAt(k int) bool {
	src := s.src
	switch c := src[k]; {
	case c == '{' || c == '[':
		return true
	case c == '-' || isDigit(c):
		e := k + 1
		for e < len(src) && (isDigit(src[e]) || src[e] == '.' || src[e] == 'e' || src[e] == 'E' || src[e] == '+' || src[e] == '-') {
			e++
		}
		return memberEndAt(src, e)
	case literalAt(src, k):
		e := k
		for e < len(src) && isIdent(src[e]) {
			e++
		}
		return memberEndAt(src, e)
	}
	return false
}

// memberEndAt reports whether a member can end at e: a comma, a closer, a
// line break or the end of the input follows after spaces.
func memberEndAt(src []byte, e int) bool {
	for e < len(src) && (src[e] == ' ' || src[e] == '\t' || src[e] == '\r') {
		e++
	}
	return e >= len(src) || src[e] == ',' || src[e] == '}' || src[e] == ']' || src[e] == '\n'
}

// swallowedColon handles DeepSeek's "key: "value": the key string ended in
// ": " and the quote that seemed to close it opens the value. It applies when
// that quote is directly followed by text (not by ':' or a separator). The key
// is cut before the colon, and the value string is parsed from the quote.
func (s *scanner) swallowedColon(q, content int) bool {
	src := s.src
	if q+1 >= len(src) {
		return false
	}
	if n := src[q+1]; isWS(n) || n == ':' || n == ',' || n == '}' || n == ']' {
		return false
	}
	k := len(s.out)
	for k > content && s.out[k-1] == ' ' {
		k--
	}
	sp := len(s.out) - k
	if k-1 <= content || s.out[k-1] != ':' {
		return false
	}
	colon := q - sp - 1
	if colon < 0 || src[colon] != ':' {
		return false
	}
	s.out = append(s.out[:k-1], '"', ':')
	for range sp {
		s.out = append(s.out, ' ')
	}
	a := s.lit(`"`)
	s.arena = append(append(s.arena, src[colon:q]...), '"')
	a.hi = len(s.arena)
	s.add(colon, q+1, fxInsertColon, s.in(colon, q+1), a)
	s.i = q
	s.cur().state = stValue
	s.str(ctxObj)
	return true
}

// quotedColon handles "key:" "value": the colon went inside the key's
// quotes, and the value follows after a space. It moves the colon out when no
// real colon follows the key.
func (s *scanner) quotedColon(q, content int) bool {
	src := s.src
	j := skipWS(src, q+1)
	if j >= len(src) || j == q+1 || src[j] == ':' {
		return false
	}
	if c := src[j]; c != '{' && c != '[' && c != '-' && !isIdent(c) && quoteKindAt(src, j) == qNone {
		return false
	}
	k := len(s.out)
	for k > content && s.out[k-1] == ' ' {
		k--
	}
	sp := len(s.out) - k
	colon := q - sp - 1
	if k-1 <= content || s.out[k-1] != ':' || src[colon] != ':' {
		return false
	}
	s.out = append(s.out[:k-1], '"', ':')
	for range sp {
		s.out = append(s.out, ' ')
	}
	a := s.lit(`":`)
	s.arena = append(s.arena, src[colon+1:q]...)
	a.hi = len(s.arena)
	s.add(colon, q+1, fxInsertColon, s.in(colon, q+1), a)
	s.i = q + 1
	return true
}

// colonInKey handles the other form of the swallowed colon, where the value
// is no string: "items: [ … or "count: 5. A colon inside a key followed by
// a space and a number or literal, or by a bracket, ends the key there.
func (s *scanner) colonInKey(i, content int) bool {
	src := s.src
	if len(s.out) == content {
		return false
	}
	k := i + 1
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	if k >= len(src) {
		return false
	}
	c := src[k]
	if !(c == '[' || c == '{' || k > i+1 && (isDigit(c) || c == '-' && k+1 < len(src) && isDigit(src[k+1]) || literalAt(src, k))) {
		return false
	}
	if s.keyCloses(i) {
		return false
	}
	s.out = append(s.out, '"', ':')
	s.add(i, i+1, fxInsertColon, s.in(i, i+1), s.lit(`":`))
	s.i = i + 1
	return true
}

// keyCloses reports whether the key holding the colon at i ends, at the
// next quote on its line, with a colon after it: "time: 10:30": 2 and
// "step: 1": "x" are keys with a colon in them, not DeepSeek's swallowed
// colon, whose key never closes ("section_order: 3, "next": …). The answer
// holds for every later colon before that quote, so it is kept: each byte is
// looked at once however many colons the key holds.
func (s *scanner) keyCloses(i int) bool {
	if i > s.keyLook.from && i < s.keyLook.end {
		return s.keyLook.closes
	}
	src := s.src
	j := i + 1
	for j < len(src) && src[j] != '"' && src[j] != '\n' {
		if src[j] == '\\' {
			j++ // an escaped quote does not end the key
		}
		j++
	}
	j = min(j, len(src))
	closes := false
	if j < len(src) && src[j] == '"' {
		k := skipWS(src, j+1)
		closes = k < len(src) && src[k] == ':'
	}
	s.keyLook.from, s.keyLook.end, s.keyLook.closes = i, j, closes
	return closes
}

// escape handles a backslash at i inside a string and returns where to go on.
// Valid escapes are copied; markdown artefacts (\_ \* …) lose the backslash;
// any other backslash becomes a literal one, so "C:\Users" keeps its text.
//
// A string that has shown it writes backslashes as they are ("C:\Users\")
// ends in one when \" is followed by what may follow the string: the
// backslash is the path's last and the quote closes the string, rather than
// taking the rest of the document into the string.
func (s *scanner) escape(i int, q qkind, ctx strCtx) int {
	src := s.src
	end := len(src)
	if i+1 >= end {
		return end // a backslash cut off by the end of the output
	}
	e := src[i+1]
	if e == '"' && s.literalBS && q == qDouble && s.isEnd(i+2, ctx) {
		s.out = append(s.out, '\\', '\\')
		s.add(i, i+1, fxEscapeBackslash, s.in(i, i+2), s.lit(`\\"`))
		return i + 1
	}
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.out = append(s.out, '\\', e)
		return i + 2
	case 'u':
		h := 0
		for h < 4 && i+2+h < end && isHex(src[i+2+h]) {
			h++
		}
		if h == 4 {
			s.out = append(s.out, src[i:i+6]...)
			return i + 6
		}
		if i+2+h >= end {
			return end // cut inside the escape
		}
	case '\'':
		if q == qSingle || q == qCurlyS {
			s.out = append(s.out, '\'')
			s.add(i, i+2, fxNormalizeQuotes, s.in(i, i+2), s.in(i+1, i+2))
			return i + 2
		}
	default:
		if isMarkdownEscape(e) {
			s.out = append(s.out, e)
			s.add(i, i+2, fxMarkdownEscape, s.in(i, i+2), s.in(i+1, i+2))
			return i + 2
		}
	}
	s.literalBS = true
	s.out = append(s.out, '\\', '\\')
	_, sz := utf8.DecodeRune(src[i+1:])
	a := s.lit(`\`)
	s.arena = append(s.arena, src[i:i+1+sz]...)
	a.hi = len(s.arena)
	s.add(i, i+1, fxEscapeBackslash, s.in(i, i+1+sz), a)
	return i + 1
}

// control escapes a run of raw control characters inside a string.
func (s *scanner) control(i int) int {
	src := s.src
	j := i
	for j < len(src) && src[j] < 0x20 {
		j++
	}
	s.controlRun(i, j)
	return j
}

// controlRun escapes the control characters src[i:j].
func (s *scanner) controlRun(i, j int) {
	o := len(s.out)
	for _, c := range s.src[i:j] {
		s.out = appendControl(s.out, c)
	}
	s.add(i, j, fxEscapeControl, s.fragIn(i, j), s.lit(frag(s.out[o:])))
}

// badUTF8 replaces a run of bytes that are not UTF-8 with U+FFFD each.
func (s *scanner) badUTF8(i int) int {
	src := s.src
	j := i
	for j < len(src) {
		if r, sz := utf8.DecodeRune(src[j:]); r != utf8.RuneError || sz != 1 {
			break
		}
		j++
	}
	s.badUTF8Run(i, j)
	return j
}

// badUTF8Run writes U+FFFD for each byte of src[i:j], none of them UTF-8.
func (s *scanner) badUTF8Run(i, j int) {
	var before strings.Builder
	for _, c := range s.src[i:j] {
		s.out = append(s.out, "\uFFFD"...)
		before.WriteString(`\x`)
		before.WriteByte(hexDigit[c>>4])
		before.WriteByte(hexDigit[c&15])
	}
	s.add(i, j, fxInvalidUTF8, s.lit(before.String()), s.lit(strings.Repeat("\uFFFD", j-i)))
}

// number copies a number as written. Only the forms a model means as numbers
// and JSON spells differently are fixed (+1, .5, 1.); anything else that
// starts like a number (0x1F, 1.2.3, 007) is kept as text in a string.
func (s *scanner) number() bool {
	src, end := s.src, len(s.src)
	start := s.i
	j := start
	plus := src[j] == '+'
	if plus || src[j] == '-' {
		j++
	}
	if j < end && (src[j] == 'I' || src[j] == 'N') {
		k := j
		for k < end && isIdent(src[k]) {
			k++
		}
		w := src[j:k]
		if k == end && literalPrefix(w) {
			s.i, s.eofCut = end, true
			return false
		}
		if string(w) == "Infinity" || string(w) == "NaN" {
			s.flush()
			s.out = append(s.out, "null"...)
			s.add(start, k, fxLiteral, s.in(start, k), s.lit("null"))
			s.i = k
			return s.valueDone()
		}
		return s.bareValue(start)
	}
	intStart := j
	for j < end && isDigit(src[j]) {
		j++
	}
	intLen := j - intStart
	dot, fracLen := -1, 0
	if j < end && src[j] == '.' {
		dot = j
		j++
		for j < end && isDigit(src[j]) {
			j++
		}
		fracLen = j - dot - 1
	}
	exp, expLen := -1, 0
	if j < end && (src[j] == 'e' || src[j] == 'E') {
		exp = j
		j++
		if j < end && (src[j] == '+' || src[j] == '-') {
			j++
		}
		e0 := j
		for j < end && isDigit(src[j]) {
			j++
		}
		expLen = j - e0
	}
	if j < end && isNumTail(src[j]) {
		k := j
		for k < end && isNumTail(src[k]) {
			k++
		}
		if k == end {
			s.eofCut = true
		}
		s.quote(start, k)
		s.i = k
		return s.valueDone()
	}
	if j == end && (intLen == 0 && fracLen == 0 || dot >= 0 && fracLen == 0 || exp >= 0 && expLen == 0) {
		s.i, s.eofCut = end, true // cut inside the number
		return false
	}
	if intLen == 0 && fracLen == 0 || intLen > 1 && src[intStart] == '0' || exp >= 0 && expLen == 0 {
		s.quote(start, j)
		s.i = j
		return s.valueDone()
	}
	if k := s.numberText(start, j, intLen); k > j {
		if k == end && s.cur() != nil {
			s.eofCut = true
		}
		s.quote(start, k)
		s.i = k
		return s.valueDone()
	}
	s.flush()
	if !plus && intLen > 0 && (dot < 0 || fracLen > 0) {
		s.out = append(s.out, src[start:j]...)
	} else {
		o := len(s.out)
		if src[start] == '-' {
			s.out = append(s.out, '-')
		}
		if intLen == 0 {
			s.out = append(s.out, '0')
		}
		s.out = append(s.out, src[intStart:intStart+intLen]...)
		if dot >= 0 {
			s.out = append(s.out, src[dot:dot+1+fracLen]...)
			if fracLen == 0 {
				s.out = append(s.out, '0')
			}
		}
		if exp >= 0 {
			s.out = append(s.out, src[exp:j]...)
		}
		s.add(start, j, fxNumberFormat, s.in(start, j), s.litB(s.out[o:]))
	}
	s.i = j
	return s.valueDone()
}

// numberText returns where the text that a number at start begins really
// ends, when it goes on past the number's end j: thousands separators
// (12,111 outside an array, where the comma separates elements), a
// fraction (1/5), or words on the same line (1 cup butter, 2 or 3). Such
// a value is text, never the number it starts with. It returns j when the
// number stands alone, or is followed by a literal or a key of the next
// member, whose comma went missing.
func (s *scanner) numberText(start, j, intLen int) int {
	src, end := s.src, len(s.src)
	f := s.cur()
	inArray := f != nil && f.kind == '['
	e := j
	if !inArray && intLen <= 3 && src[start] != '+' {
		for e+4 <= end && src[e] == ',' && isDigit(src[e+1]) && isDigit(src[e+2]) && isDigit(src[e+3]) && (e+4 == end || !isDigit(src[e+4])) {
			e += 4
		}
		if e > j && e+1 < end && src[e] == '.' && isDigit(src[e+1]) {
			e++
			for e < end && isDigit(src[e]) {
				e++
			}
		}
	}
	if e+1 < end && src[e] == '/' && isDigit(src[e+1]) {
		e++
		for e < end && isDigit(src[e]) {
			e++
		}
	}
	k := e
	for k < end && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	words := k > e && k < end && (isIdent(src[k]) && !isDigit(src[k]) || src[k] >= utf8.RuneSelf && isLetterAt(src, k)) &&
		!literalAt(src, k) && !(f != nil && f.kind == '{' && s.bareKeyAt(k))
	if !words {
		if e > j && e < end && (isIdent(src[e]) || src[e] == '.') {
			words = true
		} else {
			return e
		}
	}
	for k < end {
		c := src[k]
		if c == '\n' || c == '\r' || f != nil && (c == ',' || c == '}' || c == ']') || c == '`' && bytes.HasPrefix(src[k:], fenceMark) {
			break
		}
		k++
	}
	for k > j && (src[k-1] == ' ' || src[k-1] == '\t') {
		k--
	}
	return k
}

// word handles a bare word in value position: a JSON, Python or JS literal,
// or else text the model forgot to quote.
func (s *scanner) word() bool {
	src, end := s.src, len(s.src)
	start := s.i
	j := start
	for j < end && isIdent(src[j]) {
		j++
	}
	if j > start {
		w := src[start:j]
		if j == end && literalPrefix(w) {
			s.i, s.eofCut = end, true
			return false
		}
		if lit := literalFor(w); lit != "" && s.endsWord(j) {
			s.flush()
			s.out = append(s.out, lit...)
			if lit != string(w) {
				s.add(start, j, fxLiteral, s.in(start, j), s.lit(lit))
			}
			s.i = j
			return s.valueDone()
		}
	}
	return s.bareValue(start)
}

// endsWord reports whether the word ending at j stands alone ("True,") rather
// than starting a phrase ("True story").
func (s *scanner) endsWord(j int) bool {
	src := s.src
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return j >= len(src) || !isIdent(src[j]) && !(src[j] >= utf8.RuneSelf && isLetterAt(src, j))
}

// bareValue quotes unquoted text in value position, up to the next
// separator or line end, so that nothing the model wrote is lost.
func (s *scanner) bareValue(start int) bool {
	src, end := s.src, len(s.src)
	k := start
	for k < end {
		c := src[k]
		if c == ',' || c == '}' || c == ']' || c == '\n' || c == '\r' || c == '`' && bytes.HasPrefix(src[k:], fenceMark) {
			break
		}
		k++
	}
	if k == end {
		s.eofCut = true
	}
	e := k
	for e > start+1 && (src[e-1] == ' ' || src[e-1] == '\t') {
		e--
	}
	s.quote(start, e)
	s.i = e
	return s.valueDone()
}

// quote writes src[a:b] as a JSON string value.
func (s *scanner) quote(a, b int) {
	s.flush()
	o := len(s.out)
	s.out = append(s.out, '"')
	s.out = appendEscaped(s.out, s.src[a:b])
	s.out = append(s.out, '"')
	s.add(a, b, fxQuoteValue, s.fragIn(a, b), s.lit(frag(s.out[o:])))
}

// unquotedKey quotes a bare key ({user_name: "x"}).
func (s *scanner) unquotedKey(f *frame) {
	src, end := s.src, len(s.src)
	start := s.i
	j := start
	for j < end {
		c := src[j]
		if c < utf8.RuneSelf {
			if !isIdent(c) && c != '-' && !(c == '.' && j+1 < end && isDigit(src[j+1])) {
				break
			}
			j++
			continue
		}
		r, n := utf8.DecodeRune(src[j:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		j += n
	}
	s.flush()
	s.out = append(s.out, '"')
	s.out = append(s.out, src[start:j]...)
	s.out = append(s.out, '"')
	a := s.lit(`"`)
	s.arena = append(append(s.arena, src[start:j]...), '"')
	a.hi = len(s.arena)
	s.add(start, j, fxQuoteKey, s.in(start, j), a)
	s.i, s.lastEnd = j, j
	if j == end {
		s.eofCut = true
	}
	f.state = stColon
}

func valueCtx(f *frame) strCtx {
	switch {
	case f == nil:
		return ctxTop
	case f.kind == '{':
		return ctxObj
	}
	return ctxArr
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

// Character classes for the hot loops.
const (
	cStr   = 1 << iota // ends a run of plain content in every string
	cColon             // ':' ends a run inside a key
	cApos              // '\'' ends a run inside a single-quoted string
	cIdent             // [A-Za-z0-9_$]
)

var classes = func() (t [256]uint8) {
	for c := range 256 {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			t[c] |= cStr
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' {
			t[c] |= cIdent
		}
	}
	t[':'] |= cColon
	t['\''] |= cApos
	return t
}()

func isIdent(c byte) bool { return classes[c]&cIdent != 0 }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isNumTail reports a byte that may not directly follow a number.
func isNumTail(c byte) bool { return isIdent(c) || c == '.' || c == '+' || c == '-' }

// hasWordChar reports a letter or digit in b.
func hasWordChar(b []byte) bool {
	for _, r := range string(b) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// valueGoesOn reports whether text stripped after the value closes a
// bracket that it did not open, after a letter or digit: the value most
// likely went on through what looked like prose ({"code": import { query }
// from …}), so stripping it would cut the value short.
func valueGoesOn(b []byte) bool {
	depth, words := 0, false
	for _, c := range b {
		switch {
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth > 0 {
				depth--
			} else if words {
				return true
			}
		case isIdent(c) || c >= utf8.RuneSelf:
			words = true
		}
	}
	return false
}

func isLetterAt(src []byte, i int) bool {
	r, _ := utf8.DecodeRune(src[i:])
	return unicode.IsLetter(r)
}

// isMarkdownEscape reports the characters a model escapes out of markdown
// habit (prompt\_text, \*bold\*); in JSON the backslash is an error and the
// character was meant bare.
func isMarkdownEscape(c byte) bool {
	return strings.IndexByte("_*#-.()[]!><+=|{}~`", c) >= 0
}

// literalFor maps the literals models write, JSON's own and Python's or
// JavaScript's, to JSON. It returns "" for any other word.
func literalFor(w []byte) string {
	switch string(w) {
	case "true", "True", "TRUE":
		return "true"
	case "false", "False", "FALSE":
		return "false"
	case "null", "None", "NULL", "Null", "nil", "undefined", "NaN", "Infinity":
		return "null"
	}
	return ""
}

var literalWords = []string{"true", "True", "TRUE", "false", "False", "FALSE",
	"null", "None", "NULL", "Null", "nil", "undefined", "NaN", "Infinity"}

// literalPrefix reports a word cut off by the end of the input that could
// still have become a literal.
func literalPrefix(w []byte) bool {
	for _, l := range literalWords {
		if len(w) < len(l) && strings.HasPrefix(l, string(w)) {
			return true
		}
	}
	return false
}

// qkind is the kind of a string delimiter.
type qkind uint8

const (
	qNone     qkind = iota
	qDouble         // "
	qSingle         // '
	qCurly          // “ ” „ ‟, closed by ” “ or "
	qCurlyS         // ‘ ’ ‚ ‛, closed by ’ ‘ or '
	qGuil           // « », closed by » or «
	qBacktick       // `, closed by `
)

// quoteAt returns the kind and size of a string delimiter at i.
func quoteAt(src []byte, i int) (qkind, int) {
	switch src[i] {
	case '"':
		return qDouble, 1
	case '\'':
		return qSingle, 1
	case '`':
		if !bytes.HasPrefix(src[i:], fenceMark) {
			return qBacktick, 1
		}
	case 0xC2: // « U+00AB, » U+00BB
		if i+1 < len(src) && (src[i+1] == 0xAB || src[i+1] == 0xBB) {
			return qGuil, 2
		}
	case 0xE2: // U+2018 … U+201F
		if i+2 < len(src) && src[i+1] == 0x80 {
			switch src[i+2] {
			case 0x9C, 0x9D, 0x9E, 0x9F:
				return qCurly, 3
			case 0x98, 0x99, 0x9A, 0x9B:
				return qCurlyS, 3
			}
		}
	}
	return qNone, 0
}

func quoteKindAt(src []byte, i int) qkind {
	k, _ := quoteAt(src, i)
	return k
}

// isCloser reports a rune that may close a string opened by a typographic
// delimiter of kind q. Models mix the left and right forms, so both count.
func isCloser(q qkind, r rune) bool {
	switch q {
	case qCurly:
		return r == '\u201C' || r == '\u201D'
	case qCurlyS:
		return r == '\u2018' || r == '\u2019'
	case qGuil:
		return r == '\u00AB' || r == '\u00BB'
	}
	return false
}

const hexDigit = "0123456789abcdef"

func appendControl(out []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	}
	return append(out, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&15])
}

// appendEscaped writes b as the content of a JSON string.
func appendEscaped(out, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
			i++
		case c < 0x20:
			out = appendControl(out, c)
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, b[i:i+n]...)
			}
			i += n
		}
	}
	return out
}
