package lex

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestQuoteAt(t *testing.T) {
	tests := []struct {
		in   string
		i    int
		kind Quote
		size int
	}{
		{`"a"`, 0, DoubleQuote, 1},
		{`'a'`, 0, SingleQuote, 1},
		{"`a`", 0, Backtick, 1},
		{"```json", 0, NoQuote, 0},
		{"“a”", 0, CurlyQuote, 3},
		{"„a“", 0, CurlyQuote, 3},
		{"‘a’", 0, CurlySingle, 3},
		{"«a»", 0, Guillemet, 2},
		{"a", 0, NoQuote, 0},
		{"\xe2\x80", 0, NoQuote, 0},
		{"x»", 1, Guillemet, 2},
	}
	for _, tt := range tests {
		kind, size := QuoteAt([]byte(tt.in), tt.i)
		if kind != tt.kind || size != tt.size {
			t.Errorf("QuoteAt(%q, %d) = %d, %d, want %d, %d", tt.in, tt.i, kind, size, tt.kind, tt.size)
		}
	}
}

func TestLiterals(t *testing.T) {
	tests := []struct {
		word   string
		json   string
		prefix bool
	}{
		{"true", "true", false},
		{"True", "true", false},
		{"FALSE", "false", false},
		{"None", "null", false},
		{"undefined", "null", false},
		{"NaN", "null", false},
		{"Tru", "", true},
		{"undef", "", true},
		{"yes", "", false},
		{"nulls", "", false},
	}
	for _, tt := range tests {
		if got := LiteralFor([]byte(tt.word)); got != tt.json {
			t.Errorf("LiteralFor(%q) = %q, want %q", tt.word, got, tt.json)
		}
		if got := LiteralPrefix([]byte(tt.word)); got != tt.prefix {
			t.Errorf("LiteralPrefix(%q) = %v, want %v", tt.word, got, tt.prefix)
		}
		if got, want := LiteralAt([]byte(tt.word+", 1"), 0), tt.json != ""; got != want {
			t.Errorf("LiteralAt(%q, 0) = %v, want %v", tt.word+", 1", got, want)
		}
	}
}

func TestOpensValue(t *testing.T) {
	tests := []struct {
		in      string
		atStart bool
		want    bool
	}{
		{`{"a": 1}`, false, true},
		{`{'a': 1}`, false, true},
		{`{a: 1}`, false, true},
		{`{name}`, false, false},
		{`{name}`, true, true},
		{`{}`, false, true},
		{`{`, false, true},
		{`{// note`, false, true},
		{`[1, 2]`, false, true},
		{`[1]`, false, false},
		{`[2][3]`, false, false},
		{`[true]`, false, true},
		{`[]`, false, true},
		{`[Note]`, true, false},
		{`[5]`, true, true},
		{`[{"a": 1}]`, false, true},
		{`{v1.2: 1}`, false, true}, // the key the scanner reads and quotes
		{`{größe-2: 1}`, false, true},
		{`{a.b: 1}`, false, false},
		{`{v1.2}`, false, false},
	}
	for _, tt := range tests {
		if got := OpensValue([]byte(tt.in), 0, tt.atStart); got != tt.want {
			t.Errorf("OpensValue(%q, 0, %v) = %v, want %v", tt.in, tt.atStart, got, tt.want)
		}
	}
}

