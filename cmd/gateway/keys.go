package main

import (
	"fmt"
	"io"

	"github.com/contractgateway/gateway/gateway/access"
)

// cmdKeys implements `gateway keys new NAME`: it prints a fresh random
// key, once — the gateway keeps only its hash, so it cannot be shown
// again — and the lines of the config that admit it.
func cmdKeys(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("keys", stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "new" {
		return usageError("usage: gateway keys new NAME")
	}
	key, sum := access.NewKey()
	lines, err := access.ConfigLines(pos[1], sum)
	if err != nil {
		return usageError("%v", err)
	}
	fmt.Fprintf(stdout, "key: %s\n\nGive the key to its client (Authorization: Bearer KEY, or x-api-key: KEY); it is shown only now.\nAdd its hash to the config:\n\n%s", key, lines)
	return nil
}
