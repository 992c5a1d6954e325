// Package validators turns a model's text into a Report: it extracts the
// one JSON value, parses it strictly, normalises its shape, validates it
// against the contract's JSON Schema and runs the contract's rule packs,
// reporting every violation with its code, location and, where the right
// value follows from the document, its fix.
//
// It owns what every stage and every pack shares: Violation, Report and
// the codes, the RulePack interface with its Emitter, parameters and fix
// scopes. The packs themselves live in packages of their own under
// validators/packs, registered by packs.Builtins(); they import this
// package, so this package never names them.
package validators
