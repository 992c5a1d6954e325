package syntax

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/repair/syntax/lex"
	"github.com/contractgateway/gateway/validators/strictjson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// fixers lists the Fixer of each change, in order.
func fixers(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Fixer)
	}
	return out
}

func TestRepairSyntax(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		opt     Options
		want    string
		fixers  []string
		missing string // non-empty: the output is truncated
	}{
		// Around the value.
		{name: "prose before and after", in: "Here is the JSON you asked for:\n{\"a\": 1}\nLet me know if you need more.",
			want: `{"a": 1}`, fixers: []string{FixStripProse, FixStripProse}},
		{name: "json fence", in: "```json\n{\"a\": 1}\n```",
			want: `{"a": 1}`, fixers: []string{FixStripFence, FixStripFence}},
		{name: "plain fence", in: "```\n[1, 2]\n```",
			want: `[1, 2]`, fixers: []string{FixStripFence, FixStripFence}},
		{name: "json fence preferred over earlier prose braces", in: "Use {placeholders} like [this].\n```json\n{\"a\": 1}\n```\nDone.",
			want: `{"a": 1}`, fixers: []string{FixStripProse, FixStripFence, FixStripFence, FixStripProse}},
		{name: "python fence is not the answer", in: "```python\nx = {'a': 1}\n```\nResult: {\"a\": 2}",
			want: `{"a": 2}`, fixers: []string{FixStripProse}},
		{name: "think section", in: "<think>\nThe user wants {a}. Let me write [it].\n</think>\n\n{\"a\": 1}",
			want: `{"a": 1}`, fixers: []string{FixStripThink}},
		{name: "think then fence then prose", in: "<think>ok</think>Sure.\n```json\n{\"a\": 1}\n```",
			want: `{"a": 1}`, fixers: []string{FixStripThink, FixStripProse, FixStripFence, FixStripFence}},
		{name: "orphan closing think tag", in: "The user wants an object.\n</think>\n{\"a\": 1}",
			want: `{"a": 1}`, fixers: []string{FixStripThink}},
		{name: "backticks inside a string do not close the fence before it", in: "Note: ``` starts code.\n```\n{\"q\": \"Which ``` marks a block?\", \"a\": 1,}\n```",
			want: "{\"q\": \"Which ``` marks a block?\", \"a\": 1}", fixers: []string{FixStripProse, FixStripFence, FixRemoveTrailingComma, FixStripFence}},
		{name: "a quoted <think> inside prose is not a section", in: "The tag <think> opens reasoning. Answer: {\"a\": 1}",
			want: `{"a": 1}`, fixers: []string{FixStripProse}},
		{name: "one-line fence", in: "```json {\"a\": 1}```",
			want: `{"a": 1}`, fixers: []string{FixStripFence, FixStripFence}},
		{name: "footnote in prose skipped", in: "As shown in [1], the result is {\"a\": 1}.",
			want: `{"a": 1}`, fixers: []string{FixStripProse, FixStripProse}},

		// Comments and commas.
		{name: "line comment", in: "{\"a\": 1, // the count\n\"b\": 2}",
			want: "{\"a\": 1, \n\"b\": 2}", fixers: []string{FixRemoveComment}},
		{name: "block comment", in: `{"a": /* one */ 1}`,
			want: `{"a":  1}`, fixers: []string{FixRemoveComment}},
		{name: "comment markers inside strings stay", in: `{"url": "http://x.org/*y*/", "a": 1,}`,
			want: `{"url": "http://x.org/*y*/", "a": 1}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "trailing comma in array", in: `[1,2,]`, want: `[1,2]`, fixers: []string{FixRemoveTrailingComma}},
		{name: "trailing comma in object", in: `{"a":1,}`, want: `{"a":1}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "trailing comma before whitespace", in: "[\n  1,\n  2,\n]", want: "[\n  1,\n  2\n]", fixers: []string{FixRemoveTrailingComma}},
		{name: "doubled comma", in: `[1,,2]`, want: `[1,2]`, fixers: []string{FixRemoveExtraComma}},
		{name: "leading comma", in: `[,1]`, want: `[1]`, fixers: []string{FixRemoveExtraComma}},
		{name: "doubled comma in object", in: `{"a":1,,"b":2}`, want: `{"a":1,"b":2}`, fixers: []string{FixRemoveExtraComma}},
		{name: "missing comma between members", in: `{"a":1 "b":2}`, want: `{"a":1, "b":2}`, fixers: []string{FixInsertComma}},
		{name: "missing comma between numbers", in: `[1 2]`, want: `[1, 2]`, fixers: []string{FixInsertComma}},
		{name: "missing comma between objects on lines", in: "[\n{\"a\":1}\n{\"a\":2}\n]",
			want: "[\n{\"a\":1},\n{\"a\":2}\n]", fixers: []string{FixInsertComma}},
		{name: "missing comma after string on next line", in: "{\"a\": \"x\"\n\"b\": \"y\"}",
			want: "{\"a\": \"x\",\n\"b\": \"y\"}", fixers: []string{FixInsertComma}},

		// DeepSeek.
		{name: "swallowed colon", in: `{"query: "golang generics"}`,
			want: `{"query": "golang generics"}`, fixers: []string{FixInsertColon}},
		{name: "swallowed colon without space", in: `{"anchor_text:"Go"}`,
			want: `{"anchor_text":"Go"}`, fixers: []string{FixInsertColon}},
		{name: "swallowed colon before array", in: `{"subsections: ["a", "b"]}`,
			want: `{"subsections": ["a", "b"]}`, fixers: []string{FixInsertColon}},
		{name: "swallowed colon before number", in: `{"section_order: 3}`,
			want: `{"section_order": 3}`, fixers: []string{FixInsertColon}},
		{name: "colon inside the key's quotes", in: `{"key:" "value", "n:" 2}`,
			want: `{"key": "value", "n": 2}`, fixers: []string{FixInsertColon, FixInsertColon}},
		{name: "missing colon between strings", in: `{"key" "value"}`,
			want: `{"key": "value"}`, fixers: []string{FixInsertColon}},
		{name: "colon inside key kept", in: `{"a:b": 1, "time: 10:30": 2}`,
			want: `{"a:b": 1, "time: 10:30": 2}`},
		{name: "colon and number inside a key that closes", in: `{"time: 10:30": 2, "ratio: 3 to 1": "x",}`,
			want: `{"time: 10:30": 2, "ratio: 3 to 1": "x"}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "escaped quote inside a key that closes", in: `{"say \"x: 1\"": 2,}`,
			want: `{"say \"x: 1\"": 2}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "numbered keys", in: `{"step: 1": "x", "step: 2": [true],}`,
			want: `{"step: 1": "x", "step: 2": [true]}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "swallowed colon before number, next key", in: `{"section_order: 3, "title": "x"}`,
			want: `{"section_order": 3, "title": "x"}`, fixers: []string{FixInsertColon}},
		{name: "array separator", in: `[{"a":1}], {"a":2}]`,
			want: `[{"a":1}, {"a":2}]`, fixers: []string{FixArraySeparator}},
		{name: "array separator inside object", in: "{\"link_plan\": [{\"a\":1}],\n  {\"a\":2}]}",
			want: "{\"link_plan\": [{\"a\":1},\n  {\"a\":2}]}", fixers: []string{FixArraySeparator}},
		{name: "nested arrays are valid and kept", in: `[[{"a":1}], {"a":2}]`,
			want: `[[{"a":1}], {"a":2}]`},

		// Inside strings.
		{name: "markdown escapes", in: `{"prompt\_text": "\*bold\* \#1 \- \. \(x\) \[y\] \! \> \< \+ \= \| \{ \} \~ \` + "`" + `"}`,
			want: `{"prompt_text": "*bold* #1 - . (x) [y] ! > < + = | { } ~ ` + "`" + `"}`,
			fixers: []string{FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape,
				FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape,
				FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape,
				FixMarkdownEscape, FixMarkdownEscape, FixMarkdownEscape}},
		{name: "windows path keeps its backslashes", in: `{"path": "C:\Users\me"}`,
			want: `{"path": "C:\\Users\\me"}`, fixers: []string{FixEscapeBackslash, FixEscapeBackslash}},
		{name: "windows path ending in a backslash", in: `{"path": "C:\Users\", "b": 1}`,
			want: `{"path": "C:\\Users\\", "b": 1}`, fixers: []string{FixEscapeBackslash, FixEscapeBackslash}},
		{name: "windows paths ending in a backslash in an array", in: `["C:\Temp\", "D:\x\"]`,
			want: `["C:\\Temp\\", "D:\\x\\"]`, fixers: []string{FixEscapeBackslash, FixEscapeBackslash, FixEscapeBackslash, FixEscapeBackslash}},
		{name: "escaped quote stays one after a valid escape", in: `{"a": "x\n\", y", "b": 1,}`,
			want: `{"a": "x\n\", y", "b": 1}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "invalid unicode escape keeps backslash", in: `{"a": "\u12G4 \x41"}`,
			want: `{"a": "\\u12G4 \\x41"}`, fixers: []string{FixEscapeBackslash, FixEscapeBackslash}},
		{name: "valid escapes untouched", in: `{"a": "\"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00", "b": 1,}`,
			want: `{"a": "\"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00", "b": 1}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "raw control characters", in: "{\"a\": \"one\ntwo\tthree\r\n\x01\"}",
			want: `{"a": "one\ntwo\tthree\r\n\u0001"}`, fixers: []string{FixEscapeControl, FixEscapeControl, FixEscapeControl}},
		{name: "invalid utf-8", in: "{\"a\": \"caf\xe9\"}",
			want: "{\"a\": \"caf\uFFFD\"}", fixers: []string{FixInvalidUTF8}},
		{name: "single quotes", in: `{'a': 'it's "fine"'}`,
			want: `{"a": "it's \"fine\""}`, fixers: []string{FixNormalizeQuotes, FixNormalizeQuotes,
				FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes}},
		{name: "escaped single quote in single quotes", in: `['don\'t']`,
			want: `["don't"]`, fixers: []string{FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes}},
		{name: "typographic quotes", in: `{“title”: „Grüße“, ‘k’: «v»}`,
			want: `{"title": "Grüße", "k": "v"}`, fixers: []string{FixNormalizeQuotes, FixNormalizeQuotes,
				FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes, FixNormalizeQuotes}},
		{name: "typographic quotes inside a string are text", in: `{"a": "say “hi”", "b": 1,}`,
			want: `{"a": "say “hi”", "b": 1}`, fixers: []string{FixRemoveTrailingComma}},
		{name: "inner quotes", in: `{"a": "He said "hi" to me"}`,
			want: `{"a": "He said \"hi\" to me"}`, fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "html attribute quotes", in: `{"content": "<a href="https://go.dev" class="x">Go</a>", "n": 1}`,
			want:   `{"content": "<a href=\"https://go.dev\" class=\"x\">Go</a>", "n": 1}`,
			fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "empty attribute", in: `["<img alt="" src="a.png">"]`,
			want:   `["<img alt=\"\" src=\"a.png\">"]`,
			fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "quote followed by comma and prose", in: `{"a": "the "x", then y"}`,
			want: `{"a": "the \"x\", then y"}`, fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "quoted words listed in a value", in: `{"question": "1. Which of "a", "b" is valid?", "answer": 0}`,
			want:   `{"question": "1. Which of \"a\", \"b\" is valid?", "answer": 0}`,
			fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "quoted words listed at the end of a value", in: `{"a": "He said "hi", "bye"", "b": 1}`,
			want:   `{"a": "He said \"hi\", \"bye\"", "b": 1}`,
			fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "last key without its value still ends the value", in: `{"a": "x", "b"}`,
			want: `{"a": "x", "b":null}`, fixers: []string{FixMissingValue}},
		{name: "quoted words listed with commas in a value", in: `{"q": "Is "yes", "no", or "maybe" right?", "n": 1}`,
			want:   `{"q": "Is \"yes\", \"no\", or \"maybe\" right?", "n": 1}`,
			fixers: []string{FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote, FixEscapeInnerQuote}},
		{name: "next key after a missing colon still ends the value", in: `{"a": "x", "b" "y"}`,
			want: `{"a": "x", "b": "y"}`, fixers: []string{FixInsertColon}},

		// Bare words and numbers.
		{name: "unquoted keys", in: `{a: 1, user_name: "x", $id: 2, ключ: 3}`,
			want: `{"a": 1, "user_name": "x", "$id": 2, "ключ": 3}`, fixers: []string{FixQuoteKey, FixQuoteKey, FixQuoteKey, FixQuoteKey}},
		{name: "python and js literals", in: `[None, True, False, NaN, Infinity, -Infinity, undefined, true, null]`,
			want:   `[null, true, false, null, null, null, null, true, null]`,
			fixers: []string{FixLiteral, FixLiteral, FixLiteral, FixLiteral, FixLiteral, FixLiteral, FixLiteral}},
		{name: "unquoted text value", in: `{"status": in progress, "n": 1}`,
			want: `{"status": "in progress", "n": 1}`, fixers: []string{FixQuoteValue}},
		{name: "literal starting a phrase is text", in: `{"a": True story}`,
			want: `{"a": "True story"}`, fixers: []string{FixQuoteValue}},
		{name: "number fixes", in: `[+1, .5, -.5, 1., 2.e3]`,
			want:   `[1, 0.5, -0.5, 1.0, 2.0e3]`,
			fixers: []string{FixNumberFormat, FixNumberFormat, FixNumberFormat, FixNumberFormat, FixNumberFormat}},
		{name: "numbers copied as written", in: `[1.370, 1E+05, -0, 0.0e-0, 12345678901234567890,]`,
			want: `[1.370, 1E+05, -0, 0.0e-0, 12345678901234567890]`, fixers: []string{FixRemoveTrailingComma}},
		{name: "malformed numbers kept as text", in: `[007, 0x1F, 1.2.3, 1e]`,
			want: `["007", "0x1F", "1.2.3", "1e"]`, fixers: []string{FixQuoteValue, FixQuoteValue, FixQuoteValue, FixQuoteValue}},

		// Structure.
		{name: "missing value", in: `{"a": , "b": 1}`, want: `{"a": null, "b": 1}`, fixers: []string{FixMissingValue}},
		{name: "key without value", in: `{"a", "b": 1}`, want: `{"a":null, "b": 1}`, fixers: []string{FixMissingValue}},
		{name: "array left open", in: `{"a": [1, 2}`, want: `{"a": [1, 2]}`, fixers: []string{FixInsertCloser}},
		{name: "object left open", in: `[{"a": 1]`, want: `[{"a": 1}]`, fixers: []string{FixInsertCloser}},
		{name: "closer typo inside an object", in: `{"o": ["a", "b"}, "n": 1}`, want: `{"o": ["a", "b"], "n": 1}`, fixers: []string{FixWrongCloser}},
		{name: "closer typo inside an array", in: `[{"a": 1], {"b": 2}]`, want: `[{"a": 1}, {"b": 2}]`, fixers: []string{FixWrongCloser}},
		{name: "closer with nothing outside", in: `["a", "b"}`, want: `["a", "b"]`, fixers: []string{FixWrongCloser}},
		{name: "stray characters", in: `{"a": 1, ... }`, want: `{"a": 1  }`, fixers: []string{FixRemoveTrailingComma, FixRemoveInvalid}},
		{name: "extra closer after the value", in: `{"a": 1}}`, want: `{"a": 1}`, fixers: []string{FixStripProse}},

		// Stringified documents.
		{name: "stringified object", in: `"{\"a\": 1}"`, opt: Options{ExpectContainer: true},
			want: `{"a": 1}`, fixers: []string{FixUnstringify}},
		{name: "stringified and broken", in: `"{\"a\": 1, \"b\": \"x\_y\",}"`, opt: Options{ExpectContainer: true},
			want: `{"a": 1, "b": "x_y"}`, fixers: []string{FixUnstringify, FixMarkdownEscape, FixRemoveTrailingComma}},
		{name: "stringified in a fence", in: "```json\n\"[1, 2]\"\n```", opt: Options{ExpectContainer: true},
			want: `[1, 2]`, fixers: []string{FixStripFence, FixUnstringify, FixStripFence}},
		{name: "string stays a string without ExpectContainer", in: `"{\"a\": 1}"`,
			want: `"{\"a\": 1}"`},
		{name: "plain string is not unwrapped", in: `"hello"`, opt: Options{ExpectContainer: true},
			want: `"hello"`},
		{name: "quoted prose before the document", in: `"Sure," he said. {"a": 1}`, opt: Options{ExpectContainer: true},
			want: `{"a": 1}`, fixers: []string{FixStripProse}},

		// Truncation.
		{name: "truncated in string", in: `{"a": [1, {"b": "x`,
			want: `{"a": [1, {"b": "x"}]}`, fixers: []string{FixCloseTruncated}, missing: `"}]}`},
		{name: "truncated after comma", in: `[1, 2,`, want: `[1, 2]`, fixers: []string{FixCloseTruncated}, missing: `]`},
		{name: "truncated after colon", in: `{"a": 1, "b":`, want: `{"a": 1}`, fixers: []string{FixCloseTruncated}, missing: `}`},
		{name: "truncated in key", in: `{"a": 1, "bc`, want: `{"a": 1}`, fixers: []string{FixCloseTruncated}, missing: `}`},
		{name: "truncated in literal", in: `{"a": [tr`, want: `{"a": []}`, fixers: []string{FixCloseTruncated}, missing: `]}`},
		{name: "truncated in number", in: `[1, 2.`, want: `[1]`, fixers: []string{FixCloseTruncated}, missing: `]`},
		{name: "truncated in escape", in: `["a\`, want: `["a"]`, fixers: []string{FixCloseTruncated}, missing: `"]`},
		{name: "truncated top-level string", in: `"abc`, want: `"abc"`, fixers: []string{FixCloseTruncated}, missing: `"`},
		{name: "fence closed inside a value", in: "```json\n{\"a\": [1, 2\n```\nThat is all.",
			want: `{"a": [1, 2]}`, fixers: []string{FixStripFence, FixCloseTruncated, FixStripFence, FixStripProse}, missing: `]}`},
		{name: "fence text inside a string is content", in: "{\"a\": \"```\ncode\n```\"}",
			want: `{"a": "` + "```" + `\ncode\n` + "```" + `"}`, fixers: []string{FixEscapeControl, FixEscapeControl}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Repair([]byte(tt.in), tt.opt)
			if err != nil {
				t.Fatalf("Repair(%q) error: %v", tt.in, err)
			}
			if string(got.Text) != tt.want {
				t.Errorf("Repair(%q).Text =\n%s\nwant\n%s", tt.in, got.Text, tt.want)
			}
			if diff := cmp.Diff(tt.fixers, fixers(got.Changes)); diff != "" {
				t.Errorf("Repair(%q) fixers (-want +got):\n%s", tt.in, diff)
			}
			if got.Truncated != (tt.missing != "") || got.Missing != tt.missing {
				t.Errorf("Repair(%q) Truncated, Missing = %v, %q; want %v, %q", tt.in, got.Truncated, got.Missing, tt.missing != "", tt.missing)
			}
			checkLossless(t, []byte(tt.in), tt.opt)
			if !json.Valid(got.Text) || !utf8.Valid(got.Text) {
				t.Errorf("Repair(%q).Text is not valid JSON: %s", tt.in, got.Text)
			}
		})
	}
}

