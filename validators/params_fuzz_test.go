package validators

import (
	"strings"
	"testing"
)

// FuzzParseParams: the X-Contract-Params header parser never panics, and
// what it accepts has trimmed, non-empty keys without '=' or ','.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"", "options=A, question_count=10, difficulty=3/5/2", "a", "=b", "a==b,,c=", " k = v ", "ä=ö,\x00=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseParams(s)
		if err != nil {
			return
		}
		for k, v := range p {
			if k == "" || k != strings.TrimSpace(k) || strings.ContainsAny(k, "=,") {
				t.Fatalf("ParseParams(%q): bad key %q", s, k)
			}
			if v != strings.TrimSpace(v) || strings.Contains(v, ",") {
				t.Fatalf("ParseParams(%q): bad value %q for %q", s, v, k)
			}
		}
	})
}
