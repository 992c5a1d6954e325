package repair

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/repair/syntax"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/extract"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// attempt is one candidate document of the ladder: the first answer after
// local repair, a repair reply after merge, a spliced document, a re-run.
type attempt struct {
	doc     *strictjson.Value
	report  validators.Report
	changes []Change
	// raw is the extracted JSON text the attempt came from, sent to the
	// model as ORIGINAL_JSON when doc is nil (the text did not parse).
	raw string
}

func (a attempt) valid() bool { return a.doc != nil && a.report.Valid }

// errs counts the attempt's error violations.
func (a attempt) errs() int {
	n := 0
	for _, v := range a.report.Violations {
		if v.Severity == validators.SeverityError {
			n++
		}
	}
	return n
}

// better reports whether a beats b: a parsed document beats none (one
// JSON_SYNTAX violation hides every other problem), then fewer error
// violations win. Equal attempts are not better, so the earlier one stays.
func (a attempt) better(b attempt) bool {
	if (a.doc != nil) != (b.doc != nil) {
		return a.doc != nil
	}
	return a.errs() < b.errs()
}

// ladder is the state of one Run.
type ladder struct {
	job    Job
	policy contracts.Policy
	// array is the contract's item array pointer ("/questions"), or "".
	array string
	max   int
	// reserve is the number of calls rungs 2–4 leave unused: one for the
	// fallback model, when the contract falls back to one, so that a long
	// ladder cannot starve the last resort.
	reserve int
	out     Outcome
	best    attempt
	// stop is set once no further model call may be made: the budget or
	// the deadline ran out, or the caller went away.
	stop error
	// greedy holds the replies of the calls made at temperature 0, by
	// request. A local model answers such a call the same way each time,
	// so a later rung that would ask the same (a re-run that came back as
	// the first answer leads there) reads the reply again instead of
	// paying for it.
	greedy map[[sha256.Size]byte]string
}

func newLadder(job Job) *ladder {
	c := job.Validator.Contract
	l := &ladder{job: job, policy: c.Policy, array: c.ItemArray, max: job.MaxLLMCalls}
	switch {
	case l.max == 0:
		l.max = DefaultMaxLLMCalls
	case l.max < 0:
		l.max = 0
	}
	if c.Fallback.Mode == contracts.FallbackModel && l.max > 0 {
		l.reserve = 1
	}
	return l
}

// canCall reports whether one more model call may be made, and records why
// not when it may not.
func (l *ladder) canCall(ctx context.Context) bool {
	if l.stop != nil {
		return false
	}
	if err := ctx.Err(); err != nil {
		l.stop = ctxStop(err)
		return false
	}
	if l.out.LLMCalls >= l.max {
		l.stop = fmt.Errorf("%w: %d of %d model calls made", ErrBudgetExhausted, l.out.LLMCalls, l.max)
		return false
	}
	return l.out.LLMCalls < l.max-l.reserve
}

// ctxStop turns a context error into the ladder's stop reason: a deadline is
// the budget running out, a cancellation is the caller going away.
func ctxStop(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrBudgetExhausted, err)
	}
	return err
}

// call makes one counted model call through do, recorded as rung unless
// rung is "". A failure caused by the context ending stops the ladder; any
// other failure (a 500, a per-call timeout) only costs the call.
func (l *ladder) call(ctx context.Context, rung string, do func(ctx context.Context) (Reply, error)) (string, bool) {
	l.out.LLMCalls++
	if rung != "" {
		l.out.Rungs = append(l.out.Rungs, rung)
	}
	reply, err := do(ctx)
	l.out.Tokens.add(reply)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			l.stop = ctxStop(cerr)
		}
		return "", false
	}
	return reply.Text, true
}

// complete makes one repair or regeneration call, or, for a call at
// temperature 0 the ladder has made before, answers the reply it got then
// without a call; again says so, so that what the reply cost or undid is
// not counted twice.
func (l *ladder) complete(ctx context.Context, rung string, req ModelRequest) (text string, again, ok bool) {
	var key [sha256.Size]byte
	if req.Temperature == 0 {
		key = requestKey(req)
		if text, ok := l.greedy[key]; ok {
			return text, true, true
		}
	}
	text, ok = l.call(ctx, rung, func(ctx context.Context) (Reply, error) { return l.job.Model.Complete(ctx, req) })
	if ok && req.Temperature == 0 {
		if l.greedy == nil {
			l.greedy = map[[sha256.Size]byte]string{}
		}
		l.greedy[key] = text
	}
	return text, false, ok
}