func TestRepairSyntaxChanges(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opt  Options
		want []Change
	}{
		{name: "positions are line:col of the input", in: "```json\n{\"query: \"go\",\n \"a\": [1 2],}\n```",
			want: []Change{
				{Path: "1:1", Before: "```json", After: "", Fixer: FixStripFence},
				{Path: "2:8", Before: `: "`, After: `": "`, Fixer: FixInsertColon},
				{Path: "3:9", Before: "", After: ",", Fixer: FixInsertComma},
				{Path: "3:12", Before: ",", After: "", Fixer: FixRemoveTrailingComma},
				{Path: "4:1", Before: "```", After: "", Fixer: FixStripFence},
			}},
		{name: "escapes", in: `{"a": "C:\Users\_x` + "\n" + `"}`,
			want: []Change{
				{Path: "1:10", Before: `\U`, After: `\\U`, Fixer: FixEscapeBackslash},
				{Path: "1:16", Before: `\_`, After: `_`, Fixer: FixMarkdownEscape},
				{Path: "1:19", Before: "\n", After: `\n`, Fixer: FixEscapeControl},
			}},
		{name: "literals and quotes", in: `{'ok': True}`,
			want: []Change{
				{Path: "1:2", Before: "'", After: `"`, Fixer: FixNormalizeQuotes},
				{Path: "1:5", Before: "'", After: `"`, Fixer: FixNormalizeQuotes},
				{Path: "1:8", Before: "True", After: "true", Fixer: FixLiteral},
			}},
		{name: "array separator", in: "[{\"a\":1}\n], {\"a\":2}]",
			want: []Change{{Path: "2:1", Before: "],", After: ",", Fixer: FixArraySeparator}}},
		{name: "truncation drops the partial member", in: "{\"a\": 1,\n \"b\": fal",
			want: []Change{{Path: "1:8", Before: ",\n \"b\": fal", After: "}", Fixer: FixCloseTruncated}}},
		{name: "stringified document maps positions into the string", in: `"{\"a\": 1,}"`, opt: Options{ExpectContainer: true},
			want: []Change{
				{Path: "1:1", Before: `"{\"a\": 1,}"`, After: `{"a": 1}`, Fixer: FixUnstringify},
				{Path: "1:11", Before: ",", After: "", Fixer: FixRemoveTrailingComma},
			}},
		{name: "an insertion goes before the comments it follows", in: `[1 /*a*/ /*b*/ 2]`,
			want: []Change{
				{Path: "1:3", Before: "", After: ",", Fixer: FixInsertComma},
				{Path: "1:4", Before: "/*a*/", After: "", Fixer: FixRemoveComment},
				{Path: "1:10", Before: "/*b*/", After: "", Fixer: FixRemoveComment},
			}},
		{name: "columns count runes", in: "{\"größe\": 'x',}",
			want: []Change{
				{Path: "1:11", Before: "'", After: `"`, Fixer: FixNormalizeQuotes},
				{Path: "1:13", Before: "'", After: `"`, Fixer: FixNormalizeQuotes},
				{Path: "1:14", Before: ",", After: "", Fixer: FixRemoveTrailingComma},
			}},
		{name: "long prose is shortened", in: strings.Repeat("word ", 40) + "{\"a\": 1}",
			want: []Change{{Path: "1:1", Before: strings.Repeat("word ", 15) + "wo…", After: "", Fixer: FixStripProse}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Repair([]byte(tt.in), tt.opt)
			if err != nil {
				t.Fatalf("Repair(%q) error: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got.Changes); diff != "" {
				t.Errorf("Repair(%q) changes (-want +got):\n%s", tt.in, diff)
			}
			checkLossless(t, []byte(tt.in), tt.opt)
		})
	}
}

func TestRepairSyntaxErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{name: "empty", in: "", want: ErrNoJSON},
		{name: "whitespace", in: " \n\t", want: ErrNoJSON},
		{name: "prose only", in: "I cannot answer that.", want: ErrNoJSON},
		{name: "unclosed think", in: "<think>Let me consider {the options", want: ErrNoJSON},
		{name: "empty fence", in: "```json\n```", want: ErrNoJSON},
		{name: "two json fences", in: "```json\n{\"a\": 1}\n```\nor\n```json\n{\"a\": 2}\n```", want: ErrMultipleJSON},
		{name: "two plain fences with json", in: "```\n[1]\n```\n```\n[2]\n```", want: ErrMultipleJSON},
		{name: "too deep", in: strings.Repeat("[", maxDepth+1), want: ErrTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Repair([]byte(tt.in), Options{})
			if !errors.Is(err, tt.want) {
				t.Errorf("Repair(%q) = %q, %v; want error %v", tt.in, got.Text, err, tt.want)
			}
		})
	}
}

// TestSortSpans checks the mostly-in-order sort against the general one,
// on nearly sorted input and on input that forces the fallback.
func TestSortSpans(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, disorder := range []int{0, 1, 10, 1000} {
		raw := make([]rawSpan, 500)
		for k := range raw {
			raw[k] = rawSpan{off: k, end: k, fixer: fixID(k % 7)}
			if r.IntN(100) < disorder%100 || disorder >= 1000 {
				raw[k].off = r.IntN(500)
			}
		}
		want := slices.Clone(raw)
		slices.SortStableFunc(want, func(a, b rawSpan) int { return a.off - b.off })
		sortSpans(raw)
		if diff := cmp.Diff(want, raw, cmp.AllowUnexported(rawSpan{}, txt{})); diff != "" {
			t.Errorf("sortSpans with disorder %d (-want +got):\n%s", disorder, diff)
		}
	}
}

