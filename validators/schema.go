package validators

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// schemaViolations validates doc against s and maps every error the library
// reports to a SCHEMA violation with its instance path. The library reports
// all errors (not just the first) as a tree; composition keywords are
// resolved to the one branch the document evidently meant when that branch
// can be told apart, so that the model is told what to fix inside it rather
// than "oneOf failed".
func schemaViolations(s *jsonschema.Schema, doc *strictjson.Value, e *Emitter) {
	err := s.Validate(doc.Interface())
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		e.Add(Violation{Class: ClassSchema, Code: "SCHEMA_OTHER", Severity: SeverityError,
			Expected: "valid", Actual: err.Error(), Hint: "Make the document match the contract's schema."}, 0)
		return
	}
	walkSchemaError(ve, doc, e)
}

func walkSchemaError(ve *jsonschema.ValidationError, doc *strictjson.Value, e *Emitter) {
	switch k := ve.ErrorKind.(type) {
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			// Not a failure of every alternative: the value matches
			// several (the library stops at the second).
			alts := make([]string, len(k.Subschemas))
			for i, n := range k.Subschemas {
				alts[i] = strconv.Itoa(n)
			}
			emitSchema(e, doc, ve.InstanceLocation, "", "SCHEMA_COMPOSITION", "exactly one of the alternatives",
				append([]int(nil), k.Subschemas...),
				"Change %s so that it matches exactly one of the alternatives the schema allows (it matches alternatives "+strings.Join(alts, " and ")+").", nil)
			return
		}
		walkAlternatives(ve, "exactly one of the alternatives", doc, e)
		return
	case *kind.AnyOf:
		walkAlternatives(ve, "at least one of the alternatives", doc, e)
		return
	case *kind.PropertyNames:
		propertyNameViolations(ve, k.Property, doc, e)
		return
	}
	if len(ve.Causes) > 0 && !opaque(ve.ErrorKind) {
		for _, c := range sortedCauses(ve) {
			walkSchemaError(c, doc, e)
		}
		return
	}
	mapLeaf(ve, doc, e)
}

// walkAlternatives reports a oneOf or anyOf none of whose alternatives
// matched: inside the one branch the document evidently meant, else as one
// SCHEMA_COMPOSITION violation.
func walkAlternatives(ve *jsonschema.ValidationError, want string, doc *strictjson.Value, e *Emitter) {
	if branch := pickBranch(ve); branch != nil {
		walkSchemaError(branch, doc, e)
		return
	}
	emitSchema(e, doc, ve.InstanceLocation, "", "SCHEMA_COMPOSITION", want,
		fmt.Sprintf("%d alternatives failed", len(ve.Causes)),
		"Change %s so that it matches "+want+" the schema allows (check its type/kind field).", nil)
}

// sortedCauses returns ve's causes in a fixed order. The library evaluates
// some keywords (properties, patternProperties, propertyNames,
// dependentRequired, dependentSchemas) by ranging over Go maps, so its
// order changes from run to run; violations at one document position would
// then change order too, and reports must be byte-identical for the same
// input.
func sortedCauses(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	cs := ve.Causes
	if len(cs) < 2 {
		return cs
	}
	keys := make(map[*jsonschema.ValidationError]string, len(cs))
	for _, c := range cs {
		keys[c] = strings.Join(c.InstanceLocation, "\x00") + "\x01" + c.SchemaURL + "\x01" +
			strings.Join(c.ErrorKind.KeywordPath(), "/") + "\x01" + c.ErrorKind.LocalizedString(englishPrinter)
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b *jsonschema.ValidationError) int {
		return strings.Compare(keys[a], keys[b])
	})
	return out
}

