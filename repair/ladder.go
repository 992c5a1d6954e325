package repair

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

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
	Complete(ctx context.Context, req ModelRequest) (Reply, error)
}

// Reply is one model answer: its text and what it cost. Tokens are the
// measure of a repair's cost on a local model: the time a call
// takes is mostly the tokens the model must write.
type Reply struct {
	Text string
	// PromptTokens and OutputTokens are the upstream's prompt_eval_count
	// and eval_count; zero when the upstream did not say.
	PromptTokens int
	OutputTokens int
}

// Usage adds up the tokens of model calls.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (u *Usage) add(r Reply) {
	u.PromptTokens += r.PromptTokens
	u.OutputTokens += r.OutputTokens
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
	// Started, when set, is called once when the model begins to answer
	// (the reply's first output arrives), by a Model that can tell
	// (StartReporter): until then the call may still wait for the model's
	// slot, held by another answer.
	Started func()
}

// StartReporter is a Model that calls ModelRequest.Started when a reply
// begins, so that its caller can tell a call the model is answering from
// one still waiting for the model's slot.
type StartReporter interface {
	Model
	ReportsStart() bool
}

// DefaultMaxLLMCalls is the budget of model calls of one job when
// Job.MaxLLMCalls is zero (the max_llm_calls setting's default).
const DefaultMaxLLMCalls = 6

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
	// ModelName is sent as ModelRequest.Model on repair and regeneration
	// calls: the request's upstream model. "" keeps the Model's default.
	ModelName string
	// NoFormat keeps the contract's schema out of ModelRequest.Format even
	// when the policy asks for it (a route or model that cannot take
	// Ollama's `format`).
	NoFormat bool
	// Rerun asks the original request again at a temperature (rung 4, one
	// counted call each); nil disables rung 4.
	Rerun func(ctx context.Context, temperature float64) (Reply, error)
	// FirstScheduled says the first answer was asked at the schedule's
	// first temperature (Policy.ScheduleFirst), so re-runs use the rest.
	FirstScheduled bool
	// RerunModel asks the original request again on another model, for the
	// fallback mode "model"; nil makes that fallback fail.
	RerunModel func(ctx context.Context, model string) (Reply, error)
	// MaxLLMCalls bounds every model call of the ladder together: repair,
	// regeneration, re-runs and the fallback model (the first answer is not
	// counted). 0 means DefaultMaxLLMCalls; a negative value means none.
	MaxLLMCalls int
	// LocalOnly stops the ladder after rung 1 (repair breaker open, or
	// upstream breaker open): rungs 2–4 are skipped and the fallback applies
	// at once.
	LocalOnly bool
	// Spent is what rungs 2 and 3 already spent on this answer before the
	// ladder got it: the calls a stream's progressive release made on its
	// items in flight. The answer has one budget, whichever stage calls
	// the model, so the ladder makes only the repair calls of
	// Policy.MaxRepairs that are left, and no partial regeneration of the
	// answer once one was made. Re-runs are new answers with budgets of
	// their own, within MaxLLMCalls. The calls themselves are not counted
	// again here: MaxLLMCalls is what the request has left.
	Spent Spent
}

// Spent counts the model calls of rungs 2 and 3 made on one answer.
type Spent struct {
	// Repairs counts repair calls, item-scoped or whole-document.
	Repairs int
	// Regenerations counts partial regeneration calls.
	Regenerations int
}

// Outcome is where the ladder ended.
type Outcome struct {
	Status string
	// Doc is the document to answer with (nil when Status is failed).
	Doc *strictjson.Value
	// First is the model's first answer as local repair alone leaves it
	// (rung 1's document), nil when no JSON could be recovered from it:
	// what the final document has beyond it, a model call wrote. Later
	// readers (the corrections report) take it from here rather than run
	// local repair on the first answer again.
	First *strictjson.Value
	// Before is the report on the model's first answer. Report is the one
	// on Doc; for a static fallback or a failure, on the best attempt (its
	// remaining violations say why the ladder did not succeed).
	Before validators.Report
	Report validators.Report
	// Changes are the local edits of the accepted attempt: rung 1 on the
	// text it came from, plus the re-derivations after a merge or splice.
	Changes []Change
	// LLMCalls counts every model call made: repair, regeneration, re-run
	// and fallback model calls, failed ones included.
	LLMCalls int
	// Tokens adds up the tokens of every model call the ladder made (the
	// first answer is not counted): what the repair cost.
	Tokens Usage
	// Rungs lists the rungs used, in order: "local", then one entry per call
	// ("llm_repair_scoped", "llm_repair", "partial_regeneration",
	// "rerun:0.3"), "merge" after a repair reply whose unprovoked item or
	// field changes were undone, and
	// "fallback:<mode>" when no attempt was valid.
	Rungs []string
	// Restored counts items the model changed without cause that were
	// restored from the original (merge), over all repair calls.
	Restored int
	// RestoredFields counts members of repaired items that the model
	// changed although no violation of the item allowed it (the blind
	// merge: an explanation rephrased while fixing an answer index), each
	// restored from the original, over all repair calls.
	RestoredFields int
	// Err says why the ladder stopped before it had tried every rung it
	// meant to: ErrBudgetExhausted for max_llm_calls, ErrBudgetExhausted
	// wrapping context.DeadlineExceeded for the deadline, context.Canceled
	// when the caller went away. Nil otherwise.
	Err error
}

