package strictjson

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth is the deepest nesting of arrays and objects that Parse accepts.
// It is the limit encoding/json uses, so that a document one accepts is never
// rejected by the other for its depth, and it bounds the parser's recursion:
// a hostile "[[[[…" costs an error, never a stack overflow.
const MaxDepth = 10000

// Reason classifies a SyntaxError. Local repair picks its fixer by reason and
// logs and metrics count parse failures by it, so the names returned by
// String are stable.
type Reason uint8

// The reasons a document is rejected. ReasonUnexpected is the zero value: a
// character that cannot appear where it stands and that no more specific
// reason explains.
const (
	ReasonUnexpected    Reason = iota // a character that cannot appear here
	ReasonTruncated                   // the input ends inside a value
	ReasonEmpty                       // the input holds no value at all
	ReasonTrailingComma               // ',' right before '}' or ']'
	ReasonComment                     // "//", "/*" or "#"
	ReasonQuote                       // single or typographic quotes as delimiters
	ReasonUnquotedKey                 // an object key without quotes
	ReasonMissingComma                // two values with nothing between them
	ReasonMissingColon                // a key followed by something other than ':'
	ReasonControlChar                 // a raw byte < 0x20 inside a string
	ReasonEscape                      // an invalid backslash escape
	ReasonDuplicateKey                // a key that already occurs in the same object
	ReasonUTF8                        // bytes that are not valid UTF-8
	ReasonBOM                         // a byte order mark before the value
	ReasonTrailingData                // anything but whitespace after the value
	ReasonNumber                      // a number RFC 8259 does not allow (01, +1, .5, 1.)
	ReasonLiteral                     // a bare word that is not true, false or null
	ReasonDepth                       // nesting deeper than MaxDepth
)

var reasonNames = [...]string{
	ReasonUnexpected:    "unexpected_character",
	ReasonTruncated:     "truncated",
	ReasonEmpty:         "empty",
	ReasonTrailingComma: "trailing_comma",
	ReasonComment:       "comment",
	ReasonQuote:         "quote",
	ReasonUnquotedKey:   "unquoted_key",
	ReasonMissingComma:  "missing_comma",
	ReasonMissingColon:  "missing_colon",
	ReasonControlChar:   "control_character",
	ReasonEscape:        "invalid_escape",
	ReasonDuplicateKey:  "duplicate_key",
	ReasonUTF8:          "invalid_utf8",
	ReasonBOM:           "byte_order_mark",
	ReasonTrailingData:  "trailing_data",
	ReasonNumber:        "invalid_number",
	ReasonLiteral:       "invalid_literal",
	ReasonDepth:         "too_deep",
}

// String returns the reason's stable snake_case name ("trailing_comma", …),
// suitable as a metric label.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// SyntaxError describes why Parse rejected a document and where. Every field
// is meant for machines as much as for people: a violation report copies
// Char into "actual", Expected into "expected" and Line:Col into "path",
// and local repair dispatches on Reason.
type SyntaxError struct {
	// Offset is the byte offset of the offending character, len(input) when
	// the input ended too early.
	Offset int
	// Line and Col locate Offset, both 1-based. Lines end at "\n" (so "\r\n"
	// counts once and a lone "\r" does not end a line); Col counts runes, not
	// bytes, and every byte of invalid UTF-8 counts as one rune.
	Line, Col int
	// Char is the offending character as text: the character itself when it
	// is printable ("," "'" "}"), `\u0001` style for control and other
	// invisible characters, `\xff` style for a byte that is not UTF-8, the
	// two-character escape for an invalid escape (`\x`), the quoted key for a
	// duplicate key, or "EOF" when the input ended.
	Char string
	// Expected says briefly what the grammar wanted at Offset: "value",
	// "string (object key)", "',' or '}'", "':'", "end of input", "digit", …
	Expected string
	// Msg is one line of prose for people.
	Msg string
	// Truncated is true when the input ended inside a value, including empty
	// and whitespace-only input.
	Truncated bool
	// Reason classifies the error.
	Reason Reason
	// Unclosed, when Truncated, lists the delimiters still open at the end of
	// the input, innermost first: `"` for an open string, then ']' and '}' for
	// each open array and object, e.g. `"]}`.
	Unclosed string
}

// Error returns "line L, column C: msg".
func (e *SyntaxError) Error() string {
	return "line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Col) + ": " + e.Msg
}