// propertyNameViolations reports a property whose name fails the
// propertyNames subschema. The library validates the name as a document of
// its own, so its causes sit at the empty location; they are mapped as
// usual and then moved to the property, with a hint that says to rename it
// rather than to change its value.
func propertyNameViolations(ve *jsonschema.ValidationError, name string, doc *strictjson.Value, e *Emitter) {
	var inner Emitter
	leaves := ve.Causes
	if len(leaves) == 0 {
		leaves = []*jsonschema.ValidationError{{ErrorKind: &kind.FalseSchema{}}}
	}
	for _, c := range leaves {
		walkSchemaError(c, strictjson.String(name), &inner)
	}
	var segs []Seg
	cur := doc
	pos := 0
	if doc != nil {
		pos = doc.Offset
	}
	for _, tok := range ve.InstanceLocation {
		seg := Seg(tok)
		if cur != nil && cur.Kind == strictjson.KindArray {
			i, _ := strconv.Atoi(tok)
			seg, cur = i, cur.Index(i)
		} else {
			cur = cur.Get(tok)
		}
		if cur != nil {
			pos = cur.Offset
		}
		segs = append(segs, seg)
	}
	if cur != nil {
		for _, m := range cur.Members {
			if m.Key == name {
				pos = m.KeyOffset
				break
			}
		}
	}
	dotted, pointer := PathOf(append(segs, name)...)
	for _, v := range inner.out {
		v.Path, v.Pointer = dotted, pointer
		v.Fixable, v.Fix = false, nil
		v.Hint = "Rename the property " + dotted + " so that its name " + nameRule(v) + "."
		if v.Code == "SCHEMA_ADDITIONAL" {
			// propertyNames: false allows no property at all.
			v.Hint = "Remove the property " + dotted + ": the schema does not allow it."
		}
		e.Add(v, pos)
	}
}

// nameRule phrases what a property name must satisfy, from the violation
// its name caused as a document of its own.
func nameRule(v Violation) string {
	switch v.Code {
	case "SCHEMA_PATTERN":
		return "matches the pattern " + strconv.Quote(fmt.Sprint(v.Expected))
	case "SCHEMA_LENGTH":
		return "is " + fmt.Sprint(v.Expected) + " characters long"
	case "SCHEMA_ENUM":
		return "is one of " + display(v.Expected)
	case "SCHEMA_CONST":
		return "is " + display(v.Expected)
	case "SCHEMA_FORMAT":
		return "is a valid " + fmt.Sprint(v.Expected)
	}
	return "is allowed by the schema's propertyNames"
}

// opaque reports keywords whose causes are no instruction: that an item
// fails a "contains" subschema, or that a value matches a "not", says
// nothing about what to change.
func opaque(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Not, *kind.Contains, *kind.MinContains:
		return true
	}
	return false
}

// pickBranch returns the only alternative of a oneOf/anyOf whose failure
// does not show it was the wrong alternative altogether (a failed const,
// usually a discriminator like "type": "task", or a wrong JSON type at the
// alternative's own location). nil when zero or several qualify.
func pickBranch(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	var pick *jsonschema.ValidationError
	for _, c := range ve.Causes {
		if wrongAlternative(c, len(ve.InstanceLocation)) {
			continue
		}
		if pick != nil {
			return nil
		}
		pick = c
	}
	return pick
}

func wrongAlternative(ve *jsonschema.ValidationError, depth int) bool {
	switch ve.ErrorKind.(type) {
	case *kind.Const:
		return true
	case *kind.Type:
		if len(ve.InstanceLocation) == depth {
			return true
		}
	}
	for _, c := range ve.Causes {
		if wrongAlternative(c, depth) {
			return true
		}
	}
	return false
}

