package validators

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/contractgateway/gateway/strictjson"
)

// mcqRules is the "mcq" rule pack: rules C1–C7 of seed 000 plus the derived
// rules of SPEC §4. The schema has already checked types; every rule here
// skips values of the wrong type silently, because the schema reports them
// and a second violation for the same defect would only confuse a repair.
//
// Fixes follow one principle: a fix is offered only when the right value
// follows from the rest of the document and the caller's parameters, and
// applying every fix of one report never undoes another. Derived values
// (counts, durations, ids, numbering) are fixable; content (an answer, an
// option, an explanation) never is.
type mcqRules struct {
	// forbidden finds catch-all options ("all of the above" and its
	// equivalents): each phrase as its normalised words, indexed by the
	// first word, so that an option costs one map lookup per word. One
	// regular expression of all phrases was tried first and took most of
	// the pack's time in BenchmarkMCQRules: Go's regexp engine follows every
	// alternative at every position.
	forbidden map[string][][]string
}

var _ RulePack = (*mcqRules)(nil)

// FixScopes implements FixScopeDeclarer.
func (m *mcqRules) FixScopes() map[string]FixScope { return mcqFixScopes }

// mcqFixScopes declares, per code of the pack, what its fix may touch
// inside a question besides the field the violation names, and which
// document-level codes local repair re-derives from the questions. A new
// rule adds its code here.
var mcqFixScopes = map[string]FixScope{
	"QUESTION_COUNT_MISMATCH":     {Derived: true},
	"DIFFICULTY_PROFILE_SUM":      {Derived: true},
	"DIFFICULTY_PROFILE_MISMATCH": {Derived: true},
	"TEST_DURATION_MISMATCH":      {Derived: true},
	// The answer is an index into the options: changing the options may
	// move it.
	"ANSWER_RANGE":      {Fields: []string{"answer"}},
	"OPTIONS_COUNT":     {Fields: []string{"options", "answer"}},
	"DUPLICATE_OPTIONS": {Fields: []string{"options", "answer"}},
	"FORBIDDEN_OPTION":  {Fields: []string{"options", "answer"}},
	// Weight, level and extended explanation follow each other (C3, C4).
	"WEIGHT_INVALID":                {Fields: []string{"weight", "cognitive_level", "extended_explanation"}},
	"COGNITIVE_LEVEL_MISMATCH":      {Fields: []string{"weight", "cognitive_level", "extended_explanation"}},
	"EXTENDED_EXPLANATION_NOT_NULL": {Fields: []string{"extended_explanation"}},
	"EXTENDED_EXPLANATION_MISSING":  {Fields: []string{"extended_explanation"}},
	"EXTENDED_EXPLANATION_INVALID":  {Fields: []string{"extended_explanation"}},
	"EXTENDED_EXPLANATION_STEPS":    {Fields: []string{"extended_explanation"}},
	"QUESTION_ID_SEQUENCE":          {Fields: []string{"question_id"}},
	"QUESTION_ID_DUPLICATE":         {Fields: []string{"question_id"}},
	"QUESTION_NUMBERING":            {Fields: []string{"question"}},
	"CODE_FENCE_MISSING":            {},
	"CODE_LINE_NUMBERS":             {},
	// A near-duplicate question is fixed by writing another question.
	"DUPLICATE_QUESTION": {Whole: true},
}

// mcqLevels maps a valid weight to its cognitive level (C3).
var mcqLevels = [4]string{1: "Reproduction", 2: "Application", 3: "Analysis"}

// mcqProfileKeys are the members of meta.difficulty_profile, indexed by
// weight − 1.
var mcqProfileKeys = [3]string{"easy", "medium", "hard"}

// mcqForbiddenPhrases are catch-all options in English, German, Russian,
// French and Spanish, written as they read; newMCQRules normalises them the
// way options are normalised, so that case, punctuation and spacing never
// matter.
var mcqForbiddenPhrases = []string{
	// English.
	"all of the above", "none of the above", "all the above", "none the above",
	"all of these", "none of these", "all of them are correct", "none of them is correct",
	"all of the options", "none of the options", "all of the answers", "none of the answers",
	"all answers are correct", "all options are correct", "all are correct",
	"none are correct", "none is correct", "neither of the above", "both of the above",
	"all of the mentioned", "none of the mentioned",
	// German.
	"alle oben genannten", "alle der oben genannten", "alle genannten", "alle der genannten",
	"keine der genannten", "keine der oben genannten", "keine der obigen", "alle obigen",
	"keine davon", "keine der antworten", "keine antwort ist richtig", "keine antwort ist korrekt",
	"alle antworten sind richtig", "alle antworten sind korrekt", "alle aussagen sind richtig",
	"alle aussagen sind korrekt", "keine der aussagen",
	// Russian (ё is normalised to е).
	"все вышеперечисленные", "все вышеперечисленное", "все выше перечисленные",
	"все перечисленные", "все перечисленное", "ничего из вышеперечисленного",
	"ничего из перечисленного", "ни один из вышеперечисленных", "ни одно из вышеперечисленного",
	"ни один из перечисленных", "ни один из вариантов", "все ответы верны", "все ответы правильные",
	"все варианты верны", "все варианты правильные", "нет правильного ответа",
	// French and Spanish.
	"toutes les réponses", "aucune de ces réponses", "aucune des réponses",
	"todas las anteriores", "ninguna de las anteriores", "todas las respuestas",
}

