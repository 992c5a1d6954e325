package lex

import (
	"unicode"
	"unicode/utf8"
)

// Ctx is where a string stands; deciding whether a quote ends a string
// depends on what may follow it there.
type Ctx uint8

const (
	CtxTop Ctx = iota // the whole document
	CtxKey            // a member's key
	CtxObj            // a member's value
	CtxArr            // an array element
)

// maxKeyLookahead bounds how far a lookahead reads to recognise a key.
const maxKeyLookahead = 256

// QuoteEnds decides whether the quote just before q closes the string. A quote
// inside a value is taken as the end only when what follows it could follow
// a string there: a closer, a colon, a comma that is itself followed by
// another member or element, a comment, the next string after a missing
// comma, or the end of the input. Anything else (a letter, '>', '.') means
// the quote is part of the text, as in "He said "hi"" or <a href="x">.
func QuoteEnds(src []byte, q int, ctx Ctx) bool {
	end := len(src)
	j, nl := q, false
	for j < end && IsWS(src[j]) {
		if src[j] == '\n' {
			nl = true
		}
		j++
	}
	if j >= end {
		return true
	}
	c := src[j]
	if c == '`' && FenceAt(src, j) {
		return true
	}
	switch ctx {
	case CtxKey:
		return true // keys are short names; a quote inside one is not worth guessing about
	case CtxTop:
		return nl
	}
	switch c {
	case '}', ']', ':':
		return true
	case ',':
		return memberFollows(src, j+1, ctx)
	case '/':
		return j+1 < end && (src[j+1] == '/' || src[j+1] == '*')
	}
	if j > q && QuoteKindAt(src, j) != NoQuote {
		return true // the next string, after a missing comma
	}
	// A line break and then the start of the next element or member is a
	// missing comma too; a line break inside text continues with words.
	return nl && (ctx == CtxArr && elementAt(src, j) || ctx == CtxObj && bareKeyAt(src, j))
}

// memberFollows reports whether what comes after a comma at k looks like the
// next member (CtxObj) or element (CtxArr), rather than more prose.
func memberFollows(src []byte, k int, ctx Ctx) bool {
	for k < len(src) && (IsWS(src[k]) || src[k] == ',') {
		k++ // a doubled comma is still a separator
	}
	if k >= len(src) {
		return true
	}
	if q := QuoteKindAt(src, k); q != NoQuote {
		return ctx != CtxObj || q != DoubleQuote || keyFollows(src, k)
	}
	c := src[k]
	if c == '`' && FenceAt(src, k) || c == '/' && k+1 < len(src) && (src[k+1] == '/' || src[k+1] == '*') {
		return true
	}
	if ctx == CtxObj {
		return c == '}' || c == ']' || bareKeyAt(src, k)
	}
	return c == ']' || elementAt(src, k)
}

// keyFollows reports whether the double-quoted string at k can be the key of
// the next member: it closes on its line with a colon after it, or the colon
// went missing ("key" "value") or inside the quotes ("key: "value",
// "count: 5, …), or the value did ("key"}). A string followed by other text
// or by a comma is a quoted word of the value before it, as in
// {"q": "Which of "a", "b" is valid?"}. A key longer than maxKeyLookahead is
// taken as one unseen. The scan stops at the next quote, where the next
// lookahead can start at the earliest, so each byte is looked at once.
func keyFollows(src []byte, k int) bool {
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
	m := SkipWS(src, e+1)
	return m >= len(src) || src[m] == ':' || src[m] == '}' || m > e+1 && QuoteKindAt(src, m) != NoQuote ||
		src[m] == '`' && FenceAt(src, m) || m > e+1 && bareValueAt(src, m)
}

// elementAt reports whether an array element (other than a string) starts
// at k.
func elementAt(src []byte, k int) bool {
	c := src[k]
	return c == '{' || c == '[' || c == '-' || IsDigit(c) || LiteralAt(src, k)
}

// bareKeyAt reports whether an unquoted key and its colon start at k.
func bareKeyAt(src []byte, k int) bool {
	e := k
	for e < len(src) && (IsIdent(src[e]) || src[e] == '.' && e > k && e+1 < len(src) && IsDigit(src[e+1])) {
		e++
	}
	if e == k {
		return false
	}
	e = SkipWS(src, e)
	return e < len(src) && src[e] == ':'
}

