// Package archtest keeps the import graph flowing one way (ARCHITECTURE.md):
// cmd → gateway → middleware → {cache, repair} → validators → contracts →
// strictjson (the edge rules and the debug store sit between: gateway →
// {edge, debugstore} → middleware; the wire codecs, middleware/codec,
// beneath middleware and beside repair), with the upstream client
// (upstream) beneath both gateway and middleware and importing neither —
// nor edge, debugstore, cache, config or echo: a call to Ollama never
// climbs back — cache and config importing no project package but
// strictjson, the syntactic repairer (repair/syntax) none but strictjson
// and extract, extract (think sections and code fences, shared by
// validators and repair/syntax) none at all, the outcome store (outcomes)
// none of the guard's, its wiring (outcomes/guardlog) beneath gateway, and
// net/http and echo kept at the edge.
package archtest

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/contractgateway/gateway"

// goList runs `go list` with args and returns the packages it prints. A
// package it cannot find is an error, never an empty list: a row whose
// package was renamed or removed would otherwise pass whatever the new
// package imports.
func goList(args ...string) ([]string, error) {
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			// The first line names the package; the rest is go get advice.
			msg, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n")
			return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(args, " "), err, msg)
		}
		return nil, fmt.Errorf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out)), nil
}

// deps lists the packages pkg (a path inside the module) depends on,
// transitively, via `go list -deps`; the list includes pkg itself.
func deps(pkg string) ([]string, error) {
	return goList("-deps", module+"/"+pkg)
}

// checkExist returns an error naming the first of paths that is no
// package: a forbidden package that was renamed is no longer forbidden,
// so its rows would pass without checking anything.
func checkExist(paths []string) error {
	_, err := goList(paths...)
	return err
}

