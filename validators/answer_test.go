package validators

import (
	"testing"
	"unsafe"
)

// TestValidateAnswer checks that Result.Answer is the text without its
// think sections, read once by Validate for repair to reuse, and that a
// text without one is passed on without a copy.
func TestValidateAnswer(t *testing.T) {
	v, err := builtinWithoutPacks("json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text, want string
		same             bool
	}{
		{"no think section", "```json\n{\"a\": 1}\n```", "```json\n{\"a\": 1}\n```", true},
		{"think section", "<think>\nplan\n</think>\n{\"a\": 1}", "\n{\"a\": 1}", false},
		{"broken JSON after a think section", "<think>x</think>\n{\"a\": 1,}", "\n{\"a\": 1,}", false},
		{"no JSON at all", "<think>x</think>\nsorry", "\nsorry", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := v.Validate(tt.text, Params{}).Answer
			if got != tt.want {
				t.Errorf("Validate(%q).Answer = %q, want %q", tt.text, got, tt.want)
			}
			if same := unsafe.StringData(got) == unsafe.StringData(tt.text); same != tt.same {
				t.Errorf("Validate(%q).Answer shares the text's memory = %v, want %v", tt.text, same, tt.same)
			}
		})
	}
}
