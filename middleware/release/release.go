// Package release runs the progressive release of one guarded stream: it
// reads the model's answer as it arrives, checks each item of the
// contract's item array the moment it closes, repairs a broken one in
// flight (local fixes, then item-scoped repair calls for it and the
// broken items that closed behind it together, then one call writing them
// anew where the contract allows partial regeneration, every call within
// the answer's budget) while later items wait behind it in order, and hands
// the deltas to release to the caller, who writes them in the client's
// stream format. A call still waiting for the model's slot when the
// answer ends is withdrawn and made again with every broken item by then.
// When nobody follows the stream, nothing can go out early: an item that
// needs the model is left to the ladder, after the answer. At the end it
// brings the members derived from the items into contract (local repair)
// and says whether the document the deltas make is valid. It does no I/O
// of its own: the model is the caller's repair.Model, the writing the
// caller's.
package release

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/contractgateway/gateway/middleware/progressive"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
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
	// Spent is the repair and regeneration calls the run made on the
	// answer: the ladder that takes the answer over after a failure
	// nobody saw (repair.Job.Spent) makes only those the policy has left.
	Spent repair.Spent
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
	// endc is closed when the answer is complete (ended is set).
	endc chan struct{}
	// started says the model began to answer the run's current call.
	started atomic.Bool
	// fed counts the deltas fed and read those the worker has read and
	// judged the items of; waiting says it waits on a model call, over
	// that it has ended. Sync waits on idle for them.
	fed, read     int
	waiting, over bool
	idle          *sync.Cond
	// out is where released deltas go.
	out  *Feed
	done chan struct{}

	// The worker's own state: q holds the splitter's events not yet
	// handled, pulled counts the deltas read, inEnded says the last was.
	q        []progressive.Event
	pulled   int
	inEnded  bool
	all      strings.Builder
	docText  string
	released bool
	reason   string
	failed   bool
	// left is the model calls the request may still make (max_llm_calls),
	// spent the repair and regeneration calls made on the answer: they
	// count against the contract's policy (max_repairs, one partial
	// regeneration) as the ladder's own calls on the answer would.
	left  int
	spent repair.Spent
	out0  repair.Outcome
	res   Result
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
		wake: make(chan struct{}, 1), endc: make(chan struct{}), out: out, done: make(chan struct{})}
	r.idle = sync.NewCond(&r.mu)
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
	r.fed++
	r.mu.Unlock()
	signal(r.wake)
}

// Sync waits until the run has read every delta fed so far and judged
// the items they closed, or waits on a model call (calling: the call has
// been handed to the model), or has ended. A caller that feeds a recorded
// answer at a pace of its own (a benchmark, a test) uses it to see the
// run as it would be with a model that writes slower than the run
// judges, as local models do.
func (r *Run) Sync() (calling bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.read < r.fed && !r.waiting && !r.over {
		r.idle.Wait()
	}
	return r.waiting
}

// Finish says the answer is complete (or ended with an error: a document
// that did not close then fails) and waits for the run's end.
func (r *Run) Finish() Result {
	r.mu.Lock()
	r.end()
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
	r.abandoned = true
	r.end()
	r.mu.Unlock()
	signal(r.wake)
	<-r.done
	return true
}

// end says the answer is complete; r.mu is held.
func (r *Run) end() {
	if !r.ended {
		r.ended = true
		close(r.endc)
	}
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
	defer func() {
		r.mu.Lock()
		r.over = true
		r.idle.Broadcast()
		r.mu.Unlock()
		close(r.done)
	}()
	for {
		<-r.wake
		r.pull()
		r.drain(ctx)
		if r.isAbandoned() {
			r.res = Result{Reason: "abandoned"}
			return
		}
		if r.inEnded {
			r.q = append(r.q, r.split.Close()...)
			r.drain(ctx)
			r.res = r.finish()
			return
		}
		r.mu.Lock()
		r.read = r.pulled
		r.idle.Broadcast()
		r.mu.Unlock()
	}
}

// pull reads the deltas fed since the last pull into the splitter and
// queues what closed in them.
func (r *Run) pull() {
	r.mu.Lock()
	in, ended := r.in, r.ended
	r.in = nil
	r.mu.Unlock()
	for _, d := range in {
		r.all.WriteString(d)
		r.q = append(r.q, r.split.Feed(d)...)
	}
	r.pulled += len(in)
	r.inEnded = r.inEnded || ended
}

