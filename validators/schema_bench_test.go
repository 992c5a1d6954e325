package validators

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// BenchmarkSchemaValidate sets the schema step of validation side by side
// with the schema library alone on the same document and the same compiled
// schema: "library" is the library's Validate on the document decoded its
// own way (jsonschema.UnmarshalJSON), "ours" is the step as CheckDoc runs
// it, on the document strict parsing produced. The /decoded variants
// include the decoding in both: the library's decoder against strictjson's
// parser. The aim is to pay little around the library, not to beat it.
func BenchmarkSchemaValidate(b *testing.B) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		b.Fatal(err)
	}
	c, _ := reg.Lookup("mcq")
	s := c.Schema
	for _, size := range []int{2 << 10, 20 << 10} {
		doc := []byte(mcqgen.Doc(size))
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Validate(inst); err != nil {
			b.Fatalf("bench document invalid: %v", err)
		}
		parsed, err := strictjson.Parse(doc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dKB/library", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s.Validate(inst) != nil {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(fmt.Sprintf("%dKB/ours", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var e Emitter
				schemaViolations(s, parsed, &e)
				if len(e.out) > 0 {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(fmt.Sprintf("%dKB/library-decoded", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
				if s.Validate(inst) != nil {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(fmt.Sprintf("%dKB/ours-decoded", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parsed, _ := strictjson.Parse(doc)
				var e Emitter
				schemaViolations(s, parsed, &e)
				if len(e.out) > 0 {
					b.Fatal("invalid")
				}
			}
		})
	}
}
