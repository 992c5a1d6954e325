// Package release runs the progressive release of one guarded stream: it
// reads the model's answer as it arrives, checks each item of the
// contract's item array the moment it closes, repairs a broken one in
// flight (local fixes, then one item-scoped repair call, then one call
// writing it anew where the contract allows partial regeneration) while
// later items wait behind it in order, and hands the deltas to release to the
// caller, who writes them in the client's stream format. At the end it
// brings the members derived from the items into contract (local repair)
// and says whether the document the deltas make is valid. It does no I/O
// of its own: the model is the caller's repair.Model, the writing the
// caller's.
package release

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/contractgateway/gateway/middleware/progressive"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/strictjson"
	"github.com/contractgateway/gateway/validators"
)

// How a guarded stream of a contract with an item array answers: a
// route's stream key and the X-Contract-Stream header. Progressive (the
// default) releases each item as it validates; buffered holds the answer,
// with keep-alives, until it is whole.
const (
	Progressive = "progressive"
	Buffered    = "buffered"
)

// Mode reads the value of a stream key or header: "" when empty, an
// error naming both values for any other.
func Mode(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", Progressive, Buffered:
		return v, nil
	default:
		return "", fmt.Errorf("X-Contract-Stream %q: want progressive or buffered", s)
	}
}

// Result is how a run ended.
type Result struct {
	// Released says deltas went to the feed: Tail, Doc, Text and Outcome
	// say how the answer they begin ends. When false nothing did and the
	// caller answers as it would without progressive release; Reason says
	// why.
	Released bool
	Reason   string
	// Tail is the last delta: the array's close, the other members and
	// the closing braces; "" for a failure.
	Tail string
	// Doc is the final document and Text its canonical text, the
	// concatenation of every delta and Tail; nil and "" for a failure.
	// Whole is Doc with the item array where the model wrote it: the
	// document of an answer that goes out whole instead.
	Doc   *strictjson.Value
	Text  string
	Whole *strictjson.Value
	// Outcome is what the run did, as the ladder reports it: status
	// (valid, repaired or failed), the reports before and after, the local
	// changes, the model calls and their tokens.
	Outcome repair.Outcome
}

// Run is one answer's progressive release. Feed and Finish are called by
// the goroutine reading the upstream answer; the deltas it releases go to
// its Feed, which the goroutines writing to clients follow; the checks
// and repairs run in a goroutine of their own, so that none waits for
// another.
type Run struct {
	job   repair.Job
	split *progressive.Splitter
	check *progressive.Checker
	asm   *progressive.Assembler
	// path is the item array's pointer as its member names.
	path []string

	mu sync.Mutex
	// in holds the deltas fed and not yet read; ended says the answer is
	// complete; calling that the run called the model, abandoned that
	// Abandon ended it before it did.
	in        []string
	ended     bool
	calling   bool
	abandoned bool
	wake      chan struct{}
	// out is where released deltas go.
	out  *Feed
	done chan struct{}

	// The worker's own state.
	all      strings.Builder
	docText  string
	released bool
	reason   string
	failed   bool
	left     int
	out0     repair.Outcome
	res      Result
}

// Start starts the run of job's contract, whose item array it releases.
// job is the ladder's job for the first answer: its validator, parameters
// and model, its budget of model calls (MaxLLMCalls, -1 none) and gate
// (LocalOnly). ctx bounds the repair calls. out is the feed the released
// deltas go to, made before the run when others follow it already; nil
// means a new one.
func Start(ctx context.Context, job repair.Job, out *Feed) (*Run, error) {
	split, err := progressive.NewSplitter(job.Validator.Contract.ItemArray)
	if err != nil {
		return nil, err
	}
	check, err := progressive.NewChecker(job.Validator, job.Params)
	if err != nil {
		return nil, err
	}
	asm, err := progressive.NewAssembler(job.Validator.Contract.ItemArray)
	if err != nil {
		return nil, err
	}
	path, _ := strictjson.ParsePointer(job.Validator.Contract.ItemArray)
	r := &Run{job: job, split: split, check: check, asm: asm, path: path, left: job.MaxLLMCalls,
		wake: make(chan struct{}, 1), out: out, done: make(chan struct{})}
	switch {
	case r.left == 0:
		r.left = repair.DefaultMaxLLMCalls
	case r.left < 0:
		r.left = 0
	}
	if r.out == nil {
		r.out = NewFeed()
	}
	r.out0.Rungs = []string{"local"}
	go r.work(ctx)
	return r, nil
}

