package syntax

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/contractgateway/gateway/repair/syntax/lex"
	"github.com/google/go-cmp/cmp"
)

// TestRepairLossless covers the shapes of model output that local repair
// used to turn into valid JSON saying something else than the model wrote,
// and the lossless repairs that were missing. A row with lossy set must come
// back marked Lossy (refused), never as a valid document.
func TestRepairLossless(t *testing.T) {
	code := "import { query } from './server';\nconst rows = await query(`SELECT 1`.trim());\nexport default function h() {\n  return { rows };\n}"
	tests := []struct {
		name      string
		in        string
		want      string
		fixers    []string
		lossy     bool
		truncated bool
	}{
		// Backtick strings.
		{name: "backtick string holding code with braces", in: "{\"code\": `" + strings.ReplaceAll(code, "`", "\\`") + "`}",
			want: `{"code": ` + mustJSON(code) + `}`},
		{name: "backtick string", in: "{\"a\": `x \"y\"`, \"b\": 1}",
			want: `{"a": "x \"y\"", "b": 1}`, fixers: []string{FixBacktickString, FixBacktickString}},
		{name: "top-level backtick string", in: "`abc`", want: `"abc"`, fixers: []string{FixBacktickString, FixBacktickString}},

		// Unquoted numeric keys.
		{name: "unquoted numeric keys", in: "{5: \"b\",\n    2.17: \"e\",\n    null: \"n\"}",
			want: "{\"5\": \"b\",\n    \"2.17\": \"e\",\n    \"null\": \"n\"}", fixers: []string{FixQuoteKey, FixQuoteKey, FixQuoteKey}},
		{name: "inner quote never runs across a line break", in: "{\"a\": \"b\",\n \"c\" \"d\"}",
			want: "{\"a\": \"b\",\n \"c\": \"d\"}", fixers: []string{FixInsertColon}},

		// Triple-quoted strings.
		{name: "python triple-quoted string", in: `{"code": """print("Hi")"""}`,
			want: `{"code": "print(\"Hi\")"}`, fixers: []string{FixTripleQuote, FixTripleQuote}},
		{name: "triple-quoted string with raw newlines", in: "{\"code\": \"\"\"print(\"Hi\")\nprint('x')\"\"\", \"n\": 1}",
			want: `{"code": "print(\"Hi\")\nprint('x')", "n": 1}`, fixers: []string{FixTripleQuote, FixEscapeControl, FixTripleQuote}},
		{name: "single triple-quoted string", in: "{'code': '''a = \"b\"\n'''}",
			want: `{"code": "a = \"b\"\n"}`, fixers: []string{FixNormalizeQuotes, FixNormalizeQuotes, FixTripleQuote, FixEscapeControl, FixTripleQuote}},
		{name: "triple quotes closing after a quote", in: `["""say "hi""""]`,
			want: `["say \"hi\""]`, fixers: []string{FixTripleQuote, FixTripleQuote}},

		// A fenced code block used as a value.
		{name: "fenced code block as a value", in: "{\"code\": ```python\nprint(\"Hi\")\nx = {1: 2}\n```,\n \"n\": 1}",
			want: "{\"code\": \"print(\\\"Hi\\\")\\nx = {1: 2}\",\n \"n\": 1}", fixers: []string{FixCodeBlock, FixEscapeControl, FixCodeBlock}},
		{name: "fence markers with nothing to close them end the document", in: "{\"a\": ``````}", want: "{}", lossy: false, truncated: true},
		{name: "top-level string with an inner quote before a line break", in: "\"\"0\n\"", want: `""`, fixers: []string{FixStripProse}},
		{name: "code block as a value inside a json fence", in: "Here:\n```json\n{\"code\": ```python\nprint(1)\n```\n}\n```\nDone.",
			want: "{\"code\": \"print(1)\"\n}", fixers: []string{FixStripProse, FixStripFence, FixCodeBlock, FixCodeBlock, FixStripFence, FixStripProse}},
		{name: "fenced code block as the last value", in: "{\"code\": ```\nls -l\n```\n}",
			want: "{\"code\": \"ls -l\"\n}", fixers: []string{FixCodeBlock, FixCodeBlock}},

		// Numbers with more text after them.
		{name: "thousands separator", in: `{"a": 12,111}`, want: `{"a": "12,111"}`, fixers: []string{FixQuoteValue}},
		{name: "thousands separator and fraction", in: `{"a": 12,111.123, "b": 1}`, want: `{"a": "12,111.123", "b": 1}`, fixers: []string{FixQuoteValue}},
		{name: "fraction", in: `{"a": 1/5}`, want: `{"a": "1/5"}`, fixers: []string{FixQuoteValue}},
		{name: "number and unit", in: `{"a": 1 cup butter, "b": 2}`, want: `{"a": "1 cup butter", "b": 2}`, fixers: []string{FixQuoteValue}},
		{name: "number or number", in: `{"a": 2 or 3}`, want: `{"a": "2 or 3"}`, fixers: []string{FixQuoteValue}},
		{name: "numbers and units in an array", in: `[1 cup, 2 eggs,]`, want: `["1 cup", "2 eggs"]`, fixers: []string{FixQuoteValue, FixQuoteValue, FixRemoveTrailingComma}},
		{name: "top-level thousands separator", in: `12,111`, want: `"12,111"`, fixers: []string{FixQuoteValue}},
		{name: "top-level fraction", in: `1/5`, want: `"1/5"`, fixers: []string{FixQuoteValue}},
		{name: "top-level number and unit", in: `1 cup butter`, want: `"1 cup butter"`, fixers: []string{FixQuoteValue}},
		{name: "top-level number or number", in: `2 or 3`, want: `"2 or 3"`, fixers: []string{FixQuoteValue}},
		{name: "numbers without commas stay numbers", in: `[1 2, 3 true]`, want: `[1, 2, 3, true]`, fixers: []string{FixInsertComma, FixInsertComma}},
		{name: "number then a key stays a missing comma", in: `{"a": 1 b: 2}`, want: `{"a": 1, "b": 2}`, fixers: []string{FixInsertComma, FixQuoteKey}},

		// Top-level literals.
		{name: "top-level True", in: `True`, want: `true`, fixers: []string{FixLiteral}},
		{name: "top-level False with a remark", in: "False\n\nThe claim does not hold.", want: `false`, fixers: []string{FixLiteral, FixStripProse}},
		{name: "top-level None", in: ` None `, want: `null`, fixers: []string{FixLiteral}},

		// Refusals: text of the value would be lost.
		{name: "digits no token can take", in: `{"a": 2 5}`, lossy: true},
		{name: "three quotes that nothing closes", in: `{"a": """x"}`, lossy: true},
		{name: "four quotes that nothing closes", in: `{0""""}`, lossy: true},
		{name: "the value goes on into what looks like prose", in: "{\"code\": import { query } from './server'; done}", lossy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Repair([]byte(tt.in), Options{})
			if err != nil {
				t.Fatalf("Repair(%q) error: %v", tt.in, err)
			}
			if got.Lossy != tt.lossy || got.Truncated != tt.truncated {
				t.Fatalf("Repair(%q) Lossy, Truncated = %v, %v, want %v, %v (text %s)", tt.in, got.Lossy, got.Truncated, tt.lossy, tt.truncated, got.Text)
			}
			checkLossless(t, []byte(tt.in), Options{})
			if tt.lossy {
				return
			}
			if string(got.Text) != tt.want {
				t.Errorf("Repair(%q).Text =\n%s\nwant\n%s", tt.in, got.Text, tt.want)
			}
			if tt.fixers != nil {
				if diff := cmp.Diff(tt.fixers, fixers(got.Changes)); diff != "" {
					t.Errorf("Repair(%q) fixers (-want +got):\n%s", tt.in, diff)
				}
			}
			if !json.Valid(got.Text) {
				t.Errorf("Repair(%q).Text is not valid JSON: %s", tt.in, got.Text)
			}
		})
	}
}

func mustJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestRepairSyntaxLosslessInvariant checks the invariant on every input of
// the syntax corpus and on generated broken documents.
func TestRepairSyntaxLosslessInvariant(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "syntax", "*.in"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkLossless(t, b, Options{ExpectContainer: true})
		checkLossless(t, b, Options{})
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		in := corrupt(r, genJSON(r, 0, r.IntN(2) == 0))
		checkLossless(t, in, Options{})
	}
}

// checkLossless asserts the invariant of local repair: when Repair returns
// a document it does not mark Truncated or Lossy, the scalar tokens of the
// output (keys, strings, numbers, literals) are, in order, the model's text:
// each string is the input's text changed only by escaping, each number and
// literal the input's one or its documented conversion (+1, .5, 1., None,
// True, NaN …), null may stand for a value the model left out, and what the
// input holds between them is syntax only: white space, brackets, commas,
// colons, quote marks, comments, fence markers, runs of punctuation, and
// the prose and think sections stripped around the value. Every letter and
// digit of the value must therefore reach the output. Two more rules catch a
// string that swallowed its neighbours: an inner quote made content never
// runs across a line break to the next quote, and the text stripped after
// the value does not close a bracket after words, which would mean the
// value went on there.
func checkLossless(t *testing.T, in []byte, opt Options) {
	t.Helper()
	if msg := losslessProblem(in, opt); msg != "" {
		t.Errorf("Repair(%q): %s", in, msg)
	}
}