// mcqForbiddenPatterns catch "both A and B" with any pair of option
// letters; mcqLetter stands for one letter a–f (or Cyrillic а–е).
var mcqForbiddenPatterns = []string{
	"both " + mcqLetter + " and " + mcqLetter,
	"sowohl " + mcqLetter + " als auch " + mcqLetter,
	"и " + mcqLetter + " и " + mcqLetter,
}

// mcqLetter is the placeholder for an option letter in a forbidden pattern.
const mcqLetter = "\x00letter"

// newMCQRules compiles the pack's matchers once; Check only evaluates them.
func newMCQRules() *mcqRules {
	m := &mcqRules{forbidden: map[string][][]string{}}
	add := func(words []string) {
		m.forbidden[words[0]] = append(m.forbidden[words[0]], words[1:])
	}
	for _, p := range mcqForbiddenPhrases {
		add(strings.Fields(mcqNormalize(p)))
	}
	for _, p := range mcqForbiddenPatterns {
		add(strings.Fields(p))
	}
	return m
}

// isForbidden reports whether an option contains a catch-all phrase as
// whole words, ignoring case, punctuation and spacing.
func (m *mcqRules) isForbidden(option string, sc *mcqScratch) bool {
	words := sc.words(option)
	for i, w := range words {
		for _, rest := range m.forbidden[string(w)] {
			if mcqWordsMatch(words[i+1:], rest) {
				return true
			}
		}
	}
	return false
}

func mcqWordsMatch(words [][]byte, pattern []string) bool {
	if len(words) < len(pattern) {
		return false
	}
	for j, p := range pattern {
		if p == mcqLetter {
			r, size := utf8.DecodeRune(words[j])
			if size != len(words[j]) || !(r >= 'a' && r <= 'f' || r >= 'а' && r <= 'е') {
				return false
			}
			continue
		}
		if string(words[j]) != p {
			return false
		}
	}
	return true
}

// mcqScratch holds buffers that one Check call reuses for every string it
// splits into words, so that the word-based rules allocate only while the
// buffers grow. A pack is shared by concurrent requests; its scratch
// space therefore lives in the call, never in the pack.
type mcqScratch struct {
	buf []byte
	ws  [][]byte
}

// words returns the words of s as mcqNormalize folds them. The result is
// valid until the next call.
func (sc *mcqScratch) words(s string) [][]byte {
	sc.buf, sc.ws = sc.buf[:0], sc.ws[:0]
	start := -1
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			// ASCII, nearly all of the text: no Unicode tables needed.
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			} else if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
				if start >= 0 {
					sc.ws = append(sc.ws, sc.buf[start:len(sc.buf):len(sc.buf)])
					start = -1
				}
				continue
			}
		case r == 'ё' || r == 'Ё':
			r = 'е'
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = unicode.ToLower(r)
		default:
			if start >= 0 {
				sc.ws = append(sc.ws, sc.buf[start:len(sc.buf):len(sc.buf)])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = len(sc.buf)
		}
		sc.buf = utf8.AppendRune(sc.buf, r)
	}
	if start >= 0 {
		sc.ws = append(sc.ws, sc.buf[start:len(sc.buf):len(sc.buf)])
	}
	return sc.ws
}

// mcqParams are the question-set settings of SPEC §4, parsed.
type mcqParams struct {
	options          string // "A", "B" or "C"
	minOpts, maxOpts int
	// count is the required number of questions, 0 when not given. When
	// only difficulty is given it is the difficulty's sum: "3/5/2" asks for
	// ten questions as surely as question_count=10 does.
	count int
	diff  [3]int
	// hasDiff is true when the difficulty parameter was given.
	hasDiff bool
}

// parseMCQParams reads the pack's parameters. It always returns usable
// settings (bad values fall back to the defaults) together with an error
// naming every bad value, so that CheckParams and Check share one reading.
func parseMCQParams(p Params) (mcqParams, error) {
	cfg := mcqParams{options: "C", minOpts: 3, maxOpts: 5}
	var errs []error
	if v, ok := p["options"]; ok {
		switch strings.ToUpper(v) {
		case "A":
			cfg.options, cfg.minOpts, cfg.maxOpts = "A", 4, 4
		case "B":
			cfg.options, cfg.minOpts, cfg.maxOpts = "B", 5, 5
		case "C":
		default:
			errs = append(errs, fmt.Errorf("mcq: param options=%q: want A (exactly 4 options), B (exactly 5) or C (3 to 5)", v))
		}
	}
	explicitCount := false
	if v, ok := p["question_count"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("mcq: param question_count=%q: want a positive integer such as 10", v))
		} else {
			cfg.count, explicitCount = n, true
		}
	}
	if v, ok := p["difficulty"]; ok {
		d, ok := mcqParseDifficulty(v)
		if !ok {
			errs = append(errs, fmt.Errorf("mcq: param difficulty=%q: want easy/medium/hard counts such as 3/5/2", v))
		} else {
			sum := d[0] + d[1] + d[2]
			switch {
			case explicitCount && sum != cfg.count:
				errs = append(errs, fmt.Errorf("mcq: param difficulty=%q sums to %d but question_count=%d: want counts that add up to question_count", v, sum, cfg.count))
			case sum == 0:
				errs = append(errs, fmt.Errorf("mcq: param difficulty=%q: want easy/medium/hard counts with a positive sum, such as 3/5/2", v))
			default:
				cfg.diff, cfg.hasDiff = d, true
				if !explicitCount {
					cfg.count = sum
				}
			}
		}
	}
	return cfg, errors.Join(errs...)
}

