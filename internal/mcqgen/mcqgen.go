// Package mcqgen generates valid multiple-choice-question documents of a
// given size for benchmarks of the contract engine and the gateway.
package mcqgen

import (
	"fmt"
	"strings"
)

// Doc builds a valid MCQ document (contract mcq, default params) of about size bytes: questions cycle
// through weights 1, 2, 3 with their cognitive levels and explanations.
func Doc(size int) string {
	return build(func(i, total int) bool { return total < size || i < 3 })
}

// Questions builds a valid MCQ document (contract mcq, default params) of
// exactly n questions (at least one), made like Doc's.
func Questions(n int) string {
	return build(func(i, _ int) bool { return i < max(n, 1) })
}

// build adds questions while more(i, bytes so far) holds.
func build(more func(i, total int) bool) string {
	var qs []string
	counts := [4]int{}
	total := 0
	minutes := 0
	for i := 0; more(i, total); i++ {
		w := i%3 + 1
		counts[w]++
		minutes += w
		level := [...]string{"", "Reproduction", "Application", "Analysis"}[w]
		ext := "null"
		if w > 1 {
			ext = `{"title":"Why","steps":["Read the code line by line.","Track the value of each variable."],"content":"The list is sorted in place, so the original order is lost."}`
		}
		q := fmt.Sprintf(`{"question_id":"Q%03d","question":"%d. Which statement about list number %d in Python is true?","options":["It is sorted in place","It returns a new list","It raises an error","It prints nothing"],"answer":%d,"explanation":"Lists have a sort method that works in place and returns None.","weight":%d,"topic":"Lists","concept":"sorting","cognitive_level":"%s","extended_explanation":%s,"mini_glossary":[{"term":"list","definition":"A mutable sequence."}]}`,
			i+1, i+1, i, i%4, w, level, ext)
		qs = append(qs, q)
		total += len(q)
	}
	n := len(qs)
	return fmt.Sprintf(`{"meta":{"schema_version":"1.0","title":"Bench","created":"2026-11-22","target_audience":"developers","question_count":%d,"difficulty_profile":{"easy":%d,"medium":%d,"hard":%d},"time_per_weight_minutes":{"1":1,"2":2,"3":3},"additional_buffer_minutes":5,"test_duration_minutes":%d},"questions":[%s]}`,
		n, counts[1], counts[2], counts[3], minutes+5, strings.Join(qs, ","))
}