func losslessProblem(in []byte, opt Options) string {
	got, err := Repair(in, opt)
	if err != nil || got.Truncated || got.Lossy {
		return ""
	}
	run, err := repairDoc(in, opt, true)
	if err != nil {
		return "repairDoc failed where Repair did not: " + err.Error()
	}
	src := in
	var skips []rawSpan
	for _, r := range run.log.raw {
		if r.fixer == fxUnstringify {
			// The model's text is the content of the string.
			dec, _, _ := lex.DecodeString(in, r.off)
			inner, err := Repair(dec, Options{})
			if err != nil || !bytes.Equal(inner.Text, got.Text) {
				return "unstringified document differs from its content's repair"
			}
			return losslessProblem(dec, Options{})
		}
		switch r.fixer {
		case fxStripThink, fxStripFence, fxStripProse, fxRemoveComment:
			skips = append(skips, r)
		}
	}
	sortSpans(skips)
	if last := lastProse(src, skips); last >= 0 && valueGoesOnIn(src[skips[last].off:skips[last].end]) {
		return fmt.Sprintf("the text stripped as prose closes a bracket after words: %q", src[skips[last].off:skips[last].end])
	}
	toks, err := outputTokens(got.Text)
	if err != nil {
		return "output does not tokenize: " + err.Error()
	}
	a := aligner{src: src, skips: skips, toks: toks, failed: map[[2]int]bool{}}
	if !a.align(0, 0) {
		return a.why
	}
	return ""
}

// lastProse returns the index of the strip_prose span that ends the
// input (the text after the value), or -1.
func lastProse(src []byte, skips []rawSpan) int {
	k := len(skips) - 1
	if k < 0 || skips[k].fixer != fxStripProse || lex.SkipWS(src, skips[k].end) < len(src) {
		return -1
	}
	return k
}

// valueGoesOnIn is the test's own reading of stripped text: a closing
// bracket that nothing in the text opened, after a letter or digit.
func valueGoesOnIn(b []byte) bool {
	depth, words := 0, false
	for _, r := range string(b) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			words = true
		case r == '{' || r == '[':
			depth++
		case r == '}' || r == ']':
			if depth > 0 {
				depth--
			} else if words {
				return true
			}
		}
	}
	return false
}

// tok is one scalar token of the output: a string (key or value), a
// number as written, or a literal.
type tok struct {
	kind byte // 's', 'n', 'l'
	text string
}

func outputTokens(out []byte) ([]tok, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var toks []tok
	for {
		x, err := dec.Token()
		if err == io.EOF {
			return toks, nil
		}
		if err != nil {
			return nil, err
		}
		switch v := x.(type) {
		case string:
			toks = append(toks, tok{'s', v})
		case json.Number:
			toks = append(toks, tok{'n', string(v)})
		case bool:
			toks = append(toks, tok{'l', fmt.Sprint(v)})
		case nil:
			toks = append(toks, tok{'l', "null"})
		}
	}
}

// aligner walks the input while the output's tokens are matched in order.
type aligner struct {
	src    []byte
	p      int
	skips  []rawSpan
	sk     int
	toks   []tok
	failed map[[2]int]bool // (token, input offset) states that failed
	// from is where the token being found may start: the end of the
	// previous token's text, the closing quote of a previous string
	// (afterStr), which is never the first of three quotes opening the
	// next one.
	from     int
	afterStr bool
	why      string
}

// pastStripped returns the end of the stripped region (prose, think
// section, fence, comment) that holds p, or p: no token is read there.
func (a *aligner) pastStripped(p int) int {
	for a.sk < len(a.skips) && a.skips[a.sk].end <= p {
		a.sk++
	}
	for a.sk < len(a.skips) && a.skips[a.sk].off <= p && a.skips[a.sk].end > p {
		p = a.skips[a.sk].end
		a.sk++
	}
	return p
}

