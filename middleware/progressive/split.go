// Package progressive is what a guarded stream needs to release the items
// of a contract's item array one by one, pure and without I/O: a splitter
// that follows the model's text as it grows and says when each item has
// closed, the check of an item against every rule that needs only it and
// the items before it, and the assembly of the released pieces into the
// final document, so that the deltas a client receives concatenate to
// the text the contract summary and the cache keep.
package progressive

import (
	"fmt"
	"strings"

	"github.com/contractgateway/gateway/validators/extract"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Kind says what a splitter Event reports.
type Kind int

// The kinds of Event.
const (
	// ItemClosed: item Index of the array has closed; Raw is its text.
	ItemClosed Kind = iota
	// DocumentClosed: the document has closed; Raw is its whole text.
	DocumentClosed
	// GaveUp: the text is not one the splitter can follow (Reason says
	// why); the caller validates the whole answer instead.
	GaveUp
)

// Event is one thing the splitter learnt from the text.
type Event struct {
	Kind   Kind
	Index  int
	Raw    string
	Reason string
}

// maxPreamble bounds the text the splitter reads before the document
// starts (think sections, prose, an opening fence): a model that writes
// that much before its JSON gets its answer validated whole.
const maxPreamble = 64 << 10

// maxFenceLine bounds the last line of the preamble that the splitter
// reads again byte by byte to learn whether a brace in it opens a fence's
// content (see documentStart).
const maxFenceLine = 1 << 10

// Splitter follows a model's answer as it arrives and reports each item
// of the item array the moment it closes. The document must be an
// object; the array is the member the pointer names (nested members
// allowed). What precedes the document is skipped as extraction skips
// it: think sections, and prose followed by a ```json or untagged fence;
// a document that starts right away (after whitespace) needs no fence.
// Strings, escapes and brackets are tracked by extract.ValueEnd, fed
// one byte at a time; the splitter adds only the member names and the
// commas and colons between values at the levels on the pointer's path.
// A comma after the last item (`},]`, a habit of some models) is
// followed: the released text is the assembler's, which has none, and the
// final document is made of the items, so the stray comma costs nothing.
// Anything else it cannot follow (a duplicate member on the path, the
// member not an array, an item that is a number) ends in GaveUp: the
// answer is then validated whole, as before.
type Splitter struct {
	path []string
	pre  strings.Builder
	// doc is the document's text from its '{'.
	doc     strings.Builder
	started bool
	// recheck says the preamble's end leaves open where the document
	// starts, so the next piece is read with it even without a brace.
	recheck bool
	end     extract.ValueEnd
	// levels are the states of the objects on the path, by depth-1;
	// level len(path) is the item array.
	levels []level
	// keyStart is where the member name being read starts in doc, -1
	// when none is.
	keyStart int
	// itemStart is where the item being read starts in doc, -1 when none
	// is; items counts the items closed.
	itemStart int
	items     int
	// found says the array was entered; done that the document closed;
	// failed that the splitter gave up.
	found, done, failed bool
}

// level is the state of one object on the path, or of the item array.
type level struct {
	state state
	// onPath says the current member's name is the path's next segment.
	onPath bool
	// seen says that member was met already at this level.
	seen bool
}

type state int

const (
	expectKey   state = iota // after '{' or ',' in an object
	inKey                    // reading a member name
	expectColon              // after a member name
	expectValue              // after ':'
	inValue                  // inside a member's value (string, scalar, container)
	afterValue               // after a value: ',' or the closing bracket
)

// NewSplitter returns a splitter for the item array at pointer, an RFC
// 6901 pointer such as "/questions" or "/plan/steps".
func NewSplitter(pointer string) (*Splitter, error) {
	segs, err := strictjson.ParsePointer(pointer)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("item array %q: the document itself is not an item array a stream can release", pointer)
	}
	return &Splitter{path: segs, keyStart: -1, itemStart: -1}, nil
}

// Feed takes the next piece of the answer and returns what closed in it,
// in order. After DocumentClosed or GaveUp it returns nothing more.
func (s *Splitter) Feed(delta string) []Event {
	if s.done || s.failed {
		return nil
	}
	if !s.started {
		var reason string
		if delta, reason = s.preamble(delta); reason != "" {
			return s.giveUp(nil, reason)
		}
	}
	var out []Event
	for i := 0; i < len(delta); i++ {
		out = s.step(delta[i], out)
		if s.done || s.failed {
			break
		}
	}
	return out
}

