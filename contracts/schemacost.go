package contracts

import (
	"cmp"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DefaultMaxSchemaCost bounds the expanded size of every compiled schema,
// a client's and a contract file's alike (SchemaCost). Size limits on the
// text do not bound the work: `$ref` lets a 1.7 KB schema name one
// subschema twice at each of 26 levels, and the validator then walks 2^26
// paths for a single value (measured here: about 1.5 µs a subschema;
// 2×20 levels took 3.2 s, 3×14 11 s, 2×26 minutes). The built-in contracts
// expand to at most 37 and the widest flat schema the text limits admit to
// about 4,100; 20,000 leaves room for schemas that reuse their definitions
// and keeps the walk of one value near 20 ms.
const DefaultMaxSchemaCost = 20_000

// SchemaCost estimates how many subschemas the validator walks for one
// value in the worst case: every applicator (allOf, anyOf, oneOf, not,
// if/then/else, properties, items, …) counted as if it applied, and every
// reference ($ref, $dynamicRef, $recursiveRef) counted with the full cost
// of its target each time it is met, so fan-out through references
// multiplies as it does in the validator. An enum adds one per value, the
// comparisons it costs. A reference back into a schema that is still being
// counted (a recursive schema) counts once: the validator only follows such
// a cycle one level of the value deeper each time, so the value's own size
// bounds it, or stops it as a reference cycle at the same place.
//
// The walk is over the compiled schema, so references resolve exactly as
// the validator resolves them ($id, $anchor, JSON pointers, the built-in
// meta-schemas). Each subschema is costed once and remembered, so the
// estimate itself takes time linear in the compiled schema. The result
// saturates at limit+1 (limit <= 0 means no saturation below the int64 range):
// counting stops as soon as the answer is known to be over.
func SchemaCost(s *jsonschema.Schema, limit int64) int64 {
	return schemaCost(s, nil, limit)
}

// schemaCost is SchemaCost with the extra subschemas a dynamic reference
// may resolve to that the static graph does not reach (schemas declaring
// $dynamicAnchor or $recursiveAnchor in $defs no one refers to).
func schemaCost(s *jsonschema.Schema, extra []*jsonschema.Schema, limit int64) int64 {
	if limit <= 0 || limit > 1<<61 {
		limit = 1 << 61
	}
	w := &costWalker{
		max:     limit,
		memo:    map[*jsonschema.Schema]int64{},
		active:  map[*jsonschema.Schema]bool{},
		dynamic: map[string][]*jsonschema.Schema{},
		dynMax:  map[string]int64{},
	}
	w.collect(append([]*jsonschema.Schema{s}, extra...))
	return w.cost(s)
}

// costWalker holds the state of one SchemaCost.
type costWalker struct {
	max    int64
	memo   map[*jsonschema.Schema]int64
	active map[*jsonschema.Schema]bool
	// dynamic lists the schemas that declare each $dynamicAnchor, and
	// recursive those with $recursiveAnchor: a dynamic reference may land
	// on any of them, so it costs the most expensive.
	dynamic   map[string][]*jsonschema.Schema
	recursive []*jsonschema.Schema
	// dynMax remembers the most expensive target of each anchor name
	// ("\x00" for $recursiveAnchor); -1 while it is being counted.
	dynMax map[string]int64
}

// collect finds every schema reachable from roots (iteratively, so a deep
// schema cannot exhaust the stack) and notes the dynamic-anchor targets.
func (w *costWalker) collect(roots []*jsonschema.Schema) {
	seen := map[*jsonschema.Schema]bool{}
	stack := slices.Clone(roots)
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || seen[s] {
			continue
		}
		seen[s] = true
		if s.DynamicAnchor != "" {
			w.dynamic[s.DynamicAnchor] = append(w.dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			w.recursive = append(w.recursive, s)
		}
		stack = appendChildren(stack, s)
	}
	// Map order must not change the estimate: sort the candidates.
	for _, c := range w.dynamic {
		slices.SortFunc(c, func(a, b *jsonschema.Schema) int { return cmp.Compare(a.Location, b.Location) })
	}
	slices.SortFunc(w.recursive, func(a, b *jsonschema.Schema) int { return cmp.Compare(a.Location, b.Location) })
}

// cost is the expanded size of s, saturated at max+1.
func (w *costWalker) cost(s *jsonschema.Schema) int64 {
	if s == nil {
		return 0
	}
	if c, ok := w.memo[s]; ok {
		return c
	}
	if w.active[s] {
		return 1
	}
	w.active[s] = true
	total := int64(1)
	if s.Enum != nil {
		total = w.add(total, int64(len(s.Enum.Values)))
	}
	for _, c := range appendChildren(nil, s) {
		if total > w.max {
			break
		}
		total = w.add(total, w.cost(c))
	}
	if total <= w.max && s.DynamicRef != nil && s.DynamicRef.Anchor != "" && s.DynamicRef.Ref != nil &&
		s.DynamicRef.Ref.DynamicAnchor == s.DynamicRef.Anchor {
		total = w.add(total, w.anchorMax(s.DynamicRef.Anchor, w.dynamic[s.DynamicRef.Anchor]))
	}
	if total <= w.max && s.RecursiveRef != nil && s.RecursiveRef.RecursiveAnchor {
		total = w.add(total, w.anchorMax("\x00", w.recursive))
	}
	delete(w.active, s)
	w.memo[s] = total
	return total
}

// anchorMax is the cost of the most expensive schema a dynamic reference
// to name may resolve to, computed once per name.
func (w *costWalker) anchorMax(name string, targets []*jsonschema.Schema) int64 {
	if m, ok := w.dynMax[name]; ok {
		if m < 0 {
			return 1 // counted further up: a cycle
		}
		return m
	}
	w.dynMax[name] = -1
	m := int64(0)
	for _, t := range targets {
		m = max(m, w.cost(t))
		if m > w.max {
			break
		}
	}
	w.dynMax[name] = m
	return m
}

func (w *costWalker) add(a, b int64) int64 {
	if a+b > w.max {
		return w.max + 1
	}
	return a + b
}

// appendChildren appends every subschema s applies (its static $ref,
// $dynamicRef and $recursiveRef targets included), in a fixed order.
func appendChildren(out []*jsonschema.Schema, s *jsonschema.Schema) []*jsonschema.Schema {
	out = append(out, s.Ref, s.RecursiveRef)
	if s.DynamicRef != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	out = append(out, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties,
		s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	out = append(out, s.PrefixItems...)
	out = appendSorted(out, s.Properties)
	out = appendSorted(out, s.DependentSchemas)
	if len(s.PatternProperties) > 0 {
		keys := slices.Collect(maps.Keys(s.PatternProperties))
		slices.SortFunc(keys, func(a, b jsonschema.Regexp) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			out = append(out, s.PatternProperties[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if d, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			out = append(out, d)
		}
	}
	for _, a := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
		switch a := a.(type) {
		case *jsonschema.Schema:
			out = append(out, a)
		case []*jsonschema.Schema:
			out = append(out, a...)
		}
	}
	return slices.DeleteFunc(out, func(c *jsonschema.Schema) bool { return c == nil })
}

func appendSorted(out []*jsonschema.Schema, m map[string]*jsonschema.Schema) []*jsonschema.Schema {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// anchorLocations returns the JSON pointers (as URL fragments) of every
// object in doc that declares $dynamicAnchor or $recursiveAnchor, so that
// CompileSchema can hand their compiled schemas to the estimate even where
// no static reference reaches them. It walks doc without recursion.
func anchorLocations(doc any) []string {
	type item struct {
		v   any
		ptr string
	}
	var out []string
	stack := []item{{doc, ""}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := it.v.(type) {
		case map[string]any:
			_, dyn := v["$dynamicAnchor"].(string)
			rec, _ := v["$recursiveAnchor"].(bool)
			if dyn || rec {
				out = append(out, it.ptr)
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				stack = append(stack, item{v[k], it.ptr + "/" + escapePointer(k)})
			}
		case []any:
			for i, e := range v {
				stack = append(stack, item{e, it.ptr + "/" + strconv.Itoa(i)})
			}
		}
	}
	slices.Sort(out)
	return out
}

// escapePointer escapes one JSON Pointer token (RFC 6901) for use in a URL
// fragment.
func escapePointer(tok string) string {
	tok = strings.ReplaceAll(tok, "~", "~0")
	tok = strings.ReplaceAll(tok, "/", "~1")
	return url.PathEscape(tok)
}
