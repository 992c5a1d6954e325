// Package syntax turns a model's broken JSON text into strict JSON without
// knowing any contract: it finds the value among think sections, fences and
// prose, fixes each syntax fault where the one linear scan meets it, and
// records every edit as a Change, so that the repair ladder above it can
// report what was changed and why. The only value it ever writes is null
// for a member whose value the model left out.
package syntax

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/contractgateway/gateway/validators/strictjson"
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

// Options tunes Repair to what the contract expects.
type Options struct {
	// ExpectContainer says the contract wants an object or an array, so a
	// whole document delivered as a JSON string ("{\"a\":1}") is unwrapped
	// and repaired. Without it a JSON string is a legitimate value.
	ExpectContainer bool
}

// Result is the outcome of Repair.
type Result struct {
	// Text is the repaired JSON text. When the input needed no change it
	// shares the input's memory (valid input then costs only the strict
	// parse that proves it valid); callers must not modify it. It is strict
	// RFC 8259 JSON, as strictjson.Parse reads it, when Truncated is false,
	// but for duplicate
	// keys, which are no syntax fault.
	Text []byte
	// Changes lists every edit in document order, with Path "line:col" of
	// the input.
	Changes []Change
	// Truncated says the input ended inside a value. Text was closed only so
	// that it parses and shows what is missing; it must never be accepted as
	// valid, since the model did not finish.
	Truncated bool
	// Missing holds the closers appended when Truncated, such as "\"}]}".
	Missing string
	// Lossy says Text would not keep every character of the model's value:
	// letters or digits stood where no token could take them, or the text
	// stripped after the value closes a bracket after words, so the value
	// most likely went on there. Like a truncated one, such a document must
	// never be accepted as valid: local repair refuses it.
	Lossy bool
}

// Sentinel errors of Repair.
var (
	// ErrNoJSON means the text holds nothing that could start a JSON value.
	ErrNoJSON = errors.New("repair: no JSON value found")
	// ErrMultipleJSON means the text holds two or more ```json blocks (or,
	// without one, two or more plain ``` blocks with JSON in them). Picking
	// one is a decision about content, so syntactic repair leaves it to the
	// caller (the validators report MULTIPLE_JSON_BLOCKS).
	ErrMultipleJSON = errors.New("repair: more than one JSON block")
	// ErrTooDeep means containers are nested deeper than maxDepth, which no
	// contract needs and encoding/json refuses.
	ErrTooDeep = errors.New("repair: JSON nested too deeply")
)

// maxDepth is the nesting limit of encoding/json's scanner; output deeper than
// this could not be parsed by the rest of the pipeline anyway.
const maxDepth = 10000

var nl = []byte{'\n'}

// fragMax bounds the Before and After fragments of changes that remove or
// wrap whole regions (prose, think sections, a stringified document), so a
// report stays readable when a model wrote pages of reasoning.
const fragMax = 80

// Repair turns a model's text into strict JSON in one linear pass: it
// finds the JSON value (stripping think sections, fences and prose), then
// tokenizes it once, fixing each fault where it is met, and records every
// edit as a Change. It does not invent content: the only value it ever
// writes is null for a member whose value the model left out
// (missing_value), and when the input ends inside a value it closes the text
// only to say what is missing and sets Truncated. Duplicate keys are no
// syntax fault and are left to the strict parse that follows.
//
// Text that is already valid JSON (after trimming surrounding whitespace)
// comes back byte for byte, with no changes. Time and memory are linear in
// the size of text whatever its content. The errors are ErrNoJSON,
// ErrMultipleJSON and ErrTooDeep.
func Repair(text []byte, opt Options) (Result, error) {
	run, err := repairDoc(text, opt, true)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Text:      run.text,
		Changes:   toChanges(text, run.log),
		Truncated: run.truncated,
		Missing:   run.missing,
		Lossy:     run.lossy,
	}, nil
}

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

// bytesOf returns the bytes of t, a fragment of l over src.
func (l *changeLog) bytesOf(src []byte, t txt) []byte {
	if t.arena {
		return l.arena[t.lo:t.hi]
	}
	return src[t.lo:t.hi]
}

// docRun is the outcome of repairing one document, positions still as byte
// offsets of the text it was given.
type docRun struct {
	text      []byte
	log       changeLog
	truncated bool
	missing   string
	lossy     bool
}

