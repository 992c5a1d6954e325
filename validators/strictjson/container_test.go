package strictjson

import (
	"errors"
	"strings"
	"testing"
)

// TestContainerErrorMessages pins what the parser says for each way an
// array or an object can go wrong after an element, and which brackets a
// truncated document leaves open: arrays and objects share the code that
// reads between their elements, and each must still speak of itself.
func TestContainerErrorMessages(t *testing.T) {
	tests := []struct {
		name, in, msg, unclosed string
	}{
		{"array ends", `[1`, "the document ends inside an array", "]"},
		{"object ends", `{"a":1`, "the document ends inside an object", "}"},
		{"nested ends", `{"a":[1,{"b":2`, "the document ends inside an object", "}]}"},
		{"array trailing comma", `[1,]`, "trailing comma before ']'", ""},
		{"object trailing comma", `{"a":1,}`, "trailing comma before '}'", ""},
		{"array missing comma", `[1 2]`, "missing ',' before the next array item", ""},
		{"object missing comma", `{"a":1 "b":2}`, "missing ',' before the next object member", ""},
		{"array too deep", strings.Repeat("[", MaxDepth+1), "the document nests deeper than 10000 arrays and objects", ""},
		{"object too deep", strings.Repeat(`{"a":`, MaxDepth+1), "the document nests deeper than 10000 arrays and objects", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want *SyntaxError", abbrev(tt.in), err)
			}
			if se.Msg != tt.msg {
				t.Errorf("Parse(%q).Msg = %q, want %q", abbrev(tt.in), se.Msg, tt.msg)
			}
			if se.Unclosed != tt.unclosed {
				t.Errorf("Parse(%q).Unclosed = %q, want %q", abbrev(tt.in), se.Unclosed, tt.unclosed)
			}
		})
	}
}
