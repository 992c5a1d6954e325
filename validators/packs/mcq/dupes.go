package mcq

import (
	"fmt"
	"math"
	"slices"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// checkDuplicateQuestions warns about near-identical questions: token-set
// Jaccard similarity of at least 0.9 after stripping the number prefix.
//
// Comparing every pair is quadratic, and questions of one set tend to have
// similar lengths, so a length filter alone does not help. The check uses
// prefix filtering (the AllPairs join): with tokens ordered rarest first,
// two sets with Jaccard >= 0.9 must share a token among the first
// |x| − ⌈0.9·|x|⌉ + 1 tokens of each. Only those prefixes are indexed, so
// candidates are the few questions that share a rare word, and only they
// are compared exactly.
func (m *Rules) checkDuplicateQuestions(items []*strictjson.Value, sc *mcqScratch, e *validators.Emitter) {
	type entry struct {
		idx    int // index in questions
		v      *strictjson.Value
		lo, hi int // the token ids sorted by id, all[lo:hi]
	}
	intern := make(map[string]int32, 8*len(items))
	var all []int32
	var es []entry
	for i, q := range items {
		qv := q.Get("question")
		text, ok := qv.AsString()
		if !ok {
			continue
		}
		lo := len(all)
		for _, sp := range sc.words(text[mcqNumberPrefix(text):]) {
			tok := sc.word(sp)
			id, ok := intern[string(tok)]
			if !ok {
				id = int32(len(intern))
				intern[string(tok)] = id
			}
			all = append(all, id)
		}
		set := all[lo:]
		slices.Sort(set)
		all = all[:lo+len(slices.Compact(set))]
		if len(all) > lo {
			es = append(es, entry{i, qv, lo, len(all)})
		}
	}
	if len(es) < 2 {
		return
	}
	toks := func(x entry) []int32 { return all[x.lo:x.hi] }
	freq := make([]int32, len(intern))
	for _, id := range all {
		freq[id]++
	}
	index := make(map[int32][]int32)
	seen := make([]int32, len(es)) // seen[c] == k+1: c is already a candidate of k
	var prefix []int32
	for k, en := range es {
		set := toks(en)
		prefix = append(prefix[:0], set...)
		slices.SortFunc(prefix, func(a, b int32) int {
			if freq[a] != freq[b] {
				return int(freq[a] - freq[b])
			}
			return int(a - b)
		})
		prefix = prefix[:len(set)-(9*len(set)+9)/10+1]
		best := -1
		for _, tok := range prefix {
			// Index lists are in ascending order and only the earliest
			// match is reported: a list is read up to its first match or
			// the best match so far, so that many copies of one question
			// cost one comparison each, not one per earlier copy.
			for _, c := range index[tok] {
				if best >= 0 && int(c) >= best {
					break
				}
				if seen[c] == int32(k+1) {
					continue
				}
				seen[c] = int32(k + 1)
				other := toks(es[c])
				a, b := len(set), len(other)
				if 10*min(a, b) < 9*max(a, b) {
					continue
				}
				inter := mcqIntersect(set, other)
				if 10*inter >= 9*(a+b-inter) {
					best = int(c)
					break
				}
			}
			index[tok] = append(index[tok], int32(k))
		}
		if best < 0 {
			continue
		}
		other := toks(es[best])
		inter := mcqIntersect(set, other)
		sim := float64(inter) / float64(len(set)+len(other)-inter)
		e.Semantic("DUPLICATE_QUESTION", validators.SeverityWarning, en.v, []validators.Seg{"questions", en.idx, "question"}, "< 0.9", math.Round(sim*100)/100,
			fmt.Sprintf("questions[%d].question nearly repeats questions[%d].question; ask about a different aspect of the topic.", en.idx, es[best].idx), nil)
	}
}

// mcqIntersect counts the common elements of two sorted sets.
func mcqIntersect(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}
