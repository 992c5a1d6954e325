package release

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// itemModel answers a scoped repair call with the item it holds, after
// the test lets it (nil gate: at once); called is signalled on each call.
type itemModel struct {
	reply  string
	gate   chan struct{}
	called chan struct{}
}

func (m *itemModel) Complete(ctx context.Context, _ repair.ModelRequest) (repair.Reply, error) {
	if m.called != nil {
		m.called <- struct{}{}
	}
	if m.gate != nil {
		select {
		case <-m.gate:
		case <-ctx.Done():
			return repair.Reply{}, ctx.Err()
		}
	}
	return repair.Reply{Text: m.reply, OutputTokens: 7}, nil
}

// mcqText is a valid five-question document with edit applied to its
// parsed form, in the model's member order (meta first).
func mcqText(t *testing.T, edit func(doc *strictjson.Value)) (string, *strictjson.Value) {
	t.Helper()
	doc, err := strictjson.ParseString(mcqgen.Questions(5))
	if err != nil {
		t.Fatal(err)
	}
	good := doc.Clone()
	if edit != nil {
		edit(doc)
	}
	return string(strictjson.MarshalIndent(doc, " ")), good
}

// testRun is a run and a follower of its feed from the start.
type testRun struct {
	*Run
	fl *Follower
}

func (r testRun) Take() []string { return r.fl.Take() }

func startRun(t *testing.T, m repair.Model) testRun {
	t.Helper()
	return startRunOf(t, m, func(*contracts.Policy) {})
}

// feed gives the run text in pieces of n bytes.
func feed(r testRun, text string, n int) {
	for i := 0; i < len(text); i += n {
		r.Feed(text[i:min(i+n, len(text))])
	}
}

func TestRunReleases(t *testing.T) {
	item := func(doc *strictjson.Value, i int) *strictjson.Value { return doc.Get("questions").Items[i] }
	tests := []struct {
		name string
		edit func(doc *strictjson.Value)
		// comma puts a trailing comma after the last item (DeepSeek's
		// habit), which the splitter follows and local repair drops.
		comma      bool
		reply      string
		wantStatus string
		released   bool
		calls      int
	}{
		{name: "valid", wantStatus: repair.StatusValid, released: true},
		{name: "derived member fixed at the end", edit: func(doc *strictjson.Value) {
			doc.Get("meta").Set("question_count", strictjson.Int(9))
		}, wantStatus: repair.StatusRepaired, released: true},
		{name: "numbering fixed locally", edit: func(doc *strictjson.Value) {
			item(doc, 2).Set("question_id", strictjson.String("Q7"))
		}, wantStatus: repair.StatusRepaired, released: true},
		{name: "broken JSON in an item fixed locally", edit: func(doc *strictjson.Value) {
			item(doc, 3).Set("topic", strictjson.String("TRAILING"))
		}, wantStatus: repair.StatusRepaired, released: true},
		{name: "item repaired by a scoped call", edit: func(doc *strictjson.Value) {
			item(doc, 3).Set("answer", strictjson.Int(9))
		}, reply: "GOOD", wantStatus: repair.StatusRepaired, released: true, calls: 1},
		{name: "item beyond repair after release", edit: func(doc *strictjson.Value) {
			item(doc, 3).Set("answer", strictjson.Int(9))
		}, reply: `{"no":1}`, wantStatus: repair.StatusFailed, released: true, calls: 3}, // two scoped repairs (max_repairs), then a regeneration
		{name: "first item beyond local repair: nothing released", edit: func(doc *strictjson.Value) {
			item(doc, 0).Set("answer", strictjson.Int(9))
		}, released: false},
		{name: "trailing comma after the last item", comma: true, wantStatus: repair.StatusValid, released: true},
	}
	for _, tt := range tests {
		text, good := mcqText(t, tt.edit)
		// An unquoted key in the item: broken JSON local repair mends.
		text = strings.Replace(text, `"topic": "TRAILING"`, `topic: "Lists"`, 1)
		if tt.comma {
			end := strings.LastIndex(text[:strings.LastIndex(text, "]")], "}") + 1
			text = text[:end] + "," + text[end:]
		}
		reply := tt.reply
		if reply == "GOOD" {
			reply = `{"questions[3]":` + string(strictjson.Marshal(item(good, 3))) + `}`
		}
		m := &itemModel{reply: reply}
		r := startRun(t, m)
		feed(r, text, 7)
		res := r.Finish()
		deltas := strings.Join(r.Take(), "")
		if res.Released != tt.released {
			t.Fatalf("%s: released %v (%s), want %v", tt.name, res.Released, res.Reason, tt.released)
		}
		if !tt.released {
			if deltas != "" {
				t.Errorf("%s: deltas %q went out", tt.name, deltas)
			}
			continue
		}
		if res.Outcome.Status != tt.wantStatus || res.Outcome.LLMCalls != tt.calls {
			t.Errorf("%s: status %s after %d calls, want %s after %d (report %v, reason %q)", tt.name, res.Outcome.Status, res.Outcome.LLMCalls, tt.wantStatus, tt.calls, res.Outcome.Report.Codes(), res.Reason)
		}
		if tt.wantStatus == repair.StatusFailed {
			if res.Doc != nil || res.Tail != "" || res.Outcome.Report.Valid {
				t.Errorf("%s: a failure with a document or a valid report", tt.name)
			}
			continue
		}
		if got := deltas + res.Tail; got != res.Text || got != string(strictjson.Marshal(res.Doc)) {
			t.Errorf("%s: deltas and tail %q, text %q", tt.name, got, res.Text)
		}
		if !strings.HasPrefix(res.Text, `{"questions":[{`) {
			t.Errorf("%s: text starts %.30q", tt.name, res.Text)
		}
		v, _ := packs.Builtin("mcq")
		params, _ := v.Params(nil)
		if rep := v.Validate(res.Text, params).Report; !rep.Valid {
			t.Errorf("%s: final text invalid: %v", tt.name, rep.Codes())
		}
	}
}