// skippable returns the end of a unit of syntax at p, or p when the text
// there is value text.
func (a *aligner) skippable(p int) int {
	src := a.src
	for a.sk < len(a.skips) && a.skips[a.sk].end <= p {
		a.sk++
	}
	if a.sk < len(a.skips) && a.skips[a.sk].off <= p && a.skips[a.sk].end > p {
		return a.skips[a.sk].end
	}
	if bytes.HasPrefix(src[p:], []byte("```")) {
		e := p + 3
		for e < len(src) && src[e] == '`' {
			e++
		}
		for e < len(src) && (lex.IsIdent(src[e]) || src[e] == '-' || src[e] == '+') {
			e++ // the fence's language
		}
		return e
	}
	r, n := utf8.DecodeRune(src[p:])
	if r == utf8.RuneError && n == 1 {
		return p + 1 // a byte that is no character
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return p
	}
	return p + n
}

// skipSyntaxTo skips syntax from a.p, up to limit, and returns where it
// stopped.
func (a *aligner) skipSyntaxTo(limit int) int {
	for a.p < limit {
		e := a.skippable(a.p)
		if e == a.p {
			break
		}
		a.p = e
	}
	return a.p
}

// align reports whether the output's tokens from k on are the input's
// text from p on. A null may be the input's literal or stand for a value
// the model left out; both readings are tried, the literal first, and a
// state that failed once is not tried again, so the search stays
// polynomial.
func (a *aligner) align(k, p int) bool {
	if k == len(a.toks) {
		a.p, a.sk = p, 0
		if e := a.skipSyntaxTo(len(a.src)); e < len(a.src) {
			a.fail(fmt.Sprintf("input text %q after the last token is not in the output", frag(a.src[e:])))
			return false
		}
		return true
	}
	if a.failed[[2]int{k, p}] {
		return false
	}
	tk := a.toks[k]
	if e, ok := a.find(tk, p, k > 0 && a.toks[k-1].kind == 's'); ok && a.align(k+1, e) {
		return true
	}
	if tk.kind == 'l' && tk.text == "null" && a.align(k+1, p) {
		return true // a value the model left out
	}
	a.failed[[2]int{k, p}] = true
	return false
}

// fail keeps the first reason the alignment failed.
func (a *aligner) fail(msg string) {
	if a.why == "" {
		a.why = msg
	}
}

// find looks for the token at p and at each place after it that the syntax
// before it allows, the earliest first (a string may start with a quote
// the syntax could take), and returns the end of the match.
func (a *aligner) find(tk tok, p int, afterStr bool) (int, bool) {
	a.p, a.sk, a.from, a.afterStr = p, 0, p, afterStr
	for {
		a.p = a.pastStripped(a.p)
		if e, ok := a.matchAt(tk, a.p); ok {
			return e, true
		}
		if a.p >= len(a.src) {
			break
		}
		e := a.skippable(a.p)
		if e == a.p {
			break
		}
		if t := fenceTagStart(a.src, a.p); t > a.p && t < e {
			// What follows the backticks may be the value's text, a code
			// block as a value (```00```), not a fence's tag.
			if m, ok := a.matchAt(tk, t); ok {
				return m, true
			}
		}
		a.p = e
	}
	if !(tk.kind == 'l' && tk.text == "null") {
		a.fail(fmt.Sprintf("output token %s %q is not the input's text at %d: %q", string(tk.kind), tk.text, p, frag(a.src[p:min(len(a.src), p+80)])))
	}
	return p, false
}

func (a *aligner) matchAt(tk tok, p int) (int, bool) {
	src := a.src
	switch tk.kind {
	case 'l':
		e := p
		if e < len(src) && (src[e] == '-' || src[e] == '+') {
			e++
		}
		w := e
		for w < len(src) && lex.IsIdent(src[w]) {
			w++
		}
		if w > e && lex.LiteralFor(src[e:w]) == tk.text && (e == p || tk.text == "null") {
			return w, true
		}
		return p, false
	case 'n':
		e := p
		for e < len(src) && (lex.IsDigit(src[e]) || strings.IndexByte("+-.eE", src[e]) >= 0) {
			e++
		}
		// A lone point is a character the repair dropped, never the
		// number 0.0 that normNumber would spell it as.
		w := string(src[p:e])
		if w == tk.text || strings.ContainsAny(w, "0123456789") && normNumber(w) == tk.text {
			return e, true
		}
		return p, false
	}
	return a.matchString(tk.text, p)
}

