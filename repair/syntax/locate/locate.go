// Package locate finds where the JSON value starts in a model's text, the
// first step of syntactic repair: past think sections, out of the one code
// fence that holds the answer, or at the first bracket in prose that really
// opens a value, read as leniently as the repairer reads JSON (comments,
// single and typographic quotes, Python literals). Think sections and fences
// are those of package extract, the one reading strict extraction shares,
// so that repair never takes for JSON what extraction took for reasoning or
// code. It also says which stretches around the value are not part of it, so
// that the repairer can report each one it strips; it changes nothing
// itself.
package locate

import (
	"bytes"
	"errors"
	"strings"

	"github.com/contractgateway/gateway/repair/syntax/lex"
	"github.com/contractgateway/gateway/validators/extract"
)

// Sentinel errors of Value, which package syntax returns as its own.
var (
	// ErrNoJSON means the text holds nothing that could start a JSON value.
	ErrNoJSON = errors.New("repair: no JSON value found")
	// ErrMultipleJSON means the text holds two or more ```json blocks (or,
	// without one, two or more plain ``` blocks with JSON in them). Picking
	// one is a decision about content, so syntactic repair leaves it to the
	// caller (the validators report MULTIPLE_JSON_BLOCKS).
	ErrMultipleJSON = errors.New("repair: more than one JSON block")
)

// Kind says what a Strip is.
type Kind uint8

// The kinds of text around a value.
const (
	Prose Kind = iota // text that is neither reasoning nor a fence marker
	Think             // a think section
	Fence             // a fence's opening marker with its tag, or a closing marker
)

// Strip is a stretch of the text around the value, src[Off:End], that is
// not part of it.
type Strip struct {
	Off, End int
	Kind     Kind
}

// mark is a region of the text around the JSON value found while locating
// it: a think section, or a code fence with its info string.
type mark struct {
	think      bool
	off, end   int    // the whole region, fence markers included
	tag        string // fences: the info string, such as "json"
	tagEnd     int    // fences: the end of the opening marker and its tag, where the content starts
	contentEnd int    // fences: where the closing marker starts
}

// Value finds where the JSON value starts in src, looking from lo, the first
// byte that is not white space, following the validators' extraction: think
// sections are skipped; text that starts with a container is taken as it is;
// otherwise the content of the one ```json fence is preferred, then the one
// plain ``` fence holding JSON, then the first '{' or '[' in the prose that
// really opens a value. Think sections and fences are those of package
// extract, the reading strict extraction uses too, so that repair never
// takes for JSON what extraction took for reasoning or code, nor the other
// way round. It returns the start and the stretches before it that repair
// strips, in order, appended to dst (which a caller may keep on its stack).
// wantString lets a string holding a container start the value, for
// unstringify. The errors are ErrNoJSON and ErrMultipleJSON.
func Value(dst []Strip, src []byte, lo int, wantString bool) (start int, before []Strip, err error) {
	thinks := thinkMarks(src, lo)
	var marks []mark
	p := lo
	for len(thinks) > 0 && thinks[0].off <= lex.SkipWS(src, p) {
		marks = append(marks, thinks[0])
		p = lex.SkipWS(src, thinks[0].end)
		thinks = thinks[1:]
	}
	if p >= len(src) {
		return 0, nil, ErrNoJSON // nothing but reasoning, or it never ended
	}
	if startsDoc(src, p, wantString) {
		return p, strips(dst, src, lo, p, marks), nil
	}
	found := scanMarks(src, p, thinks)

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
				at = lex.SkipWS(src[:m.contentEnd], m.tagEnd)
				if at >= m.contentEnd || !startsDoc(src, at, wantString) {
					at = -1
				}
			}
			if at < 0 {
				continue
			}
			if start >= 0 {
				return 0, nil, ErrMultipleJSON
			}
			start, fence = at, k
		}
	}
	if start < 0 {
		start = proseValue(src, p, len(src), found)
	}
	if start < 0 {
		// A lone scalar, such as 'yes' or 42 with a remark after it, or
		// a Python or JavaScript literal (True, None).
		if c := src[p]; c == '"' || c == '-' || c >= '0' && c <= '9' || lex.QuoteKindAt(src, p) != lex.NoQuote || lex.LiteralAt(src, p) {
			start = p
		} else {
			return 0, nil, ErrNoJSON
		}
	}
	for k, m := range found {
		if m.think && m.end <= start || k == fence {
			marks = append(marks, m)
		}
	}
	return start, strips(dst, src, lo, start, marks), nil
}