// TestRepairSyntaxDeepButAllowed checks that nesting up to the limit works
// and that closing it does not recurse.
func TestRepairSyntaxDeepButAllowed(t *testing.T) {
	in := strings.Repeat("[", maxDepth)
	got, err := Repair([]byte(in), Options{})
	if err != nil {
		t.Fatalf("Repair(%d × '[') error: %v", maxDepth, err)
	}
	if !got.Truncated || got.Missing != strings.Repeat("]", maxDepth) {
		t.Errorf("Repair(%d × '[') Truncated, len(Missing) = %v, %d", maxDepth, got.Truncated, len(got.Missing))
	}
}

// TestRepairSyntaxValidUnchanged is the fast-path property: valid JSON comes
// back byte for byte (after trimming) with no changes.
func TestRepairSyntaxValidUnchanged(t *testing.T) {
	var inputs [][]byte
	for _, s := range []string{`{}`, `[]`, `0`, `-1.5e+10`, `"x"`, `null`, `true`,
		"  {\"a\" : [ 1 , 2 ] }\n", `{"a":"\u00e9\"\\"}`, `[[{"a":1}], {"b":2}]`, `"{\"a\": 1}"`} {
		inputs = append(inputs, []byte(s))
	}
	wants, _ := filepath.Glob(filepath.Join("testdata", "syntax", "*.want"))
	for _, w := range wants {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		if text, _, _ := splitGolden(b); json.Valid(text) {
			inputs = append(inputs, text)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		inputs = append(inputs, genJSON(r, 0, true))
	}
	for _, in := range inputs {
		got, err := Repair(in, Options{})
		if err != nil {
			t.Errorf("Repair(%q) error: %v", in, err)
			continue
		}
		if want := trimJSON(in); !bytes.Equal(got.Text, want) || len(got.Changes) != 0 {
			t.Errorf("Repair(%q) = %q with %d changes; want it unchanged", in, got.Text, len(got.Changes))
		}
	}
}

// TestScannerKeepsValidJSON runs the scanner itself, past the fast path, on
// valid documents: its heuristics (where a string ends, what a closer means)
// must agree with JSON wherever JSON is valid, so that the valid parts of a
// broken document come through untouched.
func TestScannerKeepsValidJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		in := genJSON(r, 0, r.IntN(2) == 0)
		s := scanner{src: in, lastBad: -1}
		if err := s.run(); err != nil {
			t.Fatalf("scanning %q: %v", in, err)
		}
		if !bytes.Equal(s.out, in) || len(s.raw) != 0 || s.truncated {
			t.Fatalf("scanning %q = %q with %d changes, want it unchanged", in, s.out, len(s.raw))
		}
	}
}