func mapLeaf(ve *jsonschema.ValidationError, doc *strictjson.Value, e *Emitter) {
	loc := ve.InstanceLocation
	val := lookup(doc, loc)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			emitSchema(e, doc, append(loc[:len(loc):len(loc)], m), "", "SCHEMA_REQUIRED", "present", "missing",
				"Add the required property %s.", nil)
		}
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			emitSchema(e, doc, append(loc[:len(loc):len(loc)], m), "", "SCHEMA_REQUIRED", "present", "missing",
				"Add the required property %s (required when "+pct(k.Prop)+" is present).", nil)
		}
	case *kind.Dependency:
		for _, m := range k.Missing {
			emitSchema(e, doc, append(loc[:len(loc):len(loc)], m), "", "SCHEMA_REQUIRED", "present", "missing",
				"Add the required property %s (required when "+pct(k.Prop)+" is present).", nil)
		}
	case *kind.Contains:
		emitSchema(e, doc, loc, "", "SCHEMA_OTHER", ">= 1", 0,
			"Give %s at least 1 item that matches its contains schema (it has 0).", nil)
	case *kind.MinContains:
		emitSchema(e, doc, loc, "", "SCHEMA_OTHER", fmt.Sprintf(">= %d", k.Want), len(k.Got),
			fmt.Sprintf("Give %%s at least %d items that match its contains schema (it has %d).", k.Want, len(k.Got)), nil)
	case *kind.MaxContains:
		emitSchema(e, doc, loc, "", "SCHEMA_OTHER", fmt.Sprintf("<= %d", k.Want), len(k.Got),
			fmt.Sprintf("Reduce the items of %%s that match its contains schema to at most %d (it has %d).", k.Want, len(k.Got)), nil)
	case *kind.Type:
		want := strings.Join(k.Want, "|")
		emitSchema(e, doc, loc, "", "SCHEMA_TYPE", want, k.Got,
			"Change %s to a JSON "+strings.Join(k.Want, " or ")+".", coerce(val, k.Want))
	case *kind.Enum:
		emitSchema(e, doc, loc, "", "SCHEMA_ENUM", k.Want, iface(val),
			"Set %s to one of the allowed values "+pct(display(k.Want))+".", enumFix(val, k.Want))
	case *kind.Const:
		emitSchema(e, doc, loc, "", "SCHEMA_CONST", k.Want, iface(val),
			"Set %s to "+pct(display(k.Want))+".", enumFix(val, []any{k.Want}))
	case *kind.Minimum:
		emitSchema(e, doc, loc, "", "SCHEMA_RANGE", ">= "+rat(k.Want), numberOf(val), "Make %s at least "+rat(k.Want)+".", nil)
	case *kind.Maximum:
		emitSchema(e, doc, loc, "", "SCHEMA_RANGE", "<= "+rat(k.Want), numberOf(val), "Make %s at most "+rat(k.Want)+".", nil)
	case *kind.ExclusiveMinimum:
		emitSchema(e, doc, loc, "", "SCHEMA_RANGE", "> "+rat(k.Want), numberOf(val), "Make %s greater than "+rat(k.Want)+".", nil)
	case *kind.ExclusiveMaximum:
		emitSchema(e, doc, loc, "", "SCHEMA_RANGE", "< "+rat(k.Want), numberOf(val), "Make %s less than "+rat(k.Want)+".", nil)
	case *kind.MultipleOf:
		emitSchema(e, doc, loc, "", "SCHEMA_RANGE", "multiple of "+rat(k.Want), numberOf(val), "Make %s a multiple of "+rat(k.Want)+".", nil)
	case *kind.MinLength:
		emitLength(e, doc, loc, ">=", k.Got, k.Want, "Make %%s at least %d characters long.")
	case *kind.MaxLength:
		emitLength(e, doc, loc, "<=", k.Got, k.Want, "Shorten %%s to at most %d characters.")
	case *kind.MinItems:
		emitLength(e, doc, loc, ">=", k.Got, k.Want, "Give %%s at least %d items.")
	case *kind.MaxItems:
		emitLength(e, doc, loc, "<=", k.Got, k.Want, "Reduce %%s to at most %d items.")
	case *kind.MinProperties:
		emitLength(e, doc, loc, ">=", k.Got, k.Want, "Give %%s at least %d properties.")
	case *kind.MaxProperties:
		emitLength(e, doc, loc, "<=", k.Got, k.Want, "Reduce %%s to at most %d properties.")
	case *kind.Pattern:
		emitSchema(e, doc, loc, "", "SCHEMA_PATTERN", k.Want, k.Got, "Change %s to match the pattern "+pct(strconv.Quote(k.Want))+".", nil)
	case *kind.Format:
		emitSchema(e, doc, loc, "", "SCHEMA_FORMAT", k.Want, iface(val), "Write %s as a valid "+pct(k.Want)+".", nil)
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			emitSchema(e, doc, append(loc[:len(loc):len(loc)], p), "", "SCHEMA_ADDITIONAL", "absent", "present",
				"Remove the property %s: the schema does not allow it.", nil)
		}
	case *kind.UniqueItems:
		emitSchema(e, doc, loc, "", "SCHEMA_UNIQUE", "unique items", k.Duplicates[:],
			fmt.Sprintf("Make the items of %%s unique (items %d and %d are equal).", k.Duplicates[0], k.Duplicates[1]), nil)
	case *kind.FalseSchema:
		// A false subschema at a member or item (additionalProperties or
		// unevaluatedProperties: false, items: false) means "not allowed".
		emitSchema(e, doc, loc, "", "SCHEMA_ADDITIONAL", "absent", "present",
			"Remove %s: the schema does not allow it.", nil)
	case *kind.Not, *kind.AllOf, *kind.OneOf, *kind.AnyOf:
		emitSchema(e, doc, loc, "", "SCHEMA_COMPOSITION", "match", "mismatch", "Change %s so that it matches the schema.", nil)
	default:
		msg := ve.ErrorKind.LocalizedString(englishPrinter)
		emitSchema(e, doc, loc, "", "SCHEMA_OTHER", strings.Join(ve.ErrorKind.KeywordPath(), "/"), msg,
			"Fix %s: "+pct(msg)+".", nil)
	}
}