// Expected values shared by several errors. They are part of the report
// format (a violation's "expected"), so tests pin them.
const (
	expValue    = "value"
	expKey      = "string (object key)"
	expObjNext  = "',' or '}'"
	expArrNext  = "',' or ']'"
	expColon    = "':'"
	expEnd      = "end of input"
	expDigit    = "digit"
	expHex      = "hex digit"
	expEscape   = `escape (\" \\ \/ \b \f \n \r \t \uXXXX)`
	expUnique   = "unique key"
	expUTF8     = "UTF-8 character"
	expMaxDepth = "at most 10000 nested arrays and objects"
)

// Parse parses data as exactly one JSON value as RFC 8259 defines it, with
// the restrictions a contract's answer needs: no duplicate keys, valid
// UTF-8 only, no byte order mark, and at most MaxDepth levels of nesting. Whitespace may surround
// the value; nothing else may. Escapes decode like encoding/json, so a lone
// UTF-16 surrogate becomes U+FFFD.
//
// The returned tree keeps members in input order, numbers as their literal
// text and every value's byte offset. Strings and number literals share one
// copy of data (a single allocation), so any value of the tree keeps that
// copy alive; Clone a small subtree to hold it on its own.
//
// The error, when not nil, is a *SyntaxError.
func Parse(data []byte) (*Value, error) {
	return parse(data, false)
}

// ParseString is Parse of a string. Strings and number literals of the
// tree are slices of s itself, which is immutable: no copy of the input is
// made, where Parse([]byte(s)) would make two (the conversion, then
// Parse's own copy). The tree keeps s alive.
func ParseString(s string) (*Value, error) {
	return parse(unsafe.Slice(unsafe.StringData(s), len(s)), true)
}

// ParseOwned is Parse of data the caller hands over: strings and number
// literals of the tree are slices of data itself, with no copy made, so
// the caller must not change data afterwards. An upstream's answer, read
// into a buffer of its own and parsed once, is the case it is for.
func ParseOwned(data []byte) (*Value, error) {
	return parse(data, true)
}

// ValidString reports whether s is one strict JSON value, as ParseString
// would, without copying it.
func ValidString(s string) bool {
	_, err := parse(unsafe.Slice(unsafe.StringData(s), len(s)), true)
	return err == nil
}

// Valid reports whether data is one strict JSON value, as Parse would. It
// builds the same tree but over data itself instead of a copy, and drops
// it: a check that says "broken" within the first lines then costs almost
// nothing, which is what local repair's fast path needs.
func Valid(data []byte) bool {
	_, err := parse(data, true)
	return err == nil
}

// parse is Parse; borrow makes strings slices of data itself, which the
// caller guarantees no one writes to while the tree lives (a string's
// bytes, or a tree dropped before the call returns).
func parse(data []byte, borrow bool) (*Value, error) {
	p := parser{data: data}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, p.finish(p.fail(0, ReasonBOM, expValue,
			"the document starts with a byte order mark (U+FEFF), which JSON does not allow"))
	}
	p.skipWS()
	if p.pos == len(data) {
		err := p.fail(p.pos, ReasonEmpty, expValue, "the document holds no JSON value")
		return nil, p.finish(err)
	}
	if borrow {
		p.src = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		p.src = string(data)
	}
	p.grow(len(data))
	v, err := p.value()
	if err != nil {
		return nil, p.finish(err)
	}
	p.skipWS()
	if p.pos < len(data) {
		err := p.unexpected(p.pos, ReasonTrailingData, expEnd,
			"unexpected "+p.quoteChar(p.pos)+" after the end of the JSON value")
		return nil, p.finish(err)
	}
	return v, nil
}

// parser is the state of one Parse call. Values, item slices and member
// slices are carved out of slabs so that a document costs a handful of
// allocations instead of one or more per value.
type parser struct {
	data  []byte
	src   string // string(data): strings and numbers without escapes are slices of it
	pos   int
	depth int

	vals []Value  // slab of values
	ptrs []*Value // slab of array item slices
	mems []Member // slab of object member slices
	// nVals, nPtrs and nMems count what earlier slabs hold, for project.
	nVals, nPtrs, nMems int

	items    []*Value // stack of the items of the arrays being parsed
	members  []Member // stack of the members of the objects being parsed
	buf      []byte   // scratch for strings with escapes
	unclosed []byte   // SyntaxError.Unclosed, collected while a truncation error unwinds
}

