package extract

import (
	"strings"
	"unicode"
)

// Fence is one fenced code block of a text.
type Fence struct {
	// Tag is the first word of the info string ("json", "python"), or ""
	// for a block without one.
	Tag string
	// Open is where the opening backticks start.
	Open int
	// TagEnd is where the opener ends: after the backticks and the tag, if
	// any, so that text[Open:TagEnd] is what a caller strips as the fence
	// line without touching the content or the line break after it.
	TagEnd int
	// Start and End bound the block's content, text[Start:End]: after the
	// info string's line (or after the tag, for a block that opens and
	// closes on one line) up to the closing fence's line.
	Start, End int
	// Close is where the block ends, its closing fence included, and where
	// the next block is looked for; len(text) for a block that never
	// closes.
	Close int
}

// Fences lists the fenced blocks of text, in order. They follow Markdown
// closely enough for model output:
//
//   - An opening fence is three or more backticks at the start of a line
//     (indentation allowed). Its tag is the first word after the backticks.
//     Models also write "Here it is: ```json" mid-line, so a fence tagged
//     json (in any case) alone opens a block anywhere in a line.
//   - The block closes at the next line that holds only backticks, at least
//     as many as opened it. A fence inside a JSON string is never on a line
//     of its own (strings hold no raw line breaks), so code in MCQ
//     questions does not close the block, where "the next ``` anywhere"
//     would cut the document in two.
//   - A block that never closes (truncated output) runs to the end of the
//     text, without a trailing "```" glued to its last line.
//   - A block may open and close on one line (```json {"a":1}```); one whose
//     content starts with '{' or '[' right after the backticks has no tag.
func Fences(text string) []Fence {
	var out []Fence
	sc := scanner{text: text}
	for sc.pos < len(text) {
		f, ok := sc.next()
		if !ok {
			break
		}
		out = append(out, f)
		sc.pos = f.Close
	}
	return out
}

// scanner walks text from pos, block by block.
type scanner struct {
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
func (sc *scanner) endOfLine(i int) int {
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
func (sc *scanner) next() (Fence, bool) {
	text, pos := sc.text, sc.pos
	for pos < len(text) {
		i := strings.Index(text[pos:], FenceMarker)
		if i < 0 {
			return Fence{}, false
		}
		i += pos
		n := 3
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		infoEnd := sc.endOfLine(i + n)
		info := text[i+n : infoEnd]
		if k := strings.Index(info, FenceMarker); k >= 0 {
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
			return Fence{Tag: tag, Open: i, TagEnd: tagEnd(i+n, tag, rest), Start: i + n + rest, End: i + n + k, Close: after}, true
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
			if strings.HasSuffix(t, FenceMarker) {
				end = start + len(strings.TrimRight(t, "`"))
			}
		}
		return Fence{Tag: tag, Open: i, TagEnd: tagEnd(i+n, tag, rest), Start: start, End: end, Close: next}, true
	}
	return Fence{}, false
}

// tagEnd returns where an opener ends whose backticks end at ticks and
// whose info string splitTag read as tag, ending at ticks+rest.
func tagEnd(ticks int, tag string, rest int) int {
	if tag == "" {
		return ticks
	}
	return ticks + rest
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
