package validators_test

import (
	"fmt"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators"
)

func benchValidator(b *testing.B, rules bool) *validators.Validator {
	b.Helper()
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		b.Fatal(err)
	}
	c, _ := reg.Lookup("mcq")
	if !rules {
		cc := *c
		cc.Rules = nil
		c = &cc
	}
	v, err := validators.New(c, validators.Builtins())
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkValidateMCQ measures the whole pipeline (extract, strict parse,
// schema, rule packs) against the same pipeline without rule packs, so the
// rules' share can be read off side by side.
func BenchmarkValidateMCQ(b *testing.B) {
	for _, size := range []int{2 << 10, 20 << 10, 200 << 10} {
		doc := mcqgen.Doc(size)
		for _, mode := range []struct {
			name  string
			rules bool
		}{{"schema", false}, {"full", true}} {
			v := benchValidator(b, mode.rules)
			params, _ := v.Params(nil)
			if res := v.Validate(doc, params); !res.Report.Valid {
				b.Fatalf("bench document invalid: %v", res.Report.Codes())
			}
			b.Run(fmt.Sprintf("%dKB/%s", size>>10, mode.name), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					v.Validate(doc, params)
				}
			})
		}
	}
}
