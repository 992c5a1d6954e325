package celenv

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
	"golang.org/x/text/cases"
)

// PhraseSet is a list of phrases made ready for containsPhrase: each
// phrase as its words (words() of it), indexed by its first word.
type PhraseSet map[string][][]string

// NewPhraseSet builds the set of the phrases of a CEL list; ok is false
// when an element is not a string.
func NewPhraseSet(l traits.Lister) (PhraseSet, bool) {
	set := PhraseSet{}
	for it := l.Iterator(); it.HasNext() == types.True; {
		s, ok := it.Next().(types.String)
		if !ok {
			return nil, false
		}
		if ws := words(string(s)); len(ws) > 0 {
			set[ws[0]] = append(set[ws[0]], ws[1:])
		}
	}
	return set, true
}

// words is the words of s as AppendWords finds them, each a string.
func words(s string) []string {
	buf, spans := AppendWords(s, nil, nil)
	text := string(buf)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = text[sp[0]:sp[1]]
	}
	return out
}

// AppendWords writes the words of s as words() makes them (runs of
// letters and digits, lower-cased) one after another into buf, and the
// start and end of each in buf into spans.
func AppendWords(s string, buf []byte, spans [][2]int) ([]byte, [][2]int) {
	start := -1
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			} else if !('a' <= r && r <= 'z' || '0' <= r && r <= '9') {
				if start >= 0 {
					spans = append(spans, [2]int{start, len(buf)})
					start = -1
				}
				continue
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = unicode.ToLower(r)
		default:
			if start >= 0 {
				spans = append(spans, [2]int{start, len(buf)})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = len(buf)
		}
		buf = utf8.AppendRune(buf, r)
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(buf)})
	}
	return buf, spans
}

// contains reports whether the words of s hold one of the set's phrases
// word for word, in sequence. The words are written once into buffers
// on the stack (for texts of a few hundred bytes), then every word that
// starts a phrase is tried.
func (set PhraseSet) contains(s string) bool {
	var stack [256]byte
	var spanStack [32][2]int
	buf, spans := AppendWords(s, stack[:0], spanStack[:0])
	for i, sp := range spans {
		for _, rest := range set[string(buf[sp[0]:sp[1]])] {
			if wordsAfter(buf, spans, i, rest) {
				return true
			}
		}
	}
	return false
}

// wordsAfter reports whether the words that follow word i of a text
// (written by AppendWords into buf and spans) begin with rest.
func wordsAfter(buf []byte, spans [][2]int, i int, rest []string) bool {
	if len(spans)-i-1 < len(rest) {
		return false
	}
	for j, p := range rest {
		n := spans[i+1+j]
		if string(buf[n[0]:n[1]]) != p {
			return false
		}
	}
	return true
}

// stringContainsPhrase is containsPhrase() with a list that is not
// constant: the phrases are prepared on every call.
func stringContainsPhrase(s, list ref.Val) ref.Val {
	l, ok := list.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(list)
	}
	set, ok := NewPhraseSet(l)
	if !ok {
		return types.NewErr("containsPhrase: the phrases must be strings")
	}
	return set.Holds(s)
}

// Holds is containsPhrase() of a string, or of a list: true when one of
// the list's strings contains a phrase (other elements are skipped).
func (set PhraseSet) Holds(v ref.Val) ref.Val {
	switch x := v.(type) {
	case types.String:
		return types.Bool(set.contains(string(x)))
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			if s, ok := x.Get(i).(types.String); ok && set.contains(string(s)) {
				return types.True
			}
		}
		return types.False
	}
	return types.MaybeNoSuchOverloadErr(v)
}

// constantLists is a planning step: a list literal of constants (a list
// of level names, of phrases) is made once, when the program is planned,
// instead of on every evaluation.
func constantLists(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	lit, ok := i.(interpreter.InterpretableConstructor)
	if !ok || lit.Type() != types.ListType {
		return i, nil
	}
	vals := make([]ref.Val, 0, len(lit.InitVals()))
	for _, v := range lit.InitVals() {
		c, ok := v.(interpreter.InterpretableConst)
		if !ok {
			return i, nil
		}
		vals = append(vals, c.Value())
	}
	return interpreter.NewConstValue(lit.ID(), types.NewRefValList(types.DefaultTypeAdapter, vals)), nil
}

// constantPhrases is a planning step: containsPhrase's phrases are
// prepared once if they are a constant list (as in a rule such as
// o.containsPhrase(['all of the above', …]), made constant by
// constantLists).
func constantPhrases(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || call.Function() != "containsPhrase" || len(call.Args()) != 2 {
		return i, nil
	}
	c, ok := call.Args()[1].(interpreter.InterpretableConst)
	if !ok {
		return i, nil
	}
	l, ok := c.Value().(traits.Lister)
	if !ok {
		return i, nil
	}
	set, ok := NewPhraseSet(l)
	if !ok {
		return i, nil
	}
	return &phraseCall{InterpretableCall: call, arg: call.Args()[0], set: set}, nil
}

