package mcq

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// mcqProfileKeys are the members of meta.difficulty_profile, indexed by
// weight − 1.
var mcqProfileKeys = [3]string{"easy", "medium", "hard"}

// mcqWeights is what the questions' weights say, gathered once because
// several meta rules derive from it.
type mcqWeights struct {
	// of is the valid weight (1..3) of each question, 0 when the weight is
	// missing, of the wrong type or out of range.
	of []int
	// counts[k] is the number of questions with weight k+1.
	counts [3]int
	// unknown is the number of questions without a valid weight. While it
	// is positive, counts are lower bounds and derived values are ranges.
	unknown int
}

func mcqCollectWeights(items []*strictjson.Value) mcqWeights {
	w := mcqWeights{of: make([]int, len(items))}
	for i, q := range items {
		n, ok := q.Get("weight").AsInt()
		if !ok || n < 1 || n > 3 {
			w.unknown++
			continue
		}
		w.of[i] = int(n)
		w.counts[n-1]++
	}
	return w
}

// checkMeta evaluates C1 and the duration rule: every meta value that is
// derived from the questions.
func (m *Rules) checkMeta(meta *strictjson.Value, w mcqWeights, cfg mcqParams, target int, haveTarget, haveQs, lengthOK bool, e *validators.Emitter) {
	qc := meta.Get("question_count")
	if n, ok := qc.AsInt(); ok && haveTarget && n != int64(target) {
		var fix any
		why := "the number of questions"
		if lengthOK {
			fix = target
		} else {
			why = "the question_count of the question set"
		}
		e.Semantic("QUESTION_COUNT_MISMATCH", validators.SeverityError, qc, []validators.Seg{"meta", "question_count"}, target, validators.Actual(qc),
			fmt.Sprintf("Set meta.question_count to %d (%s).", target, why), fix)
	}

	// Values derived from the questions are fixes only when the questions
	// are complete (every weight valid, as many questions as the caller
	// asked for) and, when the caller fixed a difficulty, agree with it: a
	// derived value never overrides a parameter, and one derived from a
	// document that must change anyway would only have to change again.
	derivable := lengthOK && w.unknown == 0 && (!cfg.hasDiff || w.counts == cfg.diff)
	prof := meta.Get("difficulty_profile")
	if prof != nil && prof.Kind == strictjson.KindObject {
		var vals [3]int64
		allInts := true
		for k, key := range mcqProfileKeys {
			v := prof.Get(key)
			n, ok := v.AsInt()
			if !ok {
				allInts = false
				continue
			}
			vals[k] = n
			m.checkProfileMember(k, v, n, w, cfg, haveQs, lengthOK, e)
		}
		// A missing count is reported by the schema; when the weights
		// say what it is, it is derived like a wrong one: the fix
		// replaces the profile with every count in place.
		if missing := mcqMissingKeys(prof); len(missing) > 0 && derivable {
			e.Semantic("DIFFICULTY_PROFILE_MISMATCH", validators.SeverityError, prof, []validators.Seg{"meta", "difficulty_profile"}, mcqDifficulty(w.counts), "missing "+strings.Join(missing, ", "),
				fmt.Sprintf("Add %s to meta.difficulty_profile: easy, medium and hard count the questions of weight 1, 2 and 3 (%s).", strings.Join(missing, " and "), mcqDifficulty(w.counts)),
				mcqReplaceCounts(prof, w.counts))
		}
		if allInts && haveTarget {
			sum := vals[0] + vals[1] + vals[2]
			if sum != int64(target) {
				var fix any
				if derivable {
					fix = mcqReplaceCounts(prof, w.counts)
				}
				e.Semantic("DIFFICULTY_PROFILE_SUM", validators.SeverityError, prof, []validators.Seg{"meta", "difficulty_profile"}, target, sum,
					fmt.Sprintf("Make meta.difficulty_profile.easy + medium + hard add up to %d (now %d); they count the questions of weight 1, 2 and 3.", target, sum), fix)
			}
		}
	}
	if haveQs {
		m.checkDuration(meta, w, lengthOK, e)
	}
}

// checkProfileMember compares one difficulty_profile count (k = weight − 1)
// with the questions and the caller's difficulty.
func (m *Rules) checkProfileMember(k int, v *strictjson.Value, n int64, w mcqWeights, cfg mcqParams, haveQs, lengthOK bool, e *validators.Emitter) {
	key := mcqProfileKeys[k]
	segs := []validators.Seg{"meta", "difficulty_profile", key}
	switch {
	case cfg.hasDiff:
		want := cfg.diff[k]
		if n == int64(want) {
			return
		}
		var fix any
		if lengthOK && w.unknown == 0 && w.counts[k] == want {
			fix = want
		}
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", validators.SeverityError, v, segs, want, validators.Actual(v),
			fmt.Sprintf("Set meta.difficulty_profile.%s to %d (difficulty %s of the question set).", key, want, mcqDifficulty(cfg.diff)), fix)
	case !haveQs:
	case w.unknown == 0:
		want := w.counts[k]
		if n == int64(want) {
			return
		}
		var fix any
		if lengthOK {
			fix = want
		}
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", validators.SeverityError, v, segs, want, validators.Actual(v),
			fmt.Sprintf("Set meta.difficulty_profile.%s to %d (count of weight==%d).", key, want, k+1), fix)
	default:
		// Questions without a valid weight may still turn out to be of
		// this weight: the count lies in a range, and only a value
		// outside it is certainly wrong.
		lo, hi := w.counts[k], w.counts[k]+w.unknown
		if n >= int64(lo) && n <= int64(hi) {
			return
		}
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", validators.SeverityError, v, segs, fmt.Sprintf("%d..%d", lo, hi), validators.Actual(v),
			fmt.Sprintf("meta.difficulty_profile.%s must count the questions of weight %d: between %d and %d while %s; fix the weights, then set it to that count.", key, k+1, lo, hi, mcqUnknownWeights(w.unknown)), nil)
	}
}

