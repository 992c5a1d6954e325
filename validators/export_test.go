package validators

// The external tests of this package (package validators_test) run the
// built-in contracts with their rule packs. The packs import this package,
// so those tests cannot be part of it; what they need of its internals is
// exported to them here, for tests only.

// ReportJSON is reportJSON for the external tests.
var ReportJSON = reportJSON

// ViolationPos returns the document offset a report orders v by.
func ViolationPos(v Violation) int { return v.pos }