// mcqParseDifficulty reads "3/5/2" as easy/medium/hard counts.
func mcqParseDifficulty(s string) ([3]int, bool) {
	var d [3]int
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return d, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return d, false
		}
		d[i] = n
	}
	return d, true
}

// CheckParams rejects option configurations, counts and difficulty
// profiles the pack cannot use, naming each key and what it accepts.
func (m *mcqRules) CheckParams(p Params) error {
	_, err := parseMCQParams(p)
	return err
}

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

// Check evaluates every rule of the pack on doc.
func (m *mcqRules) Check(doc *strictjson.Value, p Params, e *Emitter) {
	cfg, _ := parseMCQParams(p)
	meta := doc.Get("meta")
	qs := doc.Get("questions")
	var items []*strictjson.Value
	haveQs := qs != nil && qs.Kind == strictjson.KindArray
	if haveQs {
		items = qs.Items
	}
	w := mcqCollectWeights(items)

	// The number of questions the document must end up with: the caller's
	// when given, else the one it has (seed 000: derive from the length).
	target, haveTarget := cfg.count, cfg.count > 0
	if !haveTarget && haveQs {
		target, haveTarget = len(items), true
	}
	// lengthOK is false when the caller asked for another number of
	// questions than the document holds: then no count is derivable.
	lengthOK := haveQs && len(items) == target

	if haveQs && cfg.count > 0 && len(items) != cfg.count {
		e.Semantic("QUESTION_COUNT_MISMATCH", SeverityError, qs, []Seg{"questions"}, cfg.count, len(items),
			fmt.Sprintf("Return exactly %d questions (there are %d): add or remove whole questions, then renumber them and their question_id in order.", cfg.count, len(items)), nil)
	}
	if meta != nil && meta.Kind == strictjson.KindObject {
		m.checkMeta(meta, w, cfg, target, haveTarget, haveQs, lengthOK, e)
	}
	// The caller's difficulty binds the questions too; when every weight
	// is known and their counts differ, only new weights can fix it.
	if haveQs && cfg.hasDiff && w.unknown == 0 && w.counts != cfg.diff {
		want, got := mcqDifficulty(cfg.diff), mcqDifficulty(w.counts)
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", SeverityError, qs, []Seg{"questions"}, want, got,
			fmt.Sprintf("Change question weights so that %d questions have weight 1, %d weight 2 and %d weight 3 (now %s), keeping cognitive_level and extended_explanation consistent with each weight.", cfg.diff[0], cfg.diff[1], cfg.diff[2], got), nil)
	}
	if !haveQs {
		return
	}
	ids := make(mcqIDs, len(items))
	for i, q := range items {
		if id, ok := q.Get("question_id").AsString(); ok {
			if at, seen := ids[id]; !seen {
				ids[id] = [2]int{i, -1}
			} else if at[1] < 0 {
				ids[id] = [2]int{at[0], i}
			}
		}
	}
	var sc mcqScratch
	for i, q := range items {
		if q.Kind == strictjson.KindObject {
			m.checkQuestion(i, q, w.of[i], cfg, ids, &sc, e)
		}
	}
	m.checkDuplicateQuestions(items, &sc, e)
}

