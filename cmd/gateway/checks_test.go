package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLintRunsChecks(t *testing.T) {
	code, out, stderr := runCLI(t, "", "contracts", "lint", filepath.Join("..", "..", "examples", "contracts", "invoice"))
	if code != 0 || !strings.Contains(out, "ok   invoice@1 invalid_LINE_AMOUNT_wrong_product.json: want LINE_AMOUNT, got LINE_AMOUNT") ||
		!strings.Contains(out, "1 contracts, 4 fixtures, 0 failed") {
		t.Errorf("contracts lint examples/contracts/invoice = %d\n%s%s", code, out, stderr)
	}
}

func TestLintLocatesCheckErrors(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "inv", "contract.json"), "{\"name\": \"inv\", \"version\": \"1\", \"schema\": \"schema.json\",\n"+
		"  \"checks\": [\n"+
		"    {\"code\": \"TOTAL\", \"rule\": \"self.total == self.items.map(i, i.amount).summ()\"},\n"+
		"    {\"code\": \"LINE\", \"for_each\": \"/total\", \"rule\": \"self > 0\"}\n"+
		"  ]}")
	mustWrite(t, filepath.Join(dir, "inv", "schema.json"), `{"type": "object", "properties": {"total": {"type": "number"}, "items": {"type": "array"}}}`)
	mustWrite(t, filepath.Join(dir, "good", "contract.json"), `{"name": "good", "version": "1", "shape": {"expect": "object"}}`)
	code, out, stderr := runCLI(t, "", "contracts", "lint", dir)
	if code != 1 {
		t.Errorf("contracts lint = exit %d, want 1; stderr %s", code, stderr)
	}
	file := filepath.Join(dir, "inv", "contract.json")
	for _, want := range []string{
		"FAIL " + file + ": line 3, column 78: checks[0].rule: undeclared reference to 'summ'",
		"FAIL " + file + ": line 4, column 34: checks[1]: for_each \"/total\": the schema has no array there",
		"1 contracts, 0 fixtures, 2 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("contracts lint output lacks %q:\n%s", want, out)
		}
	}
}

// TestReadmeInvoiceIsTheExample checks that the README's contract with
// checks from scratch is examples/contracts/invoice as it is, and short.
func TestReadmeInvoiceIsTheExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Checks: rules you write in the contract")
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for _, part := range strings.Split(section, "```json\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks = append(blocks, block)
	}
	if len(blocks) != 2 {
		t.Fatalf("README checks section has %d json blocks, want 2", len(blocks))
	}
	lines := 0
	for i, name := range []string{"schema.json", "contract.json"} {
		want, err := os.ReadFile(filepath.Join("..", "..", "examples", "contracts", "invoice", name))
		if err != nil {
			t.Fatal(err)
		}
		if blocks[i] != string(want) {
			t.Errorf("README's %s differs from examples/contracts/invoice:\n%s", name, blocks[i])
		}
		lines += strings.Count(blocks[i], "\n")
	}
	if lines >= 40 {
		t.Errorf("README's invoice is %d lines, want under 40", lines)
	}
}
