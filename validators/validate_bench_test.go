package validators_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
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
		// Without the rule packs, their parameters have no taker.
		cc.Rules, cc.Params = nil, nil
		c = &cc
	}
	v, err := validators.New(c, packs.Builtins())
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

// BenchmarkHostileLists measures the rules on one long list, as a model
// stuck in a repetition loop writes it: the cost per item must stay flat
// as the list grows (the duplicate checks must not compare every pair).
func BenchmarkHostileLists(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		opts := make([]string, n)
		ids := make([]string, n)
		qs := make([]string, n)
		for i := range opts {
			opts[i] = fmt.Sprintf("%q", fmt.Sprintf("Option %d", i))
			ids[i] = fmt.Sprintf(`"t%d"`, i)
			qs[i] = fmt.Sprintf(`{"question":"%d. What is the capital of France and why?"}`, i+1)
		}
		for _, tc := range []struct {
			name, contract, doc string
		}{
			{"mcq-options", "mcq", `{"questions":[{"question":"1. Q?","options":[` + strings.Join(opts, ",") + `],"answer":0}]}`},
			{"mcq-same-question", "mcq", `{"questions":[` + strings.Join(qs, ",") + `]}`},
			{"planning-ids", "planning", `{"focus_task_id":"x","mini_task_ids":[` + strings.Join(ids, ",") + `]}`},
		} {
			v, err := packs.Builtin(tc.contract)
			if err != nil {
				b.Fatal(err)
			}
			params, _ := v.Params(nil)
			b.Run(fmt.Sprintf("%s/%d", tc.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(tc.doc)))
				b.ReportAllocs()
				for b.Loop() {
					v.Validate(tc.doc, params)
				}
			})
		}
	}
}
