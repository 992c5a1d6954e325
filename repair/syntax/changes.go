package syntax

import (
	"bytes"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/contractgateway/gateway/repair/syntax/locate"
)

// The stable identifiers of the syntactic fixes, as they appear in
// Change.Fixer. Reports, metrics and tests match on them, so an identifier is
// never renamed; a new kind of fix gets a new one.
const (
	FixStripThink          = "strip_think"           // a <think>…</think> section around the JSON
	FixStripFence          = "strip_fence"           // a ``` or ```json fence line
	FixStripProse          = "strip_prose"           // text before or after the JSON value
	FixRemoveComment       = "remove_comment"        // a // or /* */ comment between tokens
	FixRemoveTrailingComma = "remove_trailing_comma" // [1,2,] and {"a":1,}
	FixRemoveExtraComma    = "remove_extra_comma"    // [1,,2] and [,1]
	FixInsertComma         = "insert_comma"          // {"a":1 "b":2}, [1 2], }\n{
	FixInsertColon         = "insert_colon"          // "key: "value" and "key" "value"
	FixArraySeparator      = "array_separator"       // DeepSeek's }], { inside an array of objects
	FixMarkdownEscape      = "markdown_escape"       // \_ \* \# … inside strings
	FixEscapeBackslash     = "escape_backslash"      // any other invalid escape: "C:\Users"
	FixEscapeControl       = "escape_control"        // raw newline, tab, CR … inside strings
	FixNormalizeQuotes     = "normalize_quotes"      // 'single' and “typographic” delimiters
	FixQuoteKey            = "quote_key"             // {user_name: "x"}
	FixQuoteValue          = "quote_value"           // a bare word or malformed number as a value
	FixLiteral             = "literal"               // None, True, False, NaN, Infinity, undefined
	FixNumberFormat        = "number_format"         // +1, .5, 1.
	FixMissingValue        = "missing_value"         // {"a": , "b": 1}: the absent value is null
	FixInsertCloser        = "insert_closer"         // {"a": [1, 2} closes the array before the object
	FixWrongCloser         = "wrong_closer"          // ["a", "b"}, "n": 1}: the '}' was meant as ']'
	FixRemoveInvalid       = "remove_invalid"        // characters that can start no JSON token
	FixInvalidUTF8         = "invalid_utf8"          // bytes that are not UTF-8, as U+FFFD
	FixEscapeInnerQuote    = "escape_inner_quote"    // "He said "hi" to me"
	FixUnstringify         = "unstringify"           // a whole document sent as a JSON string
	FixCloseTruncated      = "close_truncated"       // output that ended inside a value
	FixTripleQuote         = "triple_quote"          // """…""" and its single-quoted form as delimiters
	FixBacktickString      = "backtick_string"       // `…` delimiters
	FixCodeBlock           = "code_block"            // a fenced code block used as a value
)

// fixID is a fixer as the scanner records it, an index into fixNames.
type fixID uint8

const (
	fxStripThink fixID = iota
	fxStripFence
	fxStripProse
	fxUnstringify
	fxRemoveComment
	fxRemoveTrailingComma
	fxRemoveExtraComma
	fxInsertComma
	fxInsertColon
	fxArraySeparator
	fxMarkdownEscape
	fxEscapeBackslash
	fxEscapeControl
	fxNormalizeQuotes
	fxQuoteKey
	fxQuoteValue
	fxLiteral
	fxNumberFormat
	fxMissingValue
	fxInsertCloser
	fxWrongCloser
	fxRemoveInvalid
	fxInvalidUTF8
	fxEscapeInnerQuote
	fxCloseTruncated
	fxTripleQuote
	fxBacktickString
	fxCodeBlock
)