// emitLength emits a SCHEMA_LENGTH violation: a length or count got
// that breaks op ("<=" or ">=") want; hint is a format with %%s for the
// member and %d for want.
func emitLength(e *Emitter, doc *strictjson.Value, loc []string, op string, got, want int, hint string) {
	emitSchema(e, doc, loc, "", "SCHEMA_LENGTH", fmt.Sprintf("%s %d", op, want), got, fmt.Sprintf(hint, want), nil)
}

// emitSchema records a SCHEMA violation at the instance location loc. hint
// holds one %s for the dotted path. A non-nil fix makes it fixable.
func emitSchema(e *Emitter, doc *strictjson.Value, loc []string, _ string, code string, expected, actual any, hint string, fix *strictjson.Value) {
	segs := make([]Seg, 0, len(loc))
	cur := doc
	pos := 0
	if doc != nil {
		pos = doc.Offset
	}
	for _, tok := range loc {
		var seg Seg = tok
		if cur != nil && cur.Kind == strictjson.KindArray {
			if i, err := strconv.Atoi(tok); err == nil {
				seg = i
				cur = cur.Index(i)
			} else {
				cur = nil
			}
		} else {
			cur = cur.Get(tok)
		}
		if cur != nil {
			pos = cur.Offset
		}
		segs = append(segs, seg)
	}
	dotted, pointer := PathOf(segs...)
	shown := dotted
	if shown == "" {
		shown = "the document"
	}
	v := Violation{
		Class: ClassSchema, Code: code, Severity: SeverityError,
		Path: dotted, Pointer: pointer,
		Expected: expected, Actual: actual,
		Hint: fmt.Sprintf(hint, shown),
	}
	if fix != nil {
		v.Fixable = true
		v.Fix = &PatchOp{Op: "replace", Path: pointer, Value: strictjson.Marshal(fix)}
	}
	e.Add(v, pos)
}

