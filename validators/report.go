package validators

import (
	"encoding/json"
	"sort"
)

// Class is the stage of the pipeline a violation comes from. The order of the
// constants is the order of the stages: the earliest failing stage names the
// report's repair_type.
type Class string

// The violation classes, one per stage: strict parsing, the JSON Schema,
// the rule packs.
const (
	ClassParse    Class = "JSON_PARSE"
	ClassSchema   Class = "SCHEMA"
	ClassSemantic Class = "SEMANTIC"
)

func (c Class) rank() int {
	switch c {
	case ClassParse:
		return 0
	case ClassSchema:
		return 1
	default:
		return 2
	}
}

// Severity says whether a violation makes the document invalid.
type Severity string

// Severities. Only SeverityError makes a report invalid.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// PatchOp is one RFC 6902 operation. Violations that local repair can fix
// carry their fix as a PatchOp, so that repair stays generic: rules know what
// is right, repair only applies it.
type PatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Violation is one broken rule, located in the document.
type Violation struct {
	Class    Class    `json:"class"`
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Path is the dotted path with indices ("questions[3].answer"); for
	// JSON_PARSE violations it is "line:col" of the offending character.
	Path string `json:"path"`
	// Pointer is Path as an RFC 6901 JSON Pointer ("" for parse errors).
	Pointer string `json:"pointer"`
	// RawPath is, for JSON_SYNTAX and JSON_TRUNCATED, "line:col" of the
	// offending character in the model's raw text (think sections and
	// prose included), counted like Path: Path is relative to the extracted
	// block, but the raw text is what a person opens.
	RawPath  string `json:"raw_path,omitempty"`
	Expected any    `json:"expected"`
	Actual   any    `json:"actual"`
	Hint     string `json:"hint"`
	// Fixable says local repair fixes the violation without a model.
	// Validation sets it for the derivable rules; of a syntax
	// error or several blocks only repair can tell, and repair.Check sets
	// it there.
	Fixable bool `json:"fixable"`
	// Fix is the patch that makes the violation go away, when Fixable.
	Fix *PatchOp `json:"fix,omitempty"`

	// pos is the byte offset used to order violations by document position;
	// seq breaks ties in emission order so reports stay deterministic.
	pos int
	seq int
}

// Report is the machine-readable result of validating one model output:
// every violation, not the first, in document order.
type Report struct {
	Contract   string      `json:"contract"`
	Valid      bool        `json:"valid"`
	RepairType *Class      `json:"repair_type"`
	Violations []Violation `json:"violations"`
}

// finish sorts the violations by document position and sets Valid and
// RepairType. It is the only place those two fields are computed.
func (r *Report) finish() {
	if r.Violations == nil {
		r.Violations = []Violation{}
	}
	for i := range r.Violations {
		r.Violations[i].seq = i
	}
	sort.SliceStable(r.Violations, func(i, j int) bool {
		a, b := &r.Violations[i], &r.Violations[j]
		if a.pos != b.pos {
			return a.pos < b.pos
		}
		return a.seq < b.seq
	})
	r.Valid = true
	r.RepairType = nil
	for i := range r.Violations {
		v := &r.Violations[i]
		if v.Severity != SeverityError {
			// A warning fails no stage, so it names no repair.
			continue
		}
		r.Valid = false
		if r.RepairType == nil || v.Class.rank() < r.RepairType.rank() {
			c := v.Class
			r.RepairType = &c
		}
	}
}

// ParseCode is the code of r's parse violation (JSON_SYNTAX,
// NO_JSON_BLOCK, …), "" when the document parsed.
func (r *Report) ParseCode() string {
	for _, v := range r.Violations {
		if v.Class == ClassParse {
			return v.Code
		}
	}
	return ""
}

// Codes returns the violation codes in report order, for logs and metrics.
func (r *Report) Codes() []string {
	out := make([]string, len(r.Violations))
	for i, v := range r.Violations {
		out[i] = v.Code
	}
	return out
}
