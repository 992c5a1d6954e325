package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/lint"
	"github.com/contractgateway/gateway/validators/packs"
)

// cmdContracts implements `gateway contracts [list|show NAME|lint DIR]`.
func cmdContracts(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("contracts", stderr)
	dir := fs.String("contracts", getenv("GATEWAY_CONTRACTS"), "directory of user contracts (`DIR`)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	sub := "list"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	use, ok := contractsUsage[sub]
	if !ok {
		return usageError("unknown contracts subcommand %q (list, show NAME, lint DIR)", sub)
	}
	if len(pos) != use.args {
		return usageError("%s", use.text)
	}
	if sub == "lint" {
		return lintContracts(pos[0], stdout)
	}
	reg, err := contracts.LoadRegistry(*dir)
	if err != nil {
		return err
	}
	if sub == "list" {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CONTRACT\tRULES\tFALLBACK\tDESCRIPTION")
		for _, c := range reg.List() {
			rules := strings.Join(c.Rules, ",")
			if rules == "" {
				rules = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID(), rules, c.Fallback.Mode, c.Description)
		}
		return tw.Flush()
	}
	c, ok := reg.Lookup(pos[0])
	if !ok {
		return usageError("unknown contract %q (known: %s)", pos[0], strings.Join(reg.Names(), ", "))
	}
	return writeJSON(stdout, c.Describe())
}

// contractsUsage is each contracts subcommand's number of arguments and
// the usage line a wrong number gets.
var contractsUsage = map[string]struct {
	args int
	text string
}{
	"list": {0, "contracts list takes no arguments"},
	"show": {1, "contracts show NAME"},
	"lint": {1, "contracts lint DIR"},
}

// lint loads the contract directory dir (or every contract directory below
// it), compiles each against the built-in rule packs and checks every
// fixture. A contract that does not load is reported with every problem
// it has, and the others are linted all the same: one run shows all that
// is wrong. Exit 1 when anything fails.
func lintContracts(dir string, stdout io.Writer) error {
	if fi, err := os.Stat(dir); err != nil {
		return usageError("contracts lint: %v", err)
	} else if !fi.IsDir() {
		return usageError("contracts lint %s: not a directory", dir)
	}
	cs, loadErr := contracts.LoadPath(dir)
	failed := 0
	for _, err := range config.Problems(loadErr) {
		fmt.Fprintf(stdout, "FAIL %v\n", err)
		failed++
	}
	if len(cs) == 0 && failed == 0 {
		return &exitError{code: 1, err: fmt.Errorf("lint %s: no contract.json found", dir)}
	}
	fixtures := 0
	for _, c := range cs {
		v, err := validators.New(c, packs.Builtins())
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %s: %v\n", c.ID(), err)
			failed++
			continue
		}
		for _, r := range lint.Fixtures(v) {
			fixtures++
			fmt.Fprintln(stdout, r)
			if !r.OK {
				failed++
			}
		}
	}
	fmt.Fprintf(stdout, "%d contracts, %d fixtures, %d failed\n", len(cs), fixtures, failed)
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}
