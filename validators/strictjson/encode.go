package strictjson

import (
	"io"
	"runtime"
	"unicode/utf8"

	"github.com/contractgateway/gateway/internal/bufpool"
)

// AppendJSON appends the canonical encoding of v to dst and returns the
// extended buffer. The canonical form is what a guarded route returns:
// compact, UTF-8, members in stored order, numbers exactly as stored in
// Num, strings escaped minimally (see AppendString). Nothing is HTML-escaped:
// "<", ">" and "&" in a question stay as the model wrote them.
//
// Values built in code are encoded as they are: a nil *Value, a nil member
// value and KindInvalid all encode as null, and a Num that is not a valid
// JSON number is written anyway, so callers building numbers in code should
// use Int or a literal they trust.
func (v *Value) AppendJSON(dst []byte) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	switch v.Kind {
	case KindBool:
		if v.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		return append(dst, v.Num...)
	case KindString:
		return AppendString(dst, v.Str)
	case KindArray:
		dst = append(dst, '[')
		for i, it := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = it.AppendJSON(dst)
		}
		return append(dst, ']')
	case KindObject:
		dst = append(dst, '{')
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			m := &v.Members[i]
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = m.Value.AppendJSON(dst)
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

// Marshal returns the canonical encoding of v (see AppendJSON), in a
// buffer sized for it from the start: a model's answer is one string of
// tens of kilobytes inside an API's envelope, and growing a buffer by
// doubling up to it would allocate twice its size and copy it many times.
func Marshal(v *Value) []byte {
	return v.AppendJSON(make([]byte, 0, sizeHint(v)))
}

// MarshalLike returns v's canonical encoding as a string: like itself when
// v encodes exactly as like, else a new string. A model that wrote its
// document canonically (compact, minimal escapes, as a schema-constrained
// model often does) thus costs no copy of it; either way the encoding is
// made in a reused buffer and allocated once at its exact size.
func MarshalLike(v *Value, like string) string {
	b := v.AppendJSON(buffers.Get())
	s := like
	if string(b) != like {
		s = string(b)
	}
	buffers.Put(b)
	return s
}

// WriteJSON writes v's canonical encoding to w in one Write, from a
// reused buffer: an answer is written and forgotten, and its tens of
// kilobytes need not be allocated anew for each request.
func WriteJSON(w io.Writer, v *Value) error {
	b := v.AppendJSON(buffers.Get())
	_, err := w.Write(b)
	buffers.Put(b)
	return err
}

// buffers holds the encoding buffers of MarshalLike and WriteJSON: a few
// per core, at most 32, each at most 256 KiB: at most 8 MiB stay
// allocated, and a rare document larger than that is allocated as before.
var buffers = bufpool.New(min(4*runtime.GOMAXPROCS(0), 32), 256<<10)

// sizeHint estimates the length of v's canonical encoding from above in
// the common case: strings get an eighth more for their escapes, which
// covers model text (newlines and quotes are a few per cent of it); a
// string dense with escapes costs one more growth of the buffer, never a
// wrong result.
func sizeHint(v *Value) int {
	if v == nil {
		return 4
	}
	switch v.Kind {
	case KindNumber:
		return len(v.Num)
	case KindString:
		return stringHint(v.Str)
	case KindArray:
		n := 2 + len(v.Items)
		for _, it := range v.Items {
			n += sizeHint(it)
		}
		return n
	case KindObject:
		n := 2 + len(v.Members)
		for i := range v.Members {
			n += stringHint(v.Members[i].Key) + 1 + sizeHint(v.Members[i].Value)
		}
		return n
	}
	return 5 // null, true, false
}

func stringHint(s string) int { return len(s) + len(s)/8 + 2 }

// MarshalIndent returns v in the pretty form of the fenced output mode: one
// member or item per line, each level indented by one more indent (callers
// pass two spaces), "key": value with one space, empty arrays and objects as
// [] and {}, and no trailing newline. Strings and numbers are encoded as in
// AppendJSON.
func MarshalIndent(v *Value, indent string) []byte {
	return appendIndent(make([]byte, 0, sizeHint(v)+sizeHint(v)/4), v, indent, 0)
}

func appendIndent(dst []byte, v *Value, indent string, depth int) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	switch v.Kind {
	case KindArray:
		if len(v.Items) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, it := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, indent, depth+1)
			dst = appendIndent(dst, it, indent, depth+1)
		}
		dst = newline(dst, indent, depth)
		return append(dst, ']')
	case KindObject:
		if len(v.Members) == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			m := &v.Members[i]
			dst = newline(dst, indent, depth+1)
			dst = AppendString(dst, m.Key)
			dst = append(dst, ": "...)
			dst = appendIndent(dst, m.Value, indent, depth+1)
		}
		dst = newline(dst, indent, depth)
		return append(dst, '}')
	}
	return v.AppendJSON(dst)
}

func newline(dst []byte, indent string, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}

// needsEscape marks the ASCII bytes AppendString must escape. Bytes from
// 0x80 on are checked separately for U+2028, U+2029 and invalid UTF-8.
var needsEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// AppendString appends s as a JSON string with minimal escaping: '"' and
// '\\' escaped, \n \r \t \b \f by their short escapes, other control
// characters as \u00XX, and U+2028 and U+2029 as \u2028 and \u2029 because
// JavaScript before ES2019 treats them as line ends inside string literals.
// Everything else, HTML characters included, is written raw. Invalid UTF-8
// (possible only in strings built in code) becomes \ufffd, as in
// encoding/json, so the output is always valid UTF-8.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if !needsEscape[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[r&0xF])
			default:
				i += n
				continue
			}
			i += n
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		default:
			dst = append(dst, controlEscape(c)...)
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
