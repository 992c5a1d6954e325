package repair

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Statuses of a guarded response (the X-Contract-Status header).
const (
	StatusValid    = "valid"    // the model's output was valid as written
	StatusRepaired = "repaired" // valid after repair
	StatusFallback = "fallback" // the contract's fallback answered (best_effort, static, model)
	StatusFailed   = "failed"   // no valid document; the client gets 422 and the report
)

// Sentinel errors of the ladder.
var (
	// ErrBudgetExhausted: the request's max_llm_calls or deadline ran out.
	ErrBudgetExhausted = errors.New("repair budget exhausted")
)

// Model is everything the ladder needs from an LLM: one completion of a
// system prompt and a user message. The gateway implements it with the
// Ollama API client; tests with a scripted fake.
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (string, error)
}

// ModelRequest is one call to the model.
type ModelRequest struct {
	// Model overrides the client's default model ("" keeps it): the
	// request's upstream model, or a fallback model.
	Model  string
	System string
	// Prompt is the user message.
	Prompt string
	// Format is the JSON Schema passed as Ollama `format`, or nil.
	Format      json.RawMessage
	Temperature float64
	TopP        float64
	// NumPredict bounds the reply's tokens; 0 leaves the model's default.
	NumPredict int
}

// Job is one guarded response to bring into contract.
type Job struct {
	Validator *validators.Validator
	Params    validators.Params
	// Text is the model's answer as it came back.
	Text string
	// Prompt is the original request's prompt (or its messages rendered as
	// text), for partial regeneration: the model needs the task to write new
	// content.
	Prompt string
	// Model makes LLM repair calls; nil disables rungs 2 and 3.
	Model Model
	// Rerun asks the original request again at a temperature; nil disables
	// rung 4.
	Rerun func(ctx context.Context, temperature float64) (string, error)
	// MaxLLMCalls bounds rungs 2–4 together; 0 means the default, 6.
	MaxLLMCalls int
	// LocalOnly stops the ladder after rung 1 (repair breaker open, or
	// upstream breaker open).
	LocalOnly bool
}

// Outcome is where the ladder ended.
type Outcome struct {
	Status string
	// Doc is the document to answer with (nil when Status is failed).
	Doc *strictjson.Value
	// Before is the report on the model's first answer; Report the final one.
	Before validators.Report
	Report validators.Report
	// Changes are the local edits of the accepted attempt.
	Changes []Change
	// LLMCalls counts repair, regeneration and re-run calls.
	LLMCalls int
	// Rungs lists the rungs used, in order ("local", "llm_repair", …).
	Rungs []string
	// Restored counts items the model changed without cause that were
	// restored from the original (merge).
	Restored int
}

// Run brings one answer into contract, cheapest rung first, and applies the
// contract's fallback when no rung succeeds.
func Run(ctx context.Context, job Job) Outcome {
	local := Local(job.Validator, job.Text, job.Params)
	out := Outcome{Before: local.Before, Report: local.Report, Doc: local.Doc, Changes: local.Changes, Rungs: []string{"local"}}
	if local.Report.Valid {
		out.Status = StatusRepaired
		if len(local.Changes) == 0 {
			out.Status = StatusValid
		}
		return out
	}
	return fallback(job, out, local.Doc)
}

// fallback applies the contract's fallback to an outcome that is not valid.
// best is the best document seen (nil when none parsed).
func fallback(job Job, out Outcome, best *strictjson.Value) Outcome {
	fb := job.Validator.Contract.Fallback
	out.Rungs = append(out.Rungs, "fallback:"+fb.Mode)
	switch fb.Mode {
	case contracts.FallbackBestEffort:
		if best != nil {
			out.Status, out.Doc = StatusFallback, best
			return out
		}
	case contracts.FallbackStatic:
		if doc, err := strictjson.Parse(fb.Static); err == nil {
			out.Status, out.Doc = StatusFallback, doc
			return out
		}
	}
	out.Status, out.Doc = StatusFailed, nil
	return out
}
