package syntax

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

var (
	thinkOpen  = []byte("<think>")
	thinkClose = []byte("</think>")
	fenceMark  = []byte("```")
)

// mark is a region of the text around the JSON value found while locating
// it: a think section, or a code fence with its info string.
type mark struct {
	think      bool
	off, end   int    // the whole region, fence markers included
	tag        []byte // fences: the info string, such as "json"
	tagEnd     int    // fences: the end of the opening marker and its tag, where the content starts
	contentEnd int    // fences: where the closing marker starts
}

// locate finds where the JSON value starts, following SPEC §2: think
// sections are skipped; text that starts with a container is taken as it is;
// otherwise the content of the one ```json fence is preferred, then the one
// plain ``` fence holding JSON, then the first '{' or '[' in the prose that
// really opens a value. It returns the start and records in log the changes
// that strip what lies before it. wantString lets a string holding a
// container start the value, for unstringify.
func locate(src []byte, lo int, wantString bool, log *changeLog) (int, error) {
	var marks []mark
	p := lo
	for bytes.HasPrefix(src[p:], thinkOpen) {
		k := bytes.Index(src[p+len(thinkOpen):], thinkClose)
		if k < 0 {
			return 0, ErrNoJSON // the model never left its reasoning
		}
		e := p + len(thinkOpen) + k + len(thinkClose)
		marks = append(marks, mark{think: true, off: p, end: e})
		p = skipWS(src, e)
	}
	if p >= len(src) {
		return 0, ErrNoJSON
	}
	if startsDoc(src, p, wantString) {
		prefixSpans(src, lo, p, marks, log)
		return p, nil
	}
	// Some chat templates put the opening tag into the prompt, so the output
	// starts with reasoning and a lone closing tag. It counts only before
	// any fence, so that a tag quoted inside the JSON is left alone.
	if k := bytes.Index(src[p:], thinkClose); k >= 0 &&
		!bytes.Contains(src[p:p+k], thinkOpen) && !bytes.Contains(src[p:p+k], fenceMark) {
		e := p + k + len(thinkClose)
		marks = append(marks, mark{think: true, off: p, end: e})
		p = skipWS(src, e)
		if p >= len(src) {
			return 0, ErrNoJSON
		}
		if startsDoc(src, p, wantString) {
			prefixSpans(src, lo, p, marks, log)
			return p, nil
		}
	}
	found := scanMarks(src, p)

	// Fences: the ```json ones first, then plain ones holding a container.
	start, fence := -1, -1
	for pass := 0; pass < 2 && start < 0; pass++ {
		for k, m := range found {
			if m.think {
				continue
			}
			var at int
			if pass == 0 {
				if !isJSONTag(m.tag) {
					continue
				}
				at = fenceValue(src, m)
			} else {
				if len(m.tag) != 0 {
					continue
				}
				at = skipWS(src[:m.contentEnd], m.tagEnd)
				if at >= m.contentEnd || !startsDoc(src, at, wantString) {
					at = -1
				}
			}
			if at < 0 {
				continue
			}
			if start >= 0 {
				return 0, ErrMultipleJSON
			}
			start, fence = at, k
		}
	}
	if start < 0 {
		start = proseValue(src, p, len(src), found)
	}
	if start < 0 {
		// A lone scalar, such as 'yes' or 42 with a remark after it.
		if c := src[p]; c == '"' || c == '-' || c >= '0' && c <= '9' || quoteKindAt(src, p) != qNone {
			start = p
		} else {
			return 0, ErrNoJSON
		}
	}
	for k, m := range found {
		if m.think && m.end <= start || k == fence {
			marks = append(marks, m)
		}
	}
	prefixSpans(src, lo, start, marks, log)
	return start, nil
}

// startsDoc reports whether a whole document starts at i: a container, or
// with wantString a string whose content starts one ("{\"a\": 1}").
func startsDoc(src []byte, i int, wantString bool) bool {
	switch src[i] {
	case '{', '[':
		return opensValue(src, i, true)
	case '"':
		if j := skipWS(src, i+1); wantString && j < len(src) {
			return src[j] == '{' || src[j] == '['
		}
	}
	return false
}

// fenceValue returns where the value starts inside a ```json fence: at its
// first character when that can start a value, else at the first container
// in the fence's text. It returns -1 for a fence without one.
func fenceValue(src []byte, m mark) int {
	at := skipWS(src[:m.contentEnd], m.tagEnd)
	if at >= m.contentEnd {
		return -1
	}
	c := src[at]
	switch {
	case c == '{' || c == '[':
		if opensValue(src, at, true) {
			return at
		}
	case c == '"' || c == '-' || c >= '0' && c <= '9' || quoteKindAt(src, at) != qNone:
		return at
	case c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'T' || c == 'F':
		if literalAt(src, at) {
			return at
		}
	}
	return proseValue(src, at, m.contentEnd, nil)
}

// isJSONTag reports a fence info string that announces JSON (json, JSON,
// json5, jsonc).
func isJSONTag(tag []byte) bool {
	return len(tag) >= 4 && bytes.EqualFold(tag[:4], []byte("json"))
}

