package main

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// odds are the failure rates of the scripted model, each a probability.
type odds struct {
	// Fix: a repair call fixes one given violation (each independently).
	Fix float64
	// Rewrite: a repair reply also rephrases one unrelated question.
	Rewrite float64
	// Prose: a reply has sentences around its code block.
	Prose float64
	// Regen: a regeneration call writes one named item right.
	Regen float64
	// Ignore: a regeneration reply rewrites every item, not just the named.
	Ignore float64
	// Rerun: a re-run answers a valid document (else the same faults again).
	Rerun float64
}

var defaultOdds = odds{Fix: 0.7, Rewrite: 0.25, Prose: 0.3, Regen: 0.8, Ignore: 0.3, Rerun: 0.6}

// repairer is the bench's imperfect model. It knows the right document
// (the fixture the corpus was made from), so "fixing" a violation means
// writing the right value where the violation points, and it fails in the
// ways local models fail, at the given odds, from a seeded generator.
//
// Like a local model sampling greedily, it answers a call at temperature 0
// as a function of the call alone: the same request gets the same reply,
// so asking again the same way cannot help. A call at a higher temperature
// is a fresh draw.
type repairer struct {
	truth *strictjson.Value
	odds  odds
	// seed is the run's: greedy replies are drawn from seed and the call.
	seed [2]uint64
	// sampled draws the replies of calls at a temperature above 0.
	sampled *rand.Rand
	// rng is the generator of the call being answered.
	rng *rand.Rand
}

func newRepairer(truth *strictjson.Value, seed1, seed2 uint64) *repairer {
	return &repairer{truth: truth, odds: defaultOdds, seed: [2]uint64{seed1, seed2}, sampled: rand.New(rand.NewPCG(seed1, seed2))}
}

// draw sets the generator for one call: the call's own at temperature 0,
// the run's sampling generator otherwise.
func (r *repairer) draw(req repair.ModelRequest) {
	if req.Temperature > 0 {
		r.rng = r.sampled
		return
	}
	h := fnv.New64a()
	h.Write([]byte(req.System))
	h.Write([]byte{0})
	h.Write([]byte(req.Prompt))
	r.rng = rand.New(rand.NewPCG(r.seed[0]^h.Sum64(), r.seed[1]))
}

var _ repair.Model = (*repairer)(nil)

func (r *repairer) hit(p float64) bool { return r.rng.Float64() < p }

// Complete answers a repair call (it has a system prompt) or a partial
// regeneration call (it has none).
func (r *repairer) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	if err := ctx.Err(); err != nil {
		return repair.Reply{}, err
	}
	r.draw(req)
	if req.System == "" {
		return reply(r.regenerate(req.Prompt)), nil
	}
	return reply(r.repair(req.Prompt)), nil
}

// reply counts a text's tokens as one per four bytes, roughly what a
// tokenizer makes of JSON.
func reply(text string) repair.Reply {
	return repair.Reply{Text: text, OutputTokens: len(text) / 4}
}

func (r *repairer) repair(prompt string) string {
	head, original, _ := strings.Cut(prompt, "\n\nORIGINAL_JSON:\n")
	doc, err := strictjson.Parse([]byte(original))
	if err != nil {
		// Broken text: the model either writes it out cleanly or hands it
		// back as it was.
		if r.hit(r.odds.Fix) {
			return r.render(r.truth.Clone())
		}
		return r.decorate("```json\n" + original + "\n```")
	}
	var rep struct {
		Violations []struct {
			Pointer string `json:"pointer"`
		} `json:"violations"`
	}
	_, head, _ = strings.Cut(head, "VIOLATION_REPORT:\n")
	_ = json.Unmarshal([]byte(head), &rep)
	// An item-scoped call shows the items keyed "questions[i]", and its
	// pointers resolve in that object: the right values come from the
	// truth's items under the same keys.
	truth := r.truth
	if scoped := keyedItems(doc); scoped != nil {
		truth = strictjson.Object()
		want := r.truth.Get("questions")
		for _, i := range scoped {
			truth.Members = append(truth.Members, strictjson.Member{Key: "questions[" + strconv.Itoa(i) + "]", KeyOffset: -1, Value: want.Index(i)})
		}
	}
	touched := map[int]bool{}
	for _, v := range rep.Violations {
		if i, ok := itemOf(v.Pointer); ok {
			touched[i] = true
		}
		if r.hit(r.odds.Fix) {
			doc = fixFrom(truth, doc, v.Pointer)
		}
	}
	if r.hit(r.odds.Rewrite) {
		qs := doc.Get("questions")
		if qs != nil && len(qs.Items) > 0 {
			if i := r.rng.IntN(len(qs.Items)); !touched[i] {
				rephrase(qs.Items[i])
			}
		}
	}
	return r.render(doc)
}

