package mcq

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/internal/codeline"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// emitCode reports the C7 findings of one string at segs; c.fixed is the
// string with its code lines numbered (and, for a question, its number
// prefix fixed); name is the string's path for hints.
func (m *Rules) emitCode(c mcqCode, v *strictjson.Value, segs []validators.Seg, name string, e *validators.Emitter) {
	for _, f := range c.fences {
		e.Semantic("CODE_FENCE_MISSING", validators.SeverityError, v, segs, f.expected, f.actual,
			fmt.Sprintf("In %s, %s", name, f.hint), nil)
	}
	if c.badLine != "" {
		e.Semantic("CODE_LINE_NUMBERS", validators.SeverityError, v, segs, c.wantPrefix, c.badLine,
			fmt.Sprintf("Number every code line inside the fence of %s as \"1: \", \"2: \", … in order (line %d reads %q).", name, c.badLineNo, c.badLine), c.fixed)
	}
}

// mcqFenceIssue is one CODE_FENCE_MISSING finding.
type mcqFenceIssue struct {
	expected, actual, hint string
}

// mcqCode is what mcqScanCode found in one string.
type mcqCode struct {
	fences []mcqFenceIssue
	// badLine is the first code line inside a fence that is not numbered
	// as it should be ("" when all are), badLineNo its position in the
	// fence and wantPrefix the prefix it needs.
	badLine    string
	badLineNo  int
	wantPrefix string
	// fixed is the string with every fenced code line numbered.
	fixed string
}

// found reports whether the scan has anything to report.
func (c *mcqCode) found() bool { return len(c.fences) > 0 || c.badLine != "" }

// mcqLangRe is a fence's language tag: "python", "c++", "c#", "objective-c".
var mcqLangRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+#.\-]*$`)

// mcqScanCode evaluates C7 on one string: multi-line code must sit in a
// fence with a language, and each line inside a fence is numbered "1: ",
// "2: ", …. Lines are separated by "\n" inside the decoded string.
func mcqScanCode(s string) mcqCode {
	res := mcqCode{fixed: s}
	if !strings.Contains(s, "\n") && !strings.Contains(s, "```") {
		// One line without a fence holds no multi-line code: inline code
		// such as sorted(xs) is fine.
		return res
	}
	lines := strings.Split(s, "\n")
	var out []string
	var body []codeline.Line
	inFence := false
	// run counts consecutive unfenced code lines; strong is set once one
	// of them is certainly code; reported makes one finding per run.
	run, strong, reported := 0, false, false
	for i, ln := range lines {
		if !inFence {
			idx := strings.Index(ln, "```")
			if idx < 0 {
				score := mcqCodeScore(ln)
				if score == 0 {
					run, strong, reported = 0, false, false
					continue
				}
				run++
				strong = strong || score == 2
				if run >= 2 && strong && !reported {
					res.fences = append(res.fences, mcqFenceIssue{
						expected: "```<language>", actual: mcqHead(strings.TrimSpace(lines[i-run+1]), 40),
						hint: "put the code lines in a fenced block with a language (```python\\n1: …\\n2: …\\n```), one line per \\n, numbered 1:, 2:, ….",
					})
					reported = true
				}
				continue
			}
			run, strong, reported = 0, false, false
			rest := ln[idx+3:]
			if j := strings.Index(rest, "```"); j >= 0 {
				// A fence opened and closed on one line is inline code,
				// unless its "lines" are separated by a literal
				// backslash-n: the model escaped the newlines twice.
				if strings.Contains(rest[:j], `\n`) {
					res.fences = append(res.fences, mcqFenceIssue{
						expected: "```<language>", actual: mcqHead("```"+rest[:j], 24),
						hint: "lines are separated by a literal backslash-n (escaped twice); separate them with a single \\n in the JSON string.",
					})
				}
				continue
			}
			lang, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
			switch {
			case lang == "":
				res.fences = append(res.fences, mcqFenceIssue{
					expected: "```<language>", actual: "```",
					hint: "name the language after the opening fence, e.g. ```python.",
				})
			case strings.Contains(lang, `\`):
				res.fences = append(res.fences, mcqFenceIssue{
					expected: "```<language>", actual: mcqHead("```"+lang, 24),
					hint: "lines are separated by a literal backslash-n (escaped twice); separate them with a single \\n in the JSON string.",
				})
			case !mcqLangRe.MatchString(lang):
				res.fences = append(res.fences, mcqFenceIssue{
					expected: "```<language>", actual: mcqHead("```"+lang, 24),
					hint: "name the language after the opening fence, e.g. ```python, and start the code on the next line.",
				})
			}
			inFence, body = true, body[:0]
			continue
		}
		t := strings.TrimLeft(ln, " \t")
		if strings.HasPrefix(t, "```") {
			out = mcqNumberBody(lines, out, body, &res)
			inFence = false
			continue
		}
		end := len(ln)
		if idx := strings.Index(ln, "```"); idx >= 0 {
			end = idx // the closing fence ends this code line
			inFence = false
		}
		body = append(body, codeline.Line{Line: i, End: end})
		if !inFence {
			out = mcqNumberBody(lines, out, body, &res)
		}
	}
	if inFence {
		res.fences = append(res.fences, mcqFenceIssue{
			expected: "```", actual: "end of text",
			hint: "close the code block with ``` on its own line.",
		})
		out = mcqNumberBody(lines, out, body, &res)
	}
	if out != nil {
		res.fixed = strings.Join(out, "\n")
	}
	return res
}

