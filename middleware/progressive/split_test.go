package progressive

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// splitAll feeds text in pieces of size n (all at once when n is 0) and
// returns the items, whether the document closed, and the reason it gave
// up ("" when it did not).
func splitAll(t testing.TB, pointer, text string, n int) (items []string, closed bool, reason string) {
	t.Helper()
	s, err := NewSplitter(pointer)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	if n <= 0 {
		n = len(text) + 1
	}
	for i := 0; i < len(text); i += n {
		evs = append(evs, s.Feed(text[i:min(i+n, len(text))])...)
	}
	evs = append(evs, s.Close()...)
	for _, e := range evs {
		switch e.Kind {
		case ItemClosed:
			if e.Index != len(items) {
				t.Fatalf("item index %d, want %d", e.Index, len(items))
			}
			items = append(items, e.Raw)
		case DocumentClosed:
			closed = true
		case GaveUp:
			reason = e.Reason
		}
	}
	return items, closed, reason
}

func TestSplitter(t *testing.T) {
	tests := []struct {
		name, pointer, text string
		items               []string
		closed              bool
		gaveUp              bool
	}{
		{name: "bare", pointer: "/questions", text: `{"questions":[{"a":1},{"b":"x}"}]}`,
			items: []string{`{"a":1}`, `{"b":"x}"}`}, closed: true},
		{name: "members around, whitespace", pointer: "/questions",
			text:  "\n {\"meta\": {\"n\": [1, 2]}, \"t\": \"q\\\"[\" ,\n \"questions\" : [ {\"a\": [1]} ,\n {\"b\": 2} ], \"z\": null, \"n\": 5 }\n",
			items: []string{`{"a": [1]}`, `{"b": 2}`}, closed: true},
		{name: "nested", pointer: "/plan/steps", text: `{"x":1,"plan":{"id":"p","steps":[{"s":1},["t"],"u"],"k":true},"y":[{}]}`,
			items: []string{`{"s":1}`, `["t"]`, `"u"`}, closed: true},
		{name: "empty array", pointer: "/questions", text: `{"questions":[]}`, closed: true},
		{name: "json fence after prose", pointer: "/questions", text: "Here it is:\n```json\n{\"questions\":[{\"a\":1}]}\n```\n",
			items: []string{`{"a":1}`}, closed: true},
		{name: "think section", pointer: "/questions", text: "<think>\n{\"questions\":[1]}\n</think>\n{\"questions\":[{\"a\":1}]}",
			items: []string{`{"a":1}`}, closed: true},
		{name: "python fence", pointer: "/questions", text: "```python\nx = {}\n```\n", gaveUp: true},
		{name: "array document", pointer: "/questions", text: `[{"a":1}]`, gaveUp: true},
		{name: "no array", pointer: "/questions", text: `{"other":[{"a":1}]}`, gaveUp: true},
		{name: "member not an array", pointer: "/questions", text: `{"questions":{"a":1}}`, gaveUp: true},
		{name: "duplicate member", pointer: "/questions", text: `{"questions":[{"a":1}],"questions":[]}`, items: []string{`{"a":1}`}, gaveUp: true},
		{name: "number items", pointer: "/questions", text: `{"questions":[1,2]}`, gaveUp: true},
		{name: "truncated", pointer: "/questions", text: `{"questions":[{"a":1},{"b"`, items: []string{`{"a":1}`}, gaveUp: true},
		{name: "trailing comma", pointer: "/questions", text: `{"questions":[{"a":1},]}`, items: []string{`{"a":1}`}, closed: true},
		{name: "prose only", pointer: "/questions", text: `I cannot do that.`, gaveUp: true},
	}
	for _, tt := range tests {
		for _, n := range []int{0, 1, 3} {
			items, closed, reason := splitAll(t, tt.pointer, tt.text, n)
			if diff := cmp.Diff(tt.items, items); diff != "" {
				t.Errorf("%s, pieces of %d: items (-want +got):\n%s", tt.name, n, diff)
			}
			if closed != tt.closed || (reason != "") != tt.gaveUp {
				t.Errorf("%s, pieces of %d: closed %v, gave up %q; want closed %v, gave up %v", tt.name, n, closed, reason, tt.closed, tt.gaveUp)
			}
		}
	}
}

// FuzzSplitter checks that a document split at every cut point (one
// cut point of a long one) yields the items it yields whole, and those
// are the items of the document as strictjson parses it, whenever the
// splitter follows it to its close.
func FuzzSplitter(f *testing.F) {
	f.Add(`{"questions":[{"a":1},{"b":"x}"}]}`, 5)
	f.Add("{\"meta\":{\"n\":[1,2]},\"questions\":[{\"a\":\"\\\"]\"},[1]],\"z\":null}", 17)
	f.Add("```json\n{\"questions\":[\"a\",{}]}\n```", 9)
	f.Add(`{"questions":[]}`, 3)
	f.Add(`{"q":1,"questions":[{"a":[{"b":[]}]}],"r":"]}"}`, 11)
	// Preambles whose reading depends on what follows a piece's end: a
	// "</think>" that may close a section with no opening tag, and a
	// fence's opening line with a brace in it.
	f.Add(`{"questions":[{}]}</think>json]]`, 0)
	f.Add("\"questions\"\n```{\"questions\":[\"questions\"]},```]\"", 0)
	f.Add(",```{\"questions\":[\"questions\"]}}```\"questions\"x", 0)
	f.Add("{</think>\n{\"questions\":[\"questions\"]}{", 0)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		whole, closed, _ := splitAll(t, "/questions", text, 0)
		if !closed {
			return
		}
		// Every cut point of a short text, one of a long one.
		from, to := 0, len(text)
		if len(text) > 256 {
			if cut < 0 {
				cut = -cut
			}
			from = cut % (len(text) + 1)
			to = from
		}
		for cut := from; cut <= to; cut++ {
			s, _ := NewSplitter("/questions")
			var got []string
			for _, e := range append(s.Feed(text[:cut]), s.Feed(text[cut:])...) {
				if e.Kind == ItemClosed {
					got = append(got, e.Raw)
				}
			}
			if !slicesEqual(got, whole) {
				t.Fatalf("cut at %d: items %q, whole %q", cut, got, whole)
			}
		}
		// Where the whole document parses, its items are the ones found.
		doc, err := strictjson.ParseString(text[len(text)-len(trimToDoc(text)):])
		if err != nil {
			return
		}
		arr := doc.Get("questions")
		if arr == nil || arr.Kind != strictjson.KindArray {
			t.Fatalf("the splitter closed a document without the array: %q", text)
		}
		if len(arr.Items) != len(whole) {
			t.Fatalf("%d items found, the document has %d", len(whole), len(arr.Items))
		}
		for i, it := range arr.Items {
			v, err := strictjson.ParseString(whole[i])
			if err != nil || !strictjson.Equal(v, it) {
				t.Fatalf("item %d: %q, the document's is %s", i, whole[i], strictjson.Marshal(it))
			}
		}
	})
}

// trimToDoc returns text from its document's first '{' when the text
// is bare JSON; fenced or prefixed texts are left whole (their parse fails
// and the comparison is skipped).
func trimToDoc(text string) string {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return text[i:]
	}
	return text
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
