package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeDefinesContractHeaders: every X-Contract-* header the gateway
// reads or sets, and X-Cache, has a row of its own in the table of headers
// of docs/http.md, so that no header reaches a client undefined.
func TestReadmeDefinesContractHeaders(t *testing.T) {
	readme := readRepoFile(t, filepath.Join("docs", "http.md"))
	header := regexp.MustCompile(`"(X-Contract(?:-[A-Za-z]+)*|X-Cache)"`)
	found := map[string]string{}
	for _, dir := range []string{"middleware", "gateway", "edge"} {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range header.FindAllStringSubmatch(string(b), -1) {
				found[m[1]] = f
			}
		}
	}
	if len(found) < 4 {
		t.Fatalf("found only %v in the sources; the scan is broken", found)
	}
	for h, f := range found {
		if !strings.Contains(readme, "| `"+h+"` |") {
			t.Errorf("%s uses the header %s, which the table of headers in docs/http.md does not define", f, h)
		}
	}
}

// TestReadmePrerequisitesAreUsed: every tool the README's list of what
// `make test` needs names is one the scripts, the Makefile or CI call, so
// that a fresh machine installs nothing it does not need.
func TestReadmePrerequisitesAreUsed(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	start := strings.Index(readme, "`make test` needs")
	if start < 0 {
		t.Fatal("README has no list of what `make test` needs")
	}
	section := readme[start:]
	if end := strings.Index(section, "\n\n`make test` runs"); end >= 0 {
		section = section[:end]
	}
	var used strings.Builder
	scripts, err := filepath.Glob(filepath.Join("..", "..", "scripts", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(scripts, "Makefile", ".ci/run") {
		used.WriteString(readRepoFile(t, strings.TrimPrefix(f, filepath.Join("..", "..")+string(filepath.Separator))))
	}
	tools := []string{"gcc", "g++", "cmake", "make", "ninja", "clang", "docker", "python3", "curl", "node", "npm",
		"redis-server", "chromium", "sudo", "apt-get", "nlohmann-json3-dev", "libstb-dev"}
	for _, tool := range tools {
		word := regexp.MustCompile(`(^|[^A-Za-z0-9_+-])` + regexp.QuoteMeta(tool) + `($|[^A-Za-z0-9_+-])`)
		if word.MatchString(section) && !word.MatchString(used.String()) {
			t.Errorf("README says `make test` needs %s, which no script, Makefile rule or CI step uses", tool)
		}
	}
}

// TestMakeTestCounts: the README's test command ends with internal/testsum's
// line counting the tests, and keeps go test's exit status (pipefail).
func TestMakeTestCounts(t *testing.T) {
	mk := readRepoFile(t, "Makefile")
	start := strings.Index(mk, "\ntest:")
	if start < 0 {
		t.Fatal("Makefile has no test rule")
	}
	recipe := mk[start+1:]
	if end := strings.Index(recipe, "\n\n"); end >= 0 {
		recipe = recipe[:end]
	}
	for _, want := range []string{"set -o pipefail", "test -json", "| $(GO) run ./internal/testsum"} {
		if !strings.Contains(recipe, want) {
			t.Errorf("make test's recipe lacks %q:\n%s", want, recipe)
		}
	}
	if ci := readRepoFile(t, ".ci/run"); !strings.Contains(ci, "\nmake test\n") {
		t.Errorf(".ci/run does not call the README's test command, make test")
	}
}

// TestLintReportsEveryContract: `contracts lint DIR` reports every broken
// contract of DIR with its file, line and column, and still checks the
// fixtures of the contracts that load, in one run.
func TestLintReportsEveryContract(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "good", "contract.json"), `{"name": "good", "version": "1", "shape": {"expect": "object"}}`)
	mustWrite(t, filepath.Join(dir, "good", "testdata", "valid_object.json"), `{"a": 1}`)
	mustWrite(t, filepath.Join(dir, "typo", "contract.json"), "{\"name\": \"typo\", \"version\": \"1\",\n  \"fallbak\": {\"mode\": \"error\"}}")
	mustWrite(t, filepath.Join(dir, "broken", "contract.json"), `{"name": "broken", "version": "1", "schema": "schema.json"}`)
	mustWrite(t, filepath.Join(dir, "broken", "schema.json"), "{\n  \"type\": \"object\",\n  \"required\": [\"a\",]\n}")
	code, out, stderr := runCLI(t, "", "contracts", "lint", dir)
	if code != 1 {
		t.Errorf("contracts lint = exit %d, want 1; stderr %s", code, stderr)
	}
	for _, want := range []string{
		"FAIL " + filepath.Join(dir, "typo", "contract.json") + `: line 2, column 3: unknown field "fallbak"`,
		"FAIL " + filepath.Join(dir, "broken", "schema.json") + ": line 3, column 19: trailing comma",
		"valid_object.json",
		"1 contracts, 1 fixtures, 2 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("contracts lint output lacks %q:\n%s", want, out)
		}
	}
}