// pct escapes text from the schema or the document for use in a hint
// format: a pattern such as "^[0-9]+%$" must reach the hint as written.
func pct(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// lookup walks an instance location; nil when it does not exist.
func lookup(doc *strictjson.Value, loc []string) *strictjson.Value {
	cur := doc
	for _, tok := range loc {
		if cur == nil {
			return nil
		}
		if cur.Kind == strictjson.KindArray {
			i, err := strconv.Atoi(tok)
			if err != nil {
				return nil
			}
			cur = cur.Index(i)
			continue
		}
		cur = cur.Get(tok)
	}
	return cur
}

var (
	intLiteral    = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	numberLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
)

// coerce returns the lossless replacement for a string that holds exactly
// one value of a wanted type ("2" → 2, "true" → true), or for a number or
// boolean where a string is wanted (1 → "1": the same characters), or nil.
// Anything that would lose or guess information ("2 apples", " 2", "yes",
// "12,111") is left to the model.
func coerce(v *strictjson.Value, want []string) *strictjson.Value {
	if v != nil && (v.Kind == strictjson.KindNumber || v.Kind == strictjson.KindBool) && slices.Contains(want, "string") {
		t, _ := tokenText(v.Interface())
		return strictjson.String(t)
	}
	s, ok := v.AsString()
	if !ok {
		return nil
	}
	for _, w := range want {
		switch {
		case w == "integer" && intLiteral.MatchString(s):
			return strictjson.Number(s)
		case w == "number" && numberLiteral.MatchString(s):
			return strictjson.Number(s)
		case w == "boolean" && (s == "true" || s == "false"):
			return strictjson.BoolValue(s == "true")
		}
	}
	return nil
}

// enumFix returns the allowed value that a scalar not among them stands
// for without a doubt, or nil: the one allowed value written with the same
// characters (B where "B" is allowed, "2" where 2 is), else the one that
// equals it when case is ignored ("b" where "B" is allowed, a minor
// correction). Two candidates are a guess and give nil, and so does
// anything looser: no substring or fuzzy match, no folding of accents.
func enumFix(v *strictjson.Value, want []any) *strictjson.Value {
	if v == nil {
		return nil
	}
	got, ok := tokenText(v.Interface())
	if !ok {
		return nil
	}
	pick := func(match func(string) bool) *strictjson.Value {
		var found *strictjson.Value
		for _, w := range want {
			t, ok := tokenText(w)
			if !ok || !match(t) {
				continue
			}
			if found != nil {
				return nil
			}
			found = scalarValue(w)
		}
		return found
	}
	if fix := pick(func(t string) bool { return t == got }); fix != nil {
		return fix
	}
	return pick(func(t string) bool { return t != got && strings.EqualFold(t, got) })
}

// tokenText is the text of a scalar as written in JSON, strings without
// their quotes: the characters a model's token holds whatever its type.
func tokenText(x any) (string, bool) {
	switch x := x.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "null", true
	}
	return "", false
}

// scalarValue turns a scalar of a schema (as tokenText reads it) into a
// Value.
func scalarValue(x any) *strictjson.Value {
	switch x := x.(type) {
	case string:
		return strictjson.String(x)
	case json.Number:
		return strictjson.Number(string(x))
	case bool:
		return strictjson.BoolValue(x)
	}
	return &strictjson.Value{Kind: strictjson.KindNull, Offset: -1}
}

func numberOf(v *strictjson.Value) any {
	if v != nil && v.Kind == strictjson.KindNumber {
		return json.Number(v.Num)
	}
	return iface(v)
}

// iface is Value.Interface that tolerates an absent value.
func iface(v *strictjson.Value) any {
	if v == nil {
		return nil
	}
	return v.Interface()
}

// englishPrinter renders the library's messages for keywords without a
// code of their own; reports are always in English.
var englishPrinter = message.NewPrinter(language.English)

func rat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func display(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}
