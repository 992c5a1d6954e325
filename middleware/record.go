package middleware

import (
	"time"

	"github.com/contractgateway/gateway/middleware/corrections"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
)

// Record is one guarded request as the debug store keeps it: the model's
// first answer and the final one, the reports, the ladder's outcome and the
// corrections. It carries prompts' answers, so it goes to the debug store
// (off by default, admin only), never to logs or metrics.
type Record struct {
	RequestID string
	Time      time.Time
	Route     string
	Contract  string
	Model     string
	Status    string
	// First is the model's first answer as it came back; Final the text the
	// client got ("" for a failure).
	First string
	Final string
	// Before is the report on the first answer, After the one on the final
	// document (or on the best attempt of a failure).
	Before validators.Report
	After  validators.Report
	// Outcome is the ladder's: rungs, calls, tokens, local changes.
	Outcome *repair.Outcome
	// Corrections list what changed between First and Final.
	Corrections []Correction
}

// record hands the debug store what one run made of its first answer.
func (g *guard) record(x *exchange, res *result, list []Correction) {
	out := res.outcome
	g.Record(Record{
		RequestID: x.requestID, Time: time.Now(), Route: x.route.Name,
		Contract: x.route.Validator.Contract.ID(), Model: x.upstreamModel, Status: out.Status,
		First: res.first, Final: res.text, Before: out.Before, After: out.Report, Outcome: out,
		Corrections: list,
	})
}

// Correction is one change between the model's first answer and the
// answer the client got (see package corrections).
type Correction = corrections.Correction

// Kinds of a Correction.
const (
	CorrectionMinor = corrections.Minor
	CorrectionMajor = corrections.Major
)