// grow sizes the first slabs from the input length, small: one value per
// 32 bytes up to firstSlab. Later slabs are sized by what the input has
// shown so far (see project), so that a dense document gets one more slab
// of about the values it has left, and a document that is mostly one long
// string (a model's answer inside an API envelope) gets none: a guess from
// the length alone would clear room for hundreds of values there. The
// small first slab also keeps a parse that fails in the first lines (local
// repair parses broken text to learn that it is broken) cheap. A low guess
// costs one more allocation, never correctness.
func (p *parser) grow(n int) {
	p.vals = make([]Value, 0, clamp(n/32, 8, firstSlab))
	p.ptrs = make([]*Value, 0, clamp(n/96, 8, firstSlab))
	p.mems = make([]Member, 0, clamp(n/48, 8, firstSlab))
}

// firstSlab caps the first slabs' length (see grow).
const firstSlab = 32

// project returns the length of the next slab of a kind of which used
// have been taken so far: the same density over the input left, an eighth
// more, at least need and at most maxSlab (more than that is carved in
// further slabs).
func (p *parser) project(used, need int) int {
	rest := len(p.data) - p.pos
	n := used * rest / max(p.pos, 1)
	return max(need, clamp(n+n/8, 8, maxSlab))
}

// maxSlab caps a slab's length.
const maxSlab = 4096

func clamp(n, lo, hi int) int {
	return max(lo, min(n, hi))
}

func (p *parser) newValue(kind Kind, off int) *Value {
	if len(p.vals) == cap(p.vals) {
		p.nVals += len(p.vals)
		p.vals = make([]Value, 0, p.project(p.nVals, 1))
	}
	p.vals = p.vals[:len(p.vals)+1]
	v := &p.vals[len(p.vals)-1]
	v.Kind = kind
	v.Offset = off
	return v
}

// itemSlice copies src into the item slab. The result's capacity equals its
// length, so a caller's append never writes into a neighbour's items.
func (p *parser) itemSlice(src []*Value) []*Value {
	n := len(src)
	if n > cap(p.ptrs)-len(p.ptrs) {
		p.nPtrs += len(p.ptrs)
		p.ptrs = make([]*Value, 0, p.project(p.nPtrs+n, n))
	}
	i := len(p.ptrs)
	p.ptrs = append(p.ptrs, src...)
	return p.ptrs[i : i+n : i+n]
}

// memberSlice is itemSlice for object members.
func (p *parser) memberSlice(src []Member) []Member {
	n := len(src)
	if n > cap(p.mems)-len(p.mems) {
		p.nMems += len(p.mems)
		p.mems = make([]Member, 0, p.project(p.nMems+n, n))
	}
	i := len(p.mems)
	p.mems = append(p.mems, src...)
	return p.mems[i : i+n : i+n]
}

// eightSpaces is eight ' ' bytes read as one little-endian word.
const eightSpaces = 0x2020202020202020

func (p *parser) skipWS() {
	data, i := p.data, p.pos
	for i < len(data) {
		switch data[i] {
		case ' ':
			// Pretty-printed output indents with long runs of spaces.
			if i+8 <= len(data) && binary.LittleEndian.Uint64(data[i:]) == eightSpaces {
				i += 8
			} else {
				i++
			}
			continue
		case '\t', '\n', '\r':
			i++
			continue
		}
		break
	}
	p.pos = i
}

// value parses the value that starts at p.pos, which is not whitespace.
func (p *parser) value() (*Value, *SyntaxError) {
	data := p.data
	if p.pos >= len(data) {
		return nil, p.fail(p.pos, ReasonTruncated, expValue, "the document ends where a value should start")
	}
	off := p.pos
	switch c := data[off]; c {
	case '{':
		return p.object(off)
	case '[':
		return p.array(off)
	case '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		v := p.newValue(KindString, off)
		v.Str = s
		return v, nil
	case 't':
		return p.literal(off, "true", KindBool, true)
	case 'f':
		return p.literal(off, "false", KindBool, false)
	case 'n':
		return p.literal(off, "null", KindNull, false)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number(off)
		}
		return nil, p.valueErr(off)
	}
}

func (p *parser) object(off int) (*Value, *SyntaxError) {
	v, err := p.objectBody(off)
	if err != nil && err.Truncated {
		p.unclosed = append(p.unclosed, '}')
	}
	return v, err
}

