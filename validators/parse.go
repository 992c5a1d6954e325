package validators

import (
	"errors"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// ParseViolation turns a strict-parse failure into a violation of class
// JSON_PARSE: JSON_TRUNCATED when the input ended inside a value, else
// JSON_SYNTAX, with path "line:col" of the offending character (in the text
// that was parsed, Extraction.Text, not the raw model output), expected and
// actual taken from the error, and a hint that names the one edit to make.
// The violation is not marked fixable here: whether local repair can fix it
// is known only by running the syntactic repairer on the block, which lives
// in package repair above this one; repair.Local sets Fixable once it has.
// It is ordered at the error's byte offset.
//
// An error that is not a *strictjson.SyntaxError (there should be none)
// becomes a JSON_SYNTAX violation at 1:1 with the error text as its hint.
func ParseViolation(err error) Violation {
	var se *strictjson.SyntaxError
	if !errors.As(err, &se) {
		msg := "the document is not valid JSON"
		if err != nil {
			msg = err.Error()
		}
		return Violation{
			Class:    ClassParse,
			Code:     "JSON_SYNTAX",
			Severity: SeverityError,
			Path:     "1:1",
			Expected: "valid JSON",
			Actual:   msg,
			Hint:     "Return strictly valid JSON (RFC 8259): " + msg + ".",
		}
	}
	code := "JSON_SYNTAX"
	if se.Truncated {
		code = "JSON_TRUNCATED"
	}
	return Violation{
		Class:    ClassParse,
		Code:     code,
		Severity: SeverityError,
		Path:     strconv.Itoa(se.Line) + ":" + strconv.Itoa(se.Col),
		Pointer:  "",
		Expected: se.Expected,
		Actual:   se.Char,
		Hint:     parseHint(se),
		pos:      se.Offset,
	}
}

// parseHint phrases the repair of one syntax error as a single instruction
// for a model. It names the position the way the report's path does.
func parseHint(se *strictjson.SyntaxError) string {
	at := "line " + strconv.Itoa(se.Line) + ", column " + strconv.Itoa(se.Col)
	switch se.Reason {
	case strictjson.ReasonEmpty:
		return "The response holds no JSON: return the whole JSON document."
	case strictjson.ReasonTruncated:
		h := "The document ends inside a value: complete it and close every open bracket"
		if se.Unclosed != "" {
			h += " (still open, innermost first: " + se.Unclosed + ")"
		}
		return h + "."
	case strictjson.ReasonTrailingComma:
		return "Remove the trailing comma at " + at + "."
	case strictjson.ReasonComment:
		return "Remove the comment at " + at + ": JSON has no comments."
	case strictjson.ReasonQuote:
		return "Replace the quote " + se.Char + " at " + at + " with a double quote (\"): JSON strings and keys use double quotes only."
	case strictjson.ReasonUnquotedKey:
		return "Put the object key at " + at + " in double quotes."
	case strictjson.ReasonMissingComma:
		return "Insert a comma before " + at + "."
	case strictjson.ReasonMissingColon:
		return "Insert a colon (:) after the object key, before " + at + "."
	case strictjson.ReasonControlChar:
		return "Replace the raw control character inside the string at " + at + " with the escape " + se.Expected + "."
	case strictjson.ReasonEscape:
		if se.Expected == "hex digit" {
			return "Write the \\u escape before " + at + " with exactly four hex digits."
		}
		return "Fix the escape " + se.Char + " at " + at + ": only \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX are allowed; write a literal backslash as \\\\."
	case strictjson.ReasonDuplicateKey:
		return "Remove or rename the duplicate key " + se.Char + " at " + at + ": keys must be unique within an object."
	case strictjson.ReasonUTF8:
		return "Replace the invalid UTF-8 byte " + se.Char + " at " + at + " with valid UTF-8 text."
	case strictjson.ReasonBOM:
		return "Remove the byte order mark at the start of the document."
	case strictjson.ReasonTrailingData:
		return "Remove everything from " + at + " on: the response must hold exactly one JSON value."
	case strictjson.ReasonNumber:
		return "Fix the number at " + at + ": " + se.Msg + "."
	case strictjson.ReasonLiteral:
		if word, ok := strings.CutPrefix(se.Expected, "literal "); ok {
			// "tru," or "nul}": the position is where the word stops, not
			// the start of a value to replace.
			return "Write the literal " + word + " in full: it breaks off before " + at + "."
		}
		return "Replace the value at " + at + " with true, false, null, a number or a double-quoted string."
	case strictjson.ReasonDepth:
		return "Nest arrays and objects at most 10000 levels deep."
	}
	want := se.Expected
	if want == "value" {
		want = "a JSON value"
	}
	return "Replace " + se.Char + " at " + at + " with " + want + "."
}