// TestRunOrder: items after a broken one wait for its repair call, and
// go out in order once it is back; the first ones went out before.
func TestRunOrder(t *testing.T) {
	text, good := mcqText(t, func(doc *strictjson.Value) {
		doc.Get("questions").Items[2].Set("answer", strictjson.Int(9))
	})
	m := &itemModel{reply: `{"questions[2]":` + string(strictjson.Marshal(good.Get("questions").Items[2])) + `}`,
		gate: make(chan struct{}), called: make(chan struct{}, 1)}
	r := startRun(t, m)
	feed(r, text, 5)
	<-m.called
	// Each question goes out in two pieces: its opening, then the rest.
	before := r.Take()
	if len(before) != 4 {
		t.Fatalf("%d deltas out while item 2 is repaired, want 4", len(before))
	}
	close(m.gate)
	res := r.Finish()
	after := r.Take()
	if len(after) != 6 || res.Outcome.Status != repair.StatusRepaired {
		t.Fatalf("%d deltas after the repair, status %s; want 6, repaired", len(after), res.Outcome.Status)
	}
	var all []string
	for pair := range slices.Chunk(append(before, after...), 2) {
		all = append(all, strings.Join(pair, ""))
	}
	for i, d := range all {
		q, err := strictjson.ParseString(strings.TrimLeft(strings.TrimPrefix(d, `{"questions":[`), ","))
		if err != nil {
			t.Fatalf("delta %d %q: %v", i, d, err)
		}
		if id, _ := q.Get("question_id").AsString(); id != "Q00"+string(rune('1'+i)) {
			t.Errorf("delta %d is %s", i, id)
		}
	}
}