func (p *parser) objectBody(off int) (*Value, *SyntaxError) {
	p.depth++
	if p.depth > MaxDepth {
		return nil, p.fail(off, ReasonDepth, expMaxDepth, "the document nests deeper than 10000 arrays and objects")
	}
	v := p.newValue(KindObject, off)
	data := p.data
	p.pos++
	p.skipWS()
	if p.pos < len(data) && data[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	base := len(p.members)
	var seen map[string]int // index into p.members, built for large objects only
	for {
		if p.pos >= len(data) || data[p.pos] != '"' {
			return nil, p.keyErr(p.pos)
		}
		keyOff := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if first := p.findKey(base, key, &seen); first >= 0 {
			return nil, p.dupErr(keyOff, key, p.members[first].KeyOffset)
		}
		p.skipWS()
		if p.pos >= len(data) || data[p.pos] != ':' {
			return nil, p.colonErr(p.pos)
		}
		p.pos++
		p.skipWS()
		child, err := p.value()
		if err != nil {
			return nil, err
		}
		if seen != nil {
			seen[key] = len(p.members)
		}
		p.members = append(p.members, Member{Key: key, KeyOffset: keyOff, Value: child})
		p.skipWS()
		if p.pos >= len(data) {
			return nil, p.fail(p.pos, ReasonTruncated, expObjNext, "the document ends inside an object")
		}
		c := data[p.pos]
		if c == ',' {
			comma := p.pos
			p.pos++
			p.skipWS()
			if p.pos < len(data) && data[p.pos] == '}' {
				return nil, p.fail(comma, ReasonTrailingComma, "'}'", "trailing comma before '}'")
			}
			continue
		}
		if c == '}' {
			p.pos++
			break
		}
		return nil, p.afterValueErr(p.pos, expObjNext, "object member")
	}
	v.Members = p.memberSlice(p.members[base:])
	p.members = p.members[:base]
	p.depth--
	return v, nil
}

// findKey returns the index in p.members of the member named key among the
// current object's members (those from base on), or -1. Objects are small in
// practice, so a linear scan wins; past 32 members a map keeps a hostile
// object with thousands of keys linear.
func (p *parser) findKey(base int, key string, seen *map[string]int) int {
	if *seen == nil {
		ms := p.members[base:]
		if len(ms) < 32 {
			for i := range ms {
				if ms[i].Key == key {
					return base + i
				}
			}
			return -1
		}
		m := make(map[string]int, 2*len(ms))
		for i := range ms {
			m[ms[i].Key] = base + i
		}
		*seen = m
	}
	if i, ok := (*seen)[key]; ok {
		return i
	}
	return -1
}

func (p *parser) array(off int) (*Value, *SyntaxError) {
	v, err := p.arrayBody(off)
	if err != nil && err.Truncated {
		p.unclosed = append(p.unclosed, ']')
	}
	return v, err
}

func (p *parser) arrayBody(off int) (*Value, *SyntaxError) {
	p.depth++
	if p.depth > MaxDepth {
		return nil, p.fail(off, ReasonDepth, expMaxDepth, "the document nests deeper than 10000 arrays and objects")
	}
	v := p.newValue(KindArray, off)
	data := p.data
	p.pos++
	p.skipWS()
	if p.pos < len(data) && data[p.pos] == ']' {
		p.pos++
		p.depth--
		return v, nil
	}
	base := len(p.items)
	for {
		child, err := p.value()
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, child)
		p.skipWS()
		if p.pos >= len(data) {
			return nil, p.fail(p.pos, ReasonTruncated, expArrNext, "the document ends inside an array")
		}
		c := data[p.pos]
		if c == ',' {
			comma := p.pos
			p.pos++
			p.skipWS()
			if p.pos < len(data) && data[p.pos] == ']' {
				return nil, p.fail(comma, ReasonTrailingComma, "']'", "trailing comma before ']'")
			}
			continue
		}
		if c == ']' {
			p.pos++
			break
		}
		return nil, p.afterValueErr(p.pos, expArrNext, "array item")
	}
	v.Items = p.itemSlice(p.items[base:])
	p.items = p.items[:base]
	p.depth--
	return v, nil
}

// strClass classifies string bytes: 0 may be copied as is, 1 is '"', 2 is
// '\\', 3 is a control character and 4 starts a multi-byte sequence.
var strClass = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 3
	}
	t['"'] = 1
	t['\\'] = 2
	for c := 0x80; c < 0x100; c++ {
		t[c] = 4
	}
	return t
}()

