package packs

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/lint"
	"github.com/contractgateway/gateway/validators/packs/extraction"
	"github.com/contractgateway/gateway/validators/packs/oraclescore"
	"github.com/contractgateway/gateway/validators/packs/planning"
)

// builtinDir is the built-in contracts' source directory, read directly so
// that these tests see the files as they are written, not as embedded.
const builtinDir = "../../contracts/builtin"

// builtinContracts are the directories of the built-in contracts.
var builtinContracts = []string{
	"mcq", "oracle-score", "extraction", "extraction@1", "planning",
	"article-structure", "extract-prompts", "link-plan", "json",
}

func TestBuiltinsRegistry(t *testing.T) {
	got := slices.Sorted(maps.Keys(Builtins()))
	want := []string{"extraction", "mcq", "oracle-score", "planning"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Builtins() keys mismatch (-want +got):\n%s", diff)
	}
}

// TestBuiltinFixtures runs every fixture of every built-in contract through
// the whole pipeline: valid_* must validate, invalid_<CODE>_* must report
// CODE. Each contract must have both kinds.
func TestBuiltinFixtures(t *testing.T) {
	fsys := os.DirFS(builtinDir)
	for _, dir := range builtinContracts {
		t.Run(dir, func(t *testing.T) {
			c, err := contracts.Load(fsys, dir)
			if err != nil {
				t.Fatalf("contracts.Load(%q) = %v", dir, err)
			}
			v, err := validators.New(c, Builtins())
			if err != nil {
				t.Fatalf("New(%s) = %v", c.ID(), err)
			}
			kinds := map[bool]int{}
			for _, r := range lint.Fixtures(v) {
				kinds[r.Want == "valid"]++
				if !r.OK {
					t.Errorf("%s", r)
				}
			}
			if kinds[true] == 0 || kinds[false] == 0 {
				t.Errorf("%s has %d valid and %d invalid fixtures, want both kinds", dir, kinds[true], kinds[false])
			}
		})
	}
}

// TestExtractionVersionsCompatible checks the rule for schema evolution
// (versions only add optional members): every valid fixture of version 1 is valid under version 2.
func TestExtractionVersionsCompatible(t *testing.T) {
	v2 := compileFileSchema(t, filepath.Join(builtinDir, "extraction", "schema.json"))
	v1 := compileFileSchema(t, filepath.Join(builtinDir, "extraction@1", "schema.json"))
	files, err := filepath.Glob(filepath.Join(builtinDir, "extraction@1", "testdata", "valid_*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no version 1 fixtures: %v", err)
	}
	for _, f := range files {
		doc := readJSONFile(t, f)
		if err := v1.Validate(doc); err != nil {
			t.Errorf("%s: version 1 schema rejects its own fixture: %v", f, err)
		}
		if err := v2.Validate(doc); err != nil {
			t.Errorf("%s: version 2 schema rejects a version 1 fixture: %v", f, err)
		}
	}
}

func compileFileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := contracts.CompileSchema(filepath.Base(filepath.Dir(path)), raw)
	if err != nil {
		t.Fatalf("CompileSchema(%s) = %v", path, err)
	}
	return s
}

func readJSONFile(t *testing.T, path string) any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestPacksAcceptAnyParams: the packs without parameters ignore whatever a
// shared parameter set holds.
func TestPacksAcceptAnyParams(t *testing.T) {
	for name, pack := range map[string]validators.RulePack{"oracle-score": oraclescore.Rules{}, "extraction": extraction.Rules{}, "planning": planning.Rules{}} {
		if err := pack.CheckParams(validators.Params{"options": "Z"}); err != nil {
			t.Errorf("%s.CheckParams() = %v, want nil", name, err)
		}
	}
}

// TestBuiltin checks the one-line way to a built-in contract: a contract
// that names packs gets them (the mcq pack declares three parameters), and
// an unknown name is an error that lists the known ones.
func TestBuiltin(t *testing.T) {
	tests := []struct {
		ref     string
		wantErr string
		params  int
	}{
		{"mcq", "", 3},
		{"mcq@1", "", 3},
		{"json", "", 0},
		{"no-such-contract", `unknown contract "no-such-contract" (known: `, 0},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			v, err := Builtin(tt.ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Builtin(%q) = %v, want an error containing %q", tt.ref, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Builtin(%q) = %v", tt.ref, err)
			}
			if got := len(v.ParamSpecs()); got != tt.params {
				t.Errorf("Builtin(%q) takes %d params, want %d", tt.ref, got, tt.params)
			}
		})
	}
}
