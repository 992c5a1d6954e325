package main

import (
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