// Word-at-a-time string scanning: specialMask sets the high bit of each byte
// of x (eight input bytes, first byte lowest) that needs a closer look, a
// control character, '"', '\\' or a byte of a multi-byte sequence. These are
// the classic "has zero byte" and "has byte less than n" tests; a borrow can
// flag bytes above a real hit, never below, so the lowest flagged byte is
// always exact.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

func specialMask(x uint64) uint64 {
	q := x ^ (lowBits * '"')
	b := x ^ (lowBits * '\\')
	return ((x-lowBits*0x20)&^x | (q-lowBits)&^q | (b-lowBits)&^b | x) & highBits
}

// skipPlain returns the index of the first byte at or after i that is not
// plain string content (strClass 0), or len(data).
func skipPlain(data []byte, i int) int {
	for i+8 <= len(data) {
		if m := specialMask(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(data) && strClass[data[i]] == 0 {
		i++
	}
	return i
}

// str parses the string whose opening quote is at p.pos and leaves p.pos
// after the closing quote. A string without escapes is a slice of p.src.
func (p *parser) str() (string, *SyntaxError) {
	data := p.data
	start := p.pos + 1
	i := start
	for {
		if i = skipPlain(data, i); i >= len(data) {
			break
		}
		switch strClass[data[i]] {
		case 0:
			i++
		case 1:
			p.pos = i + 1
			return p.src[start:i], nil
		case 2:
			return p.strEscaped(start, i)
		case 3:
			return "", p.controlErr(i)
		default:
			n, err := p.rune(i)
			if err != nil {
				return "", err
			}
			i += n
		}
	}
	return "", p.eofInString(`'"'`)
}

// rune checks the multi-byte UTF-8 sequence at i and returns its length.
func (p *parser) rune(i int) (int, *SyntaxError) {
	rest := p.data[i:]
	if !utf8.FullRune(rest) {
		// A sequence cut off by the end of the input is truncation (a
		// stream stopped mid-character), not bad encoding.
		return 0, p.eofInString(`'"'`)
	}
	r, n := utf8.DecodeRune(rest)
	if r == utf8.RuneError && n == 1 {
		return 0, p.fail(i, ReasonUTF8, expUTF8, "invalid UTF-8 byte "+charAt(p.data, i)+" inside a string")
	}
	return n, nil
}

func (p *parser) eofInString(expected string) *SyntaxError {
	p.unclosed = append(p.unclosed, '"')
	return p.fail(len(p.data), ReasonTruncated, expected, "the document ends inside a string")
}

// strEscaped continues str from the first backslash at i; start is the
// first byte of the string's content. A short string is decoded into the
// parser's scratch buffer and copied out. A long one (a model's whole
// answer inside an API envelope) is decoded once into a buffer of its own,
// sized by its raw length (an escape never decodes longer than it is
// written), which becomes the string: no doubling appends, no copy.
func (p *parser) strEscaped(start, i int) (string, *SyntaxError) {
	if n := rawStringEnd(p.data, i) - start; n > longString {
		buf, err := p.unescape(make([]byte, 0, n), start, i)
		if err != nil {
			return "", err
		}
		return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
	}
	buf, err := p.unescape(p.buf[:0], start, i)
	if err != nil {
		return "", err
	}
	p.buf = buf
	return string(buf), nil
}

// longString is the raw length from which a string with escapes gets a
// buffer of its own (see strEscaped).
const longString = 1 << 10

// rawStringEnd returns the index of the quote that closes the string
// whose content goes on at i, skipping escaped characters, or len(data)
// when there is none. It only measures: strEscaped reports what is wrong.
func rawStringEnd(data []byte, i int) int {
	for i < len(data) {
		i = skipPlain(data, i)
		switch {
		case i >= len(data):
		case data[i] == '"':
			return i
		case data[i] == '\\':
			i += 2
		default:
			i++
		}
	}
	return len(data)
}

// unescape decodes the string whose content starts at start, with its
// first backslash at i, appending to buf, and leaves p.pos after the
// closing quote.
func (p *parser) unescape(buf []byte, start, i int) ([]byte, *SyntaxError) {
	data := p.data
	buf = append(buf, data[start:i]...)
	for i < len(data) {
		switch strClass[data[i]] {
		case 0:
			j := skipPlain(data, i+1)
			buf = append(buf, data[i:j]...)
			i = j
		case 1:
			p.pos = i + 1
			return buf, nil
		case 3:
			return nil, p.controlErr(i)
		case 4:
			n, err := p.rune(i)
			if err != nil {
				return nil, err
			}
			buf = append(buf, data[i:i+n]...)
			i += n
		default: // backslash
			if i+1 >= len(data) {
				return nil, p.eofInString(`'"'`)
			}
			switch c := data[i+1]; c {
			case '"', '\\', '/':
				buf = append(buf, c)
				i += 2
			case 'b':
				buf = append(buf, '\b')
				i += 2
			case 'f':
				buf = append(buf, '\f')
				i += 2
			case 'n':
				buf = append(buf, '\n')
				i += 2
			case 'r':
				buf = append(buf, '\r')
				i += 2
			case 't':
				buf = append(buf, '\t')
				i += 2
			case 'u':
				r, err := p.hex4(i + 2)
				if err != nil {
					return nil, err
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// Decode a pair when a second \u escape completes it;
					// anything else makes the first one U+FFFD, as in
					// encoding/json.
					dec := unicode.ReplacementChar
					if r2, ok := p.peekHex4(i); ok {
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							dec = d
							i += 6
						}
					}
					r = dec
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return nil, p.escapeErr(i)
			}
		}
	}
	return nil, p.eofInString(`'"'`)
}

// hex4 decodes the four hex digits at i of a \u escape.
func (p *parser) hex4(i int) (rune, *SyntaxError) {
	var r rune
	for k := i; k < i+4; k++ {
		if k >= len(p.data) {
			return 0, p.eofInString(expHex)
		}
		d := hexVal(p.data[k])
		if d < 0 {
			return 0, p.inString(k, ReasonEscape, expHex,
				"invalid character "+p.quoteChar(k)+" in \\u escape; expected four hex digits")
		}
		r = r<<4 | d
	}
	return r, nil
}

// peekHex4 decodes a complete \uXXXX escape at i, if there is one.
func (p *parser) peekHex4(i int) (rune, bool) {
	data := p.data
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for k := i + 2; k < i+6; k++ {
		d := hexVal(data[k])
		if d < 0 {
			return 0, false
		}
		r = r<<4 | d
	}
	return r, true
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

func (p *parser) literal(off int, word string, kind Kind, b bool) (*Value, *SyntaxError) {
	data := p.data
	for k := 0; k < len(word); k++ {
		i := off + k
		if i >= len(data) {
			return nil, p.fail(i, ReasonTruncated, "literal "+word, "the document ends inside the literal "+word)
		}
		if data[i] != word[k] {
			if isWordByte(data[i]) {
				// "nul1", "nulll" and "nothing" are one bad word, not a
				// good prefix followed by junk.
				return nil, p.valueErr(off)
			}
			return nil, p.unexpected(i, ReasonLiteral, "literal "+word,
				"invalid literal; expected "+word)
		}
	}
	if i := off + len(word); i < len(data) && isWordByte(data[i]) {
		return nil, p.valueErr(off)
	}
	p.pos = off + len(word)
	v := p.newValue(kind, off)
	v.Bool = b
	return v, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) number(off int) (*Value, *SyntaxError) {
	data := p.data
	i := off
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return nil, p.fail(i, ReasonTruncated, expDigit, "the document ends inside a number")
	case data[i] == '0':
		i++
		if i < len(data) && isDigit(data[i]) {
			return nil, p.fail(i, ReasonNumber, "'.', 'e' or end of number",
				"a number must not have leading zeros")
		}
	case isDigit(data[i]):
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return nil, p.unexpected(i, ReasonNumber, expDigit,
			"'-' must be followed by a digit")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) {
			return nil, p.fail(i, ReasonTruncated, expDigit, "the document ends inside a number")
		}
		if !isDigit(data[i]) {
			return nil, p.unexpected(i, ReasonNumber, expDigit,
				"a decimal point must be followed by a digit")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			return nil, p.fail(i, ReasonTruncated, expDigit, "the document ends inside a number")
		}
		if !isDigit(data[i]) {
			return nil, p.unexpected(i, ReasonNumber, expDigit,
				"an exponent must have at least one digit")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	p.pos = i
	v := p.newValue(KindNumber, off)
	v.Num = p.src[off:i]
	return v, nil
}

// fail builds the error at off; finish fills in Line and Col later, once.
func (p *parser) fail(off int, reason Reason, expected, msg string) *SyntaxError {
	e := &SyntaxError{
		Offset:   off,
		Char:     charAt(p.data, off),
		Expected: expected,
		Msg:      msg,
		Reason:   reason,
	}
	if off >= len(p.data) {
		e.Truncated = true
		if reason != ReasonEmpty {
			e.Reason = ReasonTruncated
		}
	}
	return e
}

// unexpected is fail for a character that breaks the grammar: it first
// rules out the causes that explain any position (end of input, bad UTF-8,
// a comment) and otherwise uses reason.
func (p *parser) unexpected(off int, reason Reason, expected, msg string) *SyntaxError {
	data := p.data
	switch {
	case off >= len(data):
		return p.fail(off, ReasonTruncated, expected, "the document ends early; expected "+expected)
	case data[off] >= utf8.RuneSelf && !utf8.FullRune(data[off:]):
		return p.fail(len(data), ReasonTruncated, expected, "the document ends inside a character; expected "+expected)
	case data[off] >= utf8.RuneSelf && invalidAt(data, off):
		return p.fail(off, ReasonUTF8, expected, "invalid UTF-8 byte "+charAt(data, off)+"; expected "+expected)
	case isCommentAt(data, off):
		return p.fail(off, ReasonComment, expected, "comments are not allowed in JSON")
	}
	return p.fail(off, reason, expected, msg)
}

func invalidAt(data []byte, off int) bool {
	r, n := utf8.DecodeRune(data[off:])
	return r == utf8.RuneError && n == 1
}

func isCommentAt(data []byte, off int) bool {
	if data[off] == '#' {
		return true
	}
	return data[off] == '/' && off+1 < len(data) && (data[off+1] == '/' || data[off+1] == '*')
}

// valueErr explains why no value starts at off.
func (p *parser) valueErr(off int) *SyntaxError {
	data := p.data
	if off < len(data) {
		c := data[off]
		switch {
		case isQuoteAt(data, off):
			return p.unexpected(off, ReasonQuote, expValue,
				"strings must be enclosed in double quotes, not "+p.quoteChar(off))
		case c == '+':
			return p.unexpected(off, ReasonNumber, expValue, "a number must not start with '+'")
		case c == '.':
			return p.unexpected(off, ReasonNumber, expValue, "a number must have a digit before the decimal point")
		case isWordByte(c):
			w := word(data, off)
			return p.unexpected(off, ReasonLiteral, expValue,
				strconv.Quote(w)+" is not a JSON value; use true, false, null, a number or a double-quoted string")
		}
	}
	return p.unexpected(off, ReasonUnexpected, expValue, "unexpected "+p.quoteChar(off)+"; expected a value")
}

// keyErr explains why no key starts at off.
func (p *parser) keyErr(off int) *SyntaxError {
	data := p.data
	if off < len(data) {
		c := data[off]
		switch {
		case isQuoteAt(data, off):
			return p.unexpected(off, ReasonQuote, expKey,
				"object keys must be enclosed in double quotes, not "+p.quoteChar(off))
		case isWordByte(c):
			return p.unexpected(off, ReasonUnquotedKey, expKey,
				"object key "+strconv.Quote(word(data, off))+" must be enclosed in double quotes")
		}
	}
	return p.unexpected(off, ReasonUnexpected, expKey, "unexpected "+p.quoteChar(off)+"; expected a double-quoted object key")
}

func (p *parser) colonErr(off int) *SyntaxError {
	data := p.data
	if off < len(data) {
		c := data[off]
		if c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c) || isQuoteAt(data, off) {
			return p.unexpected(off, ReasonMissingColon, expColon, "missing ':' after object key")
		}
	}
	return p.unexpected(off, ReasonUnexpected, expColon, "unexpected "+p.quoteChar(off)+" after object key; expected ':'")
}

// afterValueErr explains what follows an array item or object member
// instead of ',' or the closing bracket.
func (p *parser) afterValueErr(off int, expected, what string) *SyntaxError {
	data := p.data
	if off < len(data) {
		c := data[off]
		if c == '"' || c == '{' || c == '[' || c == '-' || isWordByte(c) || isQuoteAt(data, off) {
			return p.unexpected(off, ReasonMissingComma, expected, "missing ',' before the next "+what)
		}
	}
	return p.unexpected(off, ReasonUnexpected, expected, "unexpected "+p.quoteChar(off)+" after "+what+"; expected "+expected)
}

func (p *parser) controlErr(i int) *SyntaxError {
	c := p.data[i]
	esc := controlEscape(c)
	return p.fail(i, ReasonControlChar, esc,
		"raw control character "+charAt(p.data, i)+" inside a string; write it as "+esc)
}

func (p *parser) escapeErr(i int) *SyntaxError {
	// i is the backslash and i+1 exists.
	if p.data[i+1] >= utf8.RuneSelf {
		if e := p.inString(i+1, ReasonEscape, expEscape, ""); e.Reason != ReasonEscape {
			return e
		}
	}
	e := p.fail(i, ReasonEscape, expEscape, "")
	e.Char = `\` + charAt(p.data, i+1)
	e.Msg = "invalid escape " + e.Char + " inside a string"
	return e
}

// inString is fail for a bad character inside a string: a cut-off or
// invalid UTF-8 sequence at off explains itself first.
func (p *parser) inString(off int, reason Reason, expected, msg string) *SyntaxError {
	data := p.data
	if data[off] >= utf8.RuneSelf {
		if !utf8.FullRune(data[off:]) {
			return p.eofInString(expected)
		}
		if invalidAt(data, off) {
			return p.fail(off, ReasonUTF8, expUTF8, "invalid UTF-8 byte "+charAt(data, off)+" inside a string")
		}
	}
	return p.fail(off, reason, expected, msg)
}

func (p *parser) dupErr(off int, key string, first int) *SyntaxError {
	e := p.fail(off, ReasonDuplicateKey, expUnique, "")
	e.Char = string(AppendString(nil, key))
	line, col := lineCol(p.data, first)
	e.Msg = "duplicate key " + e.Char + " (first at line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + ")"
	return e
}

// finish fills in Line, Col and Unclosed, which only an error needs, so the
// happy path never counts lines.
func (p *parser) finish(e *SyntaxError) *SyntaxError {
	e.Line, e.Col = lineCol(p.data, e.Offset)
	if e.Truncated {
		e.Unclosed = string(p.unclosed)
	}
	return e
}

func lineCol(data []byte, off int) (line, col int) {
	off = min(off, len(data))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(data[start:off]) + 1
}

// isQuoteAt reports a quote character that a model may use instead of '"':
// the apostrophe, the backtick and the typographic quotes.
func isQuoteAt(data []byte, off int) bool {
	switch data[off] {
	case '\'', '`':
		return true
	case 0xE2:
		r, _ := utf8.DecodeRune(data[off:])
		return r == '‘' || r == '’' || r == '“' || r == '”' || r == '„'
	case 0xC2:
		r, _ := utf8.DecodeRune(data[off:])
		return r == '«' || r == '»'
	}
	return false
}

// word returns the identifier-like run at off, shortened for messages.
func word(data []byte, off int) string {
	end := off
	for end < len(data) && end-off < 32 && isWordByte(data[end]) {
		end++
	}
	return string(data[off:end])
}

// quoteChar renders the character at off for a message: 'x' for printable
// characters, the escaped form otherwise.
func (p *parser) quoteChar(off int) string {
	c := charAt(p.data, off)
	switch c {
	case "EOF":
		return "end of input"
	case "'":
		return `"'"`
	}
	return "'" + c + "'"
}

// charAt renders the character at off as SyntaxError.Char does.
func charAt(data []byte, off int) string {
	if off >= len(data) {
		return "EOF"
	}
	c := data[off]
	if c < utf8.RuneSelf {
		if c < 0x20 || c == 0x7F {
			return `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xF])
		}
		return string(rune(c))
	}
	r, n := utf8.DecodeRune(data[off:])
	if r == utf8.RuneError && n == 1 {
		return `\x` + string(hexDigits[c>>4]) + string(hexDigits[c&0xF])
	}
	if r == '\uFEFF' || !unicode.IsPrint(r) {
		if r > 0xFFFF {
			return `\U` + leftPad(strconv.FormatInt(int64(r), 16), 8)
		}
		return `\u` + leftPad(strconv.FormatInt(int64(r), 16), 4)
	}
	return string(r)
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// controlEscape is the JSON escape for control character c.
func controlEscape(c byte) string {
	switch c {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	}
	return `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xF])
}

const hexDigits = "0123456789abcdef"
