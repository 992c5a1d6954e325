package validators

import (
	"fmt"
	"slices"
	"strings"
)

// ParamSpec declares one parameter of a rule pack: its name and the form
// of its values, as a person writes them ("A, B or C").
type ParamSpec struct {
	Name string `json:"name"`
	Form string `json:"form"`
}

// ParamDeclarer is a rule pack that takes parameters. A pack that does not
// declare any takes none: a parameter no pack of a contract declares is a
// misspelling, and a request that carried it would be guarded without the
// rule the caller meant.
type ParamDeclarer interface {
	ParamSpecs() []ParamSpec
}

// ParamSpecs returns the parameters the validator's rule packs take, in
// the packs' order, then those the contract's checks read: a check's
// parameter is declared by its default in the contract's "params".
func (v *Validator) ParamSpecs() []ParamSpec {
	var out []ParamSpec
	for _, p := range v.packs {
		if d, ok := p.(ParamDeclarer); ok {
			out = append(out, d.ParamSpecs()...)
		}
	}
	if len(v.Contract.Checks) > 0 {
		for _, k := range sortedKeys(v.Contract.Params) {
			if !slices.ContainsFunc(out, func(s ParamSpec) bool { return s.Name == k }) {
				out = append(out, ParamSpec{Name: k, Form: "a string the checks read"})
			}
		}
	}
	return out
}

// checkKnown returns an error naming every key of p that no pack declares,
// with the contract's parameters and their forms.
func (v *Validator) checkKnown(p Params) error {
	specs := v.ParamSpecs()
	var unknown []string
	for k := range p {
		if !slices.ContainsFunc(specs, func(s ParamSpec) bool { return s.Name == k }) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("contract %s: unknown param %s; %s", v.Contract.ID(), strings.Join(quoteAll(unknown), ", "), describeParams(specs))
}

// describeParams lists parameters and their forms for an error message.
func describeParams(specs []ParamSpec) string {
	if len(specs) == 0 {
		return "it takes no params"
	}
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s.Name + "=" + s.Form
	}
	return "its params are " + strings.Join(parts, "; ")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