// TestRepairSyntaxAlwaysValid mutates valid documents at random (deleting,
// inserting and replacing bytes with the ones JSON is made of) and checks
// that the result is always valid JSON or an error, and deterministic.
func TestRepairSyntaxAlwaysValid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("{}[],:\"'\\ \n\tabcTFN0123456789.-+e/*`<>_“”")
	for range 3000 {
		doc := genJSON(r, 0, r.IntN(2) == 0)
		for range 1 + r.IntN(4) {
			if len(doc) == 0 {
				break
			}
			p := r.IntN(len(doc))
			switch r.IntN(3) {
			case 0:
				doc = append(doc[:p:p], doc[p+1:]...)
			case 1:
				doc = append(doc[:p:p], append([]byte{alphabet[r.IntN(len(alphabet))]}, doc[p:]...)...)
			default:
				doc[p] = alphabet[r.IntN(len(alphabet))]
			}
		}
		checkRepair(t, doc, Options{ExpectContainer: r.IntN(2) == 0})
	}
}

// trimJSON strips JSON whitespace (RFC 8259 §2), which is narrower than
// bytes.TrimSpace: "0\v" is not valid JSON.
func trimJSON(b []byte) []byte {
	lo, hi := lex.TrimBounds(b)
	return b[lo:hi]
}