var fixNames = [...]string{
	fxStripThink:          FixStripThink,
	fxStripFence:          FixStripFence,
	fxStripProse:          FixStripProse,
	fxUnstringify:         FixUnstringify,
	fxRemoveComment:       FixRemoveComment,
	fxRemoveTrailingComma: FixRemoveTrailingComma,
	fxRemoveExtraComma:    FixRemoveExtraComma,
	fxInsertComma:         FixInsertComma,
	fxInsertColon:         FixInsertColon,
	fxArraySeparator:      FixArraySeparator,
	fxMarkdownEscape:      FixMarkdownEscape,
	fxEscapeBackslash:     FixEscapeBackslash,
	fxEscapeControl:       FixEscapeControl,
	fxNormalizeQuotes:     FixNormalizeQuotes,
	fxQuoteKey:            FixQuoteKey,
	fxQuoteValue:          FixQuoteValue,
	fxLiteral:             FixLiteral,
	fxNumberFormat:        FixNumberFormat,
	fxMissingValue:        FixMissingValue,
	fxInsertCloser:        FixInsertCloser,
	fxWrongCloser:         FixWrongCloser,
	fxRemoveInvalid:       FixRemoveInvalid,
	fxInvalidUTF8:         FixInvalidUTF8,
	fxEscapeInnerQuote:    FixEscapeInnerQuote,
	fxCloseTruncated:      FixCloseTruncated,
	fxTripleQuote:         FixTripleQuote,
	fxBacktickString:      FixBacktickString,
	fxCodeBlock:           FixCodeBlock,
}

// Change records one edit made by local repair. Every edit is reported,
// so that a client, a log line or a person reviewing the debug store can
// see exactly what the gateway changed in the model's output and why.
type Change struct {
	// Path locates the edit. Syntactic fixes use "line:col" of the input text,
	// both 1-based and counted as the strict parser counts them for
	// JSON_PARSE violations: lines end at "\n", columns count runes (a byte
	// that is not UTF-8 counts as one). Value fixes use the dotted path of the
	// value, such as "questions[3].answer".
	Path string `json:"path"`
	// Before is the replaced text fragment (syntactic fixes) or JSON value
	// (value fixes). Long fragments are shortened and end in "…".
	Before any `json:"before"`
	// After is what replaced Before, in the same form.
	After any `json:"after"`
	// Fixer is the stable identifier of the fix; logs, metrics and tests
	// depend on it, so it never changes once released.
	Fixer string `json:"fixer"`
}

var nl = []byte{'\n'}

// fragMax bounds the Before and After fragments of changes that remove or
// wrap whole regions (prose, think sections, a stringified document), so a
// report stays readable when a model wrote pages of reasoning.
const fragMax = 80

// changeLog collects the changes of one document as plain values: byte
// offsets into the document, and fragments kept as offsets into the document
// or into arena. Nothing in it is a pointer, so documents with thousands of
// fixes cost a few growing byte slices rather than thousands of strings for
// the garbage collector; strings are made once, in toChanges.
type changeLog struct {
	raw   []rawSpan
	arena []byte
}

// rawSpan is one change: the input range [off, end) it covers (insertions
// have off == end), what was there and what replaced it.
type rawSpan struct {
	off, end      int
	before, after txt
	fixer         fixID
}

// txt is a fragment: src[lo:hi] of the document, or arena[lo:hi].
type txt struct {
	lo, hi int
	arena  bool
}

func (l *changeLog) add(off, end int, fixer fixID, before, after txt) {
	l.raw = append(l.raw, rawSpan{off: off, end: end, fixer: fixer, before: before, after: after})
}

// lit copies str into the arena.
func (l *changeLog) lit(str string) txt {
	lo := len(l.arena)
	l.arena = append(l.arena, str...)
	return txt{lo: lo, hi: len(l.arena), arena: true}
}

// litB copies b into the arena.
func (l *changeLog) litB(b []byte) txt {
	lo := len(l.arena)
	l.arena = append(l.arena, b...)
	return txt{lo: lo, hi: len(l.arena), arena: true}
}

// fragOf is src[lo:hi] as a fragment, shortened when long.
func (l *changeLog) fragOf(src []byte, lo, hi int) txt {
	if hi-lo <= fragMax {
		return txt{lo: lo, hi: hi}
	}
	return l.lit(frag(src[lo:hi]))
}

// stripFixers are the fixes that strip each kind of text around the value.
var stripFixers = [...]fixID{locate.Prose: fxStripProse, locate.Think: fxStripThink, locate.Fence: fxStripFence}

// strip records the removal of st, unless it is empty.
func (l *changeLog) strip(src []byte, st locate.Strip) {
	if st.Off < st.End {
		l.add(st.Off, st.End, stripFixers[st.Kind], l.fragOf(src, st.Off, st.End), txt{})
	}
}

