package repair

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/strictjson"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
)

// mcqCorpus is every MCQ document the project keeps: the built-in
// contract's fixtures, the ladder's corpus and the pack's rule fixtures.
func mcqCorpus(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range []string{
		filepath.Join("..", "contracts", "builtin", "mcq", "testdata"),
		filepath.Join("testdata", "ladder", "corpus"),
		filepath.Join("..", "validators", "packs", "mcq", "testdata", "rules"),
	} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".golden.json") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Join(dir, e.Name())] = string(b)
		}
	}
	return out
}

// mcqValidators are the built-in mcq contract and examples/contracts/mcq-cel.
func mcqValidators(t testing.TB) (pack, cel *validators.Validator) {
	t.Helper()
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Lookup("mcq@1")
	if pack, err = validators.New(c, packs.Builtins()); err != nil {
		t.Fatal(err)
	}
	cs, err := contracts.LoadPath(filepath.Join("..", "examples", "contracts", "mcq-cel"))
	if err != nil || len(cs) != 1 {
		t.Fatalf("LoadPath(mcq-cel) = %v, %v", cs, err)
	}
	if cel, err = validators.New(cs[0], nil); err != nil {
		t.Fatal(err)
	}
	return pack, cel
}

// mcqCELOutside are the codes of the mcq pack that mcq-cel does not
// express: C7 (code in fences, numbered lines) and near-duplicate
// questions (a warning).
var mcqCELOutside = []string{"CODE_FENCE_MISSING", "CODE_LINE_NUMBERS", "DUPLICATE_QUESTION"}

// TestMCQCELAgreesWithThePack checks that the mcq-cel contract, the mcq
// rules written as checks, gives the built-in pack's verdict on every
// document of the project's MCQ corpora, and that local repair (what
// `gateway repair --offline` runs) writes the same document wherever the
// pack's fixes are derivable.
func TestMCQCELAgreesWithThePack(t *testing.T) {
	pack, cel := mcqValidators(t)
	pp, _ := pack.Params(nil)
	cp, _ := cel.Params(nil)
	for name, text := range mcqCorpus(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			a, b := Local(pack, text, pp), Local(cel, text, cp)
			outside := slices.ContainsFunc(a.Before.Violations, func(v validators.Violation) bool {
				return slices.Contains(mcqCELOutside, v.Code) && v.Severity == validators.SeverityError
			})
			if a.Before.Valid != b.Before.Valid && !outside {
				t.Errorf("verdict: pack valid=%v %v, mcq-cel valid=%v %v", a.Before.Valid, a.Before.Codes(), b.Before.Valid, b.Before.Codes())
			}
			if outside || a.Doc == nil || b.Doc == nil {
				return
			}
			if a.Report.Valid != b.Report.Valid {
				t.Errorf("after local repair: pack valid=%v %v, mcq-cel valid=%v %v", a.Report.Valid, a.Report.Codes(), b.Report.Valid, b.Report.Codes())
			}
			if a.Report.Valid {
				if ga, gb := string(strictjson.Marshal(a.Doc)), string(strictjson.Marshal(b.Doc)); ga != gb {
					t.Errorf("repaired documents differ:\npack    %s\nmcq-cel %s", ga, gb)
				}
			}
		})
	}
}
