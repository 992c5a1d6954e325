package validators

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/contractgateway/gateway/strictjson"
)

// The sources of an Extraction, in the order Extract prefers them.
const (
	SourceFenceJSON  = "fence-json"  // a ```json block
	SourceFencePlain = "fence-plain" // a ``` block without a language tag
	SourceBare       = "bare"        // the whole trimmed text
)

// Extraction is the text of the one JSON value found in a model's output.
type Extraction struct {
	// Text is the candidate JSON text with surrounding whitespace removed.
	// It has not been parsed: it may still be broken JSON.
	Text string
	// Offset is the byte offset of Text in the think-stripped text (the
	// output of StripThink), so StripThink(raw)[Offset:Offset+len(Text)]
	// is Text.
	Offset int
	// Source says where Text was found: SourceFenceJSON, SourceFencePlain
	// or SourceBare.
	Source string
}

// The hint of both extraction violations: the one instruction that fixes
// either of them, phrased for the model that produced the output.
const extractHint = "Return exactly one ```json code block containing the whole JSON document."

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// StripThink removes the reasoning sections that thinking models write into
// their text (SPEC §2). Three forms occur in practice and all are removed:
//
//   - "<think>…</think>": the section, tags included.
//   - "<think>…" never closed (output cut off while thinking): from the tag
//     to the end of the text.
//   - "…</think>" with no opening tag, because the chat template already
//     put "<think>" into the prompt: everything up to and including the
//     first "</think>".
//
// An opening tag counts only at the start of a line (after optional spaces
// or tabs) and an orphan closing tag only at the end of a line. JSON strings
// hold no raw line breaks, so a "<think>" quoted inside a JSON document (a
// question about HTML tags, say) is never taken for a section. Tags are
// matched case-sensitively, as models emit them. Text without a section is
// returned unchanged.
func StripThink(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	firstOpen := nextThinkOpen(text, 0)
	if c := orphanClose(text, firstOpen); c >= 0 {
		text = text[c+len(thinkClose):]
		firstOpen = nextThinkOpen(text, 0)
	}
	if firstOpen < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for open := firstOpen; open >= 0; open = nextThinkOpen(text, pos) {
		b.WriteString(text[pos:open])
		end := strings.Index(text[open+len(thinkOpen):], thinkClose)
		if end < 0 {
			return b.String()
		}
		pos = open + len(thinkOpen) + end + len(thinkClose)
	}
	b.WriteString(text[pos:])
	return b.String()
}

// orphanClose returns the offset of the first "</think>" that ends a line
// and comes before the first opening tag at firstOpen (-1: none), or -1.
func orphanClose(text string, firstOpen int) int {
	limit := len(text)
	if firstOpen >= 0 {
		limit = firstOpen
	}
	for from := 0; from < limit; {
		i := strings.Index(text[from:limit], thinkClose)
		if i < 0 {
			return -1
		}
		i += from
		if atLineEnd(text, i+len(thinkClose)) {
			return i
		}
		from = i + len(thinkClose)
	}
	return -1
}

// nextThinkOpen returns the offset of the first "<think>" at or after from
// that starts a line, or -1.
func nextThinkOpen(text string, from int) int {
	for from < len(text) {
		i := strings.Index(text[from:], thinkOpen)
		if i < 0 {
			return -1
		}
		i += from
		if atLineStart(text, i) {
			return i
		}
		from = i + len(thinkOpen)
	}
	return -1
}

// atLineStart reports whether only spaces or tabs stand between the start
// of i's line and i. A byte order mark at the start of the text counts as
// the start of the first line.
func atLineStart(text string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch text[j] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		}
		return j == len(byteOrderMark)-1 && strings.HasPrefix(text, byteOrderMark)
	}
	return true
}

// atLineEnd reports whether only spaces, tabs or '\r' stand between i and
// the end of its line.
func atLineEnd(text string, i int) bool {
	for ; i < len(text); i++ {
		switch text[i] {
		case ' ', '\t', '\r':
			continue
		case '\n':
			return true
		}
		return false
	}
	return true
}