// mcqNumberBody checks the numbering of one fence body, records the
// first line numbered wrong in res, and writes the numbered lines into
// out (a copy of lines made on the first change).
func mcqNumberBody(lines, out []string, body []codeline.Line, res *mcqCode) []string {
	return codeline.Number(lines, out, codeline.Trim(lines, body), func(no int, code string) {
		if res.badLine == "" {
			res.badLine, res.badLineNo, res.wantPrefix = mcqHead(code, 40), no, strconv.Itoa(no)+": "
		}
	})
}

var (
	// mcqNumberedLineRe is a line numbered the way C7 numbers code.
	mcqNumberedLineRe = regexp.MustCompile(`^\s*\d+:(\s|$)`)
	// mcqKeywordLineRe is a line that starts like a statement in a common
	// language. Keywords are lower-case, as in code; prose lines start
	// with a capital letter.
	mcqKeywordLineRe = regexp.MustCompile(`^\s*(def|class|return|import|from \S+ import|print|elif|else:|while|for|if|try:|except|with|function|var|let|const|#include|using|package|func|fn|public|private|static|void|echo|console\.log|System\.out\.print)\b(?:[ (:]|$)`)
	// mcqCallLineRe is a call on its own line: "print(x)", "foo(1, 2);".
	mcqCallLineRe = regexp.MustCompile(`^\s*[A-Za-z_][\w.]*\(.*\)\s*;?\s*$`)
	// mcqEndLineRe is a line ending the way statements and blocks end.
	mcqEndLineRe = regexp.MustCompile(`[;{}]\s*$`)
	// mcqAssignLineRe is an assignment "x = 5". On its own it is weak
	// evidence: "E = mc²" is a formula, not code.
	mcqAssignLineRe = regexp.MustCompile(`^\s*[A-Za-z_][\w.]*(\[[^\]]*\])?\s*([-+*/%]?=)\s*[^=\s]`)
)

// mcqCodeScore rates one line outside a fence: 2 when it certainly is code,
// 1 when it may be, 0 when it is prose. Two or more consecutive code lines
// with at least one certain one are multi-line code that needs a fence.
func mcqCodeScore(ln string) int {
	switch {
	case strings.TrimSpace(ln) == "":
		return 0
	case mcqNumberedLineRe.MatchString(ln), mcqKeywordLineRe.MatchString(ln),
		mcqCallLineRe.MatchString(ln), mcqEndLineRe.MatchString(ln):
		return 2
	case mcqAssignLineRe.MatchString(ln):
		return 1
	}
	return 0
}