// bareValueAt reports whether a value other than a string starts at k and,
// for a scalar, ends where a member ends: the value of "key" 30 or
// "key" true, whose colon went missing. A word of text such as "b" is
// valid never ends at a comma or a closer this way, so quoted words inside a
// value stay text.
func bareValueAt(src []byte, k int) bool {
	switch c := src[k]; {
	case c == '{' || c == '[':
		return true
	case c == '-' || IsDigit(c):
		e := k + 1
		for e < len(src) && (IsDigit(src[e]) || src[e] == '.' || src[e] == 'e' || src[e] == 'E' || src[e] == '+' || src[e] == '-') {
			e++
		}
		return memberEndAt(src, e)
	case LiteralAt(src, k):
		e := k
		for e < len(src) && IsIdent(src[e]) {
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

// NumberText returns where the text that a number at start begins really
// ends, when it goes on past the number's end j: thousands separators
// (12,111 outside an array, where the comma separates elements), a
// fraction (1/5), or words on the same line (1 cup butter, 2 or 3). Such
// a value is text, never the number it starts with. It returns j when the
// number stands alone, or is followed by a literal or a key of the next
// member, whose comma went missing. container is the kind of the innermost
// open container ('{' or '['), or 0 at the top level.
func NumberText(src []byte, start, j, intLen int, container byte) int {
	end := len(src)
	inArray := container == '['
	e := j
	if !inArray && intLen <= 3 && src[start] != '+' {
		for e+4 <= end && src[e] == ',' && IsDigit(src[e+1]) && IsDigit(src[e+2]) && IsDigit(src[e+3]) && (e+4 == end || !IsDigit(src[e+4])) {
			e += 4
		}
		if e > j && e+1 < end && src[e] == '.' && IsDigit(src[e+1]) {
			e++
			for e < end && IsDigit(src[e]) {
				e++
			}
		}
	}
	if e+1 < end && src[e] == '/' && IsDigit(src[e+1]) {
		e++
		for e < end && IsDigit(src[e]) {
			e++
		}
	}
	k := e
	for k < end && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	words := k > e && k < end && (IsIdent(src[k]) && !IsDigit(src[k]) || src[k] >= utf8.RuneSelf && IsLetterAt(src, k)) &&
		!LiteralAt(src, k) && !(container == '{' && bareKeyAt(src, k))
	if !words {
		if e > j && e < end && (IsIdent(src[e]) || src[e] == '.') {
			words = true
		} else {
			return e
		}
	}
	for k < end {
		c := src[k]
		if c == '\n' || c == '\r' || container != 0 && (c == ',' || c == '}' || c == ']') || c == '`' && FenceAt(src, k) {
			break
		}
		k++
	}
	for k > j && (src[k-1] == ' ' || src[k-1] == '\t') {
		k--
	}
	return k
}

// EndsWord reports whether the word ending at j stands alone ("True,") rather
// than starting a phrase ("True story").
func EndsWord(src []byte, j int) bool {
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	return j >= len(src) || !IsIdent(src[j]) && !(src[j] >= utf8.RuneSelf && IsLetterAt(src, j))
}

// CommaAfter looks past the closer at i: it reports the offset of a
// following ',' (j) and of the first byte after it (k), skipping white
// space; ok is false when no comma and byte follow.
func CommaAfter(src []byte, i int) (j, k int, ok bool) {
	j = SkipWS(src, i+1)
	if j >= len(src) || src[j] != ',' {
		return 0, 0, false
	}
	k = SkipWS(src, j+1)
	return j, k, k < len(src)
}

// ShortKeyAt reports whether a key and its colon start at k: a double-quoted
// key that closes on its line, or a bare one, of at most maxKeyLookahead
// bytes, so that the lookahead stays bounded.
func ShortKeyAt(src []byte, k int) bool {
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
		for e < len(src) && e-k < maxKeyLookahead && IsIdent(src[e]) {
			e++
		}
		if e == k {
			return false
		}
	}
	e = SkipWS(src, e)
	return e < len(src) && src[e] == ':'
}

// QuoteGap reads the text from k, after a quote inside a string that would
// open a quotation in it (the first, third … inner quote), up to the next
// quote or line end, which it returns as end. breaks says a line break comes
// first: escaping that quote would run the string across the line into what
// follows, which is how two members merge into one value
// ({5: "b",\n 2.17: "e"}), so the quote ends the string instead.
func QuoteGap(src []byte, k int) (end int, breaks bool) {
	j := k
	for j < len(src) && src[j] != '"' && src[j] != '\n' && src[j] != '\r' {
		if src[j] == '\\' && j+1 < len(src) && src[j+1] == '"' {
			j++ // an escaped quote is text, not the next quote
		}
		j++
	}
	return j, j < len(src) && src[j] != '"'
}

// KeyCloses reads a key from the colon at i inside it to the next quote or
// line end, which it returns as end. closes says a quote ends the key there
// with a colon after it: "time: 10:30": 2 and "step: 1": "x" are keys with a
// colon in them, not DeepSeek's swallowed colon, whose key never closes
// ("section_order: 3, "next": …).
func KeyCloses(src []byte, i int) (end int, closes bool) {
	j := i + 1
	for j < len(src) && src[j] != '"' && src[j] != '\n' {
		if src[j] == '\\' {
			j++ // an escaped quote does not end the key
		}
		j++
	}
	j = min(j, len(src))
	if j < len(src) && src[j] == '"' {
		k := SkipWS(src, j+1)
		closes = k < len(src) && src[k] == ':'
	}
	return j, closes
}

// BareKeyEnd returns the end of the bare (unquoted) key at i, i itself
// when there is none: letters and digits of any script, '_', '-', and a
// '.' before a digit (v1.2). The scanner quotes the key it reads, and
// OpensValue reads the same key to tell an object from prose.
func BareKeyEnd(src []byte, i int) int {
	for i < len(src) {
		c := src[i]
		if c < utf8.RuneSelf {
			if !IsIdent(c) && c != '-' && !(c == '.' && i+1 < len(src) && IsDigit(src[i+1])) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(src[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i += n
	}
	return i
}

// OpensValue reports whether the '{' or '[' at i opens a JSON value rather
// than being prose like "{name}" or "[1]". At the very start of the text
// (atStart) any '{' counts, and so does an array of scalars.
func OpensValue(src []byte, i int, atStart bool) bool {
	j := SkipWS(src, i+1)
	if j >= len(src) {
		return true // the output ended right after the bracket
	}
	c := src[j]
	if c == '/' && j+1 < len(src) && (src[j+1] == '/' || src[j+1] == '*') {
		return true
	}
	if QuoteKindAt(src, j) != NoQuote {
		return true
	}
	if src[i] == '{' {
		if c == '}' || atStart {
			return true
		}
		k := BareKeyEnd(src, j)
		if k == j {
			return false
		}
		k = SkipWS(src, k)
		return k >= len(src) || src[k] == ':'
	}
	switch {
	case c == '{' || c == '[' || c == ']' || LiteralAt(src, j):
		return true
	case atStart:
		// Only a word can make a leading '[' prose: "[Note]", "[link](…)".
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf && IsLetterAt(src, j))
	case c == '-' || c >= '0' && c <= '9':
		// A number list, but not a citation like [1] or [2][3].
		k := j + 1
		for k < len(src) && (IsDigit(src[k]) || src[k] == '.' || src[k] == 'e' || src[k] == 'E' || src[k] == '+' || src[k] == '-') {
			k++
		}
		k = SkipWS(src, k)
		return k < len(src) && src[k] == ','
	}
	return false
}

// ValueGoesOn reports whether text stripped after the value closes a
// bracket that it did not open, after a letter or digit: the value most
// likely went on through what looked like prose ({"code": import { query }
// from …}), so stripping it would cut the value short.
func ValueGoesOn(b []byte) bool {
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
		case IsIdent(c) || c >= utf8.RuneSelf:
			words = true
		}
	}
	return false
}