// Feed hands the run the next piece of the model's text. It never waits.
func (r *Run) Feed(delta string) {
	r.mu.Lock()
	r.in = append(r.in, delta)
	r.mu.Unlock()
	signal(r.wake)
}

// Finish says the answer is complete (or ended with an error: a document
// that did not close then fails) and waits for the run's end.
func (r *Run) Finish() Result {
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
	signal(r.wake)
	<-r.done
	return r.res
}

// Abandon ends a run once the answer is complete, when nobody took a
// delta of its feed and it called no model: its work is then what the
// ladder does on the whole answer, which goes there as it would without
// the run (the feed retracted, nothing the run did is kept). False when
// it called the model (the repair is under way or done) or a delta was
// taken: Finish then says how it ends.
func (r *Run) Abandon() bool {
	r.mu.Lock()
	if r.calling || !r.out.Retract() {
		r.mu.Unlock()
		return false
	}
	r.abandoned, r.ended = true, true
	r.mu.Unlock()
	signal(r.wake)
	<-r.done
	return true
}

// Out is the feed of the deltas the run releases.
func (r *Run) Out() *Feed { return r.out }

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (r *Run) work(ctx context.Context) {
	defer close(r.done)
	for {
		<-r.wake
		r.mu.Lock()
		in, ended := r.in, r.ended
		r.in = nil
		r.mu.Unlock()
		for _, d := range in {
			r.all.WriteString(d)
			for _, e := range r.split.Feed(d) {
				if r.isAbandoned() {
					break
				}
				r.handle(ctx, e)
			}
		}
		if r.isAbandoned() {
			r.res = Result{Reason: "abandoned"}
			return
		}
		if ended {
			for _, e := range r.split.Close() {
				r.handle(ctx, e)
			}
			r.res = r.finish()
			return
		}
	}
}

func (r *Run) handle(ctx context.Context, e progressive.Event) {
	switch e.Kind {
	case progressive.DocumentClosed:
		r.docText = e.Raw
	case progressive.GaveUp:
		r.stop(e.Reason)
	case progressive.ItemClosed:
		if r.failed || r.reason != "" {
			return
		}
		if item, ok := r.judge(ctx, e.Raw); ok {
			for _, d := range r.asm.Item(item) {
				r.release(d)
			}
		}
	}
}

func (r *Run) isAbandoned() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.abandoned
}

// stop ends the release: before anything went out the caller answers as
// without it, after it the stream ends in the contract failure.
func (r *Run) stop(reason string) {
	if r.reason == "" {
		r.reason = reason
	}
	if r.released {
		r.failed = true
	}
}

func (r *Run) release(delta string) {
	r.released = true
	r.out.publish(delta)
}

// judge decides the fate of the item that closed after those released:
// it returns the item to release, as written or repaired, or false when
// it cannot be brought into contract (the run stopped).
//
// Every step here validates with the validator of items in flight
// (validators.Validator.Items), as the checker does: a check that reads
// root or other items is judged by finish, on the whole document.
func (r *Run) judge(ctx context.Context, raw string) (*strictjson.Value, bool) {
	v, params := r.job.Validator.Items(), r.job.Params
	n := len(r.asm.Items()) + 1
	var doc *strictjson.Value
	var report validators.Report
	if item, err := strictjson.ParseString(raw); err == nil {
		var blocking []validators.Violation
		doc, report, blocking = r.check.Check(append(r.asm.Items()[:n-1:n-1], item))
		if len(blocking) == 0 {
			return item, true
		}
	} else {
		// Broken JSON inside the item: the syntactic fixes of local repair
		// on the document of the items so far.
		local := repair.Local(v, r.prefixText(raw), params)
		if local.Doc == nil {
			r.stop("item " + strconv.Itoa(n-1) + " is not JSON local repair can read")
			return nil, false
		}
		if item, ok := r.accept(local.Doc, local.Report, local.Changes, n); ok {
			return item, true
		}
		doc, report = local.Doc, local.Report
	}
	if hasFixes(report) {
		fixed, rep, changes := repair.ApplyFixes(v, doc, params, report)
		if item, ok := r.accept(fixed, rep, changes, n); ok {
			return item, true
		}
		doc, report = fixed, rep
	}
	if !r.released {
		// Nothing went out yet: the whole ladder, after the answer, can do
		// more for it than a call here.
		r.stop("item " + strconv.Itoa(n-1) + " needs more than local repair")
		return nil, false
	}
	r.mu.Lock()
	abandoned := r.abandoned
	r.calling = !abandoned
	r.mu.Unlock()
	if abandoned {
		return nil, false
	}
	// One item-scoped repair call, then (where the contract's policy
	// allows it) one call writing the item anew: neither touches an item
	// released before it.
	for _, rung := range []func(context.Context, repair.Job, *strictjson.Value, validators.Report, []int) repair.Outcome{repair.RepairItems, repair.RegenerateItems} {
		job := r.job
		job.Validator = v
		job.MaxLLMCalls = r.left
		if r.left == 0 {
			job.MaxLLMCalls = -1
		}
		out := rung(ctx, job, doc, report, []int{n - 1})
		r.left = max(0, r.left-out.LLMCalls)
		r.out0.AddCalls(out)
		if out.Status == repair.StatusRepaired {
			if item, ok := r.accept(out.Doc, out.Report, out.Changes, n); ok {
				return item, true
			}
		}
	}
	r.stop("item " + strconv.Itoa(n-1) + " could not be repaired")
	return nil, false
}

