package repair

import "github.com/contractgateway/gateway/repair/syntax"

// Change records one edit made by local repair (syntax.Change: the
// syntactic repairer makes most of them, and the value fixes use the same
// record). Every edit is reported, so that what the gateway changed in a
// model's output is never hidden.
type Change = syntax.Change
