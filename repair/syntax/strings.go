package syntax

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/contractgateway/gateway/repair/syntax/lex"
)

// str parses a string whose opening delimiter is at s.i and writes it as a
// JSON string, fixing delimiters, escapes, control characters, invalid UTF-8
// and unescaped inner quotes on the way.
func (s *scanner) str(ctx lex.Ctx) keyResult {
	src := s.src
	end := len(src)
	open := s.i
	q, n := lex.QuoteAt(src, open)
	if q == lex.Backtick || (q == lex.DoubleQuote || q == lex.SingleQuote) && open+2 < end && src[open+1] == src[open] && src[open+2] == src[open] {
		if s.delimited(q) {
			return keyOnly
		}
		if q == lex.Backtick {
			// No closing backtick: the string goes on as a "…" one.
			s.add(open, open+1, fxBacktickString, s.in(open, open+1), s.lit(`"`))
			q = lex.DoubleQuote
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
	if q != lex.DoubleQuote {
		s.add(open, open+n, fxNormalizeQuotes, s.in(open, open+n), s.lit(`"`))
	}
	s.literalBS = false
	s.inner = 0
	content := len(s.out)
	mask := uint8(lex.ClassStr)
	if ctx == lex.CtxKey && q == lex.DoubleQuote {
		mask |= lex.ClassColon
	}
	if q == lex.SingleQuote || q == lex.CurlySingle {
		mask |= lex.ClassApos
	}
	i := open + n
	for i < end {
		j := i
		for j < end && lex.Classes[src[j]]&mask == 0 {
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
			if q == lex.DoubleQuote || q == lex.CurlyQuote {
				if lex.QuoteEnds(s.src, i+1, ctx) || ctx != lex.CtxKey && s.inner%2 == 0 && s.innerGapBreaks(i+1) {
					if ctx == lex.CtxKey && q == lex.DoubleQuote {
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
			if lex.QuoteEnds(s.src, i+1, ctx) {
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
			if q >= lex.CurlyQuote && lex.IsCloser(q, r) && lex.QuoteEnds(s.src, i+sz, ctx) {
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
// quote), reaches a line break before the next quote (lex.QuoteGap): the
// quote then ends the string. The answer holds for every k in the same gap,
// so it is kept and each byte is looked at once.
func (s *scanner) innerGapBreaks(k int) bool {
	if k >= s.gapFrom && k <= s.gapEnd && s.gapEnd > 0 {
		return s.gapNL
	}
	s.gapFrom = k
	s.gapEnd, s.gapNL = lex.QuoteGap(s.src, k)
	return s.gapNL
}

func (s *scanner) closeStr(i, size int, q lex.Quote) {
	s.out = append(s.out, '"')
	if q != lex.DoubleQuote {
		s.add(i, i+size, fxNormalizeQuotes, s.in(i, i+size), s.lit(`"`))
	}
	s.i = i + size
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
	if n := src[q+1]; lex.IsWS(n) || n == ':' || n == ',' || n == '}' || n == ']' {
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
	s.str(lex.CtxObj)
	return true
}

// quotedColon handles "key:" "value": the colon went inside the key's
// quotes, and the value follows after a space. It moves the colon out when no
// real colon follows the key.
func (s *scanner) quotedColon(q, content int) bool {
	src := s.src
	j := lex.SkipWS(src, q+1)
	if j >= len(src) || j == q+1 || src[j] == ':' {
		return false
	}
	if c := src[j]; c != '{' && c != '[' && c != '-' && !lex.IsIdent(c) && lex.QuoteKindAt(src, j) == lex.NoQuote {
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
	if !(c == '[' || c == '{' || k > i+1 && (lex.IsDigit(c) || c == '-' && k+1 < len(src) && lex.IsDigit(src[k+1]) || lex.LiteralAt(src, k))) {
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
// next quote on its line, with a colon after it (lex.KeyCloses). The answer
// holds for every later colon before that quote, so it is kept: each byte is
// looked at once however many colons the key holds.
func (s *scanner) keyCloses(i int) bool {
	if i > s.keyLook.from && i < s.keyLook.end {
		return s.keyLook.closes
	}
	end, closes := lex.KeyCloses(s.src, i)
	s.keyLook.from, s.keyLook.end, s.keyLook.closes = i, end, closes
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
func (s *scanner) escape(i int, q lex.Quote, ctx lex.Ctx) int {
	src := s.src
	end := len(src)
	if i+1 >= end {
		return end // a backslash cut off by the end of the output
	}
	e := src[i+1]
	if e == '"' && s.literalBS && q == lex.DoubleQuote && lex.QuoteEnds(s.src, i+2, ctx) {
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
		for h < 4 && i+2+h < end && lex.IsHex(src[i+2+h]) {
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
		if q == lex.SingleQuote || q == lex.CurlySingle {
			s.out = append(s.out, '\'')
			s.add(i, i+2, fxNormalizeQuotes, s.in(i, i+2), s.in(i+1, i+2))
			return i + 2
		}
	default:
		if lex.IsMarkdownEscape(e) {
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
		s.out = lex.AppendControl(s.out, c)
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
		before.WriteByte(lex.HexDigits[c>>4])
		before.WriteByte(lex.HexDigits[c&15])
	}
	s.add(i, j, fxInvalidUTF8, s.lit(before.String()), s.lit(strings.Repeat("\uFFFD", j-i)))
}

// delimited parses a string whose delimiters are not JSON's: a triple
// quote (three double or three single quotes, as Python writes them,
// closed by the same three) or a backtick (closed by
// the next backtick that no backslash escapes). Its content is kept as it
// is, only escaped. It reports false when no closer follows.
func (s *scanner) delimited(q lex.Quote) bool {
	src, end := s.src, len(s.src)
	open := s.i
	var n, a, b, closeEnd int
	var fixer fixID
	if q == lex.Backtick {
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

// rawContent writes src[a:b] as the content of a JSON string: quotes are
// escaped, control characters and bytes that are not UTF-8 fixed as in any
// string, and backslashes read as escapes (escapes) or kept as literal ones.
func (s *scanner) rawContent(a, b int, escapes bool) {
	src := s.src
	i := a
	for i < b {
		j := i
		for j < b && lex.Classes[src[j]]&lex.ClassStr == 0 {
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
			i = s.escape(i, lex.Backtick, lex.CtxObj)
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
