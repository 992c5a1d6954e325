package extract

// ValueEnd watches a model's text as it grows for the end of the one JSON
// object or array it starts with: the point where a call that carries a
// schema format has its whole answer. It tracks strings (escapes
// included) and the nesting of brackets, not the rest of the grammar: the
// format's grammar holds the text to JSON, and a text that is not JSON
// after all is validated and repaired as it would have been had the model
// stopped there. A text that starts with anything else (a scalar, prose,
// a think section) never ends early.
type ValueEnd struct {
	stack    []byte // the closing brackets expected, innermost last
	inString bool
	str      StringScan
	started  bool
	closed   bool
	failed   bool
}

// Feed takes the next piece of text and reports whether the value has
// closed with nothing but whitespace after it in the text so far: the
// moment to stop the call. After that, or after a text that cannot end
// early, it reports false.
func (v *ValueEnd) Feed(s string) bool {
	if v.failed || v.closed {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !v.started:
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			case '{':
				v.stack = append(v.stack, '}')
			case '[':
				v.stack = append(v.stack, ']')
			default:
				v.failed = true
				return false
			}
			v.started = true
		case v.inString:
			v.inString = !v.str.End(c)
		case c == '"':
			v.inString = true
		case c == '{':
			v.stack = append(v.stack, '}')
		case c == '[':
			v.stack = append(v.stack, ']')
		case c == '}' || c == ']':
			if v.stack[len(v.stack)-1] != c {
				v.failed = true
				return false
			}
			v.stack = v.stack[:len(v.stack)-1]
			if len(v.stack) == 0 {
				for _, r := range []byte(s[i+1:]) {
					if r != ' ' && r != '\t' && r != '\r' && r != '\n' {
						v.failed = true
						return false
					}
				}
				v.closed = true
				return true
			}
		}
	}
	return false
}

// Depth is the number of objects and arrays open after the text fed so
// far: a caller that feeds one byte at a time reads the document's
// structure from it (the items of an array closing, say) without a
// scanner of its own for strings and escapes.
func (v *ValueEnd) Depth() int { return len(v.stack) }

// InString reports whether the text fed so far ends inside a string.
func (v *ValueEnd) InString() bool { return v.inString }

// Failed reports whether the text can no longer end early: it did not
// start with '{' or '[', a bracket closed what it did not open, or
// something other than whitespace followed the value.
func (v *ValueEnd) Failed() bool { return v.failed }

// StringScan follows a JSON string a byte at a time after its opening
// quote, escapes included (not decoded): all that ValueEnd, a schema's
// limit check and the prompt meter need to know of a string. Its zero
// value is ready.
type StringScan struct{ escape bool }

// End reads the next byte of the string and reports whether it is the
// closing quote.
func (s *StringScan) End(c byte) bool {
	switch {
	case s.escape:
		s.escape = false
	case c == '\\':
		s.escape = true
	case c == '"':
		return true
	}
	return false
}

// Escaped reports whether the next byte is escaped.
func (s *StringScan) Escaped() bool { return s.escape }
