// Package archtest keeps the import graph flowing one way
// (docs/layout.md): every package of the module has a rank, and a package
// imports only packages of a lower rank. The ranks read as the folder
// list: the JSON foundation beneath validators/, then contracts/ and
// config/, validators/, repair/ and cache/, the guard's own packages
// beneath middleware/, middleware/ itself, the server's features beneath
// gateway/, gateway/, cmd/gateway/. A package without a rank fails, so a
// new folder is placed on purpose. Imports are read from the source files
// with go/parser, so the test cache sees every import change.
package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/contractgateway/gateway"

// ranks places every package of the module (a path inside it). A package
// imports only packages of a lower rank; packages of one rank never import
// each other. The hundreds are the layers of the folder list; the units
// order packages inside a layer.
var ranks = map[string]int{
	// The JSON foundation and the helpers beneath everything.
	"internal/bufpool":      100,
	"internal/codeline":     100,
	"validators/extract":    100,
	"validators/strictjson": 110,
	"validators/celdoc":     120,

	// Contracts and configuration: files → compiled values. A check's
	// CEL environment and its rules compiled into Go sit beneath the
	// contract that compiles them.
	"contracts/celenv":  180,
	"contracts/celfast": 190,
	"config":            200,
	"contracts":         200,

	// Validators: text → report, and the rule packs.
	"validators":                   300,
	"validators/packs/mcq":         310,
	"validators/packs/oraclescore": 310,
	"validators/packs/extraction":  310,
	"validators/packs/planning":    310,
	"validators/internal/packtest": 310,
	"validators/lint":              310,
	"validators/packs":             320,

	// Repair and the cache.
	"repair/syntax/lex":    380,
	"repair/syntax/locate": 390,
	"repair/syntax":        400,
	"repair":               410,
	"cache":                410,

	// The guard's own packages, beneath middleware.
	"middleware/apierr":         500,
	"middleware/codec/frame":    500,
	"middleware/codec/toolcall": 500,
	"middleware/progressive":    500,
	"middleware/corrections":    500,
	"middleware/upstream":       510,
	"middleware/spans":          510,
	"middleware/release":        510,
	"middleware/codec":          520,
	"middleware/route":          520,

	// The wire APIs above the codec core, and their registry above them.
	"middleware/codec/ollama":    525,
	"middleware/codec/openai":    525,
	"middleware/codec/anthropic": 525,
	"middleware/codec/apis":      530,
	"middleware/modelcall":       530,

	"middleware": 600,

	// The server's features, beneath gateway.
	"gateway/outcomes":          700,
	"gateway/access":            700,
	"gateway/edge":              700,
	"gateway/pool":              700,
	"gateway/stats":             700,
	"gateway/debugstore":        700,
	"gateway/models":            700,
	"gateway/outcomes/sqlstore": 705,
	"gateway/outcomes/guardlog": 710,
	"gateway":                   800,
	"cmd/gateway":               900,

	// Test and benchmark helpers, never imported by the product.
	"internal/redistest":     150,
	"internal/pgtest":        150,
	"internal/ollamatest":    150,
	"internal/faultgen":      150,
	"internal/logcount":      150,
	"internal/mcqgen":        150,
	"internal/schemagen":     150,
	"internal/benchupstream": 150,
	"internal/testsum":       150,
	"internal/benchload":     160,

	// The gateway the benchmark programs start: above the gateway it
	// imports, beneath the programs.
	"internal/benchgateway": 950,
}

// topRank is the rank of benchmarks and examples: they may import
// anything, and nothing imports them.
const topRank = 1000

// edgeOnly lists, per standard or third-party import, the folders whose
// packages may import it: echo stays at the edge, and contracts, validators
// and repair stay pure functions without net/http.
var edgeOnly = map[string][]string{
	"github.com/labstack/echo/v4": {"gateway", "middleware", "cmd", "bench", "examples"},
	"net/http":                    {"gateway", "middleware", "cmd", "bench", "examples", "internal/benchload", "internal/benchupstream", "internal/benchgateway", "internal/ollamatest"},
}

// pkg is one package of the tree as its source files say.
type pkg struct {
	path    string            // path inside the module
	imports map[string]string // import path → a file that imports it
}

// readTree parses the imports of every non-test Go file under root (a
// module root) and returns its packages by path. testdata folders and
// hidden folders are skipped, as the go command does.
func readTree(root string) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f.Comments, f.Package) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		k := pkgs[rel]
		if k == nil {
			k = &pkg{path: rel, imports: map[string]string{}}
			pkgs[rel] = k
		}
		for _, im := range f.Imports {
			ip, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
			if _, ok := k.imports[ip]; !ok {
				k.imports[ip] = filepath.ToSlash(filepath.Join(rel, name))
			}
		}
		return nil
	})
	return pkgs, err
}

