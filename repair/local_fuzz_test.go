package repair

import (
	"os"
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// FuzzLocal runs rung 1 on arbitrary model text against the mcq contract:
// it never panics, is deterministic, never declares a truncated document
// valid, and a valid result re-validates as valid from its own canonical
// text.
func FuzzLocal(f *testing.F) {
	v := mcqValidator(f)
	params, _ := v.Params(nil)
	for _, name := range []string{"../examples/mcq-broken.txt", "../gateway/testdata/guard/mcq_derivable.txt", "../gateway/testdata/guard/mcq_content_fault.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"meta": {}, "questions": [}`)
	f.Add("{\"meta\": {\"title\": `x {y}`}, \"questions\": [{\"answer\": 12,111, \"code\": \"\"\"print(\"Hi\")\"\"\"}]}")
	f.Add("```json\n{\"a\": 1}\n```\n```json\n{\"b\": 2}\n```")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		a := Local(v, text, params)
		b := Local(v, text, params)
		if a.Report.Valid != b.Report.Valid || len(a.Changes) != len(b.Changes) || len(a.Report.Violations) != len(b.Report.Violations) {
			t.Fatalf("Local is not deterministic on %q", text)
		}
		if a.Truncated && a.Report.Valid {
			t.Fatalf("truncated document declared valid: %q", text)
		}
		if !a.Report.Valid {
			return
		}
		if a.Doc == nil {
			t.Fatalf("valid without a document: %q", text)
		}
		again := Local(v, string(strictjson.Marshal(a.Doc)), params)
		if !again.Report.Valid || len(again.Changes) != 0 {
			t.Fatalf("repaired output does not re-validate cleanly: %v %v", again.Report.Codes(), again.Changes)
		}
	})
}
