// Package lint checks a contract's fixtures: every file named
// valid_<desc>.* must validate, every invalid_<CODE>_<desc>.* must report
// CODE — what `gateway contracts lint` runs, so that a contract's author
// sees the fixtures the contract promises hold.
package lint

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/contractgateway/gateway/validators"
)

// Result is the outcome of checking one fixture of a contract.
type Result struct {
	Contract string `json:"contract"`
	Fixture  string `json:"fixture"`
	// Want is "valid" or the code the fixture's name promises.
	Want string `json:"want"`
	OK   bool   `json:"ok"`
	// Got lists the report's codes (empty when valid).
	Got []string `json:"got"`
}

// Fixtures checks that every fixture of v's contract validates as its
// file name says: valid_<desc>.* must be valid, invalid_<CODE>_<desc>.*
// must report CODE. Files named otherwise are ignored. The contract's own
// parameters apply.
func Fixtures(v *validators.Validator) []Result {
	params, _ := v.Params(nil)
	names := make([]string, 0, len(v.Contract.Fixtures))
	for n := range v.Contract.Fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Result
	for _, name := range names {
		want, ok := Expectation(name)
		if !ok {
			continue
		}
		res := v.Validate(string(v.Contract.Fixtures[name]), params)
		codes := errorCodes(res.Report)
		r := Result{Contract: v.Contract.ID(), Fixture: name, Want: want, Got: codes}
		if want == "valid" {
			r.OK = res.Report.Valid
		} else {
			r.OK = slices.Contains(res.Report.Codes(), want)
		}
		out = append(out, r)
	}
	return out
}

func errorCodes(r validators.Report) []string {
	out := []string{}
	for _, v := range r.Violations {
		if v.Severity == validators.SeverityError {
			out = append(out, v.Code)
		}
	}
	return out
}

// Expectation reads what a fixture's file name promises: "valid" for
// valid_…, the code for invalid_CODE_… (the code is the run of upper-case
// words after "invalid_"; a word of digits only, as in "_2_options",
// belongs to the description).
func Expectation(name string) (string, bool) {
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
func (r Result) String() string {
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
