package extract

import (
	"encoding/json"
	"strconv"
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

// TestValueEndDepth follows a document byte by byte, as the progressive
// splitter does, and reads its depth and strings.
func TestValueEndDepth(t *testing.T) {
	text := `{"a":["]",{"b":"\"{"}],"c":1}`
	want := []string{"1", "1s", "1s", "1", "1", "2", "2s", "2s", "2", "2", "3", "3s", "3s", "3", "3", "3s", "3s", "3s", "3s", "3", "2", "1", "1", "1s", "1s", "1", "1", "1", "0"}
	var v ValueEnd
	for i := 0; i < len(text); i++ {
		v.Feed(text[i : i+1])
		got := strconv.Itoa(v.Depth())
		if v.InString() {
			got += "s"
		}
		if got != want[i] {
			t.Fatalf("after %q: depth %s, want %s", text[:i+1], got, want[i])
		}
	}
	if v.Failed() {
		t.Error("Failed() after a whole document")
	}
}
