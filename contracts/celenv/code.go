package celenv

import (
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/contractgateway/gateway/internal/codeline"
)

// codeScan is what scanCode finds in a text: its fenced code blocks, its
// lines outside them and the text with every block's code lines
// numbered.
type codeScan struct {
	blocks []codeBlock
	// unfenced are the text's lines (split at "\n"); a line that opens
	// or closes a fence, lies inside one or holds inline code is "".
	unfenced []string
	// numbered is the text with the code lines of every block numbered
	// "1: ", "2: ", ….
	numbered string
}

// codeBlock is one fenced code block: the language after its opening
// ``` (the first word, "" for none), its code lines (without blank lines
// before the first and after the last) and whether a fence closes it.
// Inline code (```x``` within a line) is a block too, marked inline,
// with the text between the first two fences as its one line.
type codeBlock struct {
	lang   string
	lines  []string
	closed bool
	inline bool
}

// scanCode reads the fenced code blocks of a text the way Markdown
// writers use them in JSON strings: a line with ``` opens a block (one
// with a second ``` after the first is inline code and opens nothing),
// the next line that starts with ``` (after blanks) closes it, and a ```
// inside a code line ends the line's code and the block.
func scanCode(s string) codeScan {
	lines := strings.Split(s, "\n")
	res := codeScan{unfenced: make([]string, len(lines)), numbered: s}
	var out []string
	var body []codeline.Line
	var cur codeBlock
	inFence := false
	finish := func(closed bool) {
		cur.closed = closed
		out = numberBody(lines, out, body, &cur)
		res.blocks = append(res.blocks, cur)
		inFence = false
	}
	for i, ln := range lines {
		if !inFence {
			idx := strings.Index(ln, "```")
			if idx < 0 {
				res.unfenced[i] = ln
				continue
			}
			if j := strings.Index(ln[idx+3:], "```"); j >= 0 {
				res.blocks = append(res.blocks, codeBlock{lines: []string{ln[idx+3 : idx+3+j]}, closed: true, inline: true})
				continue
			}
			lang, _, _ := strings.Cut(strings.TrimSpace(ln[idx+3:]), " ")
			cur, body, inFence = codeBlock{lang: lang}, body[:0], true
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(ln, " \t"), "```") {
			finish(true)
			continue
		}
		end := len(ln)
		if idx := strings.Index(ln, "```"); idx >= 0 {
			end = idx
			body = append(body, codeline.Line{Line: i, End: end})
			finish(true)
			continue
		}
		body = append(body, codeline.Line{Line: i, End: end})
	}
	if inFence {
		finish(false)
	}
	if out != nil {
		res.numbered = strings.Join(out, "\n")
	}
	return res
}

// numberBody records the code lines of one block in b and writes them
// numbered into out (a copy of lines made on the first change).
func numberBody(lines, out []string, body []codeline.Line, b *codeBlock) []string {
	body = codeline.Trim(lines, body)
	b.lines = make([]string, 0, len(body))
	for _, x := range body {
		b.lines = append(b.lines, lines[x.Line][:x.End])
	}
	return codeline.Number(lines, out, body, nil)
}

// hasCode reports whether s can hold a code block or code lines at all:
// a text of one line without ``` holds neither, and costs no scan.
func hasCode(s string) bool {
	return strings.Contains(s, "\n") || strings.Contains(s, "```")
}

// StringCodeBlocks is codeBlocks(): the code blocks of a string, each a
// map {"lang": string, "lines": list of strings, "code": the lines
// joined by "\n", "closed": bool, "inline": bool}.
func StringCodeBlocks(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	if !hasCode(string(s)) {
		return types.NewDynamicList(types.DefaultTypeAdapter, []any{})
	}
	scan := scanCode(string(s))
	out := make([]any, len(scan.blocks))
	for i, b := range scan.blocks {
		out[i] = map[string]any{"lang": b.lang, "lines": b.lines, "code": strings.Join(b.lines, "\n"), "closed": b.closed, "inline": b.inline}
	}
	return types.NewDynamicList(types.DefaultTypeAdapter, out)
}

// StringUnfencedText is unfencedText(): the string with the lines of its
// code blocks (fences, code lines and lines with inline code) blank, so
// that a rule can look for code written outside a block, line by line
// with (?m) regular expressions.
func StringUnfencedText(v ref.Val) ref.Val {
	return codeString(v, func(scan codeScan) string { return strings.Join(scan.unfenced, "\n") })
}

// StringNumberCodeLines is numberCodeLines(): the string with the code
// lines of each fenced block numbered "1: ", "2: ", … (a number the line
// already has, "3:", "3." or "3)", is replaced).
func StringNumberCodeLines(v ref.Val) ref.Val {
	return codeString(v, func(scan codeScan) string { return scan.numbered })
}

// codeString is a string function of a string's code blocks, of: a
// string without code is its own result, and costs no scan.
func codeString(v ref.Val, of func(codeScan) string) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	if !hasCode(string(s)) {
		return s
	}
	return types.String(of(scanCode(string(s))))
}

// ListNumberCodeLines is numberCodeLines() of a list: each string of the
// list with its code lines numbered, other elements as they are. A list
// whose strings need no change is returned itself, so that comparing it
// with the original costs nothing.
func ListNumberCodeLines(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	var out []ref.Val
	size, _ := l.Size().(types.Int)
	for i := types.Int(0); i < size; i++ {
		x := l.Get(i)
		if s, ok := x.(types.String); ok && hasCode(string(s)) {
			if n := scanCode(string(s)).numbered; n != string(s) {
				if out == nil {
					out = make([]ref.Val, 0, size)
					for j := types.Int(0); j < i; j++ {
						out = append(out, l.Get(j))
					}
				}
				out = append(out, types.String(n))
				continue
			}
		}
		if out != nil {
			out = append(out, x)
		}
	}
	if out == nil {
		return v
	}
	return types.NewRefValList(types.DefaultTypeAdapter, out)
}
