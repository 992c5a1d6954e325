package extract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripThink(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"no section", `{"a": 1}`, `{"a": 1}`},
		{"section first", "<think>\nplan\n</think>\n\n{\"a\": 1}", "\n\n{\"a\": 1}"},
		{"empty section", "<think>\n\n</think>\n\n{}", "\n\n{}"},
		{"two sections", "<think>a</think>\nx\n<think>b</think>\ny", "\nx\n\ny"},
		{"back to back", "<think>a</think><think>b</think>{}", "<think>b</think>{}"},
		{"unclosed section", "{}\n<think>\nstill thinking", "{}\n"},
		{"unclosed at start", "<think>\nthe model ran out of tokens", ""},
		{"orphan close", "reasoning without an opening tag\n</think>\n\n{}", "\n\n{}"},
		{"orphan close at end of text", "reasoning only</think>", ""},
		{"indented open", "  <think>x</think>{}", "  {}"},
		{"open inside a line is text", `{"q": "What does <think> do?"}`, `{"q": "What does <think> do?"}`},
		{"close inside a line is text", `{"q": "</think> ends it", "a": 1}`, `{"q": "</think> ends it", "a": 1}`},
		{"close followed by JSON on the same line", `reasoning</think>{"a":1}`, `reasoning</think>{"a":1}`},
		{"orphan close after a quoted one", "the tag </think> ends it\nso I am done</think>\n{}", "\n{}"},
		{"section close may sit mid-line", "<think>\nx\ny</think> z\n{}", " z\n{}"},
		{"upper case is text", "<THINK>x</THINK>{}", "<THINK>x</THINK>{}"},
		{"section spanning a fence", "<think>\n```json\n{\"draft\": 1}\n```\n</think>\n```json\n{}\n```", "\n```json\n{}\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripThink(tt.in); got != tt.want {
				t.Errorf("StripThink(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestThinkSections(t *testing.T) {
	text := "plan\n</think>\n{\"a\": 1}\n<think>\nmore\n</think>\nx\n<think>\ncut off"
	got := ThinkSections(text)
	want := []Span{{0, 13}, {23, 44}, {47, len(text)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ThinkSections mismatch (-want +got):\n%s", diff)
	}
	for _, s := range got[:2] {
		if sec := text[s.Start:s.End]; !strings.HasSuffix(sec, ThinkClose) {
			t.Errorf("section %q does not end with %s", sec, ThinkClose)
		}
	}
}

func TestFences(t *testing.T) {
	type fence struct{ Tag, Content, Rest string }
	tests := []struct {
		name string
		in   string
		want []fence
	}{
		{"one json block", "Here:\n```json\n{\"a\": 1}\n```\nDone.", []fence{{"json", "{\"a\": 1}\n", "\nDone."}}},
		{"tag and words", "```json title\n{}\n```", []fence{{"json", "{}\n", ""}}},
		{"json mid-line", "Here it is: ```json\n[1]\n```", []fence{{"json", "[1]\n", ""}}},
		// The mid-line ```python opens nothing; the lone closing marker then
		// opens an empty block that never closes.
		{"other tag mid-line is text", "use ```python\nx = {}\n```", []fence{{"", "", ""}}},
		{"one line", "```json {\"a\":1}``` and more", []fence{{"json", " {\"a\":1}", " and more"}}},
		{"one line, no tag", "```{\"a\":1}```", []fence{{"", "{\"a\":1}", ""}}},
		{"backticks in a string do not close", "```json\n{\"q\": \"``` here\"}\n```", []fence{{"json", "{\"q\": \"``` here\"}\n", ""}}},
		{"longer fence closes only on as many", "````\n```\n{}\n````\nz", []fence{{"", "```\n{}\n", "\nz"}}},
		{"unclosed, closing glued to the last line", "```json\n{\"a\": 1}```", []fence{{"json", "{\"a\": 1}", ""}}},
		{"unclosed", "```json\n{\"a\": ", []fence{{"json", "{\"a\": ", ""}}},
		{"two blocks", "```python\nx\n```\n```\n{}\n```", []fence{{"python", "x\n", "\n```\n{}\n```"}, {"", "{}\n", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []fence
			for _, f := range Fences(tt.in) {
				got = append(got, fence{f.Tag, tt.in[f.Start:f.End], tt.in[f.Close:]})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Fences(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFenceOpener(t *testing.T) {
	tests := []struct {
		in   string
		want []string // text[Open:TagEnd] of each fence
	}{
		{"```json\n{}\n```", []string{"```json"}},
		{"```  json title\n{}\n```", []string{"```  json"}},
		{"````\n{}\n````", []string{"````"}},
		{"Here: ```JSON\r\n[1]\n```", []string{"```JSON"}},
		{"```json {\"a\":1}```", []string{"```json"}},
		{"```{\"a\":1}```", []string{"```"}},
		{"``` \n{}\n```\n```python\nx\n```", []string{"```", "```python"}},
	}
	for _, tt := range tests {
		var got []string
		for _, f := range Fences(tt.in) {
			got = append(got, tt.in[f.Open:f.TagEnd])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Fences(%q) openers mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

// FuzzExtract checks the invariants both readers rely on: sections and
// fences are in order, inside the text and apart; StripThink removes
// exactly the sections; a fence's content lies between its markers.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"", "```", "````", "```json", "```json\n", "```\n```", "``````", "```json```", "```json {```",
		"<think>", "</think>", "<think></think>", "<think>\n```json\n{}\n```", "x</think>\n```json\n{}\n```",
		"```json\n{}\n```\n```json\n[]\n```", " ``` json\n{}\n```", "\n```JSON\r\n{}\r\n```\r\n",
		"\uFEFF<think>a</think>\n{}", "a</think>\n<think>b</think>\n<think>c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sections := ThinkSections(text)
		pos, kept := 0, 0
		for _, s := range sections {
			if s.Start < pos || s.End <= s.Start || s.End > len(text) {
				t.Fatalf("ThinkSections(%q) = %v: out of order or out of bounds", text, sections)
			}
			kept += s.Start - pos
			pos = s.End
		}
		kept += len(text) - pos
		if got := StripThink(text); len(got) != kept {
			t.Fatalf("StripThink(%q) = %q, want the %d bytes outside %v", text, got, kept, sections)
		}
		pos = 0
		for _, fc := range Fences(text) {
			if fc.Open < pos || fc.Start < fc.Open || fc.End < fc.Start || fc.Close < fc.End || fc.Close > len(text) {
				t.Fatalf("Fences(%q): %+v out of order or out of bounds (after %d)", text, fc, pos)
			}
			if !strings.HasPrefix(text[fc.Open:], FenceMarker) {
				t.Fatalf("Fences(%q): %+v does not open with a fence", text, fc)
			}
			if fc.TagEnd < fc.Open+len(FenceMarker) || fc.TagEnd > fc.Start || !strings.HasSuffix(text[fc.Open:fc.TagEnd], fc.Tag) {
				t.Fatalf("Fences(%q): %+v: opener %q does not end with the tag, before the content", text, fc, text[fc.Open:min(max(fc.TagEnd, fc.Open), len(text))])
			}
			if fc.Close == pos {
				t.Fatalf("Fences(%q): %+v is empty", text, fc)
			}
			pos = fc.Close
		}
	})
}