// Candidates lists the places in text where a JSON value may be: the
// ```json blocks, the ``` blocks without a language tag, and the bare
// candidate. Extract calls it on think-stripped text, and Offsets are
// relative to the text given.
//
// Fences follow Markdown closely enough for model output:
//
//   - An opening fence is three or more backticks at the start of a line
//     (indentation allowed). Its tag is the first word after the backticks;
//     "json" matches in any case and may be followed by spaces or further
//     words. Models also write "Here it is: ```json" mid-line, so a fence
//     tagged json alone opens a block anywhere in a line.
//   - The block closes at the next line that holds only backticks, at least
//     as many as opened it. A fence inside a JSON string is never on a line
//     of its own (strings hold no raw line breaks), so code in MCQ
//     questions does not close the block.
//   - A block that never closes (truncated output) runs to the end of the
//     text, without a trailing "```" glued to its last line.
//   - A block may open and close on one line (```json {"a":1}```).
//   - Blocks with any other tag (```python, ```jsonc) are skipped whole, so
//     nothing inside them counts.
//
// The bare candidate is the whole trimmed text when it starts with '{' or
// '[' or when it strictly parses as one JSON value (a scalar from Ollama's
// format mode); nil otherwise. A leading byte order mark is looked past
// and kept in the candidate, so that strict parsing reports it.
func Candidates(text string) (json []Extraction, plain []Extraction, bare *Extraction) {
	sc := fenceScanner{text: text}
	for sc.pos < len(text) {
		f, ok := sc.next()
		if !ok {
			break
		}
		sc.pos = f.next
		ex := trimmed(text, f.start, f.end)
		switch {
		case strings.EqualFold(f.tag, "json"):
			ex.Source = SourceFenceJSON
			json = append(json, ex)
		case f.tag == "":
			ex.Source = SourceFencePlain
			plain = append(plain, ex)
		}
	}
	if ex := trimmed(text, 0, len(text)); ex.Text != "" {
		// A byte order mark (a file saved by an editor) stays part of the
		// candidate, so that the strict parser names it, but it does not
		// hide the value behind it.
		body := strings.TrimLeftFunc(strings.TrimPrefix(ex.Text, byteOrderMark), unicode.IsSpace)
		if body != "" {
			c := body[0]
			if c == '{' || c == '[' || (mayStartScalar(c) && validJSON(body)) {
				ex.Source = SourceBare
				bare = &ex
			}
		}
	}
	return json, plain, bare
}

// byteOrderMark is U+FEFF in UTF-8.
const byteOrderMark = "\uFEFF"

func mayStartScalar(c byte) bool {
	return c == '"' || c == '-' || c == 't' || c == 'f' || c == 'n' || (c >= '0' && c <= '9')
}

func validJSON(s string) bool {
	_, err := strictjson.Parse([]byte(s))
	return err == nil
}

// fence is one fenced block: its content is text[start:end], its tag the
// first word of the info string, and scanning resumes at next.
type fence struct {
	tag        string
	start, end int
	next       int
}

// fenceScanner walks text from pos, block by block.
type fenceScanner struct {
	text string
	pos  int
	// The first '\n' at or after lineFrom is at lineEnd (len(text) if
	// none). Many single-line fences on one long line would otherwise
	// search for the same line end again and again.
	lineFrom, lineEnd int
	lineKnown         bool
}

// endOfLine returns the offset of the first '\n' at or after i, or
// len(text).
func (sc *fenceScanner) endOfLine(i int) int {
	if sc.lineKnown && sc.lineFrom <= i && i <= sc.lineEnd {
		return sc.lineEnd
	}
	end := len(sc.text)
	if j := strings.IndexByte(sc.text[i:], '\n'); j >= 0 {
		end = i + j
	}
	sc.lineFrom, sc.lineEnd, sc.lineKnown = i, end, true
	return end
}