// checkRepair asserts the properties every call must have, the lossless
// invariant among them.
func checkRepair(t *testing.T, in []byte, opt Options) {
	t.Helper()
	checkLossless(t, in, opt)
	got, err := Repair(in, opt)
	again, err2 := Repair(in, opt)
	if (err == nil) != (err2 == nil) || !bytes.Equal(got.Text, again.Text) || !cmp.Equal(got.Changes, again.Changes) {
		t.Fatalf("Repair(%q) is not deterministic", in)
	}
	if err != nil {
		return
	}
	if !json.Valid(got.Text) || !utf8.Valid(got.Text) {
		t.Fatalf("Repair(%q).Text = %q, not valid JSON", in, got.Text)
	}
	if got.Missing != "" && !got.Truncated {
		t.Fatalf("Repair(%q) Missing %q without Truncated", in, got.Missing)
	}
	if _, err := strictjson.Parse(got.Text); err != nil {
		// The pipeline parses the result strictly; only what is no syntax
		// fault (a duplicate key) may remain.
		var se *strictjson.SyntaxError
		if !errors.As(err, &se) || se.Reason != strictjson.ReasonDuplicateKey {
			t.Fatalf("Repair(%q).Text = %q, which the strict parser refuses: %v", in, got.Text, err)
		}
	}
	if len(got.Text) > 8*len(in)+16 {
		t.Fatalf("Repair(%q) wrote %d bytes for %d", in, len(got.Text), len(in))
	}
	if trimmed := trimJSON(in); validJSON(trimmed) && !opt.ExpectContainer && (!bytes.Equal(got.Text, trimmed) || len(got.Changes) != 0) {
		t.Fatalf("Repair(%q) changed valid JSON to %q", in, got.Text)
	}
	for _, c := range got.Changes {
		if c.Fixer == "" || !strings.Contains(c.Path, ":") {
			t.Fatalf("Repair(%q) recorded a malformed change %+v", in, c)
		}
	}
}