// scanMarks lists the think sections and code fences from p on, in order. A
// fence closes at the next ``` wherever it is, as models write one-line
// fences; an unclosed fence or think section runs to the end of the text.
func scanMarks(src []byte, p int) []mark {
	var out []mark
	n := len(src)
	for p < n {
		k := bytes.IndexAny(src[p:], "`<")
		if k < 0 {
			break
		}
		p += k
		if src[p] == '<' {
			if !bytes.HasPrefix(src[p:], thinkOpen) {
				p++
				continue
			}
			e := bytes.Index(src[p+len(thinkOpen):], thinkClose)
			if e < 0 {
				out = append(out, mark{think: true, off: p, end: n})
				break
			}
			end := p + len(thinkOpen) + e + len(thinkClose)
			out = append(out, mark{think: true, off: p, end: end})
			p = end
			continue
		}
		if !bytes.HasPrefix(src[p:], fenceMark) {
			p++
			continue
		}
		t := p
		for t < n && src[t] == '`' {
			t++
		}
		tagStart := t
		for t < n && isTagChar(src[t]) {
			t++
		}
		m := mark{off: p, tagEnd: t, tag: src[tagStart:t], contentEnd: n, end: n}
		if c := bytes.Index(src[t:], fenceMark); c >= 0 {
			m.contentEnd = t + c
			e := m.contentEnd
			for e < n && src[e] == '`' {
				e++
			}
			m.end = e
		}
		out = append(out, m)
		p = m.end
	}
	return out
}

func isTagChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '-' || c == '.'
}

// proseValue returns the first '{' or '[' in src[p:end] that opens a value,
// skipping think sections and fences tagged with another language (a Python
// dict in a ```python block is not the answer). It returns -1 when there is
// none.
func proseValue(src []byte, p, end int, marks []mark) int {
	mi := 0
	for p < end {
		for mi < len(marks) && (marks[mi].end <= p || !skipped(marks[mi])) {
			mi++
		}
		limit := end
		if mi < len(marks) && marks[mi].off < limit {
			limit = marks[mi].off
		}
		if p >= limit {
			p = marks[mi].end
			continue
		}
		k := bytes.IndexAny(src[p:limit], "{[")
		if k < 0 {
			if limit == end {
				return -1
			}
			p = marks[mi].end
			continue
		}
		q := p + k
		if opensValue(src, q, false) {
			return q
		}
		p = q + 1
	}
	return -1
}

// skipped reports a mark whose content is never the answer.
func skipped(m mark) bool {
	return m.think || len(m.tag) != 0 && !isJSONTag(m.tag)
}

// opensValue reports whether the '{' or '[' at i opens a JSON value rather
// than being prose like "{name}" or "[1]". At the very start of the text
// (atStart) any '{' counts, and so does an array of scalars.
func opensValue(src []byte, i int, atStart bool) bool {
	j := skipWS(src, i+1)
	if j >= len(src) {
		return true // the output ended right after the bracket
	}
	c := src[j]
	if c == '/' && j+1 < len(src) && (src[j+1] == '/' || src[j+1] == '*') {
		return true
	}
	if quoteKindAt(src, j) != qNone {
		return true
	}
	if src[i] == '{' {
		if c == '}' || atStart {
			return true
		}
		k := j
		for k < len(src) {
			if src[k] < utf8.RuneSelf {
				if !isIdent(src[k]) && src[k] != '-' {
					break
				}
				k++
				continue
			}
			r, n := utf8.DecodeRune(src[k:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			k += n
		}
		if k == j {
			return false
		}
		k = skipWS(src, k)
		return k >= len(src) || src[k] == ':'
	}
	switch {
	case c == '{' || c == '[' || c == ']' || literalAt(src, j):
		return true
	case atStart:
		// Only a word can make a leading '[' prose: "[Note]", "[link](…)".
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf && isLetterAt(src, j))
	case c == '-' || c >= '0' && c <= '9':
		// A number list, but not a citation like [1] or [2][3].
		k := j + 1
		for k < len(src) && (isDigit(src[k]) || src[k] == '.' || src[k] == 'e' || src[k] == 'E' || src[k] == '+' || src[k] == '-') {
			k++
		}
		k = skipWS(src, k)
		return k < len(src) && src[k] == ','
	}
	return false
}

// literalAt reports a JSON or Python literal word at i.
func literalAt(src []byte, i int) bool {
	k := i
	for k < len(src) && isIdent(src[k]) {
		k++
	}
	return k > i && literalFor(src[i:k]) != ""
}

// prefixSpans records the stripping of src[lo:start]: the think sections and
// the opener of the chosen fence among marks, and every stretch of other text
// as prose.
func prefixSpans(src []byte, lo, start int, marks []mark, log *changeLog) {
	pos := lo
	prose := func(a, b int) {
		a = skipWS(src[:b], a)
		for b > a && isWS(src[b-1]) {
			b--
		}
		if a < b {
			log.add(a, b, fxStripProse, log.fragOf(src, a, b), txt{})
		}
	}
	for _, m := range marks {
		if m.off < pos || m.off >= start {
			continue
		}
		prose(pos, m.off)
		end := m.end
		fixer := fxStripThink
		if !m.think {
			end, fixer = m.tagEnd, fxStripFence
		}
		if end > start {
			end = start
		}
		log.add(m.off, end, fixer, log.fragOf(src, m.off, end), txt{})
		pos = end
	}
	prose(pos, start)
}

// suffixSpans records the stripping of what follows the value at p: a
// closing fence, then any prose.
func suffixSpans(src []byte, p int, log *changeLog) {
	k := skipWS(src, p)
	if bytes.HasPrefix(src[k:], fenceMark) {
		e := k
		for e < len(src) && src[e] == '`' {
			e++
		}
		log.add(k, e, fxStripFence, log.fragOf(src, k, e), txt{})
		k = skipWS(src, e)
	}
	if k < len(src) {
		_, hi := trimBounds(src[k:])
		log.add(k, k+hi, fxStripProse, log.fragOf(src, k, k+hi), txt{})
	}
}
