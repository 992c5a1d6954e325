package apis

import "testing"

// TestForPath: the registry serves each path once, and a path finds its
// codec with or without a trailing slash, as the guard routes it.
func TestForPath(t *testing.T) {
	seen := map[string]bool{}
	for _, cd := range All() {
		if seen[cd.Path()] {
			t.Errorf("two codecs in All for %s", cd.Path())
		}
		seen[cd.Path()] = true
	}
	tests := []struct {
		path, want string // want: the codec's path, "" for none
	}{
		{"/api/generate", "/api/generate"},
		{"/api/chat/", "/api/chat"},
		{"/v1/chat/completions", "/v1/chat/completions"},
		{"/v1/completions", "/v1/completions"},
		{"/v1/responses/", "/v1/responses"},
		{"/v1/messages", "/v1/messages"},
		{"/api/tags", ""},
		{"/v1/chat", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got := ""
		if cd := ForPath(tt.path); cd != nil {
			got = cd.Path()
		}
		if got != tt.want {
			t.Errorf("ForPath(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
