package validators

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/contractgateway/gateway/validators/extract"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// The sources of an Extraction, in the order Extract prefers them.
const (
	SourceFenceJSON  = "fence-json"  // a ```json block
	SourceFencePlain = "fence-plain" // a ``` block without a language tag
	SourceBare       = "bare"        // the whole trimmed text
)

// Extraction is the text of the one JSON value found in a model's output.
type Extraction struct {
	// Text is the candidate JSON text with surrounding whitespace removed.
	// It has not been parsed: it may still be broken JSON.
	Text string
	// Offset is the byte offset of Text in the think-stripped text (the
	// output of extract.StripThink), so
	// extract.StripThink(raw)[Offset:Offset+len(Text)]
	// is Text.
	Offset int
	// Source says where Text was found: SourceFenceJSON, SourceFencePlain
	// or SourceBare.
	Source string
}

// The hint of both extraction violations: the one instruction that fixes
// either of them, phrased for the model that produced the output.
const extractHint = "Return exactly one ```json code block containing the whole JSON document."

// Candidates lists the places in text where a JSON value may be: the
// ```json blocks, the ``` blocks without a language tag, and the bare
// candidate. Extract calls it on think-stripped text, and Offsets are
// relative to the text given.
//
// Fences are read by extract.Fences; only blocks tagged "json" (in any
// case) and blocks without a tag count, so nothing inside a ```python or
// ```jsonc block is taken.
//
// The bare candidate is the whole trimmed text when it starts with '{' or
// '[' or when it strictly parses as one JSON value (a scalar from Ollama's
// format mode); nil otherwise. A leading byte order mark is looked past
// and kept in the candidate, so that strict parsing reports it.
func Candidates(text string) (json []Extraction, plain []Extraction, bare *Extraction) {
	for _, f := range extract.Fences(text) {
		ex := trimmed(text, f.Start, f.End)
		switch {
		case strings.EqualFold(f.Tag, "json"):
			ex.Source = SourceFenceJSON
			json = append(json, ex)
		case f.Tag == "":
			ex.Source = SourceFencePlain
			plain = append(plain, ex)
		}
	}
	if ex := trimmed(text, 0, len(text)); ex.Text != "" {
		// A byte order mark (a file saved by an editor) stays part of the
		// candidate, so that the strict parser names it, but it does not
		// hide the value behind it.
		body := strings.TrimLeftFunc(strings.TrimPrefix(ex.Text, extract.ByteOrderMark), unicode.IsSpace)
		if body != "" {
			c := body[0]
			if c == '{' || c == '[' || (mayStartScalar(c) && validJSON(body)) {
				ex.Source = SourceBare
				bare = &ex
			}
		}
	}
	return json, plain, bare
}

func mayStartScalar(c byte) bool {
	return c == '"' || c == '-' || c == 't' || c == 'f' || c == 'n' || (c >= '0' && c <= '9')
}

func validJSON(s string) bool {
	return strictjson.ValidString(s)
}

// trimmed returns text[start:end] without surrounding white space, with its
// offset in text.
func trimmed(text string, start, end int) Extraction {
	s := text[start:end]
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	off := start + len(s) - len(t)
	t = strings.TrimRightFunc(t, unicode.IsSpace)
	return Extraction{Text: t, Offset: off}
}

// Extract finds the one JSON value in a model's output: think
// sections are removed first; then one ```json block is taken, else one
// ``` block without a tag, else the bare text. Two or more ```json blocks,
// or two or more plain blocks when there is no ```json block, are
// MULTIPLE_JSON_BLOCKS; nothing at all is NO_JSON_BLOCK. On a violation the
// returned Extraction is the zero value.
func Extract(text string) (Extraction, *Violation) {
	ex, _, viol := extractAnswer(extract.StripThink(text))
	return ex, viol
}

// extractAnswer is Extract on text whose think sections are already
// removed. With MULTIPLE_JSON_BLOCKS it also returns the blocks it
// counted, for repair to choose among without reading the text again.
func extractAnswer(answer string) (Extraction, []Extraction, *Violation) {
	js, plain, bare := Candidates(answer)
	switch {
	case len(js) == 1:
		return js[0], nil, nil
	case len(js) > 1:
		return Extraction{}, js, multipleBlocks(len(js), "```json")
	case len(plain) == 1:
		return plain[0], nil, nil
	case len(plain) > 1:
		return Extraction{}, plain, multipleBlocks(len(plain), "```")
	case bare != nil:
		return *bare, nil, nil
	}
	return Extraction{}, nil, &Violation{
		Class:    ClassParse,
		Code:     "NO_JSON_BLOCK",
		Severity: SeverityError,
		Expected: 1,
		Actual:   0,
		Hint:     extractHint,
	}
}

// Streamed judges doc, the document a stream released, against ex, the
// extraction of the whole answer text. A stream follows the first JSON
// value the answer starts and cannot see past it: a ```json block later,
// or a second block, makes Extract take another value or none. ok when ex
// is the value that starts with doc; else the report is
// MULTIPLE_JSON_BLOCKS, counting the places a value starts.
func (v *Validator) Streamed(text, doc string, ex Extraction) (Report, bool) {
	if ex.Text != "" && strings.HasPrefix(ex.Text, doc) {
		return Report{}, true
	}
	js, plain, bare := Candidates(extract.StripThink(text))
	n := len(js) + len(plain)
	if bare != nil {
		n++
	}
	return v.report([]Violation{*multipleBlocks(max(n, 2), "JSON")}), false
}

func multipleBlocks(n int, fence string) *Violation {
	return &Violation{
		Class:    ClassParse,
		Code:     "MULTIPLE_JSON_BLOCKS",
		Severity: SeverityError,
		Expected: 1,
		Actual:   n,
		Hint: "Return exactly one ```json code block containing the whole JSON document, not " +
			strconv.Itoa(n) + " " + fence + " blocks.",
	}
}
