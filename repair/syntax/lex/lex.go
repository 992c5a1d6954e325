// Package lex reads JSON as models write it, the lexical layer beneath the
// syntactic repairer: it knows the spelling of the tokens (white space, the
// string delimiters from straight to typographic quotes and backticks, the
// literal words of JSON, Python and JavaScript, the characters a bare word
// is made of) and answers the questions the repairer asks about the text
// ahead of it (does a key and its colon start here, does a member end there,
// does this bracket open a value or belong to prose), each by reading a
// bounded stretch of the input. It writes nothing and decides no fix: the
// scanner in package syntax does, so that what counts as a token is said
// once, apart from what is done about it.
package lex

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contractgateway/gateway/validators/extract"
)

// fenceMark is extract.FenceMarker as bytes.
var fenceMark = []byte(extract.FenceMarker)

// FenceAt reports whether a code fence marker ("```") starts at i: outside
// a string it ends the document or opens a code block, never a token.
func FenceAt(src []byte, i int) bool { return bytes.HasPrefix(src[i:], fenceMark) }

// IsWS reports JSON whitespace (RFC 8259 §2).
func IsWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipWS returns the offset of the first non-whitespace byte at or after i.
func SkipWS(b []byte, i int) int {
	for i < len(b) && IsWS(b[i]) {
		i++
	}
	return i
}

// TrimBounds returns the bounds of b without surrounding JSON whitespace.
func TrimBounds(b []byte) (lo, hi int) {
	lo, hi = 0, len(b)
	for lo < hi && IsWS(b[lo]) {
		lo++
	}
	for hi > lo && IsWS(b[hi-1]) {
		hi--
	}
	return lo, hi
}

// Character classes for the hot loops: bits of Classes.
const (
	ClassStr   = 1 << iota // ends a run of plain content in every string
	ClassColon             // ':' ends a run inside a key
	ClassApos              // '\'' ends a run inside a single-quoted string
	ClassIdent             // [A-Za-z0-9_$]
)

// Classes holds the Class bits of every byte, for loops that run over
// plain content until a byte needs a look.
var Classes = func() (t [256]uint8) {
	for c := range 256 {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			t[c] |= ClassStr
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' {
			t[c] |= ClassIdent
		}
	}
	t[':'] |= ClassColon
	t['\''] |= ClassApos
	return t
}()

// IsIdent reports a byte of a bare word: [A-Za-z0-9_$].
func IsIdent(c byte) bool { return Classes[c]&ClassIdent != 0 }

// IsDigit reports an ASCII digit.
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// IsHex reports an ASCII hexadecimal digit.
func IsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// IsNumTail reports a byte that may not directly follow a number.
func IsNumTail(c byte) bool { return IsIdent(c) || c == '.' || c == '+' || c == '-' }

// HasWordChar reports a letter or digit in b.
func HasWordChar(b []byte) bool {
	for _, r := range string(b) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// IsLetterAt reports whether the rune at i is a letter.
func IsLetterAt(src []byte, i int) bool {
	r, _ := utf8.DecodeRune(src[i:])
	return unicode.IsLetter(r)
}

// IsMarkdownEscape reports the characters a model escapes out of markdown
// habit (prompt\_text, \*bold\*); in JSON the backslash is an error and the
// character was meant bare.
func IsMarkdownEscape(c byte) bool {
	return strings.IndexByte("_*#-.()[]!><+=|{}~`", c) >= 0
}

// LiteralFor maps the literals models write, JSON's own and Python's or
// JavaScript's, to JSON. It returns "" for any other word.
func LiteralFor(w []byte) string {
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

// LiteralPrefix reports a word cut off by the end of the input that could
// still have become a literal.
func LiteralPrefix(w []byte) bool {
	for _, l := range literalWords {
		if len(w) < len(l) && strings.HasPrefix(l, string(w)) {
			return true
		}
	}
	return false
}

// LiteralAt reports a JSON or Python literal word at i.
func LiteralAt(src []byte, i int) bool {
	k := i
	for k < len(src) && IsIdent(src[k]) {
		k++
	}
	return k > i && LiteralFor(src[i:k]) != ""
}

// Quote is the kind of a string delimiter.
type Quote uint8

const (
	NoQuote     Quote = iota // no delimiter
	DoubleQuote              // "
	SingleQuote              // '
	CurlyQuote               // “ ” „ ‟, closed by ” “ or "
	CurlySingle              // ‘ ’ ‚ ‛, closed by ’ ‘ or '
	Guillemet                // « », closed by » or «
	Backtick                 // `, closed by `
)

// QuoteAt returns the kind and size of a string delimiter at i.
func QuoteAt(src []byte, i int) (Quote, int) {
	switch src[i] {
	case '"':
		return DoubleQuote, 1
	case '\'':
		return SingleQuote, 1
	case '`':
		if !FenceAt(src, i) {
			return Backtick, 1
		}
	case 0xC2: // « U+00AB, » U+00BB
		if i+1 < len(src) && (src[i+1] == 0xAB || src[i+1] == 0xBB) {
			return Guillemet, 2
		}
	case 0xE2: // U+2018 … U+201F
		if i+2 < len(src) && src[i+1] == 0x80 {
			switch src[i+2] {
			case 0x9C, 0x9D, 0x9E, 0x9F:
				return CurlyQuote, 3
			case 0x98, 0x99, 0x9A, 0x9B:
				return CurlySingle, 3
			}
		}
	}
	return NoQuote, 0
}

// QuoteKindAt is the kind of QuoteAt.
func QuoteKindAt(src []byte, i int) Quote {
	k, _ := QuoteAt(src, i)
	return k
}

// IsCloser reports a rune that may close a string opened by a typographic
// delimiter of kind q. Models mix the left and right forms, so both count.
func IsCloser(q Quote, r rune) bool {
	switch q {
	case CurlyQuote:
		return r == '\u201C' || r == '\u201D'
	case CurlySingle:
		return r == '\u2018' || r == '\u2019'
	case Guillemet:
		return r == '\u00AB' || r == '\u00BB'
	}
	return false
}