// bytesOf returns the bytes of t, a fragment of l over src.
func (l *changeLog) bytesOf(src []byte, t txt) []byte {
	if t.arena {
		return l.arena[t.lo:t.hi]
	}
	return src[t.lo:t.hi]
}

// toChanges turns the log into Changes in document order, with Path
// "line:col" of src. The changes are nearly sorted already, so the sort is
// cheap and counting lines is one forward pass.
func toChanges(src []byte, log changeLog) []Change {
	raw := log.raw
	if len(raw) == 0 {
		return nil
	}
	sortSpans(raw)
	// All paths go into one string, and every fragment is a slice of the
	// input or of the arena as one string: a handful of allocations for
	// any number of changes.
	buf := make([]byte, 0, len(raw)*8)
	ends := make([]int, len(raw))
	line, col, pos := 1, 1, 0 // col is the column at pos, counted in runes
	for k, r := range raw {
		if off := min(r.off, len(src)); off > pos {
			seg := src[pos:off]
			if n := bytes.Count(seg, nl); n > 0 {
				line += n
				col = 1 + utf8.RuneCount(seg[bytes.LastIndexByte(seg, '\n')+1:])
			} else {
				col += utf8.RuneCount(seg)
			}
			pos = off
		}
		buf = strconv.AppendInt(buf, int64(line), 10)
		buf = append(buf, ':')
		buf = strconv.AppendInt(buf, int64(col), 10)
		ends[k] = len(buf)
	}
	paths, ss, arena := string(buf), string(src), string(log.arena)
	text := func(t txt) any {
		if t.arena {
			return box(arena[t.lo:t.hi])
		}
		return box(ss[t.lo:t.hi])
	}
	out := make([]Change, len(raw))
	prev := 0
	for k, r := range raw {
		out[k] = Change{Path: paths[prev:ends[k]], Before: text(r.before), After: text(r.after), Fixer: fixNames[r.fixer]}
		prev = ends[k]
	}
	return out
}

// sortSpans orders changes by position, keeping the order of changes at the
// same position. They are recorded almost in order: only an insertion made
// when the next token proves it (a comma, a colon, the closers of a truncated
// document) lands before the comments or garbage read since, so an insertion
// sort does a few shifts per change. A general sort takes over should that
// ever not hold, so the worst case stays O(n log n).
func sortSpans(raw []rawSpan) {
	shifts := 0
	for i := 1; i < len(raw); i++ {
		r := raw[i]
		j := i
		for j > 0 && raw[j-1].off > r.off {
			raw[j] = raw[j-1]
			j--
		}
		raw[j] = r
		if shifts += i - j; shifts > 4*len(raw)+64 {
			slices.SortStableFunc(raw, func(a, b rawSpan) int { return a.off - b.off })
			return
		}
	}
}

// Putting a string into an interface allocates unless the compiler knows the
// string, so the fragments most changes carry are boxed once here: every
// one-byte string, and the few longer ones the common fixes produce.
var (
	boxedByte = func() (t [256]any) {
		for c := range 256 {
			t[c] = string([]byte{byte(c)})
		}
		return t
	}()
	boxedEscQuote  any = `\"`
	boxedEscNL     any = `\n`
	boxedNull      any = "null"
	boxedColonSp   any = `: "`
	boxedColonSpQ  any = `": "`
	boxedSeparator any = "],"
)

func box(s string) any {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return boxedByte[s[0]]
	}
	switch s {
	case `\"`:
		return boxedEscQuote
	case `\n`:
		return boxedEscNL
	case "null":
		return boxedNull
	case `: "`:
		return boxedColonSp
	case `": "`:
		return boxedColonSpQ
	case "],":
		return boxedSeparator
	}
	return s
}

// frag shortens a fragment for a Change, cutting on a rune boundary.
func frag(b []byte) string {
	if len(b) <= fragMax {
		return string(b)
	}
	return fragS(string(b[:fragMax+1]))
}

// fragS is frag for a string, which it returns itself when it is short.
func fragS(s string) string {
	if len(s) <= fragMax {
		return s
	}
	n := fragMax - 3
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