// phraseCall is containsPhrase with its phrases prepared: it evaluates
// the string and looks it up, without the argument slice a generic call
// allocates.
type phraseCall struct {
	interpreter.InterpretableCall
	arg interpreter.InterpretableV2
	set PhraseSet
}

func (c *phraseCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v := c.arg.Exec(frame)
	switch v.(type) {
	case *types.Err, *types.Unknown:
		return v
	}
	res := c.set.Holds(v)
	if costs := frame.CostTracker(); costs != nil {
		costs.EvalVarArgs(frame, c.ID(), c, []ref.Val{v, types.NullValue}, res)
	}
	return res
}

func (c *phraseCall) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, c.Exec)
}

// ListUniqueText is uniqueText(): true when no two strings of the list are
// the same text once leading and trailing white space is trimmed and case
// is folded ("Paris", " paris " and "PARIS" are the same; so are "Straße"
// and "STRASSE"). Elements that are not strings are compared as unique()
// compares them.
func ListUniqueText(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	var strStack [uniqueScan]string
	strs := strStack[:0]
	var rest []ref.Val
	var keys map[string]struct{}
	n, _ := l.Size().(types.Int)
	for i := types.Int(0); i < n; i++ {
		x := l.Get(i)
		s, ok := x.(types.String)
		if !ok {
			for _, r := range rest {
				if r.Equal(x) == types.True {
					return types.False
				}
			}
			rest = append(rest, x)
			continue
		}
		t := strings.TrimSpace(string(s))
		if keys == nil && len(strs) < uniqueScan {
			// Short lists are compared pair by pair, by simple folding
			// first and by full folding only where a rune could fold to
			// several.
			for _, o := range strs {
				if strings.EqualFold(t, o) || (!isASCII(t) || !isASCII(o)) && foldText(t) == foldText(o) {
					return types.False
				}
			}
			strs = append(strs, t)
			continue
		}
		if keys == nil {
			keys = make(map[string]struct{}, 2*uniqueScan)
			for _, o := range strs {
				keys[foldText(o)] = struct{}{}
			}
		}
		k := foldText(t)
		if _, dup := keys[k]; dup {
			return types.False
		}
		keys[k] = struct{}{}
	}
	return types.True
}

// foldText is s with its case fully folded: lower-cased ASCII as is,
// Unicode text by Unicode's case folding.
func foldText(s string) string {
	if !isASCII(s) {
		return cases.Fold().String(s)
	}
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// PhraseGroup is phrase sets looked for in one text together, indexed by
// their phrases' first words, so that the text is split into words once
// for all of them: a rule that looks for catch-all phrases and then for
// "both" in the same options reads them once. The zero value is empty.
type PhraseGroup struct {
	sets  int
	first map[string][]phraseRest
}

// phraseRest is the words of a phrase after its first, and the bit of
// its set.
type phraseRest struct {
	words []string
	bit   int
}

// maxPhraseGroup is the number of sets a group holds: each has a bit of
// Holds' result.
const maxPhraseGroup = 63

// Add adds set to the group and returns its bit in Holds' result; false
// when the group is full.
func (g *PhraseGroup) Add(set PhraseSet) (bit int, ok bool) {
	if g.sets >= maxPhraseGroup {
		return 0, false
	}
	if g.first == nil {
		g.first = map[string][]phraseRest{}
	}
	bit = g.sets
	g.sets++
	for w, rests := range set {
		for _, r := range rests {
			g.first[w] = append(g.first[w], phraseRest{words: r, bit: bit})
		}
	}
	return bit, true
}

// Holds is PhraseSet.Holds for every set of the group at once: bit k of
// found is set when set k holds; false when x is neither a string nor a
// list.
func (g *PhraseGroup) Holds(x ref.Val) (found uint64, ok bool) {
	all := uint64(1)<<g.sets - 1
	switch y := x.(type) {
	case types.String:
		return g.contains(string(y)), true
	case traits.Lister:
		n, _ := y.Size().(types.Int)
		for i := types.Int(0); i < n && found != all; i++ {
			if s, ok := y.Get(i).(types.String); ok {
				found |= g.contains(string(s))
			}
		}
		return found, true
	}
	return 0, false
}

// contains is PhraseSet.contains for every set of the group at once.
func (g *PhraseGroup) contains(s string) uint64 {
	var stack [256]byte
	var spanStack [32][2]int
	buf, spans := AppendWords(s, stack[:0], spanStack[:0])
	var found uint64
	for i, sp := range spans {
		for _, rest := range g.first[string(buf[sp[0]:sp[1]])] {
			if found&(1<<rest.bit) == 0 && wordsAfter(buf, spans, i, rest.words) {
				found |= 1 << rest.bit
			}
		}
	}
	return found
}
