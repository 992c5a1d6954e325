package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValueEnd: the watch for the end of a JSON value never panics, and
// reports an end only for a text that is one bracketed value and
// whitespace, however the text is cut into pieces.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`{"a":1}`, ` [1,[2]]  `, `{"a":"}"}`, `{"a":"\"}"}`, `{]`, `"x"`, `{"a":1} x`, "<think>{}</think>{}"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		size := int(n)%8 + 1
		v := &ValueEnd{}
		ended, at := false, 0
		for i := 0; i < len(s); i += size {
			if v.Feed(s[i:min(i+size, len(s))]) {
				ended, at = true, min(i+size, len(s))
				break
			}
		}
		whole := (&ValueEnd{}).Feed(s)
		if ended {
			head := strings.TrimSpace(s[:at])
			if head == "" || (head[0] != '{' && head[0] != '[') || (head[len(head)-1] != '}' && head[len(head)-1] != ']') {
				t.Fatalf("ended on %q", s[:at])
			}
			var x any
			if json.Valid([]byte(head)) {
				if err := json.Unmarshal([]byte(head), &x); err != nil {
					t.Fatal(err)
				}
			}
		}
		if whole && !ended && strings.TrimSpace(s) != "" {
			// Whole, the text ends; in pieces it must end too (on the
			// same piece boundary or earlier).
			t.Fatalf("%q ends whole but not in pieces of %d", s, size)
		}
	})
}
