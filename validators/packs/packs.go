// Package packs is the registry of the built-in rule packs. Each pack
// lives in a package of its own beneath this one and imports validators
// for the types a pack works with, so the registry cannot live in
// validators itself: it sits above both, and whoever compiles contracts
// (the guard, the command line, tools and tests) asks it for the packs.
package packs

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs/extraction"
	"github.com/contractgateway/gateway/validators/packs/mcq"
	"github.com/contractgateway/gateway/validators/packs/oraclescore"
	"github.com/contractgateway/gateway/validators/packs/planning"
)

// Builtins returns the rule packs a contract can name in its "rules" list,
// by name. It is the one place where packs are registered: an explicit map
// rather than init() side effects, so that reading this function tells the
// whole story and tests can build as many independent sets as they like.
// Each call compiles the packs' matchers afresh; callers call it once when
// contracts are loaded.
func Builtins() map[string]validators.RulePack {
	return map[string]validators.RulePack{
		"mcq":          mcq.New(),
		"oracle-score": oraclescore.Rules{},
		"extraction":   extraction.Rules{},
		"planning":     planning.Rules{},
	}
}

// Builtin compiles the built-in contract ref ("mcq", "mcq@1") with the
// built-in rule packs: the one-line way for tools, examples and tests that
// need no user contracts.
func Builtin(ref string) (*validators.Validator, error) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		return nil, err
	}
	c, ok := reg.Lookup(ref)
	if !ok {
		return nil, fmt.Errorf("unknown contract %q (known: %s)", ref, strings.Join(reg.Names(), ", "))
	}
	return validators.New(c, Builtins())
}