// repairDoc repairs src. unwrap allows one level of unstringify; the
// unwrapped document is repaired without it, so that recursion stops there.
func repairDoc(src []byte, opt Options, unwrap bool) (docRun, error) {
	lo, hi := trimBounds(src)
	if lo == hi {
		return docRun{}, ErrNoJSON
	}
	t := src[lo:hi]
	wantString := unwrap && opt.ExpectContainer
	if !(wantString && t[0] == '"') && validJSON(t) {
		return docRun{text: t}, nil
	}
	var log changeLog
	start, err := locate(src, lo, wantString, &log)
	if err != nil {
		return docRun{}, err
	}
	if wantString && src[start] == '"' {
		if run, ok, err := unstringify(src, start, log); ok {
			return run, err
		}
	}
	s := scanner{src: src, i: start, lastBad: -1, changeLog: log}
	s.out = make([]byte, 0, len(src)-start+len(src)/16+16)
	s.raw = slices.Grow(s.raw, len(src)/64)
	if err := s.run(); err != nil {
		return docRun{}, err
	}
	suffixSpans(src, s.stop, &s.changeLog)
	lossy := s.lossy || valueGoesOn(src[s.stop:])
	return docRun{text: s.out, log: s.changeLog, truncated: s.truncated, missing: s.missing, lossy: lossy}, nil
}

// validJSON is the fast path's test: the pipeline's strict parse itself,
// so that valid input costs what the pipeline's own parse costs (measured
// faster than encoding/json.Valid plus a UTF-8 check, which it also
// replaces: encoding/json accepts invalid UTF-8 inside strings). A document
// it refuses only for a duplicate key goes through the scanner, which
// leaves syntactically valid JSON untouched, so the result is the same.
func validJSON(t []byte) bool {
	return strictjson.Valid(t)
}

// unstringify handles a document that a model returned as one JSON string
// ("{\"a\": 1}"), which happens when a client library serialises twice. When
// the string's content starts an object or an array, that content is repaired
// (once, without unwrapping again) and becomes the result; ok is false when the
// string holds something else and is to be treated as a plain value.
func unstringify(src []byte, start int, log changeLog) (run docRun, ok bool, err error) {
	dec, offs, end := decodeString(src, start)
	lo, hi := trimBounds(dec)
	if lo == hi || (dec[lo] != '{' && dec[lo] != '[') {
		return docRun{}, false, nil
	}
	inner, err := repairDoc(dec, Options{}, false)
	if err != nil {
		return docRun{}, true, err
	}
	log.add(start, end, fxUnstringify, log.fragOf(src, start, end), log.lit(frag(inner.text)))
	for _, r := range inner.log.raw {
		r.off, r.end = offs[r.off], offs[r.end]
		r.before = log.litB(inner.log.bytesOf(dec, r.before))
		r.after = log.litB(inner.log.bytesOf(dec, r.after))
		log.raw = append(log.raw, r)
	}
	suffixSpans(src, end, &log)
	return docRun{text: inner.text, log: log, truncated: inner.truncated, missing: inner.missing, lossy: inner.lossy}, true, nil
}

// decodeString decodes the JSON string whose opening quote is at start,
// tolerating what a model gets wrong: escapes it does not know are kept as
// written, so that the inner repair sees and fixes them. offs maps every byte
// of dec (and len(dec)) to the input offset it came from, so that the inner
// repair's changes point into the input. end is the offset after the closing
// quote, or len(src) when there is none.
func decodeString(src []byte, start int) (dec []byte, offs []int, end int) {
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
			if r, n := decodeU(src[i:]); n > 0 {
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

// decodeU decodes a \uXXXX escape (joining a surrogate pair) at the start of
// b and returns the rune and the bytes used, or n == 0 when b does not start
// with a complete one. A lone surrogate becomes U+FFFD.
func decodeU(b []byte) (r rune, n int) {
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

// isWS reports JSON whitespace (RFC 8259 §2).
func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the offset of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// trimBounds returns the bounds of b without surrounding JSON whitespace.
func trimBounds(b []byte) (lo, hi int) {
	lo, hi = 0, len(b)
	for lo < hi && isWS(b[lo]) {
		lo++
	}
	for hi > lo && isWS(b[hi-1]) {
		hi--
	}
	return lo, hi
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