// drain handles the queued events in order.
func (r *Run) drain(ctx context.Context) {
	for len(r.q) > 0 {
		if r.isAbandoned() {
			r.q = nil
			return
		}
		e := r.q[0]
		r.q = r.q[1:]
		switch e.Kind {
		case progressive.DocumentClosed:
			r.docText = e.Raw
		case progressive.GaveUp:
			r.stop(e.Reason)
		case progressive.ItemClosed:
			if r.failed || r.reason != "" {
				continue
			}
			r.item(ctx, e.Raw)
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

// pending is an item that closed and waits for its release: as written or
// as local repair left it (changes), and whether any violation of its
// own holds it back.
type pending struct {
	item    *strictjson.Value
	changes []repair.Change
	ok      bool
}

// item judges the item that closed after those released, and releases it
// when it is in contract as written or after local repair. One that needs
// the model is mended in flight with the items that closed behind it,
// unless nobody follows the stream: then nothing can go out early, and
// the answer goes to the ladder whole once it is complete, where one call
// repairs every broken item.
func (r *Run) item(ctx context.Context, raw string) {
	n := len(r.asm.Items())
	p, ok := r.local(r.asm.Items(), raw)
	switch {
	case !ok:
		r.stop("item " + strconv.Itoa(n) + " is not JSON local repair can read")
		return
	case p.ok:
		r.releaseItem(p)
		return
	case !r.released:
		// Nothing went out yet: the whole ladder, after the answer, can do
		// more for it than a call here.
		r.stop("item " + strconv.Itoa(n) + " needs more than local repair")
		return
	case r.out.withdraw():
		// Nobody streams the answer: a call now would release nothing
		// sooner, and would wait for the model's slot that the answer
		// still holds. The ladder makes one call for every broken item
		// once the answer is complete.
		r.stop("item " + strconv.Itoa(n) + " needs the model and no client streams the answer")
		return
	}
	r.mu.Lock()
	abandoned := r.abandoned
	r.calling = !abandoned
	r.mu.Unlock()
	if abandoned {
		return
	}
	r.mend(ctx, r.behind([]pending{p}))
}

// behind adds to batch, which holds the broken item first, the items that
// closed after it in the text already fed: they wait for it anyway, and
// those that are broken too are repaired by the same call. It stops at an
// item local repair cannot read, which stops the release once the batch
// is out.
func (r *Run) behind(batch []pending) []pending {
	r.pull()
	for len(r.q) > 0 && r.q[0].Kind == progressive.ItemClosed {
		p, ok := r.local(r.prefix(batch), r.q[0].Raw)
		if !ok {
			break
		}
		r.q = r.q[1:]
		batch = append(batch, p)
	}
	return batch
}

// prefix is the items released and those of batch after them.
func (r *Run) prefix(batch []pending) []*strictjson.Value {
	items := slices.Clone(r.asm.Items())
	for _, p := range batch {
		items = append(items, p.item)
	}
	return items
}

// mend brings the batch's broken items into contract with the model:
// item-scoped repair calls for all of them together while the policy's
// max_repairs allows (a call that changed nothing is followed by one at
// the re-run schedule's first temperature, as in the ladder), then, for
// those still broken, one call writing them anew where the policy allows
// partial regeneration. Items go out in order as soon as every item
// before them did; no call touches an item released before it. Each call
// counts against the answer's budget: max_llm_calls, and the policy's
// max_repairs and single regeneration, which the ladder's calls on the
// answer share. When a broken item is left, the release stops.
func (r *Run) mend(ctx context.Context, batch []pending) {
	policy := r.job.Validator.Contract.Policy
	v := r.job.Validator.Items()
	again, repairs, whole := false, true, false
	for len(batch) > 0 && r.left > 0 && r.job.Model != nil && !r.job.LocalOnly {
		if !whole && r.isEnded() {
			// The answer is complete: the call takes every broken item of
			// it, and the items closed since the batch was made wait too.
			batch, whole = r.behind(batch), true
		}
		regenerate := !repairs || r.spent.Repairs >= policy.MaxRepairs
		if regenerate && (!policy.PartialRegeneration || r.spent.Regenerations >= 1) {
			break
		}
		rel := len(r.asm.Items())
		var broken []int
		for k, p := range batch {
			if !p.ok {
				broken = append(broken, rel+k)
			}
		}
		doc, report, _ := r.check.Check(r.prefix(batch))
		job := r.job
		job.Validator = v
		job.MaxLLMCalls = r.left
		out, queued := r.call(ctx, job, func(ctx context.Context, job repair.Job) repair.Outcome {
			if regenerate {
				return repair.RegenerateItems(ctx, job, doc, report, broken)
			}
			return repair.RepairItems(ctx, job, doc, report, broken, again)
		})
		r.setWaiting(false)
		if queued {
			// The call still waited for the model's slot when the answer
			// ended: it is withdrawn, and made again with every broken
			// item of the answer.
			continue
		}
		r.left = max(0, r.left-out.LLMCalls)
		r.out0.AddCalls(out)
		switch {
		case out.LLMCalls == 0 && regenerate:
			r.stopAt(batch)
			return
		case out.LLMCalls == 0:
			repairs = false // no repair call could be made: regeneration next
			continue
		case regenerate:
			r.spent.Regenerations++
		default:
			r.spent.Repairs++
		}
		before := batch
		if out.Status == repair.StatusRepaired {
			batch = r.rejudge(batch, out)
		}
		again = !regenerate && unchanged(before, batch)
		batch = r.releaseReady(batch)
	}
	r.stopAt(batch)
}

// stopAt stops the release when batch holds an item left broken.
func (r *Run) stopAt(batch []pending) {
	if len(batch) > 0 {
		r.stop("item " + strconv.Itoa(len(r.asm.Items())) + " could not be repaired")
	}
}

// call makes one model call through do. While the answer is still being
// written, and the model can say when it begins a reply
// (repair.StartReporter), a call it has not begun to answer when the
// answer ends is withdrawn: it waited for the model's slot, which the
// answer held (Ollama with one slot a model), and by now more items may
// have closed that a call made now takes as well; queued says so, and
// the withdrawn call counts as no call. A call the model answers, or one
// made once the answer is complete, runs its course.
func (r *Run) call(ctx context.Context, job repair.Job, do func(context.Context, repair.Job) repair.Outcome) (out repair.Outcome, queued bool) {
	sr, ok := job.Model.(repair.StartReporter)
	reports := ok && sr.ReportsStart()
	r.started.Store(false)
	job.Model = watch{Model: job.Model, r: r, reports: reports}
	if !reports || r.isEnded() {
		return do(ctx, job), false
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := make(chan repair.Outcome, 1)
	go func() { res <- do(cctx, job) }()
	select {
	case out := <-res:
		return out, false
	case <-r.endc:
	}
	if r.started.Load() {
		return <-res, false
	}
	select {
	case out := <-res:
		return out, false
	default:
	}
	cancel()
	<-res
	return repair.Outcome{}, true
}

// watch is the run's model: a call handed to it makes the run wait on
// the model (Sync), and, when the model reports it (reports), the
// beginning of its reply is recorded in started.
type watch struct {
	repair.Model
	r       *Run
	reports bool
}

func (m watch) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	if m.reports {
		prev := req.Started
		req.Started = func() {
			m.r.started.Store(true)
			if prev != nil {
				prev()
			}
		}
	}
	m.r.setWaiting(true)
	return m.Model.Complete(ctx, req)
}

// isEnded reports whether the answer is complete.
func (r *Run) isEnded() bool {
	select {
	case <-r.endc:
		return true
	default:
		return false
	}
}

// unchanged reports whether the items of batch are those of before: the
// call changed nothing.
func unchanged(before, batch []pending) bool {
	if len(before) != len(batch) {
		return false
	}
	for k := range batch {
		if !strictjson.Equal(before[k].item, batch[k].item) {
			return false
		}
	}
	return true
}

func (r *Run) setWaiting(w bool) {
	r.mu.Lock()
	r.waiting = w
	r.idle.Broadcast()
	r.mu.Unlock()
}

// rejudge takes the batch's items from a repaired document, when the
// items released before them are unchanged, and says which of them a
// violation of their own still holds back.
func (r *Run) rejudge(batch []pending, out repair.Outcome) []pending {
	rel := len(r.asm.Items())
	arr, err := out.Doc.At(r.job.Validator.Contract.ItemArray)
	if err != nil || arr.Kind != strictjson.KindArray || len(arr.Items) != rel+len(batch) {
		return batch
	}
	for i, it := range r.asm.Items() {
		if !strictjson.Equal(it, arr.Items[i]) {
			return batch
		}
	}
	next := make([]pending, len(batch))
	for k, p := range batch {
		next[k] = pending{item: arr.Items[rel+k], ok: len(r.blocking(out.Report, rel, rel+k)) == 0}
		if strictjson.Equal(p.item, next[k].item) {
			next[k].changes = p.changes
		}
	}
	next[0].changes = append(out.Changes, next[0].changes...)
	return next
}

// releaseReady releases the batch's leading items while each is in
// contract after those released before it, and returns the rest.
func (r *Run) releaseReady(batch []pending) []pending {
	for len(batch) > 0 {
		items := r.prefix(batch[:1])
		_, _, blocking := r.check.Check(items)
		if len(blocking) > 0 {
			batch[0].ok = false
			return batch
		}
		r.releaseItem(batch[0])
		batch = batch[1:]
	}
	return nil
}

func (r *Run) releaseItem(p pending) {
	r.out0.Changes = append(r.out0.Changes, p.changes...)
	for _, d := range r.asm.Item(p.item) {
		r.release(d)
	}
}

// local judges the item that closes after prefix (the items released
// and those waiting before it) with local repair alone: it returns the
// item as written or mended, and whether a violation of its own still
// holds it back; false when local repair cannot read it.
//
// Every step here validates with the validator of items in flight
// (validators.Validator.Items), as the checker does: a check that reads
// root or other items is judged by finish, on the whole document.
func (r *Run) local(prefix []*strictjson.Value, raw string) (pending, bool) {
	v, params := r.job.Validator.Items(), r.job.Params
	n := len(prefix) + 1
	var doc *strictjson.Value
	var report validators.Report
	var changes []repair.Change
	if item, err := strictjson.ParseString(raw); err == nil {
		doc, report, _ = r.check.Check(append(prefix[:n-1:n-1], item))
		if len(r.blocking(report, len(r.asm.Items()), n-1)) == 0 {
			return pending{item: item, ok: true}, true
		}
	} else {
		// Broken JSON inside the item: the syntactic fixes of local repair
		// on the document of the items so far.
		local := repair.Local(v, r.prefixText(prefix, raw), params)
		if local.Doc == nil {
			return pending{}, false
		}
		doc, report, changes = local.Doc, local.Report, local.Changes
		if item, ok := r.accept(prefix, doc, report); ok {
			return pending{item: item, changes: changes, ok: true}, true
		}
	}
	if hasFixes(report) {
		fixed, rep, more := repair.ApplyFixes(v, doc, params, report)
		if item, ok := r.accept(prefix, fixed, rep); ok {
			return pending{item: item, changes: append(changes, more...), ok: true}, true
		}
		if item := r.itemOf(prefix, fixed); item != nil {
			return pending{item: item, changes: append(changes, more...)}, true
		}
	}
	if item := r.itemOf(prefix, doc); item != nil {
		return pending{item: item, changes: changes}, true
	}
	return pending{}, false
}

// itemOf returns item len(prefix) of doc when doc's item array holds the
// items of prefix unchanged and one more; nil otherwise.
func (r *Run) itemOf(prefix []*strictjson.Value, doc *strictjson.Value) *strictjson.Value {
	arr, err := doc.At(r.job.Validator.Contract.ItemArray)
	if err != nil || arr.Kind != strictjson.KindArray || len(arr.Items) != len(prefix)+1 {
		return nil
	}
	for i, it := range prefix {
		if !strictjson.Equal(it, arr.Items[i]) {
			return nil
		}
	}
	return arr.Items[len(prefix)]
}

// accept takes the last item of a document of prefix and one more item
// when prefix is unchanged and no violation holds the item back.
func (r *Run) accept(prefix []*strictjson.Value, doc *strictjson.Value, report validators.Report) (*strictjson.Value, bool) {
	item := r.itemOf(prefix, doc)
	if item == nil || len(r.blocking(report, len(r.asm.Items()), len(prefix))) > 0 {
		return nil, false
	}
	return item, true
}

// blocking returns the violations of report that hold item i back: those
// the checker blocks on in the released items (the first rel) and in item
// i itself. The items waiting between them answer for their own.
func (r *Run) blocking(report validators.Report, rel, i int) []validators.Violation {
	var out []validators.Violation
	for _, v := range r.check.Blocking(report, i+1) {
		if k, _ := r.check.ItemIndex(v); k < rel || k == i {
			out = append(out, v)
		}
	}
	return out
}

// prefixText is the document of the items of prefix and the raw text of
// the next, for local repair to read.
func (r *Run) prefixText(prefix []*strictjson.Value, raw string) string {
	var b strings.Builder
	for _, seg := range r.path {
		b.WriteByte('{')
		b.Write(strictjson.Marshal(strictjson.String(seg)))
		b.WriteByte(':')
	}
	b.WriteByte('[')
	for _, it := range prefix {
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
	first := repair.Local(v, r.all.String(), params)
	out.Before, out.First = first.Before, first.Doc
	fail := func(report validators.Report) Result {
		out.Status, out.Report = repair.StatusFailed, report
		return Result{Released: true, Reason: r.reason, Outcome: out, Spent: r.spent}
	}
	if r.failed {
		return fail(out.Before)
	}
	if report, ok := v.Streamed(r.all.String(), r.docText, first.Extraction); !ok {
		r.stop("the answer holds another JSON block than the one released")
		return fail(report)
	}
	model, err := strictjson.ParseString(r.docText)
	if err != nil {
		// An item mended by local repair leaves the model's document
		// broken: its other members are read as local repair read them
		// once, for the outcome's first document.
		if model = first.Doc; model == nil {
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
	return Result{Released: true, Tail: tail, Doc: doc, Text: r.asm.Text(), Whole: r.asm.InModelOrder(doc, model), Outcome: out, Spent: r.spent}
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
