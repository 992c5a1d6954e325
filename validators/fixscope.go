package validators

// FixScope is what a fix of one violation code may change inside the item
// the violation sits in (an item of the contract's item array), beside the
// field the violation names. Repair uses it for the blind merge (seed 003):
// a repaired item keeps every other field of the original, so a model that
// "improves" an explanation while fixing an answer index cannot slip the
// rewrite through.
type FixScope struct {
	// Fields are the item's members a fix may touch besides the one in the
	// violation's path: an option count fix moves the answer index with the
	// options.
	Fields []string
	// Whole lets a fix rewrite the whole item (a near-duplicate question is
	// fixed by writing another one).
	Whole bool
	// Derived marks codes whose violations outside the items local repair
	// re-derives from the items (counts, profile, duration): once the items
	// are right they need no model.
	Derived bool
}

// FixScopeOf returns the fix scope of code. A code without an entry (the
// schema codes among them) may change the field its violation names and
// nothing else; a violation of the item itself (a missing or unexpected
// member) leaves the whole item to the fix.
func FixScopeOf(code string) FixScope {
	return mcqFixScopes[code]
}