// preamble reads delta before the document and returns the document's
// text in it once it starts ("" before that), or why it gave up.
//
// Where the document starts is asked at fixed points of the text, never
// where a piece happens to end, so that the answer is the same however
// the model's text is cut into pieces: after each '{' (no document starts
// before its brace, so a long think section written token by token is not
// read again for each token), and after each byte while documentStart
// says the bytes to come may still move the start to a brace read before.
func (s *Splitter) preamble(delta string) (doc, reason string) {
	for len(delta) > 0 {
		n := len(delta)
		if s.recheck {
			n = 1
		} else if i := strings.IndexByte(delta, '{'); i >= 0 {
			n = i + 1
		}
		asked := s.recheck || delta[n-1] == '{'
		s.pre.WriteString(delta[:n])
		delta = delta[n:]
		if s.pre.Len() > maxPreamble {
			return "", "no document within the first 64 KiB"
		}
		if !asked {
			continue
		}
		start, ok, again, reason := documentStart(s.pre.String())
		if reason != "" {
			return "", reason
		}
		s.recheck = again
		if ok {
			s.started = true
			doc = s.pre.String()[start:] + delta
			s.pre.Reset()
			return doc, ""
		}
	}
	return "", ""
}

// Close says the answer has ended: a document that did not close (cut
// short, or never begun) is given up.
func (s *Splitter) Close() []Event {
	if s.done || s.failed {
		return nil
	}
	return s.giveUp(nil, "the answer ended before its document closed")
}

func (s *Splitter) giveUp(out []Event, reason string) []Event {
	s.failed = true
	return append(out, Event{Kind: GaveUp, Reason: reason})
}

// documentStart finds where the document starts in the text before it:
// ok false while it cannot tell yet, reason set when the text is not one
// the splitter follows. again says that what comes next may move the
// start to a brace already read, so the next piece must be read with
// this text even if it has no brace of its own.
func documentStart(pre string) (start int, ok, again bool, reason string) {
	base := 0
	if sections := extract.ThinkSections(pre); len(sections) > 0 {
		last := sections[len(sections)-1]
		if last.End == len(pre) {
			// Still thinking, or a closing tag to come. A "</think>" at
			// the very end may close a section that has no opening tag,
			// and only the next byte says whether it does.
			return 0, false, strings.HasSuffix(pre, extract.ThinkClose), ""
		}
		base = last.End
	}
	rest := pre[base:]
	body := strings.TrimLeft(rest, " \t\r\n")
	if body == "" {
		return 0, false, false, ""
	}
	switch body[0] {
	case '{':
		return base + len(rest) - len(body), true, false, ""
	case '[':
		return 0, false, false, "the answer is an array, not an object holding the item array"
	}
	// Fences are read by lines: while the last line is incomplete, a
	// brace in it may yet turn out to open a fence's content, whatever
	// the line reads as so far (a tag, prose, nothing).
	// A line longer than maxFenceLine is prose, not a fence's: reading
	// the text again for each of its bytes would cost its length squared.
	line := rest[strings.LastIndexByte(rest, '\n')+1:]
	again = len(line) <= maxFenceLine && strings.Contains(line, "{")
	for _, f := range extract.Fences(rest) {
		if f.Tag != "" && !strings.EqualFold(f.Tag, "json") {
			continue
		}
		if f.Close == len(rest) && f.Start == f.End && !strings.Contains(rest[f.Open:], "\n") {
			return 0, false, again, "" // the fence's info line is not complete yet
		}
		content := strings.TrimLeft(rest[f.Start:], " \t\r\n")
		if content == "" {
			return 0, false, again, ""
		}
		if content[0] != '{' {
			return 0, false, false, "the fenced block does not start with an object"
		}
		return base + len(rest) - len(content), true, false, ""
	}
	return 0, false, again, ""
}