// requestKey identifies a model request by everything that shapes its
// reply; the fields are length-prefixed so that no two requests share one.
func requestKey(req ModelRequest) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, f := range []string{req.Model, req.System, req.Prompt, string(req.Format)} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		io.WriteString(h, f)
	}
	for _, x := range []uint64{math.Float64bits(req.TopP), uint64(req.NumPredict)} {
		binary.LittleEndian.PutUint64(n[:], x)
		h.Write(n[:])
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// format is the schema to pass as Ollama `format` on model calls, or nil.
func (l *ladder) format() json.RawMessage {
	c := l.job.Validator.Contract
	if !l.policy.UseFormat || l.job.NoFormat || len(c.SchemaJSON) == 0 {
		return nil
	}
	return c.SchemaJSON
}

// request is every rung's call to the job's model: the contract's format
// (see format), temperature 0 and top_p 1 for the likeliest answer, and
// room for a reply about as long as the n bytes it answers.
func (l *ladder) request(system, prompt string, n int) ModelRequest {
	return ModelRequest{Model: l.job.ModelName, System: system, Prompt: prompt, Format: l.format(), Temperature: 0, TopP: 1, NumPredict: NumPredict(n)}
}

// consider keeps a as the best attempt when it beats the current one.
func (l *ladder) consider(a attempt) {
	if a.better(l.best) {
		l.best = a
	}
}

// fromLocal turns rung 1's result on text into an attempt.
func (l *ladder) fromLocal(text string, r LocalResult) attempt {
	a := attempt{doc: r.Doc, report: r.Report, changes: r.Changes}
	if a.doc == nil {
		a.raw = rawBlock(text)
	}
	return a
}

// local runs rung 1 on a model's reply.
func (l *ladder) local(text string) attempt {
	return l.fromLocal(text, Local(l.job.Validator, text, l.job.Params))
}

// recheck validates a document the ladder changed itself (merged or
// spliced) and applies the derivable fixes again: ids, numbering and meta
// counts follow the items. changes are the edits made so far.
func (l *ladder) recheck(doc *strictjson.Value, changes []Change) attempt {
	v := l.job.Validator
	doc, report := v.CheckDoc(doc, l.job.Params)
	if hasFixes(report) {
		var more []Change
		doc, report, more = ApplyFixes(v, doc, l.job.Params, report)
		changes = append(changes, more...)
	}
	return attempt{doc: doc, report: report, changes: changes}
}

// rawBlock is the JSON text to show the model when it did not parse: the
// one extracted block, else the whole text without think sections.
func rawBlock(text string) string {
	if ex, viol := validators.Extract(text); viol == nil {
		return ex.Text
	}
	return strings.TrimSpace(extract.StripThink(text))
}

// original is what an attempt is sent to the model as: its canonical
// document, or the raw block when it has none.
func (a attempt) original() string {
	if a.doc != nil {
		return string(strictjson.Marshal(a.doc))
	}
	return a.raw
}

// llmRepair is rung 2: at most repairs repair calls (Policy.MaxRepairs,
// less those already made on the answer: Job.Spent). While every
// error of the document sits in items of the item array (or is re-derived
// from them) and the policy allows it, a call is item-scoped; otherwise, or
// once a scoped reply could not be used, it sends the whole document. Each
// reply gets local repair, then the merge; the next call starts from the
// latest reply unless that is worse than the best attempt so far.
//
// A reply that leaves the same errors where they were fixed nothing, and
// the same call again would most likely cost as much for as little: at
// temperature 0 a local model answers the same prompt the same way. So the
// next call always differs from the last. After a scoped call at
// temperature 0, it is the same small call at the first temperature of
// the re-run schedule (a different draw, which costs the broken items'
// tokens, not the document's); after that, the whole document; after a
// whole-document call, the ladder moves on to the next rung.
func (l *ladder) llmRepair(ctx context.Context, base attempt, repairs int) (attempt, bool) {
	if l.job.Model == nil || noJSON(base) {
		return attempt{}, false
	}
	scoped := l.policy.ScopedRepair && l.array != ""
	temperature := 0.0
	for i := 0; i < repairs && l.canCall(ctx); i++ {
		var (
			a        attempt
			ok       bool
			asScoped bool
		)
		if indices, can := scopedIndices(l.job.Validator, l.array, base.report); scoped && base.doc != nil && can {
			asScoped = true
			a, ok = l.scopedRepair(ctx, base, indices, temperature)
			if !ok {
				scoped = false // the reply was of no use: whole document next
				continue
			}
		} else if a, ok = l.wholeRepair(ctx, base); !ok {
			continue
		}
		if a.valid() {
			return a, true
		}
		l.consider(a)
		if sameErrors(a.report, base.report) {
			if !asScoped {
				break
			}
			if t, ok := l.retryTemperature(); ok && temperature == 0 {
				temperature = t
			} else {
				scoped = false
			}
			continue
		}
		// Progress: the next call has a new payload, and temperature 0
		// gives its smallest change again.
		base, temperature = a, 0
		if l.best.better(a) {
			base = l.best
		}
	}
	return attempt{}, false
}

// retryTemperature is the temperature of a scoped call repeated after one
// that fixed nothing: the re-run schedule's first, the contract's own
// choice of how far to move from the greedy answer. False when the
// contract has no schedule (it wants no sampled answers).
func (l *ladder) retryTemperature() (float64, bool) {
	for _, t := range l.policy.Temperatures {
		if t > 0 {
			return t, true
		}
	}
	return 0, false
}

// maxProseRepair bounds the prose a repair call sends back to the model
// when an answer holds no JSON at all. A short apology or description is
// worth a repair call with the schema as format (on an API that takes no
// format, it is how the answer gets into contract); a runaway answer of
// megabytes would make a repair prompt of megabytes for a document the
// model never began: a re-run asks for the document itself.
const maxProseRepair = 64 << 10

// noJSON reports an attempt with no JSON in it and more prose than a
// repair call takes.
func noJSON(a attempt) bool {
	return a.doc == nil && len(a.raw) > maxProseRepair && slices.Contains(a.report.Codes(), "NO_JSON_BLOCK")
}

// wholeRepair is one whole-document repair call (RepairPayload) and
// its reply after local repair and merge; false when the call failed.
func (l *ladder) wholeRepair(ctx context.Context, base attempt) (attempt, bool) {
	original := base.original()
	reply, again, ok := l.complete(ctx, "llm_repair", l.request(systemPrompt(l.policy.RepairPrompt), RepairPayload(base.report, original), len(original)))
	if !ok {
		return attempt{}, false
	}
	a := l.local(reply)
	if a.doc != nil && base.doc != nil && l.array != "" {
		items := mergeItems(l.job.Validator, l.array, base.doc, a.doc, base.report)
		fields := mergeFields(l.job.Validator, l.array, base.doc, a.doc, base.report)
		if items+fields > 0 {
			if !again {
				l.out.Restored += items
				l.out.RestoredFields += fields
				l.out.Rungs = append(l.out.Rungs, "merge")
			}
			a = l.recheck(a.doc, a.changes)
		}
	}
	return a, true
}

// scopedRepair is one item-scoped repair call: the repair system
// prompt, a payload of only the named items and their violations, and only
// those items taken back and spliced into base, whose other items stay
// byte-identical; inside a taken item, only what its violations allow may
// change (mergeFields). Then local repair re-derives ids, numbering, counts
// and duration. False when the call failed or its reply could not be
// mapped onto the items.
func (l *ladder) scopedRepair(ctx context.Context, base attempt, indices []int, temperature float64) (attempt, bool) {
	arr, err := base.doc.At(l.array)
	if err != nil || arr.Kind != strictjson.KindArray {
		return attempt{}, false
	}
	items, ok := scopedOriginal(l.array, base.doc, indices)
	if !ok {
		return attempt{}, false
	}
	sent := scopedReport(l.array, base.report, indices)
	req := l.request(RepairSystemPrompt, ScopedPayload(itemArrayName(l.array), indices, sent, items), len(items))
	if req.Format != nil {
		req.Format = scopedFormat(req.Format, l.array, indices)
	}
	req.Temperature = temperature
	reply, again, ok := l.complete(ctx, "llm_repair_scoped", req)
	if !ok {
		return attempt{}, false
	}
	doc, ok := spliceReply(l.array, base.doc, reply, true, indices, len(arr.Items), scopedItems)
	if !ok {
		return attempt{}, false
	}
	if n := mergeFields(l.job.Validator, l.array, base.doc, doc, base.report); n > 0 && !again {
		l.out.RestoredFields += n
		l.out.Rungs = append(l.out.Rungs, "merge")
	}
	return l.recheck(doc, slices.Clone(base.changes)), true
}

// sameErrors reports whether b has exactly the error violations of a: the
// same codes at the same paths, so a reply fixed nothing.
func sameErrors(a, b validators.Report) bool {
	key := func(r validators.Report) []string {
		var out []string
		for _, v := range r.Violations {
			if v.Severity == validators.SeverityError {
				out = append(out, v.Code+"@"+v.Path)
			}
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// partialRegeneration is rung 3: when every error of the best attempt sits
// in items of the item array, one call regenerates exactly those items;
// only they are taken from the reply and spliced into the best attempt,
// whose other items stay byte-identical, then rung 1 re-derives ids,
// numbering and meta. The instruction is the user message, whole, so the
// call has no system prompt; it uses the repair call's options
// (temperature 0, top_p 1): the violations shown say what to write, and a
// deterministic answer keeps the rung reproducible.
func (l *ladder) partialRegeneration(ctx context.Context) (attempt, bool) {
	if !l.policy.PartialRegeneration || l.best.doc == nil {
		return attempt{}, false
	}
	indices, ok := itemErrors(l.array, l.best.report)
	if !ok {
		return attempt{}, false
	}
	a, ok := l.regenerate(ctx, l.best, indices)
	if !ok {
		return attempt{}, false
	}
	if a.valid() {
		return a, true
	}
	l.consider(a)
	return attempt{}, false
}

// regenerate makes the partial regeneration call for the items of base
// at indices and returns base with them spliced in and rung 1 run again;
// false when no call was made or its reply gave no usable items.
func (l *ladder) regenerate(ctx context.Context, base attempt, indices []int) (attempt, bool) {
	if l.job.Model == nil || l.array == "" || base.doc == nil {
		return attempt{}, false
	}
	arr, err := base.doc.At(l.array)
	if err != nil || arr.Kind != strictjson.KindArray {
		return attempt{}, false
	}
	if !l.canCall(ctx) {
		return attempt{}, false
	}
	current := base.original()
	prompt := PartialPrompt(l.job.Prompt, itemArrayName(l.array), indices, violationsIn(l.array, base.report, indices), current)
	reply, _, ok := l.complete(ctx, "partial_regeneration", l.request("", prompt, len(current)))
	if !ok {
		return attempt{}, false
	}
	doc, ok := spliceReply(l.array, base.doc, reply, l.job.Validator.Contract.ExpectsContainer(), indices, len(arr.Items), replacementItems)
	if !ok {
		return attempt{}, false
	}
	// The other items are still those of base, and so are its local
	// fixes: its change log carries over.
	return l.recheck(doc, slices.Clone(base.changes)), true
}

// spliceReply reads a model's reply about the items at indices of doc's
// array of n items (parseReply, container as there), picks its
// replacement items with pick and returns doc with them in place of its
// own; false when the reply cannot be read or mapped onto the items.
func spliceReply(array string, doc *strictjson.Value, reply string, container bool, indices []int, n int,
	pick func(array string, reply *strictjson.Value, indices []int, n int) (map[int]*strictjson.Value, bool)) (*strictjson.Value, bool) {
	val, ok := parseReply(reply, container)
	if !ok {
		return nil, false
	}
	repl, ok := pick(array, val, indices, n)
	if !ok {
		return nil, false
	}
	return splice(array, doc, repl)
}

// parseReply reads the JSON value of a regeneration reply, which need not
// satisfy the contract (it may be the items alone): extraction and strict
// parsing, else syntactic repair. A truncated reply is refused, and so is
// one whose repair would drop text of its values (Lossy).
func parseReply(text string, container bool) (*strictjson.Value, bool) {
	if ex, viol := validators.Extract(text); viol == nil {
		if v, err := strictjson.ParseString(ex.Text); err == nil {
			return v, true
		}
	}
	sr, err := syntax.Repair([]byte(extract.StripThink(text)), syntax.Options{ExpectContainer: container})
	if err != nil || sr.Truncated || sr.Lossy {
		return nil, false
	}
	v, err := strictjson.Parse(sr.Text)
	return v, err == nil
}

// rerun is rung 4: the original request again at each temperature of the
// schedule. Each answer enters the ladder again: local repair,
// then LLM repair and partial regeneration as the policy allows, all within
// the same budget, so a re-run that is nearly right is finished rather than
// thrown away.
func (l *ladder) rerun(ctx context.Context) (attempt, bool) {
	if l.job.Rerun == nil {
		return attempt{}, false
	}
	temps := l.policy.Temperatures
	if l.job.FirstScheduled && len(temps) > 0 {
		temps = temps[1:]
	}
	for _, t := range temps {
		if !l.canCall(ctx) {
			break
		}
		text, ok := l.call(ctx, "rerun:"+strconv.FormatFloat(t, 'f', -1, 64), func(ctx context.Context) (Reply, error) {
			return l.job.Rerun(ctx, t)
		})
		if !ok {
			continue
		}
		a := l.local(text)
		if a.valid() {
			return a, true
		}
		l.consider(a)
		if b, ok := l.llmRepair(ctx, a, l.policy.MaxRepairs); ok {
			return b, true
		}
		if b, ok := l.partialRegeneration(ctx); ok {
			return b, true
		}
	}
	return attempt{}, false
}

// fallbackModel is the fallback mode "model": the original request once on
// another model, within the budget; its answer gets local repair only.
func (l *ladder) fallbackModel(ctx context.Context, model string) (attempt, bool) {
	l.reserve = 0
	if l.job.RerunModel == nil || !l.canCall(ctx) {
		return attempt{}, false
	}
	text, ok := l.call(ctx, "", func(ctx context.Context) (Reply, error) { return l.job.RerunModel(ctx, model) })
	if !ok {
		return attempt{}, false
	}
	a := l.local(text)
	if a.valid() {
		return a, true
	}
	l.consider(a)
	return attempt{}, false
}
