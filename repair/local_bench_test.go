package repair

import (
	"strings"
	"testing"

	"github.com/contractgateway/gateway/internal/mcqgen"
)

// BenchmarkLocalThink measures rung 1 on a 20 KB answer behind a think
// section, the form thinking models write: valid, broken by one trailing
// comma (syntactic repair), and as a draft and a corrected block (the
// block choice). The think section and fences should be read once per
// text, however many of these paths an answer takes.
func BenchmarkLocalThink(b *testing.B) {
	doc := mcqgen.Doc(20 << 10)
	think := "<think>\n" + strings.Repeat("Plan the questions one by one.\n", 64) + "</think>\n"
	broken := strings.Replace(doc, `"questions":`, `"x": 1,, "questions":`, 1)
	v := mcqValidator(b)
	params, _ := v.Params(nil)
	for _, tc := range []struct{ name, text string }{
		{"valid", think + "```json\n" + doc + "\n```"},
		{"syntax", think + "```json\n" + broken + "\n```"},
		{"blocks", think + "Draft:\n```json\n" + broken + "\n```\nFixed:\n```json\n" + doc + "\n```"},
	} {
		if r := Local(v, tc.text, params); !r.Report.Valid {
			b.Fatalf("%s: Local is not valid: %v", tc.name, r.Report.Codes())
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				Local(v, tc.text, params)
			}
		})
	}
}
