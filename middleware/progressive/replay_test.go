package progressive

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestReplay(t *testing.T) {
	tests := []struct {
		name, pointer, text string
		want                []string // nil: an error, the text goes out whole
	}{
		{"items then members", "/questions", `{"questions":[{"a":1},{"a":2}],"meta":{"n":2}}`,
			[]string{`{"questions":[{`, `"a":1}`, `,{`, `"a":2}`, `],"meta":{"n":2}}`}},
		{"no item", "/questions", `{"questions":[],"meta":1}`, []string{`{"questions":[],"meta":1}`}},
		{"nested array", "/a/b", `{"a":{"b":[1,2],"c":3},"d":4}`, []string{`{"a":{"b":[1`, `,2`, `],"c":3},"d":4}`}},
		{"array not first", "/questions", `{"meta":1,"questions":[{"a":1}]}`, nil},
		{"not canonical", "/questions", `{"questions": [{"a":1}]}`, nil},
		{"not an array", "/questions", `{"questions":{"a":1}}`, nil},
		{"not JSON", "/questions", `{"questions":[`, nil},
		{"root pointer", "", `[1,2]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Replay(tt.pointer, tt.text)
			if (err != nil) != (tt.want == nil) {
				t.Fatalf("Replay(%q, %q) error = %v, want error %v", tt.pointer, tt.text, err, tt.want == nil)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Replay(%q, %q) (-want +got):\n%s", tt.pointer, tt.text, diff)
			}
		})
	}
}

// FuzzReplay checks that whatever Replay accepts, its deltas concatenate
// to the text it was given.
func FuzzReplay(f *testing.F) {
	f.Add("/questions", `{"questions":[{"a":1},{"a":2}],"meta":{"n":2}}`)
	f.Add("/a/b", `{"a":{"b":[1,2],"c":3},"d":4}`)
	f.Add("/q", `{"q":[]}`)
	f.Add("/q", `{"m":1,"q":[1]}`)
	f.Fuzz(func(t *testing.T, pointer, text string) {
		deltas, err := Replay(pointer, text)
		if err != nil {
			return
		}
		if got := strings.Join(deltas, ""); got != text {
			t.Fatalf("deltas concatenate to %q, want %q", got, text)
		}
		if _, err := strictjson.Parse([]byte(text)); err != nil {
			t.Fatalf("accepted text that does not parse: %v", err)
		}
	})
}