// accept takes item n-1 of a repaired document of n items when the items
// released before it are unchanged and no violation holds it back.
func (r *Run) accept(doc *strictjson.Value, report validators.Report, changes []repair.Change, n int) (*strictjson.Value, bool) {
	arr, err := doc.At(r.job.Validator.Contract.ItemArray)
	if err != nil || arr.Kind != strictjson.KindArray || len(arr.Items) != n {
		return nil, false
	}
	for i, it := range r.asm.Items() {
		if !strictjson.Equal(it, arr.Items[i]) {
			return nil, false
		}
	}
	if len(r.check.Blocking(report, n)) > 0 {
		return nil, false
	}
	r.out0.Changes = append(r.out0.Changes, changes...)
	return arr.Items[n-1], true
}

// prefixText is the document of the released items and the raw text of
// the next, for local repair to read.
func (r *Run) prefixText(raw string) string {
	var b strings.Builder
	for _, seg := range r.path {
		b.WriteByte('{')
		b.Write(strictjson.Marshal(strictjson.String(seg)))
		b.WriteByte(':')
	}
	b.WriteByte('[')
	for _, it := range r.asm.Items() {
		b.Write(strictjson.Marshal(it))
		b.WriteByte(',')
	}
	b.WriteString(raw)
	b.WriteByte(']')
	b.WriteString(strings.Repeat("}", len(r.path)))
	return b.String()
}

// finish ends the run once the answer is complete: the final document
// from the released items and the model's other members, the derived
// members re-derived by local repair, validated whole.
func (r *Run) finish() Result {
	if !r.released {
		reason := r.reason
		if reason == "" {
			reason = "no item to release"
		}
		return Result{Reason: reason}
	}
	v, params := r.job.Validator, r.job.Params
	out := r.out0
	out.Before = v.Validate(r.all.String(), params).Report
	fail := func(report validators.Report) Result {
		out.Status, out.Report = repair.StatusFailed, report
		return Result{Released: true, Reason: r.reason, Outcome: out}
	}
	if r.failed {
		return fail(out.Before)
	}
	model, err := strictjson.ParseString(r.docText)
	if err != nil {
		// An item mended by local repair leaves the model's document
		// broken: its other members are read as local repair reads them.
		if model = repair.Local(v, r.docText, params).Doc; model == nil {
			return fail(out.Before)
		}
	}
	doc, err := r.asm.Document(model)
	if err != nil {
		return fail(out.Before)
	}
	doc, report := v.CheckDoc(doc, params)
	if hasFixes(report) {
		var changes []repair.Change
		doc, report, changes = repair.ApplyFixes(v, doc, params, report)
		out.Changes = append(out.Changes, changes...)
	}
	arr, err := doc.At(v.Contract.ItemArray)
	if err != nil || arr.Kind != strictjson.KindArray || len(arr.Items) != len(r.asm.Items()) {
		return fail(report)
	}
	for i, it := range r.asm.Items() {
		if !strictjson.Equal(it, arr.Items[i]) {
			return fail(report)
		}
	}
	if !report.Valid {
		return fail(report)
	}
	tail, err := r.asm.Close(doc)
	if err != nil {
		return fail(report)
	}
	out.Status, out.Doc, out.Report = repair.StatusValid, doc, report
	if len(out.Changes) > 0 || out.LLMCalls > 0 {
		out.Status = repair.StatusRepaired
	}
	return Result{Released: true, Tail: tail, Doc: doc, Text: r.asm.Text(), Whole: r.asm.InModelOrder(doc, model), Outcome: out}
}

// hasFixes reports whether some violation of r carries a local fix.
func hasFixes(r validators.Report) bool {
	for _, v := range r.Violations {
		if v.Fix != nil {
			return true
		}
	}
	return false
}
