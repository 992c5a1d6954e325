package mcq

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators"
)

// mcqParams are the question-set settings a caller may give, parsed.
type mcqParams struct {
	options          string // "A", "B" or "C"
	minOpts, maxOpts int
	// count is the required number of questions, 0 when not given. When
	// only difficulty is given it is the difficulty's sum: "3/5/2" asks for
	// ten questions as surely as question_count=10 does.
	count int
	diff  [3]int
	// hasDiff is true when the difficulty parameter was given.
	hasDiff bool
}

// parseMCQParams reads the pack's parameters. It always returns usable
// settings (bad values fall back to the defaults) together with an error
// naming every bad value, so that CheckParams and Check share one reading.
func parseMCQParams(p validators.Params) (mcqParams, error) {
	cfg := mcqParams{options: "C", minOpts: 3, maxOpts: 5}
	var errs []error
	if v, ok := p["options"]; ok {
		switch strings.ToUpper(v) {
		case "A":
			cfg.options, cfg.minOpts, cfg.maxOpts = "A", 4, 4
		case "B":
			cfg.options, cfg.minOpts, cfg.maxOpts = "B", 5, 5
		case "C":
		default:
			errs = append(errs, fmt.Errorf("mcq: param options=%q: want A (exactly 4 options), B (exactly 5) or C (3 to 5)", v))
		}
	}
	explicitCount := false
	if v, ok := p["question_count"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("mcq: param question_count=%q: want a positive integer such as 10", v))
		} else {
			cfg.count, explicitCount = n, true
		}
	}
	if v, ok := p["difficulty"]; ok {
		d, ok := mcqParseDifficulty(v)
		if !ok {
			errs = append(errs, fmt.Errorf("mcq: param difficulty=%q: want easy/medium/hard counts such as 3/5/2", v))
		} else {
			sum := d[0] + d[1] + d[2]
			switch {
			case explicitCount && sum != cfg.count:
				errs = append(errs, fmt.Errorf("mcq: param difficulty=%q sums to %d but question_count=%d: want counts that add up to question_count", v, sum, cfg.count))
			case sum == 0:
				errs = append(errs, fmt.Errorf("mcq: param difficulty=%q: want easy/medium/hard counts with a positive sum, such as 3/5/2", v))
			default:
				cfg.diff, cfg.hasDiff = d, true
				if !explicitCount {
					cfg.count = sum
				}
			}
		}
	}
	return cfg, errors.Join(errs...)
}

// mcqParseDifficulty reads "3/5/2" as easy/medium/hard counts.
func mcqParseDifficulty(s string) ([3]int, bool) {
	var d [3]int
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return d, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return d, false
		}
		d[i] = n
	}
	return d, true
}

// CheckParams rejects option configurations, counts and difficulty
// profiles the pack cannot use, naming each key and what it accepts.
func (m *Rules) CheckParams(p validators.Params) error {
	_, err := parseMCQParams(p)
	return err
}

// ParamSpecs implements validators.ParamDeclarer: the question-set settings a caller
// may give (option set, number of questions, difficulty counts).
func (m *Rules) ParamSpecs() []validators.ParamSpec {
	return []validators.ParamSpec{
		{Name: "options", Form: "A (exactly 4 options), B (exactly 5) or C (3 to 5, the default)"},
		{Name: "question_count", Form: "a positive integer such as 10"},
		{Name: "difficulty", Form: "easy/medium/hard counts such as 3/5/2, adding up to question_count"},
	}
}