// checkMeta evaluates C1 and the duration rule: every meta value that is
// derived from the questions.
func (m *mcqRules) checkMeta(meta *strictjson.Value, w mcqWeights, cfg mcqParams, target int, haveTarget, haveQs, lengthOK bool, e *Emitter) {
	qc := meta.Get("question_count")
	if n, ok := qc.AsInt(); ok && haveTarget && n != int64(target) {
		var fix any
		why := "the number of questions"
		if lengthOK {
			fix = target
		} else {
			why = "the question_count of the question set"
		}
		e.Semantic("QUESTION_COUNT_MISMATCH", SeverityError, qc, []Seg{"meta", "question_count"}, target, ruleActual(qc),
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
			e.Semantic("DIFFICULTY_PROFILE_MISMATCH", SeverityError, prof, []Seg{"meta", "difficulty_profile"}, mcqDifficulty(w.counts), "missing "+strings.Join(missing, ", "),
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
				e.Semantic("DIFFICULTY_PROFILE_SUM", SeverityError, prof, []Seg{"meta", "difficulty_profile"}, target, sum,
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
func (m *mcqRules) checkProfileMember(k int, v *strictjson.Value, n int64, w mcqWeights, cfg mcqParams, haveQs, lengthOK bool, e *Emitter) {
	key := mcqProfileKeys[k]
	segs := []Seg{"meta", "difficulty_profile", key}
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
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", SeverityError, v, segs, want, ruleActual(v),
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
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", SeverityError, v, segs, want, ruleActual(v),
			fmt.Sprintf("Set meta.difficulty_profile.%s to %d (count of weight==%d).", key, want, k+1), fix)
	default:
		// Questions without a valid weight may still turn out to be of
		// this weight: the count lies in a range, and only a value
		// outside it is certainly wrong.
		lo, hi := w.counts[k], w.counts[k]+w.unknown
		if n >= int64(lo) && n <= int64(hi) {
			return
		}
		e.Semantic("DIFFICULTY_PROFILE_MISMATCH", SeverityError, v, segs, fmt.Sprintf("%d..%d", lo, hi), ruleActual(v),
			fmt.Sprintf("meta.difficulty_profile.%s must count the questions of weight %d: between %d and %d while %s; fix the weights, then set it to that count.", key, k+1, lo, hi, mcqUnknownWeights(w.unknown)), nil)
	}
}

// checkDuration checks test_duration_minutes against the weights, the
// minutes per weight and the buffer.
func (m *mcqRules) checkDuration(meta *strictjson.Value, w mcqWeights, lengthOK bool, e *Emitter) {
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
	segs := []Seg{"meta", "test_duration_minutes"}
	if w.unknown == 0 {
		if ruleSame(sum, dur) {
			return
		}
		var terms []string
		for k, c := range w.counts {
			if c > 0 {
				terms = append(terms, fmt.Sprintf("%d×%s", c, ruleFormat(t[k])))
			}
		}
		terms = append(terms, ruleFormat(buf))
		var fix any
		if lengthOK {
			fix = ruleNumber(sum)
		}
		e.Semantic("TEST_DURATION_MISMATCH", SeverityError, dv, segs, ruleNumber(sum), ruleActual(dv),
			fmt.Sprintf("Set meta.test_duration_minutes to %s (time_per_weight_minutes of each question's weight plus additional_buffer_minutes: %s).", ruleFormat(sum), strings.Join(terms, " + ")), fix)
		return
	}
	lo := sum + float64(w.unknown)*math.Min(t[0], math.Min(t[1], t[2]))
	hi := sum + float64(w.unknown)*math.Max(t[0], math.Max(t[1], t[2]))
	if dur >= lo-1e-9 && dur <= hi+1e-9 {
		return
	}
	e.Semantic("TEST_DURATION_MISMATCH", SeverityError, dv, segs, ruleFormat(lo)+".."+ruleFormat(hi), ruleActual(dv),
		fmt.Sprintf("meta.test_duration_minutes must be the sum of time_per_weight_minutes over the questions' weights plus additional_buffer_minutes: between %s and %s while %s; fix the weights, then set it to that sum.", ruleFormat(lo), ruleFormat(hi), mcqUnknownWeights(w.unknown)), nil)
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

// mcqIDs records where each question_id occurs: the first two indices are
// enough to name "another question" for any occurrence.
type mcqIDs map[string][2]int

// other returns an index other than i where id occurs, or -1.
func (ids mcqIDs) other(id string, i int) int {
	at, ok := ids[id]
	switch {
	case !ok:
		return -1
	case at[0] != i:
		return at[0]
	case at[1] >= 0:
		return at[1]
	}
	return -1
}

// mcqAt is the path of a member of questions[i].
func mcqAt(i int, segs ...Seg) []Seg { return append([]Seg{"questions", i}, segs...) }

// mcqIsID reports whether id is the id of position n (1-based): "Q" and n
// with at least three digits, compared without building the string.
func mcqIsID(id string, n int) bool {
	var buf [24]byte
	b := append(buf[:0], 'Q')
	for d := 100; d > 1 && n < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return id == string(b)
}

// mcqHasNumber reports whether text starts with "n. ".
func mcqHasNumber(text string, n int) bool {
	var buf [24]byte
	b := append(strconv.AppendInt(buf[:0], int64(n), 10), '.', ' ')
	return len(text) >= len(b) && text[:len(b)] == string(b)
}

// checkQuestion evaluates C2–C7 on questions[i]; weight is its valid weight
// or 0. Names and paths for messages are built only when a rule fails:
// valid questions, the common case, cost no formatting.
func (m *mcqRules) checkQuestion(i int, q *strictjson.Value, weight int, cfg mcqParams, ids mcqIDs, sc *mcqScratch, e *Emitter) {
	name := func() string { return "questions[" + strconv.Itoa(i) + "]" }

	// C5: question_id. Ids are derived from positions, so the fix is always
	// the id of the position; a duplicate is named as such because that is
	// what a reader needs to see.
	idv := q.Get("question_id")
	if id, ok := idv.AsString(); ok && !mcqIsID(id, i+1) {
		want := fmt.Sprintf("Q%03d", i+1)
		if other := ids.other(id, i); other >= 0 {
			e.Semantic("QUESTION_ID_DUPLICATE", SeverityError, idv, mcqAt(i, "question_id"), want, id,
				fmt.Sprintf("%s.question_id %q is also used by questions[%d]; set it to %q.", name(), id, other, want), want)
		} else {
			e.Semantic("QUESTION_ID_SEQUENCE", SeverityError, idv, mcqAt(i, "question_id"), want, id,
				fmt.Sprintf("Set %s.question_id to %q (ids follow the order of the questions: Q001, Q002, …).", name(), want), want)
		}
	}

	// C5 numbering and C7 code in the question text. Numbering and line
	// numbers rewrite the same string, so both fixes carry the string with
	// everything fixed: applying one or both gives the same result.
	qv := q.Get("question")
	if text, ok := qv.AsString(); ok {
		numbered := mcqHasNumber(text, i+1)
		code := mcqScanCode(text)
		if !numbered || code.badLine != "" {
			want := strconv.Itoa(i+1) + ". "
			fixed := text
			if !numbered {
				fixed = want + strings.TrimLeft(text[mcqNumberPrefix(text):], " \t")
			}
			if code.badLine != "" {
				fixed = mcqScanCode(fixed).fixed
			}
			if !numbered {
				e.Semantic("QUESTION_NUMBERING", SeverityError, qv, mcqAt(i, "question"), want, mcqPrefixShown(text),
					fmt.Sprintf("Start %s.question with %q (its 1-based position), replacing any other number prefix.", name(), want), fixed)
			}
			code.fixed = fixed
		}
		if code.found() {
			m.emitCode(code, qv, mcqAt(i, "question"), name()+".question", e)
		}
	}

	// C3: weight and cognitive level.
	wv := q.Get("weight")
	lv := q.Get("cognitive_level")
	level, levelOK := lv.AsString()
	if _, ok := wv.AsInt(); ok && weight == 0 {
		derived := slices.Index(mcqLevels[:], level)
		if levelOK && derived > 0 {
			e.Semantic("WEIGHT_INVALID", SeverityError, wv, mcqAt(i, "weight"), "1..3", ruleActual(wv),
				fmt.Sprintf("Set %s.weight to %d (cognitive_level is %q).", name(), derived, level), derived)
		} else {
			e.Semantic("WEIGHT_INVALID", SeverityError, wv, mcqAt(i, "weight"), "1..3", ruleActual(wv),
				fmt.Sprintf("Set %s.weight to 1, 2 or 3 (1 = Reproduction, 2 = Application, 3 = Analysis) and cognitive_level to match.", name()), nil)
		}
	}
	if weight > 0 && levelOK && level != mcqLevels[weight] {
		e.Semantic("COGNITIVE_LEVEL_MISMATCH", SeverityError, lv, mcqAt(i, "cognitive_level"), mcqLevels[weight], level,
			fmt.Sprintf("Set %s.cognitive_level to %q (weight %d).", name(), mcqLevels[weight], weight), mcqLevels[weight])
	}

	// C4: extended explanation. With an invalid weight nothing is decided:
	// the weight decides whether there must be one.
	if ee := q.Get("extended_explanation"); ee != nil && weight > 0 {
		m.checkExtended(i, ee, weight, e)
	}

	// C2 and C6, C7 on the options.
	ov := q.Get("options")
	if ov == nil || ov.Kind != strictjson.KindArray {
		return
	}
	n := len(ov.Items)
	if av := q.Get("answer"); n > 0 {
		if a, ok := av.AsInt(); ok && (a < 0 || a >= int64(n)) {
			e.Semantic("ANSWER_RANGE", SeverityError, av, mcqAt(i, "answer"), fmt.Sprintf("0..%d", n-1), ruleActual(av),
				fmt.Sprintf("Set %s.answer to the 0-based index of the correct option (0..%d).", name(), n-1), nil)
		}
	}
	if n < cfg.minOpts || n > cfg.maxOpts {
		var want any = fmt.Sprintf("%d..%d", cfg.minOpts, cfg.maxOpts)
		how := fmt.Sprintf("between %d and %d options", cfg.minOpts, cfg.maxOpts)
		if cfg.minOpts == cfg.maxOpts {
			want, how = cfg.minOpts, fmt.Sprintf("exactly %d options", cfg.minOpts)
		}
		e.Semantic("OPTIONS_COUNT", SeverityError, ov, mcqAt(i, "options"), want, n,
			fmt.Sprintf("Give %s %s (option set %s; it has %d), keeping answer on the correct option.", name(), how, cfg.options, n), nil)
	}
	var dups firstSeen
	for j, o := range ov.Items {
		s, ok := o.AsString()
		if !ok {
			continue
		}
		oname := func() string { return name() + ".options[" + strconv.Itoa(j) + "]" }
		if code := mcqScanCode(s); code.found() {
			m.emitCode(code, o, mcqAt(i, "options", j), oname(), e)
		}
		if k := dups.add(ov.Items, j, strings.TrimSpace(s)); k >= 0 {
			t, _ := ov.Items[k].AsString()
			e.Semantic("DUPLICATE_OPTIONS", SeverityError, o, mcqAt(i, "options", j), fmt.Sprintf("distinct from options[%d]", k), s,
				fmt.Sprintf("%s repeats options[%d] (%q); replace it with a different plausible distractor.", oname(), k, t), nil)
		}
		if m.isForbidden(s, sc) {
			e.Semantic("FORBIDDEN_OPTION", SeverityError, o, mcqAt(i, "options", j), "a specific answer", s,
				fmt.Sprintf("Replace %s (%q) with a specific plausible distractor: catch-all options such as \"All of the above\" are not allowed; keep answer on the correct option.", oname(), s), nil)
		}
	}
}

// firstSeen finds, for the string items of a list one by one, the first
// earlier item equal after trimming and case folding. Lists of options are
// short and a scan is cheapest; a long list (a model repeating itself)
// switches to a map keyed by the folded text, so that the check stays
// linear.
type firstSeen struct {
	byKey map[string]int
}

// firstSeenScan is the list length up to which add scans.
const firstSeenScan = 16

// add returns the index of the first item before j whose trimmed text is
// equal to text (trimmed) up to case, or -1, and records item j.
func (f *firstSeen) add(items []*strictjson.Value, j int, text string) int {
	if len(items) <= firstSeenScan {
		key := ""
		for k := range j {
			t, ok := items[k].AsString()
			if !ok {
				continue
			}
			t = strings.TrimSpace(t)
			if strings.EqualFold(text, t) {
				return k
			}
			// Simple folding misses what full folding maps to several
			// runes ("ß" and "SS"); only texts of other byte lengths
			// or with such runes can still be equal.
			if key == "" {
				key = foldKey(text)
			}
			if foldKey(t) == key {
				return k
			}
		}
		return -1
	}
	if f.byKey == nil {
		f.byKey = make(map[string]int, len(items))
	}
	key := foldKey(text)
	if k, ok := f.byKey[key]; ok {
		return k
	}
	f.byKey[key] = j
	return -1
}

// foldKey is s under full Unicode case folding (SPEC §4: options are
// distinct "after case folding"): "Weniger gießen" and "WENIGER GIESSEN"
// fold to the same text, which simple folding (strings.EqualFold) misses.
// A Caser keeps state between calls, so each call makes its own; ASCII
// text, almost every option, folds by lowering its letters, without one.
func foldKey(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return cases.Fold().String(s)
		}
	}
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// checkExtended evaluates C4 for questions[i], whose weight is valid.
func (m *mcqRules) checkExtended(i int, ee *strictjson.Value, weight int, e *Emitter) {
	name := "questions[" + strconv.Itoa(i) + "]"
	switch {
	case weight == 1 && ee.Kind == strictjson.KindObject:
		e.Semantic("EXTENDED_EXPLANATION_NOT_NULL", SeverityError, ee, mcqAt(i, "extended_explanation"), nil, "object",
			fmt.Sprintf("Set %s.extended_explanation to null (weight 1 questions have none).", name), Null)
	case weight > 1 && ee.IsNull():
		e.Semantic("EXTENDED_EXPLANATION_MISSING", SeverityError, ee, mcqAt(i, "extended_explanation"), "object", nil,
			fmt.Sprintf("Replace null in %s.extended_explanation with an object {\"title\": string, \"steps\": [2 to 6 steps], \"content\": string} (weight %d questions need one).", name, weight), nil)
	case weight > 1 && ee.Kind == strictjson.KindObject:
		for _, f := range mcqExtendedMembers {
			v := ee.Get(f.key)
			if v != nil && v.Kind == f.kind {
				continue
			}
			pos := ee
			if v != nil {
				pos = v
			}
			e.Semantic("EXTENDED_EXPLANATION_INVALID", SeverityError, pos, mcqAt(i, "extended_explanation", f.key), f.kind.String(), ruleKind(v),
				fmt.Sprintf("Give %s.extended_explanation a %s %q.", name, f.kind, f.key), nil)
		}
		if st := ee.Get("steps"); st != nil && st.Kind == strictjson.KindArray && (len(st.Items) < 2 || len(st.Items) > 6) {
			e.Semantic("EXTENDED_EXPLANATION_STEPS", SeverityError, st, mcqAt(i, "extended_explanation", "steps"), "2..6", len(st.Items),
				fmt.Sprintf("Give %s.extended_explanation.steps 2 to 6 steps (it has %d).", name, len(st.Items)), nil)
		}
	}
}

// mcqExtendedMembers are the members an extended explanation must have (C4).
var mcqExtendedMembers = []struct {
	key  string
	kind strictjson.Kind
}{{"title", strictjson.KindString}, {"steps", strictjson.KindArray}, {"content", strictjson.KindString}}

// emitCode reports the C7 findings of one string at segs; c.fixed is the
// string with its code lines numbered (and, for a question, its number
// prefix fixed); name is the string's path for hints.
func (m *mcqRules) emitCode(c mcqCode, v *strictjson.Value, segs []Seg, name string, e *Emitter) {
	for _, f := range c.fences {
		e.Semantic("CODE_FENCE_MISSING", SeverityError, v, segs, f.expected, f.actual,
			fmt.Sprintf("In %s, %s", name, f.hint), nil)
	}
	if c.badLine != "" {
		e.Semantic("CODE_LINE_NUMBERS", SeverityError, v, segs, c.wantPrefix, c.badLine,
			fmt.Sprintf("Number every code line inside the fence of %s as \"1: \", \"2: \", … in order (line %d reads %q).", name, c.badLineNo, c.badLine), c.fixed)
	}
}

// mcqPrefixShown is the "actual" of a numbering violation: the number
// prefix the question has, or its first characters when it has none.
func mcqPrefixShown(text string) string {
	if n := mcqNumberPrefix(text); n > 0 {
		return strings.TrimSpace(text[:n])
	}
	return mcqHead(text, 12)
}

// mcqHead returns the first n runes of s, with "…" when it was cut.
func mcqHead(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// mcqNumberPrefix returns the length of the number prefix a model wrote in
// front of a question ("3. ", "3) ", "3: ", "Q3. ", "Q3 ", "(3) ",
// "Frage 3: ", "#3 "), including the spaces after it, or 0. A number that
// is content stays: "3.14 is …" and "2024 was …" have no prefix.
func mcqNumberPrefix(s string) int {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	skip()
	paren := i < len(s) && s[i] == '('
	if paren {
		i++
	}
	labeled := false
	for _, l := range []string{"question", "frage", "вопрос", "q", "#"} {
		if len(s)-i >= len(l) && strings.EqualFold(s[i:i+len(l)], l) {
			i += len(l)
			labeled = true
			break
		}
	}
	skip()
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return 0
	}
	sep := i < len(s) && strings.IndexByte(".):", s[i]) >= 0
	switch {
	case sep && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
		return 0 // "3.14", "3:45": a number, not a prefix
	case paren && (!sep || s[i] != ')'):
		return 0
	case sep:
		i++
	case !labeled:
		return 0 // "2024 was …"
	case i < len(s) && s[i] != ' ' && s[i] != '\t':
		return 0
	}
	skip()
	return i
}

// mcqFenceIssue is one CODE_FENCE_MISSING finding.
type mcqFenceIssue struct {
	expected, actual, hint string
}

// mcqCode is what mcqScanCode found in one string.
type mcqCode struct {
	fences []mcqFenceIssue
	// badLine is the first code line inside a fence that is not numbered
	// as it should be ("" when all are), badLineNo its position in the
	// fence and wantPrefix the prefix it needs.
	badLine    string
	badLineNo  int
	wantPrefix string
	// fixed is the string with every fenced code line numbered.
	fixed string
}

// found reports whether the scan has anything to report.
func (c *mcqCode) found() bool { return len(c.fences) > 0 || c.badLine != "" }

// mcqLangRe is a fence's language tag: "python", "c++", "c#", "objective-c".
var mcqLangRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+#.\-]*$`)

// mcqScanCode evaluates C7 on one string: multi-line code must sit in a
// fence with a language, and each line inside a fence is numbered "1: ",
// "2: ", …. Lines are separated by "\n" inside the decoded string.
func mcqScanCode(s string) mcqCode {
	res := mcqCode{fixed: s}
	if !strings.Contains(s, "\n") && !strings.Contains(s, "```") {
		// One line without a fence holds no multi-line code: inline code
		// such as sorted(xs) is fine.
		return res
	}
	lines := strings.Split(s, "\n")
	var out []string
	var body []mcqBodyLine
	inFence := false
	// run counts consecutive unfenced code lines; strong is set once one
	// of them is certainly code; reported makes one finding per run.
	run, strong, reported := 0, false, false
	for i, ln := range lines {
		if !inFence {
			idx := strings.Index(ln, "```")
			if idx < 0 {
				score := mcqCodeScore(ln)
				if score == 0 {
					run, strong, reported = 0, false, false
					continue
				}
				run++
				strong = strong || score == 2
				if run >= 2 && strong && !reported {
					res.fences = append(res.fences, mcqFenceIssue{
						expected: "```<language>", actual: mcqHead(strings.TrimSpace(lines[i-run+1]), 40),
						hint: "put the code lines in a fenced block with a language (```python\\n1: …\\n2: …\\n```), one line per \\n, numbered 1:, 2:, ….",
					})
					reported = true
				}
				continue
			}
			run, strong, reported = 0, false, false
			rest := ln[idx+3:]
			if j := strings.Index(rest, "```"); j >= 0 {
				// A fence opened and closed on one line is inline code,
				// unless its "lines" are separated by a literal
				// backslash-n: the model escaped the newlines twice.
				if strings.Contains(rest[:j], `\n`) {
					res.fences = append(res.fences, mcqFenceIssue{
						expected: "```<language>", actual: mcqHead("```"+rest[:j], 24),
						hint: "lines are separated by a literal backslash-n (escaped twice); separate them with a single \\n in the JSON string.",
					})
				}
				continue
			}
			lang, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
			switch {
			case lang == "":
				res.fences = append(res.fences, mcqFenceIssue{
					expected: "```<language>", actual: "```",
					hint: "name the language after the opening fence, e.g. ```python.",
				})
			case strings.Contains(lang, `\`):
				res.fences = append(res.fences, mcqFenceIssue{
					expected: "```<language>", actual: mcqHead("```"+lang, 24),
					hint: "lines are separated by a literal backslash-n (escaped twice); separate them with a single \\n in the JSON string.",
				})
			case !mcqLangRe.MatchString(lang):
				res.fences = append(res.fences, mcqFenceIssue{
					expected: "```<language>", actual: mcqHead("```"+lang, 24),
					hint: "name the language after the opening fence, e.g. ```python, and start the code on the next line.",
				})
			}
			inFence, body = true, body[:0]
			continue
		}
		t := strings.TrimLeft(ln, " \t")
		if strings.HasPrefix(t, "```") {
			out = mcqNumberBody(lines, out, body, &res)
			inFence = false
			continue
		}
		end := len(ln)
		if idx := strings.Index(ln, "```"); idx >= 0 {
			end = idx // the closing fence ends this code line
			inFence = false
		}
		body = append(body, mcqBodyLine{i, end})
		if !inFence {
			out = mcqNumberBody(lines, out, body, &res)
		}
	}
	if inFence {
		res.fences = append(res.fences, mcqFenceIssue{
			expected: "```", actual: "end of text",
			hint: "close the code block with ``` on its own line.",
		})
		out = mcqNumberBody(lines, out, body, &res)
	}
	if out != nil {
		res.fixed = strings.Join(out, "\n")
	}
	return res
}

// mcqBodyLine is one code line of a fence: lines[line][:end].
type mcqBodyLine struct{ line, end int }

// mcqNumberBody checks the numbering of one fence body and writes the
// numbered lines into out (a copy of lines made on the first change).
// Blank lines before the first and after the last code line are layout,
// not code, and are neither numbered nor counted.
func mcqNumberBody(lines, out []string, body []mcqBodyLine, res *mcqCode) []string {
	blank := func(b mcqBodyLine) bool { return strings.TrimSpace(lines[b.line][:b.end]) == "" }
	for len(body) > 0 && blank(body[0]) {
		body = body[1:]
	}
	for len(body) > 0 && blank(body[len(body)-1]) {
		body = body[:len(body)-1]
	}
	for k, b := range body {
		no := strconv.Itoa(k + 1)
		content := lines[b.line][:b.end]
		if strings.HasPrefix(content, no+": ") || strings.TrimRight(content, " \t\r") == no+":" {
			continue
		}
		if res.badLine == "" {
			res.badLine, res.badLineNo, res.wantPrefix = mcqHead(content, 40), k+1, no+": "
		}
		if out == nil {
			out = slices.Clone(lines)
		}
		rest := content[mcqLineNumber(content):]
		if strings.TrimSpace(rest) == "" {
			out[b.line] = no + ":" + lines[b.line][b.end:]
		} else {
			out[b.line] = no + ": " + rest + lines[b.line][b.end:]
		}
	}
	return out
}

// mcqLineNumber returns the length of a line-number prefix a model wrote in
// front of a code line ("3:", "3: ", "3. ", "3) "), or 0. After a colon
// one space is part of the prefix; the rest is the code's indentation.
func mcqLineNumber(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start || i >= len(s) {
		return 0
	}
	switch s[i] {
	case ':':
		i++
		if i < len(s) && s[i] == ' ' {
			i++
		}
		return i
	case '.', ')':
		if i+1 == len(s) {
			return i + 1
		}
		if s[i+1] == ' ' || s[i+1] == '\t' {
			return i + 2
		}
	}
	return 0
}

var (
	// mcqNumberedLineRe is a line numbered the way C7 numbers code.
	mcqNumberedLineRe = regexp.MustCompile(`^\s*\d+:(\s|$)`)
	// mcqKeywordLineRe is a line that starts like a statement in a common
	// language. Keywords are lower-case, as in code; prose lines start
	// with a capital letter.
	mcqKeywordLineRe = regexp.MustCompile(`^\s*(def|class|return|import|from \S+ import|print|elif|else:|while|for|if|try:|except|with|function|var|let|const|#include|using|package|func|fn|public|private|static|void|echo|console\.log|System\.out\.print)\b(?:[ (:]|$)`)
	// mcqCallLineRe is a call on its own line: "print(x)", "foo(1, 2);".
	mcqCallLineRe = regexp.MustCompile(`^\s*[A-Za-z_][\w.]*\(.*\)\s*;?\s*$`)
	// mcqEndLineRe is a line ending the way statements and blocks end.
	mcqEndLineRe = regexp.MustCompile(`[;{}]\s*$`)
	// mcqAssignLineRe is an assignment "x = 5". On its own it is weak
	// evidence: "E = mc²" is a formula, not code.
	mcqAssignLineRe = regexp.MustCompile(`^\s*[A-Za-z_][\w.]*(\[[^\]]*\])?\s*([-+*/%]?=)\s*[^=\s]`)
)

// mcqCodeScore rates one line outside a fence: 2 when it certainly is code,
// 1 when it may be, 0 when it is prose. Two or more consecutive code lines
// with at least one certain one are multi-line code that needs a fence.
func mcqCodeScore(ln string) int {
	switch {
	case strings.TrimSpace(ln) == "":
		return 0
	case mcqNumberedLineRe.MatchString(ln), mcqKeywordLineRe.MatchString(ln),
		mcqCallLineRe.MatchString(ln), mcqEndLineRe.MatchString(ln):
		return 2
	case mcqAssignLineRe.MatchString(ln):
		return 1
	}
	return 0
}

// mcqNormalize folds text the way option and question words are compared:
// lower case, ё as е, every run of characters other than letters and
// digits as one space, no leading or trailing space.
func mcqNormalize(s string) string {
	var sc mcqScratch
	return string(bytes.Join(sc.words(s), []byte{' '}))
}

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
func (m *mcqRules) checkDuplicateQuestions(items []*strictjson.Value, sc *mcqScratch, e *Emitter) {
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
		for _, tok := range sc.words(text[mcqNumberPrefix(text):]) {
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
		e.Semantic("DUPLICATE_QUESTION", SeverityWarning, en.v, []Seg{"questions", en.idx, "question"}, "< 0.9", math.Round(sim*100)/100,
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