// startsDoc reports whether a whole document starts at i: a container, or
// with wantString a string whose content starts one ("{\"a\": 1}").
func startsDoc(src []byte, i int, wantString bool) bool {
	switch src[i] {
	case '{', '[':
		return lex.OpensValue(src, i, true)
	case '"':
		if j := lex.SkipWS(src, i+1); wantString && j < len(src) {
			return src[j] == '{' || src[j] == '['
		}
	}
	return false
}

// fenceValue returns where the value starts inside a ```json fence: at its
// first character when that can start a value, else at the first container
// in the fence's text. It returns -1 for a fence without one.
func fenceValue(src []byte, m mark) int {
	at := lex.SkipWS(src[:m.contentEnd], m.tagEnd)
	if at >= m.contentEnd {
		return -1
	}
	c := src[at]
	switch {
	case c == '{' || c == '[':
		if lex.OpensValue(src, at, true) {
			return at
		}
	case c == '"' || c == '-' || c >= '0' && c <= '9' || lex.QuoteKindAt(src, at) != lex.NoQuote:
		return at
	case c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'T' || c == 'F':
		if lex.LiteralAt(src, at) {
			return at
		}
	}
	return proseValue(src, at, m.contentEnd, nil)
}

// isJSONTag reports a fence info string that announces JSON (json, JSON,
// json5, jsonc).
func isJSONTag(tag string) bool {
	return len(tag) >= 4 && strings.EqualFold(tag[:4], "json")
}

// thinkMarks returns the think sections of src[lo:] (extract.ThinkSections)
// as marks.
func thinkMarks(src []byte, lo int) []mark {
	if !bytes.Contains(src[lo:], []byte("think>")) {
		return nil
	}
	var out []mark
	for _, s := range extract.ThinkSections(string(src[lo:])) {
		out = append(out, mark{think: true, off: lo + s.Start, end: lo + s.End})
	}
	return out
}

// scanMarks lists, in order, the think sections at or after p (thinks, as
// thinkMarks found them) and the code fences between them (extract.Fences):
// a fence inside reasoning is not the answer's.
func scanMarks(src []byte, p int, thinks []mark) []mark {
	var out []mark
	fences := func(a, b int) {
		for _, f := range extract.Fences(string(src[a:b])) {
			// The opener stripped is the backticks and the tag, not the
			// line break after them.
			out = append(out, mark{off: a + f.Open, tag: f.Tag, tagEnd: a + f.TagEnd, contentEnd: a + f.End, end: a + f.Close})
		}
	}
	for _, t := range thinks {
		if t.off > p {
			fences(p, t.off)
		}
		out = append(out, t)
		p = max(p, t.end)
	}
	if p < len(src) {
		fences(p, len(src))
	}
	return out
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
		if lex.OpensValue(src, q, false) {
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

// strips appends to out the stretches of src[lo:start] before the value:
// the think sections and the opener of the chosen fence among marks, and
// every stretch of other text, without its surrounding white space, as
// prose.
func strips(out []Strip, src []byte, lo, start int, marks []mark) []Strip {
	pos := lo
	prose := func(a, b int) {
		a = lex.SkipWS(src[:b], a)
		for b > a && lex.IsWS(src[b-1]) {
			b--
		}
		if a < b {
			out = append(out, Strip{a, b, Prose})
		}
	}
	for _, m := range marks {
		if m.off < pos || m.off >= start {
			continue
		}
		prose(pos, m.off)
		end, kind := m.end, Think
		if !m.think {
			end, kind = m.tagEnd, Fence
		}
		if end > start {
			end = start
		}
		out = append(out, Strip{m.off, end, kind})
		pos = end
	}
	prose(pos, start)
	return out
}

// After returns what follows a value that ends at p and is not part of it:
// a closing fence marker, then any prose up to the trailing white space.
// A Strip that is absent is empty (Off == End).
func After(src []byte, p int) (fence, prose Strip) {
	k := lex.SkipWS(src, p)
	if lex.FenceAt(src, k) {
		e := k
		for e < len(src) && src[e] == '`' {
			e++
		}
		fence = Strip{k, e, Fence}
		k = lex.SkipWS(src, e)
	}
	if k < len(src) {
		_, hi := lex.TrimBounds(src[k:])
		prose = Strip{k, k + hi, Prose}
	}
	return fence, prose
}