func TestImportsFlowOneWay(t *testing.T) {
	// forbidden lists, per package, the packages it must not reach.
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"contracts", []string{module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators/packs", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators/packs/mcq", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators/packs/oraclescore", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators/packs/extraction", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators/packs/planning", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"validators/internal/packtest", []string{module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"strictjson", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/cache", module + "/config", module + "/middleware", module + "/gateway", "net/http"}},
		{"extract", []string{module + "/strictjson", module + "/contracts", module + "/validators", module + "/repair", module + "/cache", module + "/config", module + "/middleware", module + "/gateway", "net/http"}},
		{"strictjson", []string{module + "/extract"}},
		{"repair/syntax", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http"}},
		{"repair", []string{module + "/middleware", module + "/gateway", module + "/config", module + "/cache", "net/http", "github.com/labstack/echo/v4"}},
		{"cache", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/config"}},
		{"config", []string{module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache"}},
		{"middleware", []string{module + "/gateway", module + "/edge", module + "/debugstore"}},
		{"middleware/codec", []string{module + "/middleware", module + "/gateway", module + "/edge", module + "/debugstore", module + "/cache", module + "/config", module + "/repair", module + "/upstream", "github.com/labstack/echo/v4"}},
		{"edge", []string{module + "/gateway", module + "/config", module + "/debugstore"}},
		{"access", []string{module + "/gateway", module + "/config", module + "/middleware", module + "/debugstore", module + "/edge", "github.com/labstack/echo/v4"}},
		{"debugstore", []string{module + "/gateway", module + "/config", module + "/edge"}},
		{"upstream", []string{module + "/middleware", module + "/gateway", module + "/edge", module + "/debugstore", module + "/cache", module + "/config", module + "/middleware/codec", "github.com/labstack/echo/v4"}},
		{"middleware/progressive", []string{module + "/middleware", module + "/middleware/codec", module + "/repair", module + "/gateway", module + "/upstream", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"middleware/release", []string{module + "/middleware", module + "/middleware/codec", module + "/gateway", module + "/upstream", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"middleware/schemacache", []string{module + "/middleware", module + "/middleware/codec", module + "/repair", module + "/gateway", module + "/upstream", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"middleware/spans", []string{module + "/middleware", module + "/middleware/codec", module + "/repair", module + "/gateway", module + "/upstream", module + "/cache", module + "/config", "github.com/labstack/echo/v4"}},
		{"middleware/errwrite", []string{module + "/middleware", module + "/gateway", module + "/upstream", module + "/cache", module + "/config", module + "/repair"}},
		{"middleware/corrections", []string{module + "/middleware", module + "/middleware/codec", module + "/gateway", module + "/upstream", module + "/cache", module + "/config", "net/http", "github.com/labstack/echo/v4"}},
		{"middleware/codec/frame", []string{module + "/middleware", module + "/middleware/codec", module + "/gateway", module + "/upstream", module + "/repair", module + "/validators", "github.com/labstack/echo/v4"}},
		{"middleware/codec/assemble", []string{module + "/middleware", module + "/middleware/codec", module + "/gateway", module + "/upstream", module + "/repair", module + "/validators", "github.com/labstack/echo/v4"}},
		{"middleware/codec/toolcall", []string{module + "/middleware", module + "/middleware/codec", module + "/gateway", module + "/upstream", module + "/repair", module + "/validators", "net/http", "github.com/labstack/echo/v4"}},
		{"stats", []string{module + "/gateway", module + "/edge", module + "/debugstore", module + "/config", module + "/access"}},
		{"outcomes", []string{module + "/gateway", module + "/middleware", module + "/config", module + "/debugstore", module + "/edge", module + "/cache", module + "/repair", module + "/validators", module + "/upstream", "github.com/labstack/echo/v4"}},
		{"outcomes/guardlog", []string{module + "/gateway", module + "/config", module + "/edge"}},
		{"internal/codeline", []string{module + "/strictjson", module + "/contracts", module + "/validators", module + "/repair", module + "/middleware", module + "/gateway", module + "/cache", module + "/config", "net/http"}},
		{"internal/logcount", []string{module + "/gateway", module + "/middleware", module + "/config", module + "/outcomes", "github.com/labstack/echo/v4"}},
		{"internal/pgtest", []string{module + "/gateway", module + "/middleware", module + "/config", module + "/outcomes", "github.com/labstack/echo/v4"}},
		{"apierr", []string{module + "/repair", module + "/cache", module + "/config", module + "/middleware", module + "/gateway", module + "/edge", module + "/debugstore", module + "/upstream", module + "/middleware/codec", "github.com/labstack/echo/v4"}},
	}
	var forbidden []string
	for _, tt := range tests {
		forbidden = append(forbidden, tt.forbidden...)
	}
	slices.Sort(forbidden)
	if err := checkExist(slices.Compact(forbidden)); err != nil {
		t.Fatalf("a forbidden package does not exist; rename it in its rows: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			list, err := deps(tt.pkg)
			if err != nil {
				t.Fatalf("package %s: %v; rename or remove its row", tt.pkg, err)
			}
			got := map[string]bool{}
			for _, d := range list {
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

// TestMissingPackageFails checks that the helpers fail on a package that
// does not exist rather than report it as importing nothing.
func TestMissingPackageFails(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
	}{
		{"deps of a missing package", func() error { _, err := deps("no/such/package"); return err }},
		{"deps of a directory without Go files", func() error { _, err := deps("internal"); return err }},
		{"forbidden package missing", func() error { return checkExist([]string{"net/http", module + "/no/such/package"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.err(); err == nil {
				t.Errorf("%s: err = nil, want an error", tt.name)
			}
		})
	}
}

// TestDepsListsThePackage checks the positive case the rows rely on: an
// existing package lists itself and what it imports.
func TestDepsListsThePackage(t *testing.T) {
	got, err := deps("validators")
	if err != nil {
		t.Fatalf("deps(validators) = %v", err)
	}
	for _, want := range []string{module + "/validators", module + "/strictjson"} {
		if !slices.Contains(got, want) {
			t.Errorf("deps(validators) lacks %s", want)
		}
	}
	if err := checkExist([]string{"net/http", module + "/strictjson"}); err != nil {
		t.Errorf("checkExist of existing packages = %v", err)
	}
}
