package validators

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reportJSON renders a report as the gateway sends it, indented, so that
// two reports compare byte for byte.
func reportJSON(t *testing.T, r Report) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
