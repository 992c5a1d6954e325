package lint

import "testing"

func TestExpectation(t *testing.T) {
	tests := []struct {
		name string
		want string
		ok   bool
	}{
		{"valid_python_basics_en.json", "valid", true},
		{"valid.txt", "valid", true},
		{"invalid_ANSWER_RANGE_one_based_answer.json", "ANSWER_RANGE", true},
		{"invalid_JSON_SYNTAX_trailing_comma.txt", "JSON_SYNTAX", true},
		{"invalid_ANSWER_RANGE_1_based.json", "ANSWER_RANGE", true},
		{"invalid_OPTIONS_COUNT_2_options.json", "OPTIONS_COUNT", true},
		{"invalid_2_options.json", "", false},
		{"invalid_lower_case.json", "", false},
		{"README.md", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Expectation(tt.name)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Expectation(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
}