// Summary is o as the `contract` member of a guarded answer: the
// contract, the status, the model calls and local fixes made, the codes
// before and after, and the repair calls' tokens.
func (o *Outcome) Summary() *strictjson.Value {
	member := func(key string, v *strictjson.Value) strictjson.Member {
		return strictjson.Member{Key: key, KeyOffset: -1, Value: v}
	}
	codes := func(cs []string) *strictjson.Value {
		items := make([]*strictjson.Value, len(cs))
		for i, c := range cs {
			items[i] = strictjson.String(c)
		}
		return strictjson.Array(items...)
	}
	return strictjson.Object(
		member("id", strictjson.String(o.Report.Contract)),
		member("status", strictjson.String(o.Status)),
		member("llm_calls", strictjson.Int(int64(o.LLMCalls))),
		member("local_fixes", strictjson.Int(int64(len(o.Changes)))),
		member("violations_before", codes(o.Before.Codes())),
		member("violations_after", codes(o.Report.Codes())),
		member("repair_tokens", strictjson.Object(
			member("prompt", strictjson.Int(int64(o.Tokens.PromptTokens))),
			member("output", strictjson.Int(int64(o.Tokens.OutputTokens))),
		)),
	)
}

// RungKind is the family of a rung as Outcome.Rungs names it: llm_repair
// for either kind of repair call, regeneration for partial regeneration,
// rerun for a re-run at any temperature; any other rung is its own.
func RungKind(rung string) string {
	switch {
	case rung == "llm_repair", rung == "llm_repair_scoped":
		return "llm_repair"
	case rung == "partial_regeneration":
		return "regeneration"
	case strings.HasPrefix(rung, "rerun:"):
		return "rerun"
	}
	return rung
}

// AddCalls adds the model calls of other to o: their count, their tokens,
// and the rungs that made them, each named once in the order first used.
// A request whose answer more than one run worked on (a stream's items,
// then the ladder; the arguments of several tool calls) reports them all.
func (o *Outcome) AddCalls(other Outcome) {
	o.LLMCalls += other.LLMCalls
	o.Tokens.PromptTokens += other.Tokens.PromptTokens
	o.Tokens.OutputTokens += other.Tokens.OutputTokens
	for _, r := range other.Rungs {
		if !slices.Contains(o.Rungs, r) {
			o.Rungs = append(o.Rungs, r)
		}
	}
}

// Run brings one answer into contract, cheapest rung first, and applies the
// contract's fallback when no rung succeeds:
//
//  1. local repair (no model);
//  2. LLM repair, at most Policy.MaxRepairs calls (less Job.Spent's:
//     the calls a stream made on the answer's items), item-scoped first when
//     the policy allows it and every error sits in items, each reply merged
//     with the document it was given (items without violations stay as they
//     were, and so do the fields of repaired items no violation named); a
//     reply that fixed nothing ends the rung early;
//  3. partial regeneration, one call, when the remaining errors all sit in
//     items of the contract's item array and no call regenerated items of
//     the answer before (Job.Spent);
//  4. re-runs of the original request at each temperature of
//     Policy.Temperatures; each re-run's answer enters the ladder again
//     (local repair, LLM repair, partial regeneration) within the same
//     budget. The schedule lists re-runs, unless the first answer was
//     already asked at its first temperature (Job.FirstScheduled, from
//     Policy.ScheduleFirst): then the re-runs use the rest, and
//     oracle-score's 0.3/0.2/0.1 is three attempts in all, the first
//     answer included;
//  5. the fallback.
//
// Every model call counts against the job's budget; when it or ctx runs out
// no further call is made and the fallback applies to the best attempt seen
// (fewest error violations, a parsed document before an unparsed one, the
// earlier on ties). Run starts no goroutines.
func Run(ctx context.Context, job Job) Outcome {
	l := newLadder(job)
	local := Local(job.Validator, job.Text, job.Params)
	first := l.fromLocal(job.Text, local)
	l.out.Before, l.out.First = local.Before, local.Doc
	l.out.Rungs = []string{"local"}
	if first.valid() {
		status := StatusRepaired
		if len(first.changes) == 0 {
			status = StatusValid
		}
		return l.finish(first, status)
	}
	l.best = first
	if !job.LocalOnly {
		if a, ok := l.llmRepair(ctx, first, max(0, l.policy.MaxRepairs-job.Spent.Repairs)); ok {
			return l.finish(a, StatusRepaired)
		}
		if job.Spent.Regenerations == 0 {
			if a, ok := l.partialRegeneration(ctx); ok {
				return l.finish(a, StatusRepaired)
			}
		}
		if a, ok := l.rerun(ctx); ok {
			return l.finish(a, StatusRepaired)
		}
	}
	return l.fallback(ctx)
}

// fallback applies the contract's fallback when no attempt was valid.
func (l *ladder) fallback(ctx context.Context) Outcome {
	fb := l.job.Validator.Contract.Fallback
	l.out.Rungs = append(l.out.Rungs, "fallback:"+fb.Mode)
	switch fb.Mode {
	case contracts.FallbackBestEffort:
		if l.best.doc != nil {
			return l.finish(l.best, StatusFallback)
		}
	case contracts.FallbackStatic:
		if doc, err := strictjson.Parse(fb.Static); err == nil {
			out := l.finish(l.best, StatusFallback)
			out.Doc, out.Changes = doc, nil
			return out
		}
	case contracts.FallbackModel:
		if a, ok := l.fallbackModel(ctx, fb.Model); ok {
			return l.finish(a, StatusFallback)
		}
	}
	out := l.finish(l.best, StatusFailed)
	out.Doc = nil
	return out
}

// finish fills the outcome from the accepted (or best) attempt.
func (l *ladder) finish(a attempt, status string) Outcome {
	out := l.out
	out.Status, out.Doc, out.Report, out.Changes = status, a.doc, a.report, a.changes
	out.Err = l.stop
	return out
}
