// Package extract finds what surrounds the JSON in a model's text: the
// reasoning sections thinking models write ("<think>…</think>") and
// Markdown code fences. It is the one reading of both that the rest of the
// gateway shares: validators takes the JSON value from it, and
// the syntactic repairer skips the same sections and fences when it looks
// for a broken document in prose. Which fence tags announce JSON is each
// caller's choice: strict extraction wants "json", repair also takes
// "jsonc" and "json5". ValueEnd watches a growing text for the end of the
// JSON value it starts with, so that a call can stop there.
package extract

import (
	"strings"
)

// Markers of the text around a JSON value.
const (
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
	// FenceMarker is the shortest fence: three backticks.
	FenceMarker = "```"
	// ByteOrderMark is U+FEFF in UTF-8, which editors put before a file's
	// first line.
	ByteOrderMark = "\uFEFF"
)

// Span is the byte range text[Start:End].
type Span struct{ Start, End int }

// ThinkSections returns, in order, the reasoning sections of text that
// StripThink removes. Three forms occur in practice:
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
// matched case-sensitively, as models emit them.
func ThinkSections(text string) []Span {
	if !strings.Contains(text, "think>") {
		return nil
	}
	var out []Span
	base := 0
	firstOpen := nextThinkOpen(text, 0)
	if c := orphanClose(text, firstOpen); c >= 0 {
		base = c + len(ThinkClose)
		out = append(out, Span{0, base})
		text = text[base:]
		firstOpen = nextThinkOpen(text, 0)
	}
	for open := firstOpen; open >= 0; {
		end := strings.Index(text[open+len(ThinkOpen):], ThinkClose)
		if end < 0 {
			out = append(out, Span{base + open, base + len(text)})
			break
		}
		pos := open + len(ThinkOpen) + end + len(ThinkClose)
		out = append(out, Span{base + open, base + pos})
		open = nextThinkOpen(text, pos)
	}
	return out
}

// StripThink returns text without its reasoning sections (ThinkSections).
// Text without a section is returned unchanged.
func StripThink(text string) string {
	sections := ThinkSections(text)
	if len(sections) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for _, s := range sections {
		b.WriteString(text[pos:s.Start])
		pos = s.End
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
		i := strings.Index(text[from:limit], ThinkClose)
		if i < 0 {
			return -1
		}
		i += from
		if atLineEnd(text, i+len(ThinkClose)) {
			return i
		}
		from = i + len(ThinkClose)
	}
	return -1
}

// nextThinkOpen returns the offset of the first "<think>" at or after from
// that starts a line, or -1.
func nextThinkOpen(text string, from int) int {
	for from < len(text) {
		i := strings.Index(text[from:], ThinkOpen)
		if i < 0 {
			return -1
		}
		i += from
		if atLineStart(text, i) {
			return i
		}
		from = i + len(ThinkOpen)
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
		return j == len(ByteOrderMark)-1 && strings.HasPrefix(text, ByteOrderMark)
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
