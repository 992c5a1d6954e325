package main

import (
	"io"

	"github.com/contractgateway/gateway/repair"
)

// cmdValidate implements `gateway validate`: the report on stdout, exit 0
// when valid, 1 when invalid, 2 on a usage error.
func cmdValidate(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	var cf contractFlags
	cf.register(fs, getenv)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	v, params, in, err := cf.input(pos, stdin)
	if err != nil {
		return err
	}
	report := repair.Check(v, string(in), params)
	if err := writeJSON(stdout, report); err != nil {
		return err
	}
	if !report.Valid {
		return &exitError{code: 1}
	}
	return nil
}
