package validators

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/contracts"
)

// builtinWithoutPacks compiles the built-in contract ref with no rule
// packs. The core's tests use contracts that name none; the packs sit in
// packages above this one (packs.Builtin), where the contracts that use
// them are tested.
func builtinWithoutPacks(ref string) (*Validator, error) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		return nil, err
	}
	c, ok := reg.Lookup(ref)
	if !ok {
		return nil, fmt.Errorf("unknown contract %q (known: %s)", ref, strings.Join(reg.Names(), ", "))
	}
	return New(c, nil)
}
