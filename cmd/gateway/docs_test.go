package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway"
)

// TestHelpListsCommands: --help names every subcommand, repair with a
// model included, and the GATEWAY_* variables.
func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runCLI(t, "", "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"gateway [serve]", "gateway validate", "gateway repair --offline", "repair --contract NAME --ollama URL --model MODEL",
		"gateway contracts [list | show NAME | lint DIR]", "GATEWAY_UPSTREAM", "GATEWAY_CONFIG", "GATEWAY_LOG_FORMAT"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not say %q:\n%s", want, out)
		}
	}
}

// TestContractsShowAgreesWithAdmin: `gateway contracts show NAME` and the
// gateway's GET /contracts/{name} answer the same description, for a
// built-in and a user contract.
func TestContractsShowAgreesWithAdmin(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "gateway", "testdata", "e2e", "contracts"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Upstream = "http://127.0.0.1:1"
	cfg.ContractsDir = dir
	srv, err := gateway.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()
	for _, name := range []string{"mcq", "oracle-score@1", "story"} {
		code, out, stderr := runCLI(t, "", "contracts", "--contracts", dir, "show", name)
		if code != 0 {
			t.Fatalf("contracts show %s: exit %d: %s", name, code, stderr)
		}
		resp, err := http.Get(gw.URL + "/contracts/" + name)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var cli, admin any
		if err := json.Unmarshal([]byte(out), &cli); err != nil {
			t.Fatalf("contracts show %s: %v", name, err)
		}
		if err := json.Unmarshal(body, &admin); err != nil {
			t.Fatalf("GET /contracts/%s = %d %s: %v", name, resp.StatusCode, body, err)
		}
		if diff := cmp.Diff(cli, admin); diff != "" {
			t.Errorf("%s: contracts show and /contracts/{name} differ (-cli +admin):\n%s", name, diff)
		}
	}
}

// TestReadmeContractLints: the contract README.md walks through
// (examples/contracts/todo) loads and its fixtures pass.
func TestReadmeContractLints(t *testing.T) {
	code, out, stderr := runCLI(t, "", "contracts", "lint", filepath.Join("..", "..", "examples", "contracts"))
	if code != 0 || !strings.Contains(out, "3 contracts, 6 fixtures, 0 failed") {
		t.Errorf("contracts lint examples/contracts = %d\n%s%s", code, out, stderr)
	}
}