// normNumber spells a number the way number_format does: no leading '+',
// a 0 before a leading point and after a trailing one.
func normNumber(w string) string {
	w = strings.TrimPrefix(w, "+")
	neg := strings.HasPrefix(w, "-")
	w = strings.TrimPrefix(w, "-")
	if strings.HasPrefix(w, ".") {
		w = "0" + w
	}
	if i := strings.IndexByte(w, '.'); i >= 0 && (i+1 == len(w) || !lex.IsDigit(w[i+1])) {
		w = w[:i+1] + "0" + w[i+1:]
	}
	if neg {
		w = "-" + w
	}
	return w
}

// matchString matches s against the input at p, each character written
// as it is or escaped.
func (a *aligner) matchString(s string, p int) (int, bool) {
	src := a.src
	p0 := p
	e, ok := a.matchContent(s, p, false)
	if !ok {
		// Text copied as it is, as a bare value is: its backslashes are
		// characters, not escapes.
		if e, ok = a.matchContent(s, p, true); !ok {
			return p, false
		}
	}
	// Three quotes opening a string where a value or key starts are its
	// delimiter (""" or its single-quoted form), never a quote and two
	// quotes of text.
	for _, q := range []byte{'"', '\''} {
		d1, c1 := runBack(src, p0, q), runFwd(src, p0, e, q)
		if a.afterStr && d1 > 0 && p0-d1 == a.from {
			d1-- // the previous string's closing quote
		}
		if c1 > 0 && d1+c1 >= 3 && d1 < 3 && tokenStarts(src, p0-d1) {
			return p, false
		}
	}
	return e, true
}

// fenceTagStart returns where the tag of a fence at p would start, past
// its backticks, or p when no fence starts there.
func fenceTagStart(src []byte, p int) int {
	if !bytes.HasPrefix(src[p:], []byte("```")) {
		return p
	}
	t := p + 3
	for t < len(src) && src[t] == '`' {
		t++
	}
	return t
}

// tokenStarts reports whether a token may start at i: what precedes it,
// past white space, is the start of the input or a bracket, colon or
// comma.
func tokenStarts(src []byte, i int) bool {
	k := i - 1
	for k >= 0 && lex.IsWS(src[k]) {
		k--
	}
	return k < 0 || strings.IndexByte("{[:,", src[k]) >= 0
}

// runBack counts the bytes q just before i; runFwd those from i on, up to
// end.
func runBack(b []byte, i int, q byte) int {
	n := 0
	for i-n > 0 && b[i-n-1] == q {
		n++
	}
	return n
}

func runFwd(b []byte, i, end int, q byte) int {
	n := 0
	for i+n < end && b[i+n] == q {
		n++
	}
	return n
}

func (a *aligner) matchContent(s string, p int, raw bool) (int, bool) {
	src := a.src
	dq := p > 0 && src[p-1] == '"' && !(p > 2 && string(src[p-3:p]) == `"""`)
	inner := 0 // raw quotes taken as content, in a "…" string
	for _, r := range s {
		if p >= len(src) {
			return p, false
		}
		if src[p] == '\\' && !raw {
			if d, n := unescape(src[p:]); n > 0 && d == r {
				p += n
				continue
			}
			if r == '\\' {
				p++
				continue
			}
			return p, false
		}
		c, n := utf8.DecodeRune(src[p:])
		switch {
		case c == r && !(c == utf8.RuneError && n == 1):
		case r == utf8.RuneError && c == utf8.RuneError && n == 1:
		default:
			return p, false
		}
		if dq && c == '"' {
			inner++
		}
		if dq && inner%2 == 1 && (c == '\n' || c == '\r') {
			return p, false // an inner quote ran across a line break
		}
		p += n
	}
	return p, true
}

// unescape decodes an escape at the start of b as the repair reads it:
// JSON's escapes, \' and the markdown escapes (\_ → _).
func unescape(b []byte) (rune, int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch e := b[1]; e {
	case '"', '\\', '/', '\'', '`':
		return rune(e), 2
	case 'n':
		return '\n', 2
	case 't':
		return '\t', 2
	case 'r':
		return '\r', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'u':
		if r, n := lex.DecodeU(b); n > 0 {
			return r, n
		}
	default:
		if lex.IsMarkdownEscape(e) {
			return rune(e), 2
		}
	}
	return 0, 0
}