// step reads one byte of the document.
func (s *Splitter) step(c byte, out []Event) []Event {
	pos := s.doc.Len()
	s.doc.WriteByte(c)
	d0, str0 := s.end.Depth(), s.end.InString()
	closed := s.end.Feed(string(c))
	if s.end.Failed() {
		return s.giveUp(out, "the brackets of the document do not match")
	}
	d1, str1 := s.end.Depth(), s.end.InString()
	if closed || (d0 == 1 && d1 == 0) {
		if len(s.levels) > 0 && (s.levels[0].state == expectColon || s.levels[0].state == expectValue) {
			return s.giveUp(out, "the document closed inside a member")
		}
		s.done = true
		if !s.found {
			return s.giveUp(out, "the document has no item array at the pointer")
		}
		return append(out, Event{Kind: DocumentClosed, Raw: s.doc.String()})
	}
	if d0 == 0 {
		// The document's opening brace.
		s.levels = append(s.levels, level{state: expectKey})
		return out
	}
	n := len(s.path)
	if s.itemStart >= 0 && d0 == n+2 && d1 == n+1 {
		// An object or array item closed.
		return s.closeItem(pos, out)
	}
	if d1 < d0 && d0 == len(s.levels) && d0 >= 2 && d0 <= n {
		// An object on the path closed; the member holding it is done.
		s.levels = s.levels[:d0-1]
		s.levels[d0-2].state = afterValue
		return out
	}
	// Only the levels on the path are followed: their depth is 1 to
	// len(path), the item array's len(path)+1. Inside any other value
	// the splitter waits for its depth to come back.
	depth := d0
	if depth > len(s.levels) {
		return out
	}
	lv := &s.levels[depth-1]
	if depth == len(s.path)+1 {
		return s.stepArray(c, pos, lv, d1, str0, str1, out)
	}
	switch lv.state {
	case expectKey:
		switch {
		case !str0 && str1:
			lv.state, s.keyStart = inKey, pos
		case isSpace(c):
		default:
			return s.giveUp(out, "a member name was expected")
		}
	case inKey:
		if str0 && !str1 {
			name, err := strictjson.ParseString(s.doc.String()[s.keyStart : pos+1])
			if err != nil {
				return s.giveUp(out, "a member name is not a valid string")
			}
			key, _ := name.AsString()
			lv.onPath = key == s.path[depth-1]
			if lv.onPath {
				if lv.seen {
					return s.giveUp(out, "the member "+key+" appears twice")
				}
				lv.seen = true
			}
			lv.state = expectColon
		}
	case expectColon:
		switch {
		case c == ':':
			lv.state = expectValue
		case isSpace(c):
		default:
			return s.giveUp(out, "a colon was expected")
		}
	case expectValue:
		switch {
		case isSpace(c):
		case lv.onPath && depth < len(s.path) && c == '{':
			s.levels = append(s.levels, level{state: expectKey})
			lv.state = inValue
		case lv.onPath && depth == len(s.path) && c == '[':
			s.levels = append(s.levels, level{state: expectValue})
			s.found = true
			lv.state = inValue
		case lv.onPath:
			return s.giveUp(out, "the member on the item array's path is not an "+map[bool]string{true: "array", false: "object"}[depth == len(s.path)])
		default:
			lv.state = inValue
			if d1 == d0 && !str1 && (c == ',' || c == '}') {
				return s.giveUp(out, "a member has no value")
			}
		}
	case inValue:
		// A string or container value ends by depth or quote; a scalar at
		// the first delimiter.
		switch {
		case str0 || d0 < d1:
		case c == ',':
			lv.state = expectKey
		case c == '}':
		case isSpace(c):
			lv.state = afterValue
		}
	case afterValue:
		switch {
		case c == ',':
			lv.state = expectKey
		case isSpace(c), c == '}':
		default:
			return s.giveUp(out, "a comma was expected")
		}
	}
	return out
}

// stepArray reads one byte at the item array's own depth.
func (s *Splitter) stepArray(c byte, pos int, lv *level, d1 int, str0, str1 bool, out []Event) []Event {
	d0 := len(s.path) + 1
	switch lv.state {
	case expectValue:
		switch {
		case isSpace(c):
		case c == ']' && d1 < d0:
			s.closeArray()
		case c == '{' || c == '[' || (!str0 && str1):
			s.itemStart, lv.state = pos, inValue
		default:
			return s.giveUp(out, "an item was expected")
		}
	case inValue:
		// A string item closes with its quote; an object or array item
		// is closed in step, one depth further in.
		if str0 && !str1 {
			return s.closeItem(pos, out)
		}
	case afterValue:
		switch {
		case isSpace(c):
		case c == ',':
			lv.state = expectValue
		case c == ']' && d1 < d0:
			s.closeArray()
		default:
			return s.giveUp(out, "a comma was expected between items")
		}
	}
	return out
}

// closeItem reports the item that closed at pos.
func (s *Splitter) closeItem(pos int, out []Event) []Event {
	out = append(out, Event{Kind: ItemClosed, Index: s.items, Raw: s.doc.String()[s.itemStart : pos+1]})
	s.items++
	s.itemStart = -1
	s.levels[len(s.path)].state = afterValue
	return out
}

// closeArray leaves the item array: its level goes, and the member that
// held it is done.
func (s *Splitter) closeArray() {
	s.levels = s.levels[:len(s.path)]
	s.levels[len(s.path)-1].state = afterValue
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
