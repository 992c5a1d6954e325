package lex

import (
	"strconv"
	"unicode/utf8"
)

// HexDigits are the digits of a \u or \x escape, lower case as JSON encoders write them.
const HexDigits = "0123456789abcdef"

// AppendControl writes the control character c as a JSON escape.
func AppendControl(out []byte, c byte) []byte {
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
	return append(out, '\\', 'u', '0', '0', HexDigits[c>>4], HexDigits[c&15])
}

// AppendEscaped writes b as the content of a JSON string.
func AppendEscaped(out, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
			i++
		case c < 0x20:
			out = AppendControl(out, c)
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

// DecodeString decodes the JSON string whose opening quote is at start,
// tolerating what a model gets wrong: escapes it does not know are kept as
// written, so that the inner repair sees and fixes them. offs maps every byte
// of dec (and len(dec)) to the input offset it came from, so that the inner
// repair's changes point into the input. end is the offset after the closing
// quote, or len(src) when there is none.
func DecodeString(src []byte, start int) (dec []byte, offs []int, end int) {
	dec = make([]byte, 0, len(src)-start)
	offs = make([]int, 0, len(src)-start+1)
	i := start + 1
	for i < len(src) {
		c := src[i]
		if c == '"' {
			offs = append(offs, i)
			return dec, offs, i + 1
		}
		if c != '\\' || i+1 >= len(src) {
			dec = append(dec, c)
			offs = append(offs, i)
			i++
			continue
		}
		e := src[i+1]
		var b byte
		switch e {
		case '"', '\\', '/':
			b = e
		case 'n':
			b = '\n'
		case 't':
			b = '\t'
		case 'r':
			b = '\r'
		case 'b':
			b = '\b'
		case 'f':
			b = '\f'
		case 'u':
			if r, n := DecodeU(src[i:]); n > 0 {
				var buf [utf8.UTFMax]byte
				for _, x := range buf[:utf8.EncodeRune(buf[:], r)] {
					dec = append(dec, x)
					offs = append(offs, i)
				}
				i += n
				continue
			}
			fallthrough
		default:
			dec = append(dec, '\\', e)
			offs = append(offs, i, i+1)
			i += 2
			continue
		}
		dec = append(dec, b)
		offs = append(offs, i)
		i += 2
	}
	offs = append(offs, len(src))
	return dec, offs, len(src)
}

// DecodeU decodes a \uXXXX escape (joining a surrogate pair) at the start of
// b and returns the rune and the bytes used, or n == 0 when b does not start
// with a complete one. A lone surrogate becomes U+FFFD.
func DecodeU(b []byte) (r rune, n int) {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if r < 0xD800 || r > 0xDFFF {
		return r, 6
	}
	if r < 0xDC00 {
		if lo, ok := hex4(b[6:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000, 12
		}
	}
	return utf8.RuneError, 6
}