func TestBareKeyEnd(t *testing.T) {
	tests := []struct {
		in, want string // want: the key BareKeyEnd reads at 0
	}{
		{`user_name: 1`, `user_name`},
		{`x-y:1`, `x-y`},
		{`v1.2: 1`, `v1.2`},
		{`a.b: 1`, `a`},
		{`a.`, `a`},
		{`größe: 1`, `größe`},
		{`数量２: 1`, `数量２`},
		{`: 1`, ``},
		{`名 前`, `名`},
	}
	for _, tt := range tests {
		if got := tt.in[:BareKeyEnd([]byte(tt.in), 0)]; got != tt.want {
			t.Errorf("BareKeyEnd(%q, 0) reads %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuoteEnds(t *testing.T) {
	// Each input holds the text after a quote inside a string; q is 0.
	tests := []struct {
		after string
		ctx   Ctx
		want  bool
	}{
		{`}`, CtxObj, true},
		{`, "b": 2}`, CtxObj, true},
		{` said`, CtxObj, false},
		{`>link</a>"}`, CtxObj, false},
		{`, "b" is valid?"}`, CtxObj, false},
		{`, 2]`, CtxArr, true},
		{`, and more"]`, CtxArr, false},
		{"\n  \"next\": 1}", CtxObj, true},
		{"\n  next: 1}", CtxObj, true},
		{"\n  more text\"}", CtxObj, false},
		{"\n  3]", CtxArr, true},
		{``, CtxObj, true},
		{" ```", CtxObj, true},
		{` anything`, CtxKey, true},
		{` tail`, CtxTop, false},
		{"\ntail", CtxTop, true},
		{` // note`, CtxObj, true},
	}
	for _, tt := range tests {
		if got := QuoteEnds([]byte(tt.after), 0, tt.ctx); got != tt.want {
			t.Errorf("QuoteEnds(%q, 0, %d) = %v, want %v", tt.after, tt.ctx, got, tt.want)
		}
	}
}

func TestNumberText(t *testing.T) {
	tests := []struct {
		in        string
		container byte
		want      string // the text the number at 0 begins
	}{
		{`12,111 people`, '{', `12,111 people`},
		{`12,111]`, '[', `12`},
		{`1/5}`, '{', `1/5`},
		{"1 cup butter,\n", '{', `1 cup butter`},
		{`2 or 3]`, '[', `2 or 3`},
		{`5, "b": 1}`, '{', `5`},
		{`5 true`, '[', `5`},
		{`5 next: 1`, '{', `5`},
		{`42`, 0, `42`},
	}
	for _, tt := range tests {
		src := []byte(tt.in)
		j := 0
		for j < len(src) && IsDigit(src[j]) {
			j++
		}
		got := string(src[:NumberText(src, 0, j, j, tt.container)])
		if got != tt.want {
			t.Errorf("NumberText(%q, container %q) = %q, want %q", tt.in, tt.container, got, tt.want)
		}
	}
}

func TestShortKeyAt(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`"next": 1`, true},
		{`next : 1`, true},
		{`"next" 1`, false},
		{"\"ne\nxt\": 1", false},
		{`"` + string(bytes.Repeat([]byte("k"), 300)) + `": 1`, false},
		{`{"a": 1}`, false},
	}
	for _, tt := range tests {
		if got := ShortKeyAt([]byte(tt.in), 0); got != tt.want {
			t.Errorf("ShortKeyAt(%q, 0) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestQuoteGap(t *testing.T) {
	tests := []struct {
		in     string
		end    int
		breaks bool
	}{
		{`b",` + "\n" + ` 2.17: "e"}`, 1, false},
		{"b,\n 2.17: \"e\"}", 2, true},
		{"b,\r\n", 2, true},
		{`say \"hi\" now"`, 14, false},
		{`open`, 4, false},
	}
	for _, tt := range tests {
		end, breaks := QuoteGap([]byte(tt.in), 0)
		if end != tt.end || breaks != tt.breaks {
			t.Errorf("QuoteGap(%q, 0) = %d, %v, want %d, %v", tt.in, end, breaks, tt.end, tt.breaks)
		}
	}
}

func TestKeyCloses(t *testing.T) {
	tests := []struct {
		in     string // from the colon inside the key
		end    int
		closes bool
	}{
		{`: 10:30": 2`, 7, true},
		{`: 1": "x"`, 3, true},
		{`: 3, "next": 4`, 5, false},
		{": 3,\n\"next\": 4", 4, false},
		{`: 3`, 3, false},
	}
	for _, tt := range tests {
		end, closes := KeyCloses([]byte(tt.in), 0)
		if end != tt.end || closes != tt.closes {
			t.Errorf("KeyCloses(%q, 0) = %d, %v, want %d, %v", tt.in, end, closes, tt.end, tt.closes)
		}
	}
}

func TestDecodeString(t *testing.T) {
	tests := []struct {
		in   string
		want string
		end  int
	}{
		{`"{\"a\": 1}" tail`, `{"a": 1}`, 12},
		{`"tab\there"`, "tab\there", 11},
		{`"\u00e9\ud83d\ude00"`, "é😀", 20},
		{`"\ud83d"`, "\uFFFD", 8},
		{`"C:\Users"`, `C:\Users`, 10},
		{`"open`, `open`, 5},
	}
	for _, tt := range tests {
		dec, offs, end := DecodeString([]byte(tt.in), 0)
		if string(dec) != tt.want || end != tt.end || len(offs) != len(dec)+1 {
			t.Errorf("DecodeString(%q, 0) = %q, %d offsets, %d, want %q, %d offsets, %d",
				tt.in, dec, len(offs), end, tt.want, len(tt.want)+1, tt.end)
		}
	}
}

// checkLex checks what every reader of src promises at every offset: it
// never reads out of bounds, and what it returns lies inside src.
func checkLex(t *testing.T, src []byte) {
	t.Helper()
	if lo, hi := TrimBounds(src); lo > hi || hi > len(src) {
		t.Fatalf("TrimBounds(%q) = %d, %d", src, lo, hi)
	}
	ValueGoesOn(src)
	HasWordChar(src)
	for i := range src {
		kind, size := QuoteAt(src, i)
		if (kind == NoQuote) != (size == 0) || i+size > len(src) {
			t.Fatalf("QuoteAt(%q, %d) = %d, %d", src, i, kind, size)
		}
		if j := SkipWS(src, i); j < i || j > len(src) {
			t.Fatalf("SkipWS(%q, %d) = %d", src, i, j)
		}
		for _, ctx := range []Ctx{CtxTop, CtxKey, CtxObj, CtxArr} {
			QuoteEnds(src, i, ctx)
		}
		if src[i] == '{' || src[i] == '[' {
			OpensValue(src, i, true)
			OpensValue(src, i, false)
		}
		if IsDigit(src[i]) {
			j := i
			for j < len(src) && IsDigit(src[j]) {
				j++
			}
			for _, c := range []byte{0, '{', '['} {
				if k := NumberText(src, i, j, j-i, c); k < j || k > len(src) {
					t.Fatalf("NumberText(%q, %d, %d) = %d", src, i, j, k)
				}
			}
		}
		if end, _ := QuoteGap(src, i); end < i || end > len(src) {
			t.Fatalf("QuoteGap(%q, %d) = %d", src, i, end)
		}
		if end, _ := KeyCloses(src, i); end < i || end > len(src) {
			t.Fatalf("KeyCloses(%q, %d) = %d", src, i, end)
		}
		LiteralAt(src, i)
		bareKeyAt(src, i)
		ShortKeyAt(src, i)
		EndsWord(src, i)
		memberEndAt(src, i)
		IsLetterAt(src, i)
		if j, k, ok := CommaAfter(src, i); ok && (src[j] != ',' || k <= j || k >= len(src)) {
			t.Fatalf("CommaAfter(%q, %d) = %d, %d", src, i, j, k)
		}
	}
	if len(src) > 0 && src[0] == '"' {
		dec, offs, end := DecodeString(src, 0)
		if len(offs) != len(dec)+1 || end < 1 || end > len(src) {
			t.Fatalf("DecodeString(%q) = %q, %d offsets, end %d", src, dec, len(offs), end)
		}
		for k := 1; k < len(offs); k++ {
			if offs[k] < offs[k-1] || offs[k] > len(src) {
				t.Fatalf("DecodeString(%q): offsets %v not ascending inside the input", src, offs)
			}
		}
	}
	// Escaping gives a JSON string that decodes back to the text, invalid
	// UTF-8 replaced.
	esc := append(append([]byte{'"'}, AppendEscaped(nil, src)...), '"')
	if !strictjson.Valid(esc) {
		t.Fatalf("AppendEscaped(%q) = %s, not a JSON string", src, esc)
	}
	if utf8.Valid(src) {
		if dec, _, _ := DecodeString(esc, 0); !bytes.Equal(dec, src) {
			t.Fatalf("DecodeString(AppendEscaped(%q)) = %q", src, dec)
		}
	}
}

func TestLexReadsInBounds(t *testing.T) {
	for _, s := range lexSeeds {
		checkLex(t, []byte(s))
	}
}

var lexSeeds = []string{
	"", `{"a": 1}`, `{'a': True, b: None}`, "“x” «y» ‘z’ `w` ```json\n{}\n```",
	"[1, 2,3, 12,111 people, 1/5]", `{"key: "value", "n"` + "\x00\xff", "\xe2\x80\x9c\xc2",
	`"{\"a\": \u00e9\ud83d}"`, "{\"q\": \"Which of \"a\", \"b\"\n next: 1}", "\"C:\\Users\\\"",
}

// FuzzLex checks that every reader of the package stays inside its input
// and that escaping round-trips, whatever the input holds.
func FuzzLex(f *testing.F) {
	for _, s := range lexSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 4096 {
			return // every offset is tried, so keep the quadratic bounded
		}
		checkLex(t, src)
	})
}
