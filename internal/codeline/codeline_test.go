package codeline

import (
	"strings"
	"testing"
)

func TestPrefix(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"3: x = 1", 3},
		{"3:x", 2},
		{"  12: y", 6},
		{"3. print(x)", 3},
		{"3) print(x)", 3},
		{"3.", 2},
		{"3.14 is pi", 0},
		{"x = 3", 0},
		{"42", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := Prefix(tt.in); got != tt.want {
			t.Errorf("Prefix(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// body returns the lines of text between its first and last line (the
// fences) as a block's body.
func body(lines []string) []Line {
	var b []Line
	for i := 1; i < len(lines)-1; i++ {
		b = append(b, Line{i, len(lines[i])})
	}
	return b
}

func TestNumber(t *testing.T) {
	tests := []struct {
		name, text, want string
		wrong            []int
	}{
		{"numbered", "```py\n1: a\n2: b\n```", "```py\n1: a\n2: b\n```", nil},
		{"none", "```py\na\nb\n```", "```py\n1: a\n2: b\n```", []int{1, 2}},
		{"other style", "```py\n1. a\n2) b\n```", "```py\n1: a\n2: b\n```", []int{1, 2}},
		{"out of order", "```py\n2: a\n1: b\n```", "```py\n1: a\n2: b\n```", []int{1, 2}},
		{"blank layout", "```py\n\na\n\n```", "```py\n\n1: a\n\n```", []int{1}},
		{"empty code line", "```py\na\n   \nb\n```", "```py\n1: a\n2:\n3: b\n```", []int{1, 2, 3}},
	}
	for _, tt := range tests {
		lines := strings.Split(tt.text, "\n")
		var wrong []int
		out := Number(lines, nil, Trim(lines, body(lines)), func(no int, _ string) { wrong = append(wrong, no) })
		got := tt.text
		if out != nil {
			got = strings.Join(out, "\n")
		}
		if got != tt.want || len(wrong) != len(tt.wrong) {
			t.Errorf("%s: Number = %q, wrong %v; want %q, wrong %v", tt.name, got, wrong, tt.want, tt.wrong)
		}
	}
}

// FuzzNumber checks that numbering keeps every line's code, and that a
// numbered block needs no more numbering.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"a\nb", "1: a\n2: b", "3. x\n\n4) y", " \n12:\n", "x\n2:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		lines := append(append([]string{"```"}, strings.Split(code, "\n")...), "```")
		b := Trim(lines, body(lines))
		out := Number(lines, nil, b, nil)
		if out == nil {
			out = lines
		}
		if len(out) != len(lines) {
			t.Fatalf("Number(%q) has %d lines, want %d", code, len(out), len(lines))
		}
		for _, x := range b {
			rest := strings.TrimSpace(lines[x.Line][Prefix(lines[x.Line]):])
			if !strings.HasSuffix(strings.TrimSpace(out[x.Line]), rest) {
				t.Errorf("Number(%q): line %q lost its code %q", code, out[x.Line], rest)
			}
		}
		again := Number(out, nil, Trim(out, body(out)), func(no int, c string) {
			t.Errorf("Number(%q): line %d %q still numbered wrong", code, no, c)
		})
		if again != nil {
			t.Errorf("Number(%q) changed a numbered block: %q", code, again)
		}
	})
}
