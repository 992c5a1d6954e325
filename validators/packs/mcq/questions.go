package mcq

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// mcqLevels maps a valid weight to its cognitive level (C3).
var mcqLevels = [4]string{1: "Reproduction", 2: "Application", 3: "Analysis"}

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
func mcqAt(i int, segs ...validators.Seg) []validators.Seg {
	return append([]validators.Seg{"questions", i}, segs...)
}

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
func (m *Rules) checkQuestion(i int, q *strictjson.Value, weight int, cfg mcqParams, ids mcqIDs, sc *mcqScratch, e *validators.Emitter) {
	name := func() string { return "questions[" + strconv.Itoa(i) + "]" }

	// C5: question_id. Ids are derived from positions, so the fix is always
	// the id of the position; a duplicate is named as such because that is
	// what a reader needs to see.
	idv := q.Get("question_id")
	if id, ok := idv.AsString(); ok && !mcqIsID(id, i+1) {
		want := fmt.Sprintf("Q%03d", i+1)
		if other := ids.other(id, i); other >= 0 {
			e.Semantic("QUESTION_ID_DUPLICATE", validators.SeverityError, idv, mcqAt(i, "question_id"), want, id,
				fmt.Sprintf("%s.question_id %q is also used by questions[%d]; set it to %q.", name(), id, other, want), want)
		} else {
			e.Semantic("QUESTION_ID_SEQUENCE", validators.SeverityError, idv, mcqAt(i, "question_id"), want, id,
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
				e.Semantic("QUESTION_NUMBERING", validators.SeverityError, qv, mcqAt(i, "question"), want, mcqPrefixShown(text),
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
			e.Semantic("WEIGHT_INVALID", validators.SeverityError, wv, mcqAt(i, "weight"), "1..3", validators.Actual(wv),
				fmt.Sprintf("Set %s.weight to %d (cognitive_level is %q).", name(), derived, level), derived)
		} else {
			e.Semantic("WEIGHT_INVALID", validators.SeverityError, wv, mcqAt(i, "weight"), "1..3", validators.Actual(wv),
				fmt.Sprintf("Set %s.weight to 1, 2 or 3 (1 = Reproduction, 2 = Application, 3 = Analysis) and cognitive_level to match.", name()), nil)
		}
	}
	if weight > 0 && levelOK && level != mcqLevels[weight] {
		e.Semantic("COGNITIVE_LEVEL_MISMATCH", validators.SeverityError, lv, mcqAt(i, "cognitive_level"), mcqLevels[weight], level,
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
			e.Semantic("ANSWER_RANGE", validators.SeverityError, av, mcqAt(i, "answer"), fmt.Sprintf("0..%d", n-1), validators.Actual(av),
				fmt.Sprintf("Set %s.answer to the 0-based index of the correct option (0..%d).", name(), n-1), nil)
		}
	}
	if n < cfg.minOpts || n > cfg.maxOpts {
		var want any = fmt.Sprintf("%d..%d", cfg.minOpts, cfg.maxOpts)
		how := fmt.Sprintf("between %d and %d options", cfg.minOpts, cfg.maxOpts)
		if cfg.minOpts == cfg.maxOpts {
			want, how = cfg.minOpts, fmt.Sprintf("exactly %d options", cfg.minOpts)
		}
		e.Semantic("OPTIONS_COUNT", validators.SeverityError, ov, mcqAt(i, "options"), want, n,
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
			e.Semantic("DUPLICATE_OPTIONS", validators.SeverityError, o, mcqAt(i, "options", j), fmt.Sprintf("distinct from options[%d]", k), s,
				fmt.Sprintf("%s repeats options[%d] (%q); replace it with a different plausible distractor.", oname(), k, t), nil)
		}
		if m.isForbidden(s, sc) {
			e.Semantic("FORBIDDEN_OPTION", validators.SeverityError, o, mcqAt(i, "options", j), "a specific answer", s,
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

// foldKey is s under full Unicode case folding (options must be distinct
// after case folding): "Weniger gießen" and "WENIGER GIESSEN"
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
func (m *Rules) checkExtended(i int, ee *strictjson.Value, weight int, e *validators.Emitter) {
	name := "questions[" + strconv.Itoa(i) + "]"
	switch {
	case weight == 1 && ee.Kind == strictjson.KindObject:
		e.Semantic("EXTENDED_EXPLANATION_NOT_NULL", validators.SeverityError, ee, mcqAt(i, "extended_explanation"), nil, "object",
			fmt.Sprintf("Set %s.extended_explanation to null (weight 1 questions have none).", name), validators.Null)
	case weight > 1 && ee.IsNull():
		e.Semantic("EXTENDED_EXPLANATION_MISSING", validators.SeverityError, ee, mcqAt(i, "extended_explanation"), "object", nil,
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
			e.Semantic("EXTENDED_EXPLANATION_INVALID", validators.SeverityError, pos, mcqAt(i, "extended_explanation", f.key), f.kind.String(), ruleKind(v),
				fmt.Sprintf("Give %s.extended_explanation a %s %q.", name, f.kind, f.key), nil)
		}
		if st := ee.Get("steps"); st != nil && st.Kind == strictjson.KindArray && (len(st.Items) < 2 || len(st.Items) > 6) {
			e.Semantic("EXTENDED_EXPLANATION_STEPS", validators.SeverityError, st, mcqAt(i, "extended_explanation", "steps"), "2..6", len(st.Items),
				fmt.Sprintf("Give %s.extended_explanation.steps 2 to 6 steps (it has %d).", name, len(st.Items)), nil)
		}
	}
}

// mcqExtendedMembers are the members an extended explanation must have (C4).
var mcqExtendedMembers = []struct {
	key  string
	kind strictjson.Kind
}{{"title", strictjson.KindString}, {"steps", strictjson.KindArray}, {"content", strictjson.KindString}}

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

// ruleKind names what a member holds for "actual" when its type is the
// problem: the JSON Schema type name, or "missing" when it is absent.
func ruleKind(v *strictjson.Value) string {
	if v == nil {
		return "missing"
	}
	return v.Kind.String()
}
