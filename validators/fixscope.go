package validators

import "fmt"

// FixScope is what a fix of one violation code may change, beside the field
// the violation names. Repair uses it for the blind merge: a
// repaired item keeps every other field of the original, and an item no
// violation names keeps all of them, so a model that "improves" an
// explanation while fixing an answer index cannot slip the rewrite through.
// A scope too narrow is as wrong as none: the merge would undo the very fix
// the violation's hint asks for, so each pack declares the scope of its
// codes beside the rules that emit them.
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
	// ItemFields are, for a violation outside the items, the members of
	// any item its fix may set: an event without a start time is fixed by
	// a question at the top of the document or by the event's start_time.
	ItemFields []string
}

// FixScopeDeclarer is a rule pack that declares the fix scopes of its codes.
// A code no pack declares (the schema codes among them) may change the
// field its violation names and nothing else; a violation of an item
// itself (a missing or unexpected member) leaves the whole item to the fix.
type FixScopeDeclarer interface {
	FixScopes() map[string]FixScope
}

// FixScope returns the fix scope of code as the contract's rule packs
// declare it; the zero FixScope for a code none declares.
func (v *Validator) FixScope(code string) FixScope {
	return v.scopes[code]
}

// fixScopes gathers the fix scopes of packs, once per contract. A code is
// emitted by one pack; two packs declaring it is a mistake in the packs,
// refused when the contract loads rather than merged by chance.
func fixScopes(names []string, packs []RulePack) (map[string]FixScope, error) {
	out := map[string]FixScope{}
	owner := map[string]string{}
	for k, p := range packs {
		d, ok := p.(FixScopeDeclarer)
		if !ok {
			continue
		}
		for code, s := range d.FixScopes() {
			if prev, dup := owner[code]; dup {
				return nil, fmt.Errorf("rule packs %q and %q both declare the fix scope of %s", prev, names[k], code)
			}
			owner[code] = names[k]
			out[code] = s
		}
	}
	return out, nil
}
