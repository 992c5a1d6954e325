package strictjson

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
)

// benchSizes are the document sizes of the benchmarks: a short quiz, a
// typical generated test, and a large batch.
var benchSizes = []struct {
	name string
	size int
}{
	{"2KB", 2 << 10},
	{"20KB", 20 << 10},
	{"200KB", 200 << 10},
}

// The shape of a generated multiple-choice document (contract mcq).
type (
	mcqGlossary struct {
		Term       string `json:"term"`
		Definition string `json:"definition"`
	}
	mcqExtended struct {
		Title   string   `json:"title"`
		Steps   []string `json:"steps"`
		Content string   `json:"content"`
	}
	mcqItem struct {
		ID            string        `json:"question_id"`
		Question      string        `json:"question"`
		Options       []string      `json:"options"`
		Answer        int           `json:"answer"`
		Explanation   string        `json:"explanation"`
		Weight        int           `json:"weight"`
		Topic         string        `json:"topic"`
		Concept       string        `json:"concept"`
		Level         string        `json:"cognitive_level"`
		Extended      *mcqExtended  `json:"extended_explanation"`
		MiniGlossary  []mcqGlossary `json:"mini_glossary"`
		TimeEstimateS float64       `json:"time_estimate_seconds"`
	}
	mcqSet struct {
		Meta      map[string]any `json:"meta"`
		Questions []mcqItem      `json:"questions"`
	}
)

// mcqDoc builds a pretty-printed multiple-choice document of at least size
// bytes, shaped like real model output: a meta object, then questions with
// options, explanations, code with escaped newlines, non-ASCII text and a
// mix of null and object values.
func mcqDoc(size int) []byte {
	d := mcqSet{Meta: map[string]any{
		"schema_version": "1.0", "title": "Python – Grundlagen & Datenstrukturen", "created": "2025-01-15",
		"target_audience": "Einsteiger", "question_count": 0,
		"difficulty_profile":        map[string]int{"easy": 0, "medium": 0, "hard": 0},
		"time_per_weight_minutes":   map[string]float64{"1": 1.5, "2": 3, "3": 5},
		"additional_buffer_minutes": 5, "test_duration_minutes": 0,
	}}
	// Marshal once to learn the size of a question, then again per
	// estimate, so that building a 200 KB document stays cheap.
	want := 1
	for {
		for n := len(d.Questions) + 1; n <= want; n++ {
			d.Questions = append(d.Questions, mcqQuestion(n))
		}
		d.Meta["question_count"] = len(d.Questions)
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			panic(err)
		}
		if len(out) >= size {
			return out
		}
		want = len(d.Questions)*size/len(out) + 1
	}
}

// mcqQuestion returns question n (1-based); weights cycle through 2, 3, 1.
func mcqQuestion(n int) mcqItem {
	w := n%3 + 1
	q := mcqItem{
		ID:          fmt.Sprintf("Q%03d", n),
		Question:    fmt.Sprintf("%d. What does this code print?\n```python\n1: xs = [%d, 1, 2]\n2: print(sorted(xs)[0] * \"ab\")\n```", n, n),
		Options:     []string{"ab", "abab", "TypeError", "\"\" (an empty string)"},
		Answer:      n % 4,
		Explanation: "sorted() returns a new list; its first item times a string repeats the string – “ab” once.",
		Weight:      w,
		Topic:       "Listen & Sortierung",
		Concept:     "sorted() vs. list.sort()",
		Level:       []string{"Reproduction", "Application", "Analysis"}[w-1],
		MiniGlossary: []mcqGlossary{
			{Term: "sorted()", Definition: "Returns a new sorted list from the items of an iterable."},
		},
		TimeEstimateS: 37.5,
	}
	if w > 1 {
		q.Extended = &mcqExtended{Title: "Step by step", Steps: []string{"sorted(xs) → [1, 2, …]", "1 * \"ab\" → \"ab\""}, Content: "Multiplying a str by an int repeats it."}
	}
	return q
}

// BenchmarkParse compares Parse with encoding/json on the same documents:
// json.Valid only checks syntax, json.Unmarshal into any builds a tree but
// loses member order and number literals, Parse does both strictly.
func BenchmarkParse(b *testing.B) {
	for _, s := range benchSizes {
		data := mcqDoc(s.size)
		b.Run(s.name+"/strictjson.Parse", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if !json.Valid(data) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(s.name+"/json.Unmarshal-any", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMarshal compares the canonical encoding with json.Marshal of the
// same document decoded into any.
func BenchmarkMarshal(b *testing.B) {
	for _, s := range benchSizes {
		data := mcqDoc(s.size)
		v, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		var generic any
		if err := json.Unmarshal(data, &generic); err != nil {
			b.Fatal(err)
		}
		out := Marshal(v)
		b.Run(s.name+"/strictjson.AppendJSON", func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			buf := make([]byte, 0, len(out))
			for b.Loop() {
				buf = v.AppendJSON(buf[:0])
			}
		})
		b.Run(s.name+"/json.Marshal-any", func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(generic); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestMCQDocParses(t *testing.T) {
	for _, s := range benchSizes {
		data := mcqDoc(s.size)
		if len(data) < s.size {
			t.Fatalf("mcqDoc(%d) is %d bytes", s.size, len(data))
		}
		v, err := Parse(data)
		if err != nil {
			t.Fatalf("Parse(mcqDoc(%d)) = %v", s.size, err)
		}
		if n, ok := v.Get("meta").Get("question_count").AsInt(); !ok || n != int64(len(v.Get("questions").Items)) {
			t.Errorf("mcqDoc(%d): question_count %s for %d questions", s.size, strconv.FormatInt(n, 10), len(v.Get("questions").Items))
		}
	}
}