func TestRunGivesUp(t *testing.T) {
	for _, text := range []string{"I cannot write that quiz.", `[{"a":1}]`, `{"meta":{}}`, `{"questions":[`} {
		r := startRun(t, nil)
		feed(r, text, 3)
		if res := r.Finish(); res.Released || res.Reason == "" {
			t.Errorf("%q: released %v, reason %q", text, res.Released, res.Reason)
		}
	}
}

// TestRunReleasesTheAnswersDocument: a stream releases the first
// document the answer starts, and the answer's end says whether it was the
// answer's: an example in a plain block before the ```json answer, or a
// second ```json block, ends the run in MULTIPLE_JSON_BLOCKS, where
// extraction of the whole text takes another document or none. Prose
// after the document, or a document in the answer's one block, stands.
func TestRunReleasesTheAnswersDocument(t *testing.T) {
	three, five := mcqgen.Questions(3), mcqgen.Questions(5)
	tests := []struct {
		name, text string
		valid      bool
	}{
		{name: "one json block", text: "Here it is:\n```json\n" + five + "\n```\n", valid: true},
		{name: "prose after the bare document", text: five + "\nHope this helps!", valid: true},
		{name: "plain example before the json answer", text: "Example:\n```\n" + three + "\n```\nAnswer:\n```json\n" + five + "\n```\n"},
		{name: "bare document before a json block", text: three + "\n```json\n" + five + "\n```\n"},
		{name: "two json blocks", text: "```json\n" + five + "\n```\n\n```json\n" + five + "\n```\n"},
	}
	for _, tt := range tests {
		r := startRun(t, nil)
		feed(r, tt.text, 5)
		res := r.Finish()
		if !res.Released {
			t.Fatalf("%s: nothing released (%s)", tt.name, res.Reason)
		}
		codes := res.Outcome.Report.Codes()
		if tt.valid {
			if res.Outcome.Status != repair.StatusValid {
				t.Errorf("%s: status %s (%v, %s), want valid", tt.name, res.Outcome.Status, codes, res.Reason)
			}
			continue
		}
		if res.Outcome.Status != repair.StatusFailed || !slices.Contains(codes, "MULTIPLE_JSON_BLOCKS") || res.Outcome.Report.Valid {
			t.Errorf("%s: status %s with %v, want failed with MULTIPLE_JSON_BLOCKS", tt.name, res.Outcome.Status, codes)
		}
		if res.Doc != nil || res.Tail != "" {
			t.Errorf("%s: a failure with a document or a tail", tt.name)
		}
	}
}

// TestRunAbandon: a run nobody follows that called no model is abandoned
// at the answer's end (its feed retracted); one that called the model,
// or whose feed a follower took from, is not, and Finish says how it
// ended.
func TestRunAbandon(t *testing.T) {
	text, good := mcqText(t, nil)
	r := startRun(t, nil)
	fresh := testRun{r.Run, r.Out().Follow(nil)} // a follower that never takes
	feed(fresh, text, 9)
	if !fresh.Abandon() {
		t.Fatal("a run nobody took from, without a model call, was not abandoned")
	}
	if got := fresh.Take(); got != nil {
		t.Errorf("deltas %v after the run was abandoned", got)
	}

	r = startRun(t, nil)
	feed(r, text[:len(text)/2], 9)
	for len(r.Take()) == 0 {
		<-r.fl.ready
	}
	feed(r, text[len(text)/2:], 9)
	if r.Abandon() {
		t.Fatal("a run a follower took from was abandoned")
	}
	if res := r.Finish(); res.Outcome.Status != repair.StatusValid {
		t.Errorf("the run ended %s, want valid", res.Outcome.Status)
	}

	text, _ = mcqText(t, func(doc *strictjson.Value) {
		doc.Get("questions").Items[2].Set("answer", strictjson.Int(9))
	})
	m := &itemModel{reply: `{"questions[2]":` + string(strictjson.Marshal(good.Get("questions").Items[2])) + `}`,
		gate: make(chan struct{}), called: make(chan struct{}, 1)}
	r = startRun(t, m)
	feed(r, text, 9)
	<-m.called
	if r.Abandon() {
		t.Fatal("a run whose repair call is under way was abandoned")
	}
	close(m.gate)
	if res := r.Finish(); res.Outcome.Status != repair.StatusRepaired || res.Outcome.LLMCalls != 1 {
		t.Errorf("the run ended %s after %d calls, want repaired after 1", res.Outcome.Status, res.Outcome.LLMCalls)
	}
}