// checkDuration checks test_duration_minutes against the weights, the
// minutes per weight and the buffer.
func (m *Rules) checkDuration(meta *strictjson.Value, w mcqWeights, lengthOK bool, e *validators.Emitter) {
	tpw := meta.Get("time_per_weight_minutes")
	buf, okBuf := meta.Get("additional_buffer_minutes").AsFloat()
	dv := meta.Get("test_duration_minutes")
	dur, okDur := dv.AsFloat()
	if !okBuf || !okDur || tpw == nil || tpw.Kind != strictjson.KindObject {
		return
	}
	var t [3]float64
	for k := range t {
		f, ok := tpw.Get(strconv.Itoa(k + 1)).AsFloat()
		// A minute value the questions need (or may need, while weights
		// are unknown) is missing: the schema reports it, nothing is
		// derivable.
		if !ok && (w.counts[k] > 0 || w.unknown > 0) {
			return
		}
		t[k] = f
	}
	sum := buf
	for k, c := range w.counts {
		sum += float64(c) * t[k]
	}
	segs := []validators.Seg{"meta", "test_duration_minutes"}
	if w.unknown == 0 {
		if ruleSame(sum, dur) {
			return
		}
		var terms []string
		for k, c := range w.counts {
			if c > 0 {
				terms = append(terms, fmt.Sprintf("%d×%s", c, validators.FormatQuantity(t[k])))
			}
		}
		terms = append(terms, validators.FormatQuantity(buf))
		var fix any
		if lengthOK {
			fix = validators.Quantity(sum)
		}
		e.Semantic("TEST_DURATION_MISMATCH", validators.SeverityError, dv, segs, validators.Quantity(sum), validators.Actual(dv),
			fmt.Sprintf("Set meta.test_duration_minutes to %s (time_per_weight_minutes of each question's weight plus additional_buffer_minutes: %s).", validators.FormatQuantity(sum), strings.Join(terms, " + ")), fix)
		return
	}
	lo := sum + float64(w.unknown)*math.Min(t[0], math.Min(t[1], t[2]))
	hi := sum + float64(w.unknown)*math.Max(t[0], math.Max(t[1], t[2]))
	if dur >= lo-1e-9 && dur <= hi+1e-9 {
		return
	}
	e.Semantic("TEST_DURATION_MISMATCH", validators.SeverityError, dv, segs, validators.FormatQuantity(lo)+".."+validators.FormatQuantity(hi), validators.Actual(dv),
		fmt.Sprintf("meta.test_duration_minutes must be the sum of time_per_weight_minutes over the questions' weights plus additional_buffer_minutes: between %s and %s while %s; fix the weights, then set it to that sum.", validators.FormatQuantity(lo), validators.FormatQuantity(hi), mcqUnknownWeights(w.unknown)), nil)
}

// mcqUnknownWeights says how many questions lack a valid weight, for hints.
func mcqUnknownWeights(n int) string {
	if n == 1 {
		return "1 question has no valid weight"
	}
	return strconv.Itoa(n) + " questions have no valid weight"
}

// mcqReplaceCounts returns the difficulty_profile object with easy, medium
// and hard set to counts, every other member and the member order kept, so
// that the fix changes nothing but the three numbers.
func mcqReplaceCounts(prof *strictjson.Value, counts [3]int) json.RawMessage {
	out := strictjson.Object(slices.Clone(prof.Members)...)
	// Set keeps a present count in its place; a missing count is derived
	// like a wrong one and added after the others.
	for k, key := range mcqProfileKeys {
		out.Set(key, strictjson.Int(int64(counts[k])))
	}
	return json.RawMessage(strictjson.Marshal(out))
}

// mcqMissingKeys lists the counts absent from a difficulty_profile.
func mcqMissingKeys(prof *strictjson.Value) []string {
	var out []string
	for _, key := range mcqProfileKeys {
		if !prof.Has(key) {
			out = append(out, key)
		}
	}
	return out
}

func mcqDifficulty(d [3]int) string {
	return fmt.Sprintf("%d/%d/%d", d[0], d[1], d[2])
}

// ruleSame reports whether two computed quantities are equal up to float
// noise. Minutes and scores are small decimals, so a relative tolerance of
// 1e-9 separates rounding error from any real difference.
func ruleSame(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
