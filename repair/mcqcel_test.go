package repair

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
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
// express: near-duplicate questions (a warning).
var mcqCELOutside = []string{"DUPLICATE_QUESTION"}

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

// mcqCodeTexts are question and option texts with code in them: fences
// with and without a language, unclosed, inline, twice-escaped newlines,
// code lines numbered, unnumbered and numbered another way, blank lines
// around a block and code written outside one.
var mcqCodeTexts = []string{
	"What does this print?",
	"What does this print?\n```python\n1: x = 1\n2: print(x)\n```",
	"What does this print?\n```python\nx = 1\nprint(x)\n```",
	"What does this print?\n```python\n\n1: x = 1\n\n2: print(x)\n\n```",
	"What does this print?\n```python\n\nx = 1\n\nprint(x)\n\n```",
	"What does this print?\n```python\n3. x = 1\n4) print(x)\n5:\n```",
	"What does this print?\n```\nx = 1\n```",
	"What does this print?\n```py\\nx = 1\n```",
	"What does this print?\n```c++ code\n1: int x;\n```",
	"What does this print?\n```python\n1: x = 1",
	"What does this print?\n```python\nx = 1\nprint(x)```",
	"What does this print?\n  ```python\n1: x = 1\n  ```\nAnd this?\n```js\nlet y = 2;\n```",
	"What does ```x = 1\\ny = 2``` print?",
	"What does `x` print in ```x = 1``` here?",
	"What does this print?\nx = 1\nprint(x)",
	"What does this print?\nx = 1\ny = 2",
	"What does this print?\ndef f():\n    return 1",
	"Which is true?\nThe list is sorted.\nIt returns None.",
	"E = mc²\nF = ma",
	"What does this print?\nfor i in range(3): print(i)\n\nprint(1)",
	"Compare:\nint x = 1;\nint y = 2;",
	"1: x = 1\n2: y = 2",
	"What happens?\nfoo(1, 2);\nbar = 3",
	"What happens?\n```python\n1: x = 1\n```\nfoo(1)\nbar(2)",
	"```",
	"```python",
	"\n\n",
}

// mcqCodeDoc is a valid one-question document whose question reads
// "1. "+question and whose first option is option.
func mcqCodeDoc(t testing.TB, question, option string) string {
	t.Helper()
	doc, err := strictjson.ParseString(mcqgen.Questions(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Replace("/questions/0/question", strictjson.String("1. "+question)); err != nil {
		t.Fatal(err)
	}
	if err := doc.Replace("/questions/0/options/0", strictjson.String(option)); err != nil {
		t.Fatal(err)
	}
	return string(strictjson.Marshal(doc))
}

// checkMCQCELCode compares the mcq pack and mcq-cel on one document: the
// same C7 codes before repair, and the same repaired document.
func checkMCQCELCode(t *testing.T, pack, cel *validators.Validator, text string) {
	t.Helper()
	pp, _ := pack.Params(nil)
	cp, _ := cel.Params(nil)
	a, b := Local(pack, text, pp), Local(cel, text, cp)
	c7 := func(r validators.Report) []string {
		var out []string
		for _, c := range r.Codes() {
			if strings.HasPrefix(c, "CODE_") && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		return out
	}
	if ca, cb := c7(a.Before), c7(b.Before); !slices.Equal(ca, cb) {
		t.Errorf("%q: C7 codes: pack %v, mcq-cel %v", text, ca, cb)
	}
	if a.Doc == nil || b.Doc == nil {
		return
	}
	if ga, gb := string(strictjson.Marshal(a.Doc)), string(strictjson.Marshal(b.Doc)); ga != gb {
		t.Errorf("%q: repaired documents differ:\npack    %s\nmcq-cel %s", text, ga, gb)
	}
}

// TestMCQCELCodeAgreesWithThePack checks mcq-cel's C7 checks against the
// pack's C7 on code in questions and in options.
func TestMCQCELCodeAgreesWithThePack(t *testing.T) {
	pack, cel := mcqValidators(t)
	for _, s := range mcqCodeTexts {
		checkMCQCELCode(t, pack, cel, mcqCodeDoc(t, s, "It is sorted in place"))
		checkMCQCELCode(t, pack, cel, mcqCodeDoc(t, "Which is true?", s))
	}
}

// FuzzMCQCELCode compares mcq-cel's C7 checks with the pack's on any
// question and option text.
func FuzzMCQCELCode(f *testing.F) {
	for _, s := range mcqCodeTexts {
		f.Add(s, "It is sorted in place")
		f.Add("Which is true?", s)
	}
	pack, cel := mcqValidators(f)
	f.Fuzz(func(t *testing.T, question, option string) {
		if !utf8.ValidString(question) || !utf8.ValidString(option) || strings.TrimSpace(option) == "" {
			return
		}
		checkMCQCELCode(t, pack, cel, mcqCodeDoc(t, question, option))
	})
}
