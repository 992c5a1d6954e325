package validators

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/contractgateway/gateway/contracts"
)

// FixtureResult is the outcome of checking one fixture of a contract.
type FixtureResult struct {
	Contract string `json:"contract"`
	Fixture  string `json:"fixture"`
	// Want is "valid" or the code the fixture's name promises.
	Want string `json:"want"`
	OK   bool   `json:"ok"`
	// Got lists the report's codes (empty when valid).
	Got []string `json:"got"`
}

// Lint checks that every fixture of c validates as its file name says:
// valid_<desc>.* must be valid, invalid_<CODE>_<desc>.* must report CODE.
// Files named otherwise are ignored. params are the merged parameters.
func (v *Validator) Lint() []FixtureResult {
	params, _ := v.Params(nil)
	names := make([]string, 0, len(v.Contract.Fixtures))
	for n := range v.Contract.Fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []FixtureResult
	for _, name := range names {
		want, ok := FixtureExpectation(name)
		if !ok {
			continue
		}
		res := v.Validate(string(v.Contract.Fixtures[name]), params)
		codes := errorCodes(res.Report)
		r := FixtureResult{Contract: v.Contract.ID(), Fixture: name, Want: want, Got: codes}
		if want == "valid" {
			r.OK = res.Report.Valid
		} else {
			r.OK = slices.Contains(res.Report.Codes(), want)
		}
		out = append(out, r)
	}
	return out
}

func errorCodes(r Report) []string {
	out := []string{}
	for _, v := range r.Violations {
		if v.Severity == SeverityError {
			out = append(out, v.Code)
		}
	}
	return out
}

// FixtureExpectation reads what a fixture's file name promises: "valid" for
// valid_…, the code for invalid_CODE_… (the code is the run of upper-case
// words after "invalid_"; a word of digits only, as in "_2_options",
// belongs to the description).
func FixtureExpectation(name string) (string, bool) {
	base, _, _ := strings.Cut(name, ".")
	switch {
	case strings.HasPrefix(base, "valid_") || base == "valid":
		return "valid", true
	case strings.HasPrefix(base, "invalid_"):
		var code []string
		for _, w := range strings.Split(strings.TrimPrefix(base, "invalid_"), "_") {
			if w == "" || strings.ToUpper(w) != w || strings.IndexFunc(w, unicode.IsUpper) < 0 {
				break
			}
			code = append(code, w)
		}
		if len(code) == 0 {
			return "", false
		}
		return strings.Join(code, "_"), true
	}
	return "", false
}

// String formats a result as one line of `gateway contracts lint` output.
func (r FixtureResult) String() string {
	status := "ok  "
	if !r.OK {
		status = "FAIL"
	}
	got := "valid"
	if len(r.Got) > 0 {
		got = strings.Join(r.Got, ",")
	}
	return fmt.Sprintf("%s %s %s: want %s, got %s", status, r.Contract, r.Fixture, r.Want, got)
}

// CompileAll builds a validator for every contract of reg, reporting every
// contract that cannot be built at once.
func CompileAll(reg *contracts.Registry, packs map[string]RulePack) (map[string]*Validator, error) {
	out := map[string]*Validator{}
	var errs []string
	for _, c := range reg.List() {
		v, err := New(c, packs)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out[c.ID()] = v
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}
