package repair

// Change records one edit made by local repair. Every edit is reported (SPEC
// §5), so that a client, a log line or a person reviewing the debug store can
// see exactly what the gateway changed in the model's output and why.
type Change struct {
	// Path locates the edit. Syntactic fixes use "line:col" of the input text,
	// both 1-based and counted as the strict parser counts them for
	// JSON_PARSE violations: lines end at "\n", columns count runes (a byte
	// that is not UTF-8 counts as one). Value fixes use the dotted path of the
	// value, such as "questions[3].answer".
	Path string `json:"path"`
	// Before is the replaced text fragment (syntactic fixes) or JSON value
	// (value fixes). Long fragments are shortened and end in "…".
	Before any `json:"before"`
	// After is what replaced Before, in the same form.
	After any `json:"after"`
	// Fixer is the stable identifier of the fix; logs, metrics and tests
	// depend on it, so it never changes once released.
	Fixer string `json:"fixer"`
}
