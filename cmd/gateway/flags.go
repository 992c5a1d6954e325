package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
)

// paramFlags collects repeated --param k=v flags.
type paramFlags validators.Params

func (p paramFlags) String() string { return "" }

func (p paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	p[k] = strings.TrimSpace(v)
	return nil
}

// contractFlags are the flags shared by validate and repair.
type contractFlags struct {
	contract  string
	schema    string
	contracts string
	params    paramFlags
}

func (f *contractFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.params = paramFlags{}
	fs.StringVar(&f.contract, "contract", "", "contract `NAME` or NAME@VERSION")
	fs.StringVar(&f.schema, "schema", "", "validate against the JSON Schema in `FILE` (schema-only contract)")
	fs.StringVar(&f.contracts, "contracts", getenv("GATEWAY_CONTRACTS"), "directory of user contracts (`DIR`)")
	fs.Var(f.params, "param", "contract parameter `k=v` (repeatable)")
}

// validator resolves the flags to a validator and the merged parameters.
func (f *contractFlags) validator() (*validators.Validator, validators.Params, error) {
	var c *contracts.Contract
	switch {
	case f.contract != "" && f.schema != "":
		return nil, nil, usageError("--contract and --schema exclude each other")
	case f.schema != "":
		raw, err := os.ReadFile(f.schema)
		if err != nil {
			return nil, nil, usageError("%v", err)
		}
		if c, err = contracts.FromSchema(raw); err != nil {
			return nil, nil, usageError("%v", err)
		}
	case f.contract != "":
		reg, err := contracts.LoadRegistry(f.contracts)
		if err != nil {
			return nil, nil, &exitError{code: 2, err: err}
		}
		var ok bool
		if c, ok = reg.Lookup(f.contract); !ok {
			return nil, nil, usageError("unknown contract %q (known: %s)", f.contract, strings.Join(reg.Names(), ", "))
		}
	default:
		return nil, nil, usageError("--contract NAME or --schema FILE is required")
	}
	v, err := validators.New(c, packs.Builtins())
	if err != nil {
		return nil, nil, &exitError{code: 2, err: err}
	}
	params, err := v.Params(validators.Params(f.params))
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return v, params, nil
}

// input resolves the flags to a validator and the merged parameters,
// then reads the document from FILE, or standard input for "-" or no
// argument: what validate and repair both start with.
func (f *contractFlags) input(args []string, stdin io.Reader) (*validators.Validator, validators.Params, []byte, error) {
	v, params, err := f.validator()
	if err != nil {
		return nil, nil, nil, err
	}
	in, err := readInput(args, stdin)
	if err != nil {
		return nil, nil, nil, err
	}
	return v, params, in, nil
}

// readInput reads FILE, or standard input for "-" or no argument.
func readInput(args []string, stdin io.Reader) ([]byte, error) {
	switch len(args) {
	case 0:
		return io.ReadAll(stdin)
	case 1:
		if args[0] == "-" {
			return io.ReadAll(stdin)
		}
		b, err := os.ReadFile(args[0])
		if err != nil {
			return nil, usageError("%v", err)
		}
		return b, nil
	}
	return nil, usageError("at most one input FILE, got %d", len(args))
}

// writeJSON prints v indented, without HTML escaping, with a final newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newFlagSet returns a flag set that reports errors to stderr and returns
// them instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args allowing flags after the positional FILE
// ("validate in.txt --contract mcq"), which users type as often as not.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				// -h asked for the usage the flag set just printed: no
				// error, and nothing else to do.
				return nil, &exitError{code: 0}
			}
			return nil, &exitError{code: 2}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
