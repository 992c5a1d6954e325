package repair

import "github.com/contractgateway/gateway/repair/syntax"

// Change records one edit made by local repair (syntax.Change: the
// syntactic repairer makes most of them, and the value fixes use the same
// record). Every edit is reported (SPEC §5).
type Change = syntax.Change