// keyedItems returns the item indices of a scoped ORIGINAL_JSON (an object
// whose keys are "questions[i]"), or nil for any other document.
func keyedItems(doc *strictjson.Value) []int {
	if doc.Kind != strictjson.KindObject || len(doc.Members) == 0 {
		return nil
	}
	var out []int
	for _, m := range doc.Members {
		rest, ok := strings.CutPrefix(m.Key, "questions[")
		n, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
		if !ok || err != nil || n < 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// fixFrom writes truth's value at pointer into doc, or, when pointer names
// nothing truth has, the whole item it sits in.
func fixFrom(truth, doc *strictjson.Value, pointer string) *strictjson.Value {
	for p := pointer; ; {
		if want, err := truth.At(p); err == nil {
			if out, err := strictjson.Replace(doc, p, want.Clone()); err == nil {
				return out
			}
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			return doc
		}
		p = p[:i]
	}
}

func (r *repairer) regenerate(prompt string) string {
	_, after, _ := strings.Cut(prompt, "indices: [")
	list, _, _ := strings.Cut(after, "]")
	var indices []int
	for _, s := range strings.Split(list, ", ") {
		if n, err := strconv.Atoi(s); err == nil {
			indices = append(indices, n)
		}
	}
	_, current, _ := strings.Cut(prompt, "\n\nCURRENT_JSON:\n")
	doc, err := strictjson.Parse([]byte(current))
	if err != nil {
		return "I could not read the document."
	}
	qs := doc.Get("questions")
	want := r.truth.Get("questions")
	for _, i := range indices {
		if i < len(qs.Items) && i < len(want.Items) && r.hit(r.odds.Regen) {
			qs.Items[i] = want.Items[i].Clone()
		}
	}
	if r.hit(r.odds.Ignore) {
		for _, q := range qs.Items {
			rephrase(q)
		}
	}
	if r.hit(0.5) {
		return r.render(doc)
	}
	items := strictjson.Array()
	for _, i := range indices {
		if i < len(qs.Items) {
			items.Items = append(items.Items, qs.Items[i])
		}
	}
	return r.render(items)
}

func (r *repairer) render(v *strictjson.Value) string {
	return r.decorate("```json\n" + string(strictjson.MarshalIndent(v, "  ")) + "\n```")
}

func (r *repairer) decorate(block string) string {
	if r.hit(r.odds.Prose) {
		return "Here is the corrected JSON:\n\n" + block + "\n\nAll violations are fixed."
	}
	return block
}

// rerun answers a re-run of the original request, which is always sampled
// (the schedule's temperatures): a valid document, or the first answer's
// faults again.
func (r *repairer) rerun(first string) string {
	r.rng = r.sampled
	if r.hit(r.odds.Rerun) {
		return r.render(r.truth.Clone())
	}
	return first
}

// rephrase changes a question's explanation the way a model "improves"
// text it was not asked to touch.
func rephrase(q *strictjson.Value) {
	if s, ok := q.Get("explanation").AsString(); ok {
		_ = q.Replace("/explanation", strictjson.String("In short: "+s))
	}
}

// itemOf reads the question index of a pointer "/questions/<i>/…".
func itemOf(pointer string) (int, bool) {
	rest, ok := strings.CutPrefix(pointer, "/questions/")
	if !ok {
		return 0, false
	}
	tok, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(tok)
	return n, err == nil
}
