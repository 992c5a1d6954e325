package packs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/contractgateway/gateway/validators"
)

// TestCodesListed checks every violation of the golden reports against
// Codes: a code a rule emits is listed, with the class it is emitted with,
// and every code of the fix scopes is one.
func TestCodesListed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "reports", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden reports: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r validators.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range r.Violations {
			seen[v.Code] = true
			if class, ok := validators.Codes[v.Code]; !ok || class != v.Class {
				t.Errorf("%s: code %s of class %s; Codes has %q", f, v.Code, v.Class, class)
			}
		}
	}
	for _, code := range []string{"SHAPE_UNWRAPPED", "SHAPE_WRAPPED"} {
		if !seen[code] {
			t.Errorf("no golden report shows %s", code)
		}
	}
	for name, p := range Builtins() {
		d, ok := p.(validators.FixScopeDeclarer)
		if !ok {
			continue
		}
		for code := range d.FixScopes() {
			if _, ok := validators.Codes[code]; !ok {
				t.Errorf("pack %s: fix scope of unlisted code %s", name, code)
			}
		}
	}
}
