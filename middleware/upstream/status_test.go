package upstream

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestUpstreamErrorBodyLoggedClipped: an upstream error answer of tens of
// kilobytes (a proxy's HTML page, a message quoting a whole prompt) keeps
// its status, and the request's log line (HTTPError.Cause) holds its
// first bytes and the count of the rest, not the whole body; a short
// answer is kept whole.
func TestUpstreamErrorBodyLoggedClipped(t *testing.T) {
	const bound = 2*512 + 200          // a clipped message and body, and their words
	big := strings.Repeat("é", 25<<10) // 50 KB, two bytes a rune
	tests := []struct {
		name     string
		status   int
		body     string
		wantMsg  string // a prefix of the client's message
		wantLeft string // in the log line; "" when nothing is left out
	}{
		{"short Ollama error", 404, `{"error":"model 'x' not found"}`, "model 'x' not found", ""},
		{"50 KB Ollama message", 500, `{"error":"` + big + `"}`, "éé", "bytes left out"},
		{"50 KB OpenAI message", 400, `{"error":{"message":"` + big + `"}}`, "éé", "bytes left out"},
		{"50 KB page", 502, "<html>" + big + "</html>", "upstream answered 502", "bytes left out"},
		{"body past the read limit", 502, strings.Repeat("x", maxErrorBody+10), "upstream answered 502", "+ bytes left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			he := StatusError(&http.Response{StatusCode: tt.status, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader(tt.body))})
			if he.Status() != tt.status {
				t.Errorf("Status() = %d, want %d", he.Status(), tt.status)
			}
			if !strings.HasPrefix(he.Message(), tt.wantMsg) {
				t.Errorf("Message() = %.80q…, want it to start with %q", he.Message(), tt.wantMsg)
			}
			logged := he.Cause()
			if len(logged) > bound {
				t.Errorf("log line's error is %d bytes, want at most %d: %.120q…", len(logged), bound, logged)
			}
			if !utf8.ValidString(logged) {
				t.Errorf("log line's error is cut inside a rune: %.120q…", logged)
			}
			if tt.wantLeft == "" && strings.Contains(logged, "left out") || !strings.Contains(logged, tt.wantLeft) {
				t.Errorf("Cause() = %.200q…, want it to say %q", logged, tt.wantLeft)
			}
		})
	}
}