// TestRepairSyntaxKeepsStrings checks that no string content is lost: every
// string literal of the input that reaches the output is copied unchanged
// unless a change covers it. It uses the scanner's own record of where each
// string came from and went.
func TestRepairSyntaxKeepsStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var inputs [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "syntax", "*.in"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	for range 1000 {
		inputs = append(inputs, corrupt(r, genJSON(r, 0, false)))
	}
	for _, in := range inputs {
		checkStrings(t, in)
	}
}

// checkStrings asserts that every string of in that reaches the output is
// copied unchanged unless a change covers it.
func checkStrings(t *testing.T, in []byte) {
	t.Helper()
	run, strs, err := traceRepair(in)
	if err != nil {
		return
	}
	for _, st := range strs {
		b := st.srcEnd
		if b == len(in) {
			b++ // a string cut off by the end of the input is closed there
		}
		if covered(run.log.raw, st.srcOff, b) {
			continue
		}
		if src, out := in[st.srcOff:st.srcEnd], run.text[st.outOff:st.outEnd]; !bytes.Equal(src, out) {
			t.Errorf("Repair(%q): string %s became %s with no change recorded", in, src, out)
		}
	}
}

// TestRepairSyntaxGeneratedFaults breaks generated documents in ways that
// must not touch any string (commas, comments, quoting, literals, wrapping)
// and checks that every string of the original comes back.
func TestRepairSyntaxGeneratedFaults(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		doc := genJSON(r, 0, false)
		in := corrupt(r, doc)
		got, err := Repair(in, Options{})
		if err != nil {
			t.Fatalf("Repair(%q) error: %v", in, err)
		}
		if !json.Valid(got.Text) || got.Truncated {
			t.Fatalf("Repair(%q) = %q (truncated %v), want valid JSON", in, got.Text, got.Truncated)
		}
		var want, have any
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got.Text, &have); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Fatalf("Repair(%q) = %s, value differs from %s (-want +got):\n%s", in, got.Text, doc, diff)
		}
	}
}

// covered reports whether a change touches the input range [a, b).
func covered(spans []rawSpan, a, b int) bool {
	for _, sp := range spans {
		if sp.off < b && sp.end > a || sp.off == sp.end && sp.off > a && sp.off < b {
			return true
		}
	}
	return false
}

// traceRepair runs the scanner directly with string tracing on.
func traceRepair(in []byte) (docRun, []strTrace, error) {
	lo, hi := lex.TrimBounds(in)
	if lo == hi || validJSON(in[lo:hi]) {
		return docRun{}, nil, ErrNoJSON
	}
	var log changeLog
	start, err := findValue(in, lo, false, &log)
	if err != nil {
		return docRun{}, nil, err
	}
	s := scanner{src: in, i: start, lastBad: -1, traceOn: true, changeLog: log}
	if err := s.run(); err != nil {
		return docRun{}, nil, err
	}
	return docRun{text: s.out, log: s.changeLog}, s.trace, nil
}

// genJSON generates a random JSON document: objects and arrays of strings
// (with quotes, backslashes, non-ASCII and markup in them), numbers as models
// write them, and literals.
func genJSON(r *rand.Rand, depth int, pretty bool) []byte {
	var b bytes.Buffer
	genValue(r, &b, depth, pretty, true)
	return b.Bytes()
}

var genWords = []string{"alpha", "Größe", "C:\\Users", `say "hi"`, "<a href=\"x\">y</a>", "line\nbreak", "tab\there",
	"😀", "", " ", "a,b", "}", "]", ":", "it's", "\\_", "日本語", "1", "true", "null", "\u2028"}

