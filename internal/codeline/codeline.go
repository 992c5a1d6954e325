// Package codeline numbers the code lines of a fenced block the way the
// MCQ code rule (C7) wants them, "1: ", "2: ", …: the mcq rule pack and
// the numberCodeLines function of contract checks both write that fix,
// and must write it alike, so that a contract's checks and the pack
// repair a document the same.
package codeline

import (
	"slices"
	"strconv"
	"strings"
)

// Line is one code line of a block: lines[Line][:End] of the block's
// text split at "\n" (a closing fence may end the line's code early).
type Line struct{ Line, End int }

// Trim drops the blank lines before the first and after the last code
// line of body: they are layout, not code, and are neither numbered nor
// counted.
func Trim(lines []string, body []Line) []Line {
	blank := func(x Line) bool { return strings.TrimSpace(lines[x.Line][:x.End]) == "" }
	for len(body) > 0 && blank(body[0]) {
		body = body[1:]
	}
	for len(body) > 0 && blank(body[len(body)-1]) {
		body = body[:len(body)-1]
	}
	return body
}

// Number writes the code lines of body numbered into out, a copy of
// lines made on the first change (nil until then), and returns it. A
// number the line already has ("3:", "3.", "3)") is replaced. wrong, when
// not nil, is told of each line not numbered as it should be: its
// position in body, from 1, and its code.
func Number(lines, out []string, body []Line, wrong func(no int, code string)) []string {
	for k, x := range body {
		code := lines[x.Line][:x.End]
		no := strconv.Itoa(k + 1)
		if strings.HasPrefix(code, no+": ") || strings.TrimRight(code, " \t\r") == no+":" {
			continue
		}
		if wrong != nil {
			wrong(k+1, code)
		}
		if out == nil {
			out = slices.Clone(lines)
		}
		rest := code[Prefix(code):]
		if strings.TrimSpace(rest) == "" {
			out[x.Line] = no + ":" + lines[x.Line][x.End:]
		} else {
			out[x.Line] = no + ": " + rest + lines[x.Line][x.End:]
		}
	}
	return out
}

// Prefix returns the length of a line-number prefix a model wrote in
// front of a code line ("3:", "3: ", "3. ", "3) "), or 0. After a colon
// one space is part of the prefix; the rest is the code's indentation.
func Prefix(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start || i >= len(s) {
		return 0
	}
	switch s[i] {
	case ':':
		i++
		if i < len(s) && s[i] == ' ' {
			i++
		}
		return i
	case '.', ')':
		if i+1 == len(s) {
			return i + 1
		}
		if s[i+1] == ' ' || s[i+1] == '\t' {
			return i + 2
		}
	}
	return 0
}
