package apis

import (
	"strings"
	"testing"
	"unsafe"
)

// TestDecodedModelDoesNotPinTheBody: the model name a codec reads from a
// request outlives it (metric labels, stats by model), so it must not
// share the memory of the body it came from: four parallel 20 MB chat
// bodies were still held long after their answers, each by its
// one-letter model name.
func TestDecodedModelDoesNotPinTheBody(t *testing.T) {
	bodies := map[string]string{
		"/api/generate":        `{"model":"m","prompt":"` + strings.Repeat("x", 1<<10) + `"}`,
		"/api/chat":            `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 1<<10) + `"}]}`,
		"/v1/chat/completions": `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 1<<10) + `"}]}`,
		"/v1/completions":      `{"model":"m","prompt":"` + strings.Repeat("x", 1<<10) + `"}`,
		"/v1/responses":        `{"model":"m","input":"` + strings.Repeat("x", 1<<10) + `"}`,
		"/v1/messages":         `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"` + strings.Repeat("x", 1<<10) + `"}]}`,
	}
	for _, cd := range All() {
		t.Run(cd.Path(), func(t *testing.T) {
			raw := []byte(bodies[cd.Path()])
			if len(raw) == 0 {
				t.Fatalf("no body for %s", cd.Path())
			}
			r, err := cd.Decode(raw)
			if err != nil {
				t.Fatalf("Decode() = %v", err)
			}
			if r.Model != "m" {
				t.Fatalf("Model = %q, want m", r.Model)
			}
			// The parsed tree's strings are slices of one copy of the
			// whole body: a Model that is one of them holds that copy.
			inTree, _ := r.Body.Get("model").AsString()
			if unsafe.StringData(r.Model) == unsafe.StringData(inTree) {
				t.Errorf("Model shares the parsed body's memory: a metric label or stats key holding it keeps the whole body alive")
			}
		})
	}
}
