package packs

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGoldenReports runs the whole pipeline on every fixture of every
// built-in contract — raw model outputs with prose, fences, think sections
// and DeepSeek faults among them — and compares the report byte for byte
// with testdata/reports/<contract>/<fixture>.json (refresh with -update).
// Running each twice also pins determinism.
func TestGoldenReports(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range reg.List() {
		v, err := validators.New(c, Builtins())
		if err != nil {
			t.Fatal(err)
		}
		params, err := v.Params(nil)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(c.Fixtures))
		for n := range c.Fixtures {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			t.Run(c.ID()+"/"+name, func(t *testing.T) {
				got := reportJSON(t, v.Validate(string(c.Fixtures[name]), params).Report)
				again := reportJSON(t, v.Validate(string(c.Fixtures[name]), params).Report)
				if !bytes.Equal(got, again) {
					t.Fatalf("two runs differ:\n%s\n%s", got, again)
				}
				path := filepath.Join("testdata", "reports", c.ID(), strings.TrimSuffix(name, filepath.Ext(name))+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("report for %s (-want +got):\n%s", name, diff)
				}
			})
		}
	}
}

func reportJSON(t *testing.T, r validators.Report) []byte {
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