// fixModel answers every repair call with the right questions of good,
// keyed as a scoped call asks, of which the call takes those it named;
// it records the prompts.
type fixModel struct {
	good    []*strictjson.Value
	mu      sync.Mutex
	prompts []string
}

func (m *fixModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	m.mu.Lock()
	m.prompts = append(m.prompts, req.Prompt)
	m.mu.Unlock()
	obj := strictjson.Object()
	for i, q := range m.good {
		obj.Set("questions["+strconv.Itoa(i)+"]", q)
	}
	return repair.Reply{Text: string(strictjson.Marshal(obj))}, nil
}

func (m *fixModel) asked() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.prompts)
}

// startRunOf is startRun with the mcq contract's policy edited.
func startRunOf(t *testing.T, m repair.Model, policy func(*contracts.Policy)) testRun {
	t.Helper()
	mcq, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	c := *mcq.Contract
	policy(&c.Policy)
	v, err := validators.New(&c, packs.Builtins())
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	r, err := Start(context.Background(), repair.Job{Validator: v, Params: params, Model: m}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return testRun{r, r.Out().Follow(make(chan struct{}, 1))}
}

// TestRunBatch: the broken items that closed by the time a call is made
// are repaired by that one call, and every call counts against the
// answer's budget: with max_repairs 1 and no partial regeneration, one
// call mends both broken questions of an answer read at once, where one
// call each would pass the budget. An item that closes while the call is
// under way waits for it, and gets a call of its own when the budget has
// one.
func TestRunBatch(t *testing.T) {
	tests := []struct {
		name string
		// paced feeds the answer a question at a time, each judged before
		// the next comes; otherwise it comes in one piece.
		paced      bool
		maxRepairs int
		wantStatus string
		wantCalls  int
		// wantAsked is, for each call, the questions it asked for.
		wantAsked [][]int
	}{
		{name: "read at once: one call for both", maxRepairs: 1, wantStatus: repair.StatusRepaired, wantCalls: 1, wantAsked: [][]int{{1, 3}}},
		{name: "paced: a call each within the budget", paced: true, maxRepairs: 2, wantStatus: repair.StatusRepaired, wantCalls: 2, wantAsked: [][]int{{1}, {3}}},
		{name: "paced: the budget spent on the first", paced: true, maxRepairs: 1, wantStatus: repair.StatusFailed, wantCalls: 1, wantAsked: [][]int{{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, good := mcqText(t, func(doc *strictjson.Value) {
				for _, i := range []int{1, 3} {
					doc.Get("questions").Items[i].Set("answer", strictjson.Int(9))
				}
			})
			m := &fixModel{good: good.Get("questions").Items}
			r := startRunOf(t, m, func(p *contracts.Policy) { p.MaxRepairs, p.PartialRegeneration = tt.maxRepairs, false })
			if tt.paced {
				for _, line := range strings.SplitAfter(text, "\n") {
					r.Feed(line)
					r.Sync()
				}
			} else {
				r.Feed(text)
			}
			res := r.Finish()
			if res.Outcome.Status != tt.wantStatus || res.Outcome.LLMCalls != tt.wantCalls {
				t.Errorf("Finish() = %s after %d calls (%s), want %s after %d", res.Outcome.Status, res.Outcome.LLMCalls, res.Reason, tt.wantStatus, tt.wantCalls)
			}
			if res.Spent.Repairs != tt.wantCalls || res.Spent.Regenerations != 0 {
				t.Errorf("Spent = %+v, want %d repairs", res.Spent, tt.wantCalls)
			}
			asked := m.asked()
			if len(asked) != len(tt.wantAsked) {
				t.Fatalf("%d calls made, want %d", len(asked), len(tt.wantAsked))
			}
			for k, want := range tt.wantAsked {
				for i := range 5 {
					key := `"questions[` + strconv.Itoa(i) + `]"`
					if got := strings.Contains(asked[k], "Repair ONLY questions at indices") && strings.Contains(asked[k], key+": {"); got != slices.Contains(want, i) {
						t.Errorf("call %d asks for question %d: %v, want %v", k, i, got, !got)
					}
				}
			}
		})
	}
}

// TestRunWithdraw: a run nobody follows calls no model for an item that
// needs one; it leaves the answer to the ladder, which makes one call for
// every broken item at the end, and the run is abandoned.
func TestRunWithdraw(t *testing.T) {
	text, good := mcqText(t, func(doc *strictjson.Value) {
		doc.Get("questions").Items[2].Set("answer", strictjson.Int(9))
	})
	m := &fixModel{good: good.Get("questions").Items}
	v, _ := packs.Builtin("mcq")
	params, _ := v.Params(nil)
	r, err := Start(context.Background(), repair.Job{Validator: v, Params: params, Model: m}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Feed(text)
	r.Sync()
	if !r.Abandon() {
		t.Fatal("Abandon() = false for a run nobody follows, want true")
	}
	if n := len(m.asked()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
	if got := r.Out().Follow(nil).Take(); got != nil {
		t.Errorf("a late follower took %q from a withdrawn feed", got)
	}
}

// slotModel is fixModel behind a model slot the answer holds until free
// is closed: a call begins (Started) only then; arrived is signalled when
// a call comes, withdrawn when one is given up while it waits.
type slotModel struct {
	*fixModel
	free      chan struct{}
	arrived   chan struct{}
	withdrawn chan struct{}
}

func (m slotModel) ReportsStart() bool { return true }

func (m slotModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	m.arrived <- struct{}{}
	select {
	case <-m.free:
	case <-ctx.Done():
		m.withdrawn <- struct{}{}
		return repair.Reply{}, ctx.Err()
	}
	if req.Started != nil {
		req.Started()
	}
	return m.fixModel.Complete(ctx, req)
}

// TestRunWithdrawsQueuedCall: a call that still waits for the model's
// slot when the answer ends is withdrawn, and one call then repairs
// every broken item that closed by then: the first broken question's
// call was made while the model still wrote, the second closed behind
// it, and one call mends both.
func TestRunWithdrawsQueuedCall(t *testing.T) {
	text, good := mcqText(t, func(doc *strictjson.Value) {
		for _, i := range []int{1, 3} {
			doc.Get("questions").Items[i].Set("answer", strictjson.Int(9))
		}
	})
	m := slotModel{fixModel: &fixModel{good: good.Get("questions").Items}, free: make(chan struct{}),
		arrived: make(chan struct{}, 4), withdrawn: make(chan struct{}, 1)}
	r := startRun(t, m)
	for _, line := range strings.SplitAfter(text, "\n") {
		r.Feed(line)
		r.Sync()
	}
	if !r.Sync() {
		t.Fatal("Sync() = false at the answer's end, want a call under way")
	}
	<-m.arrived
	fin := make(chan Result)
	go func() { fin <- r.Finish() }()
	<-m.withdrawn
	close(m.free)
	res := <-fin
	if res.Outcome.Status != repair.StatusRepaired || res.Outcome.LLMCalls != 1 {
		t.Errorf("Finish() = %s after %d calls (%s), want repaired after 1", res.Outcome.Status, res.Outcome.LLMCalls, res.Reason)
	}
	asked := m.asked()
	if len(asked) != 1 || !strings.Contains(asked[0], `"questions[1]": {`) || !strings.Contains(asked[0], `"questions[3]": {`) {
		t.Errorf("calls made %.300q, want one asking for questions 1 and 3", asked)
	}
}