// ignored reports whether a file is left out of every build by a
// `//go:build ignore` line before its package clause (generators run with
// go run).
func ignored(groups []*ast.CommentGroup, pkgPos token.Pos) bool {
	for _, g := range groups {
		if g.Pos() > pkgPos {
			break
		}
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// rankOf returns a package's rank: its row, or topRank for benchmarks and
// examples; ok is false for a package without one.
func rankOf(ranks map[string]int, p string) (int, bool) {
	if r, ok := ranks[p]; ok {
		return r, true
	}
	if top, _, _ := strings.Cut(p, "/"); top == "bench" || top == "examples" {
		return topRank, true
	}
	return 0, false
}

// allowedAt reports whether a package at p may import an import restricted
// to the folders in allowed.
func allowedAt(p string, allowed []string) bool {
	for _, a := range allowed {
		if p == a || strings.HasPrefix(p, a+"/") {
			return true
		}
	}
	return false
}

// check returns every violation of the ranks in pkgs, sorted: a package
// without a rank, a rank of no package (a renamed package would otherwise
// keep a stale row), an import of a project package of the same or a
// higher rank, and an edge-only import outside its folders.
func check(pkgs map[string]*pkg, ranks map[string]int, edge map[string][]string) []string {
	var bad []string
	for p, k := range pkgs {
		r, ok := rankOf(ranks, p)
		if !ok {
			bad = append(bad, fmt.Sprintf("package %s has no rank: add it to ranks in its layer", p))
			continue
		}
		for ip, file := range k.imports {
			if allowed, ok := edge[ip]; ok && !allowedAt(p, allowed) {
				bad = append(bad, fmt.Sprintf("%s imports %s, which only %s may import", file, ip, strings.Join(allowed, ", ")))
			}
			dep, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			dr, known := rankOf(ranks, dep)
			if known && dr >= r {
				bad = append(bad, fmt.Sprintf("%s imports %s: rank %d imports rank %d; imports flow from higher ranks to lower", file, dep, r, dr))
			}
		}
	}
	for p := range ranks {
		if pkgs[p] == nil {
			bad = append(bad, fmt.Sprintf("rank of %s, which is no package: rename or remove its row", p))
		}
	}
	slices.Sort(bad)
	return bad
}

func TestImportsFlowOneWay(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	pkgs, err := readTree(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gateway", "middleware", "validators/strictjson"} {
		if pkgs[want] == nil {
			t.Fatalf("readTree(%s) lacks %s: the tree was not read", root, want)
		}
	}
	for _, b := range check(pkgs, ranks, edgeOnly) {
		t.Error(b)
	}
}

// TestCheckFindsViolations runs check on a small tree written for it: each
// row adds one file and expects its violation.
func TestCheckFindsViolations(t *testing.T) {
	ranks := map[string]int{"low": 100, "mid": 200, "high": 300, "pure": 200}
	edge := map[string][]string{"net/http": {"high"}}
	tests := []struct {
		name, file, src, want string
	}{
		{"climb", "low/a.go", `package low; import _ "` + module + `/high"`, "low/a.go imports high: rank 100 imports rank 300"},
		{"same rank", "mid/a.go", `package mid; import _ "` + module + `/pure"`, "mid/a.go imports pure: rank 200 imports rank 200"},
		{"no rank", "newpkg/a.go", `package newpkg; import _ "` + module + `/low"`, "package newpkg has no rank"},
		{"stale row", "", "", "rank of pure, which is no package"},
		{"edge import", "mid/b.go", `package mid; import _ "net/http"`, "mid/b.go imports net/http, which only high may import"},
		{"test file ignored", "low/a_test.go", `package low; import _ "` + module + `/high"`, ""},
		{"ignored generator", "low/gen.go", "//go:build ignore\n\npackage main; import _ \"" + module + `/high"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			base := map[string]string{
				"low/low.go":   "package low",
				"mid/mid.go":   `package mid; import _ "` + module + `/low"`,
				"high/high.go": `package high; import (_ "` + module + `/mid"; _ "net/http")`,
				"pure/pure.go": "package pure",
			}
			if tt.name == "stale row" {
				delete(base, "pure/pure.go")
			}
			if tt.file != "" {
				base[tt.file] = tt.src
			}
			for name, src := range base {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(path.Dir(filepath.ToSlash(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			pkgs, err := readTree(root)
			if err != nil {
				t.Fatal(err)
			}
			got := check(pkgs, ranks, edge)
			if tt.want == "" {
				if len(got) != 0 {
					t.Errorf("check(%s) = %q, want no violation", tt.name, got)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("check(%s) = %q, want one violation starting %q", tt.name, got, tt.want)
			}
		})
	}
}
