package progressive

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func mcqChecker(t testing.TB, params validators.Params) *Checker {
	t.Helper()
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Params(params)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChecker(v, p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mcqItems returns the n questions of a valid document, each edited by
// edit (nil: none).
func mcqItems(t testing.TB, n int, edit func(i int, q *strictjson.Value)) []*strictjson.Value {
	t.Helper()
	doc, err := strictjson.ParseString(mcqgen.Questions(n))
	if err != nil {
		t.Fatal(err)
	}
	items := doc.Get("questions").Items
	if edit != nil {
		for i, q := range items {
			edit(i, q)
		}
	}
	return items
}

func TestCheckerBlocking(t *testing.T) {
	tests := []struct {
		name   string
		params validators.Params
		edit   func(i int, q *strictjson.Value)
		// want lists, per prefix length, the blocking codes at their paths.
		want []string
	}{
		{name: "valid items", want: []string{"", "", ""}},
		{name: "caller's count and difficulty wait for the end", params: validators.Params{"question_count": "10", "difficulty": "3/5/2"},
			want: []string{"", "", ""}},
		{name: "answer out of range", edit: func(i int, q *strictjson.Value) {
			if i == 1 {
				q.Set("answer", strictjson.Int(9))
			}
		}, want: []string{"", "ANSWER_RANGE@questions[1].answer", "ANSWER_RANGE@questions[1].answer"}},
		{name: "id by position", edit: func(i int, q *strictjson.Value) {
			if i == 2 {
				q.Set("question_id", strictjson.String("Q001"))
			}
		}, want: []string{"", "", "QUESTION_ID_DUPLICATE@questions[2].question_id"}},
		{name: "near-duplicate question is a warning", edit: func(i int, q *strictjson.Value) {
			q.Set("question", strictjson.String(fmt.Sprintf("%d. Which statement about lists is true?", i+1)))
		}, want: []string{"", "", ""}},
	}
	for _, tt := range tests {
		c := mcqChecker(t, tt.params)
		items := mcqItems(t, len(tt.want), tt.edit)
		var got []string
		for n := 1; n <= len(items); n++ {
			_, _, bl := c.Check(items[:n])
			var codes []string
			for _, v := range bl {
				codes = append(codes, v.Code+"@"+v.Path)
			}
			got = append(got, strings.Join(codes, " "))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: blocking (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestAssembler(t *testing.T) {
	tests := []struct {
		name, pointer, model, want string
	}{
		{name: "members before the array follow it", pointer: "/questions",
			model: `{"meta":{"n":2}, "questions":[{"a":1},{"b":2}], "z":[1]}`,
			want:  `{"questions":[{"a":1},{"b":2}],"meta":{"n":2},"z":[1]}`},
		{name: "nested", pointer: "/plan/steps",
			model: `{"x":1,"plan":{"id":"p","steps":[{"s":1}]},"y":2}`,
			want:  `{"plan":{"steps":[{"s":1}],"id":"p"},"x":1,"y":2}`},
		{name: "no items", pointer: "/questions", model: `{"questions":[],"n":0}`, want: `{"questions":[],"n":0}`},
	}
	for _, tt := range tests {
		a, err := NewAssembler(tt.pointer)
		if err != nil {
			t.Fatal(err)
		}
		model, err := strictjson.ParseString(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		items, _ := model.At(tt.pointer)
		var deltas []string
		for _, it := range items.Items {
			deltas = append(deltas, a.Item(it)...)
		}
		doc, err := a.Document(model)
		if err != nil {
			t.Fatal(err)
		}
		last, err := a.Close(doc)
		if err != nil {
			t.Fatal(err)
		}
		deltas = append(deltas, last)
		if got := strings.Join(deltas, ""); got != tt.want || got != a.Text() || got != string(strictjson.Marshal(doc)) {
			t.Errorf("%s: deltas %q, text %q, document %s; want %s", tt.name, got, a.Text(), strictjson.Marshal(doc), tt.want)
		}
		// Sent whole, the document keeps the model's member order.
		if got, want := strictjson.Marshal(a.InModelOrder(doc, model)), strictjson.Marshal(model); string(got) != string(want) {
			t.Errorf("%s: in the model's order %s, want %s", tt.name, got, want)
		}
	}
}

// BenchmarkCheckStream measures the checks of one whole stream: every
// prefix of n questions validated once, as the items close.
func BenchmarkCheckStream(b *testing.B) {
	for _, n := range []int{8, 20, 50} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			c := mcqChecker(b, nil)
			items := mcqItems(b, n, nil)
			b.ReportAllocs()
			for b.Loop() {
				for k := 1; k <= n; k++ {
					if _, _, bl := c.Check(items[:k]); len(bl) != 0 {
						b.Fatal(bl)
					}
				}
			}
		})
	}
}
