// Package archtest keeps the import graph flowing one way (ARCHITECTURE.md):
// cmd → gateway → middleware → {cache, repair} → validators → contracts →
// strictjson, with cache and config importing no project package but
// strictjson, the syntactic repairer (repair/syntax) none but strictjson
// and extract, extract (think sections and code fences, shared by
// validators and repair/syntax) none at all, and net/http and echo kept at
// the edge.
package archtest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/contractgateway/gateway"

// deps lists the packages pkg depends on, transitively, via `go list -deps`.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
	if err != nil {
		if files, _ := filepath.Glob("../../" + pkg + "/*.go"); len(files) == 0 {
			t.Skipf("package %s has no Go files yet", pkg)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestImportsFlowOneWay(t *testing.T) {
	// forbidden lists, per package, the packages it must not reach.
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"contracts", []string{module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"strictjson", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/cache", module + "/config", module + "/middleware", module + "/gateway", "net/http"}},
		{"extract", []string{module + "/strictjson", module + "/contracts", module + "/validators", module + "/repair", module + "/cache", module + "/config", module + "/middleware", module + "/gateway", "net/http"}},
		{"strictjson", []string{module + "/extract"}},
		{"repair/syntax", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http"}},
		{"repair", []string{module + "/middleware", module + "/gateway", module + "/config", module + "/cache", "net/http", "github.com/labstack/echo/v4"}},
		{"cache", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/config"}},
		{"config", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache"}},
		{"middleware", []string{module + "/gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			got := map[string]bool{}
			for _, d := range deps(t, tt.pkg) {
				got[d] = true
			}
			for _, f := range tt.forbidden {
				if got[f] {
					t.Errorf("%s imports %s (directly or not); imports must flow cmd → gateway → middleware → repair → validators → contracts", tt.pkg, f)
				}
			}
		})
	}
}