// next finds the first block whose opening fence starts at or after pos.
func (sc *fenceScanner) next() (fence, bool) {
	text, pos := sc.text, sc.pos
	for pos < len(text) {
		i := strings.Index(text[pos:], "```")
		if i < 0 {
			return fence{}, false
		}
		i += pos
		n := 3
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		infoEnd := sc.endOfLine(i + n)
		info := text[i+n : infoEnd]
		if k := strings.Index(info, "```"); k >= 0 {
			// The block closes on the line it opens.
			body := info[:k]
			after := i + n + k
			for after < infoEnd && text[after] == '`' {
				after++
			}
			tag, rest := splitTag(body)
			if t := strings.TrimSpace(body); t != "" && (t[0] == '{' || t[0] == '[') {
				tag, rest = "", 0
			}
			return fence{tag: tag, start: i + n + rest, end: i + n + k, next: after}, true
		}
		tag, rest := splitTag(info)
		if !atLineStart(text, i) && !(strings.EqualFold(tag, "json") && strings.TrimSpace(info[rest:]) == "") {
			pos = i + n
			continue
		}
		start := min(infoEnd+1, len(text))
		end, next := closingFence(text, start, n)
		if next == len(text) && end == len(text) {
			// Unclosed: drop a closing fence glued to the last line.
			t := strings.TrimRightFunc(text[start:end], unicode.IsSpace)
			if strings.HasSuffix(t, "```") {
				end = start + len(strings.TrimRight(t, "`"))
			}
		}
		return fence{tag: tag, start: start, end: end, next: next}, true
	}
	return fence{}, false
}

// splitTag returns the first word of a fence's info string and the offset
// in info just after it.
func splitTag(info string) (tag string, rest int) {
	i := 0
	for i < len(info) && (info[i] == ' ' || info[i] == '\t') {
		i++
	}
	j := i
	for j < len(info) && info[j] != ' ' && info[j] != '\t' && info[j] != '\r' && info[j] != '\n' {
		j++
	}
	return info[i:j], j
}

// closingFence finds the first line at or after start that holds at least n
// backticks and nothing else but whitespace. It returns where the block's
// content ends (the start of that line) and where scanning resumes (the end
// of that line); both are len(text) when the block never closes.
func closingFence(text string, start, n int) (end, next int) {
	for ls := start; ls < len(text); {
		le := len(text)
		if j := strings.IndexByte(text[ls:], '\n'); j >= 0 {
			le = ls + j
		}
		line := strings.TrimLeft(text[ls:le], " \t")
		k := 0
		for k < len(line) && line[k] == '`' {
			k++
		}
		if k >= n && strings.TrimSpace(line[k:]) == "" {
			return ls, le
		}
		ls = le + 1
	}
	return len(text), len(text)
}

// trimmed returns text[start:end] without surrounding white space, with its
// offset in text.
func trimmed(text string, start, end int) Extraction {
	s := text[start:end]
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	off := start + len(s) - len(t)
	t = strings.TrimRightFunc(t, unicode.IsSpace)
	return Extraction{Text: t, Offset: off}
}

// Extract finds the one JSON value in a model's output (SPEC §2): think
// sections are removed first; then one ```json block is taken, else one
// ``` block without a tag, else the bare text. Two or more ```json blocks,
// or two or more plain blocks when there is no ```json block, are
// MULTIPLE_JSON_BLOCKS; nothing at all is NO_JSON_BLOCK. On a violation the
// returned Extraction is the zero value.
func Extract(text string) (Extraction, *Violation) {
	js, plain, bare := Candidates(StripThink(text))
	switch {
	case len(js) == 1:
		return js[0], nil
	case len(js) > 1:
		return Extraction{}, multipleBlocks(len(js), "```json")
	case len(plain) == 1:
		return plain[0], nil
	case len(plain) > 1:
		return Extraction{}, multipleBlocks(len(plain), "```")
	case bare != nil:
		return *bare, nil
	}
	return Extraction{}, &Violation{
		Class:    ClassParse,
		Code:     "NO_JSON_BLOCK",
		Severity: SeverityError,
		Expected: 1,
		Actual:   0,
		Hint:     extractHint,
	}
}

func multipleBlocks(n int, fence string) *Violation {
	return &Violation{
		Class:    ClassParse,
		Code:     "MULTIPLE_JSON_BLOCKS",
		Severity: SeverityError,
		Expected: 1,
		Actual:   n,
		Hint: "Return exactly one ```json code block containing the whole JSON document, not " +
			strconv.Itoa(n) + " " + fence + " blocks.",
	}
}
