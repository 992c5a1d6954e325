package validators_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
)

// FuzzValidate runs the whole pipeline of every rule-carrying built-in
// contract on arbitrary text: it never panics, two runs give byte-identical
// reports, violations are in document order and Valid agrees with the
// severities.
func FuzzValidate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "contracts", "builtin", "*", "testdata", "*"))
	for _, name := range files {
		if raw, err := os.ReadFile(name); err == nil {
			f.Add(string(raw))
		}
	}
	for _, s := range []string{"", "{}", "[]", `{"questions":[{}]}`, `{"meta":{},"questions":[null,1,"x"]}`} {
		f.Add(s)
	}
	var vs []*validators.Validator
	for _, ref := range []string{"mcq", "oracle-score", "extraction", "planning", "link-plan", "extract-prompts"} {
		v, err := packs.Builtin(ref)
		if err != nil {
			f.Fatal(err)
		}
		vs = append(vs, v)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, v := range vs {
			params, _ := v.Params(nil)
			a := v.Validate(text, params).Report
			b := v.Validate(text, params).Report
			ja, jb := validators.ReportJSON(t, a), validators.ReportJSON(t, b)
			if !bytes.Equal(ja, jb) {
				t.Fatalf("%s: two runs differ on %q:\n%s\n%s", v.Contract.ID(), text, ja, jb)
			}
			valid := true
			for i, viol := range a.Violations {
				if viol.Severity == validators.SeverityError {
					valid = false
				}
				if i > 0 && validators.ViolationPos(a.Violations[i-1]) > validators.ViolationPos(viol) {
					t.Fatalf("%s: violations out of document order on %q:\n%s", v.Contract.ID(), text, ja)
				}
				if viol.Hint == "" || viol.Code == "" {
					t.Fatalf("%s: violation without code or hint on %q:\n%s", v.Contract.ID(), text, ja)
				}
			}
			if valid != a.Valid {
				t.Fatalf("%s: Valid = %v with violations %v", v.Contract.ID(), a.Valid, a.Codes())
			}
		}
	})
}
