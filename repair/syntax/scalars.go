package syntax

import (
	"github.com/contractgateway/gateway/repair/syntax/lex"
)

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
		for k < end && lex.IsIdent(src[k]) {
			k++
		}
		w := src[j:k]
		if k == end && lex.LiteralPrefix(w) {
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
	for j < end && lex.IsDigit(src[j]) {
		j++
	}
	intLen := j - intStart
	dot, fracLen := -1, 0
	if j < end && src[j] == '.' {
		dot = j
		j++
		for j < end && lex.IsDigit(src[j]) {
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
		for j < end && lex.IsDigit(src[j]) {
			j++
		}
		expLen = j - e0
	}
	if j < end && lex.IsNumTail(src[j]) {
		k := j
		for k < end && lex.IsNumTail(src[k]) {
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
	var container byte
	if f := s.cur(); f != nil {
		container = f.kind
	}
	if k := lex.NumberText(src, start, j, intLen, container); k > j {
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

// word handles a bare word in value position: a JSON, Python or JS literal,
// or else text the model forgot to quote.
func (s *scanner) word() bool {
	src, end := s.src, len(s.src)
	start := s.i
	j := start
	for j < end && lex.IsIdent(src[j]) {
		j++
	}
	if j > start {
		w := src[start:j]
		if j == end && lex.LiteralPrefix(w) {
			s.i, s.eofCut = end, true
			return false
		}
		if lit := lex.LiteralFor(w); lit != "" && lex.EndsWord(src, j) {
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

// bareValue quotes unquoted text in value position, up to the next
// separator or line end, so that nothing the model wrote is lost.
func (s *scanner) bareValue(start int) bool {
	src, end := s.src, len(s.src)
	k := start
	for k < end {
		c := src[k]
		if c == ',' || c == '}' || c == ']' || c == '\n' || c == '\r' || c == '`' && lex.FenceAt(src, k) {
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
	s.out = lex.AppendEscaped(s.out, s.src[a:b])
	s.out = append(s.out, '"')
	s.add(a, b, fxQuoteValue, s.fragIn(a, b), s.lit(frag(s.out[o:])))
}

// unquotedKey quotes a bare key ({user_name: "x"}).
func (s *scanner) unquotedKey(f *frame) {
	src, end := s.src, len(s.src)
	start := s.i
	j := lex.BareKeyEnd(src, start)
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