func genValue(r *rand.Rand, b *bytes.Buffer, depth int, pretty, container bool) {
	k := r.IntN(8)
	if container || depth < 3 && k < 3 {
		k = r.IntN(2)
	} else if depth >= 3 && k < 2 {
		k = 2 + r.IntN(6)
	}
	nl := func() {
		if pretty {
			b.WriteString("\n" + strings.Repeat("  ", depth+1))
		}
	}
	switch k {
	case 0:
		b.WriteByte('{')
		n := r.IntN(4)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			nl()
			key, _ := json.Marshal(fmt.Sprintf("%s_%d", genWords[r.IntN(len(genWords))], i))
			b.Write(key)
			b.WriteString(": ")
			genValue(r, b, depth+1, pretty, false)
		}
		b.WriteByte('}')
	case 1:
		b.WriteByte('[')
		n := r.IntN(4)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			genValue(r, b, depth+1, pretty, false)
		}
		b.WriteByte(']')
	case 2, 3:
		s, _ := json.Marshal(genWords[r.IntN(len(genWords))] + genWords[r.IntN(len(genWords))])
		b.Write(s)
	case 4:
		b.WriteString([]string{"0", "-1", "3.14", "1.370", "2e10", "-0.5E-3", "42"}[r.IntN(7)])
	default:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	}
}

// corrupt breaks a valid document the ways models do, without touching any
// string's content: trailing and doubled commas, comments, fences, prose and
// think sections around it, Python literals, single-quoted keys.
func corrupt(r *rand.Rand, doc []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if inStr {
			out = append(out, c)
			if c == '\\' {
				i++
				out = append(out, doc[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case (c == '}' || c == ']') && r.IntN(3) == 0 && len(out) > 0 && out[len(out)-1] != '{' && out[len(out)-1] != '[':
			out = append(out, ',', c)
		case c == ',' && r.IntN(4) == 0:
			out = append(out, ",,"...)
		case c == ',' && r.IntN(4) == 0:
			out = append(out, "\n"...)
		case c == ',' && r.IntN(4) == 0:
			out = append(out, ", // note\n"...)
		case c == ':' && r.IntN(4) == 0:
			out = append(out, ": /* c */"...)
		case bytes.HasPrefix(doc[i:], []byte("true")) && r.IntN(2) == 0:
			out = append(out, "True"...)
			i += 3
		case bytes.HasPrefix(doc[i:], []byte("null")) && r.IntN(2) == 0:
			out = append(out, "None"...)
			i += 3
		default:
			out = append(out, c)
		}
	}
	switch r.IntN(4) {
	case 0:
		out = append(append([]byte("```json\n"), out...), "\n```\n"...)
	case 1:
		if out[0] != '{' {
			break // prose before a bare array of scalars reads as a citation
		}
		out = append(append([]byte("Here is the result:\n"), out...), "\nHope this helps."...)
	case 2:
		out = append(append([]byte("<think>\nI need {x} and [y].\n</think>\n"), out...), '\n')
	}
	return out
}

// TestRepairSyntaxCorpus runs the realistic corpus of broken model outputs
// under testdata/syntax: NAME.in is what a model wrote, NAME.want the
// repaired text followed by the changes. Refresh with -update.
func TestRepairSyntaxCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "syntax", "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Errorf("corpus has %d cases, want at least 30", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".in")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{ExpectContainer: true}
			got, err := Repair(in, opt)
			if err != nil {
				t.Fatalf("Repair(%s) error: %v", f, err)
			}
			checkRepair(t, in, opt)
			golden := formatGolden(got)
			wantFile := strings.TrimSuffix(f, ".in") + ".want"
			if *update {
				if err := os.WriteFile(wantFile, golden, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(golden)); diff != "" {
				t.Errorf("Repair(%s) differs from %s (-want +got):\n%s", f, wantFile, diff)
			}
		})
	}
}

const goldenSep = "\n-- changes --\n"

// formatGolden renders a result for review: the repaired text, then one
// line per change, then the truncation if any.
func formatGolden(r Result) []byte {
	var b bytes.Buffer
	b.Write(r.Text)
	b.WriteString(goldenSep)
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "%s %s %s → %s\n", c.Path, c.Fixer, strconv.Quote(fmt.Sprint(c.Before)), strconv.Quote(fmt.Sprint(c.After)))
	}
	if r.Truncated {
		fmt.Fprintf(&b, "truncated, missing %s\n", strconv.Quote(r.Missing))
	}
	return b.Bytes()
}

// splitGolden returns the repaired text of a golden file.
func splitGolden(b []byte) (text, rest []byte, ok bool) {
	return bytes.Cut(b, []byte(goldenSep))
}

// FuzzRepairSyntax checks that no input makes RepairSyntax panic, produce
// invalid JSON without an error, change valid JSON, answer differently
// twice, or return a document it does not refuse (Truncated or Lossy) whose
// content differs from the model's text (checkLossless).
func FuzzRepairSyntax(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "syntax", "*.in"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
		f.Add(b, false)
	}
	for _, s := range []string{"{\"code\": `x {y}`}", `{"c": """print("Hi")"""}`, "{\"c\": ```py\nx\n```}", `{5: "b",` + "\n" + `2.17: "e"}`, `{"a": 12,111}`, `True`, `{"a": 1,}`, `[1 2]`, `{"k: "v"}`, `[{"a":1}], {"b":2}]`, `"{\"a\":1}"`, `{'a': None}`, "{\"a\": \"x\n"} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, expect bool) {
		checkRepair(t, in, Options{ExpectContainer: expect})
		checkStrings(t, in)
	})
}
