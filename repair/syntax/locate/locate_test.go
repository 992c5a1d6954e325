package locate

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/repair/syntax/lex"
)

// show renders strips as kind:"text" for the tables.
func show(src string, ss ...Strip) []string {
	var out []string
	for _, s := range ss {
		if s.Off == s.End {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%q", [...]string{Prose: "prose", Think: "think", Fence: "fence"}[s.Kind], src[s.Off:s.End]))
	}
	return out
}

func TestValue(t *testing.T) {
	tests := []struct {
		in         string
		wantString bool
		rest       string   // src[start:]
		before     []string // show of the strips before it
		err        error
	}{
		{in: `{"a": 1}`, rest: `{"a": 1}`},
		{in: "Here you go:\n{\"a\": 1}\nHope it helps.", rest: "{\"a\": 1}\nHope it helps.", before: []string{`prose:"Here you go:"`}},
		{in: "<think>\nplan {x}\n</think>\n{\"a\": 1}", rest: `{"a": 1}`, before: []string{`think:"<think>\nplan {x}\n</think>"`}},
		{in: "Sure:\n```json\n{\"a\": 1}\n```", rest: "{\"a\": 1}\n```", before: []string{`prose:"Sure:"`, "fence:\"```json\""}},
		{in: "```python\nd = {'a': 1}\n```\n```\n[1, 2]\n```", rest: "[1, 2]\n```", before: []string{"prose:\"```python\\nd = {'a': 1}\\n```\"", "fence:\"```\""}},
		{in: "The set {name} is [1] of {\"a\": 1}", rest: `{"a": 1}`, before: []string{`prose:"The set {name} is [1] of"`}},
		{in: "The set {v1.2} is {v1.2: 3}", rest: `{v1.2: 3}`, before: []string{`prose:"The set {v1.2} is"`}},
		{in: "Answer: {'a': True}", rest: `{'a': True}`, before: []string{`prose:"Answer:"`}},
		{in: "yes, that's right", err: ErrNoJSON},
		{in: "42 is the answer", rest: "42 is the answer"},
		{in: "None", rest: "None"},
		{in: `"{\"a\": 1}"`, wantString: true, rest: `"{\"a\": 1}"`},
		{in: `"{\"a\": 1}"`, rest: `"{\"a\": 1}"`}, // a string is a value of its own
		{in: "<think>\nonly thinking", err: ErrNoJSON},
		{in: "```json\n{\"a\": 1}\n```\n```json\n{\"a\": 2}\n```", err: ErrMultipleJSON},
	}
	for _, tt := range tests {
		src := []byte(tt.in)
		lo, _ := lex.TrimBounds(src)
		start, before, err := Value(nil, src, lo, tt.wantString)
		if tt.err != nil || err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Value(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if got := tt.in[start:]; got != tt.rest {
			t.Errorf("Value(%q) starts at %q, want %q", tt.in, got, tt.rest)
		}
		if got := strings.Join(show(tt.in, before...), " "); got != strings.Join(tt.before, " ") {
			t.Errorf("Value(%q) strips %s, want %s", tt.in, got, strings.Join(tt.before, " "))
		}
	}
}

func TestAfter(t *testing.T) {
	tests := []struct {
		in   string
		p    int
		want []string
	}{
		{"{}\n```\nDone. ", 2, []string{"fence:\"```\"", `prose:"Done."`}},
		{"{} and that is all\n", 2, []string{`prose:"and that is all"`}},
		{"{}  \n", 2, nil},
	}
	for _, tt := range tests {
		fence, prose := After([]byte(tt.in), tt.p)
		if got := strings.Join(show(tt.in, fence, prose), " "); got != strings.Join(tt.want, " ") {
			t.Errorf("After(%q, %d) = %s, want %s", tt.in, tt.p, got, strings.Join(tt.want, " "))
		}
	}
}

// checkValue checks what the repairer relies on: the start lies in the
// text past lo, and the strips before it are in order, apart, inside
// src[lo:start] and never hold the start.
func checkValue(t *testing.T, src []byte, wantString bool) {
	t.Helper()
	lo, hi := lex.TrimBounds(src)
	if lo == hi {
		return
	}
	start, before, err := Value(nil, src, lo, wantString)
	if err != nil {
		if !errors.Is(err, ErrNoJSON) && !errors.Is(err, ErrMultipleJSON) {
			t.Fatalf("Value(%q) error %v is no sentinel", src, err)
		}
		return
	}
	if start < lo || start >= len(src) {
		t.Fatalf("Value(%q) = %d, outside [%d, %d)", src, start, lo, len(src))
	}
	pos := lo
	for _, s := range before {
		if s.Off < pos || s.End <= s.Off || s.End > start {
			t.Fatalf("Value(%q) = %d, strips %+v out of order or past the start", src, start, before)
		}
		pos = s.End
	}
	fence, prose := After(src, start)
	for _, s := range []Strip{fence, prose} {
		if s.Off > s.End || s.End > len(src) || s.Off < start && s.Off != s.End {
			t.Fatalf("After(%q, %d) = %+v, %+v out of bounds", src, start, fence, prose)
		}
	}
}

// FuzzLocate checks that Value and After keep their bounds whatever the
// text holds.
func FuzzLocate(f *testing.F) {
	for _, s := range []string{
		"", "{}", "Here:\n```json\n{\"a\": 1}\n```\nDone.", "<think>\n{x}\n</think>\n[1, 2]",
		"a</think>\n```python\n{'a': 1}\n```\n{\"b\": 2}", "```\n[1]\n```\n```\n[2]\n```", "[Note] {a: 'b'}",
		"\"{\\\"a\\\": 1}\"", "```json {\"a\":1}``` and more", "“quoted” {“a”: 1}", "{name} or [1][2] then [3, 4]",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, wantString bool) {
		checkValue(t, src, wantString)
	})
}
