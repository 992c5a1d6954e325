package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/pool"
)

// hugeTags is an upstream whose /api/tags lists models past
// pool.MaxMemberAnswerBytes; it counts the bytes it wrote.
type hugeTags struct{ models int }

func (h hugeTags) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"models":[`)
	for i := range h.models {
		if i > 0 {
			io.WriteString(w, ",")
		}
		fmt.Fprintf(w, `{"name":"llama3.2-%08d:latest","model":"llama3.2-%08d:latest","size":1,"digest":"%064d"}`, i, i, i)
	}
	io.WriteString(w, `]}`)
}

// TestAccessListingBounded: a scoped key's listing is held back to be
// filtered; one past the bound a pool member's answer has is refused with
// a 502 in Ollama's shape, not buffered whole, while one within it is
// filtered as before.
func TestAccessListingBounded(t *testing.T) {
	const entry = 150 // bytes of one model in hugeTags' listing, about
	tests := []struct {
		name   string
		models int
		status int
	}{
		{"within the bound", 100, http.StatusOK},
		{"past the bound", pool.MaxMemberAnswerBytes/entry + 1000, http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := newAccessGateway(t, hugeTags{tt.models}, withKeys(config.AccessLimits{}, nil), nil)
			resp, body := sendRequest(t, gw.URL, "GET", "/api/tags", nil, bearer(quizSecret))
			if resp.StatusCode != tt.status {
				t.Fatalf("GET /api/tags of %d models = %d %.200s, want %d", tt.models, resp.StatusCode, body, tt.status)
			}
			if tt.status == http.StatusOK && !strings.Contains(string(body), `"llama3.2-00000000:latest"`) {
				t.Errorf("GET /api/tags = %.200s, want the key's models", body)
			}
			if tt.status != http.StatusOK {
				if msg, _ := errorMessage(t, "/api/tags", body); msg == "" {
					t.Errorf("GET /api/tags = %s, want an error in Ollama's shape", body)
				}
			}
		})
	}
}

// TestAccessListingUnreadable checks that a scoped key's listing the
// gateway cannot filter is answered by the one error writer: a 502 in
// Ollama's shape that says nothing of why, the cause in the request's log
// line, and the 502 counted for the key (a listing written by hand left
// echo's status at the upstream's 200).
func TestAccessListingUnreadable(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		encoding string
		body     string
		cause    string // in the request's log line, not the body
	}{
		{"tags not JSON", "/api/tags", "", `{"models": [`, "unexpected end of JSON input"},
		{"openai list not JSON", "/v1/models", "", `{"data": 7}`, "model list: data: json: cannot unmarshal"},
		{"tags encoded", "/api/tags", "br", "\x8b\x01\x80", "the listing is encoded (br)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tt.encoding != "" {
					w.Header().Set("Content-Encoding", tt.encoding)
				}
				io.WriteString(w, tt.body)
			})
			logs := &logBuffer{}
			gw, srv := newAccessServer(t, up, withKeys(config.AccessLimits{}, nil), logs)
			resp, body := sendRequest(t, gw.URL, "GET", tt.path, nil, bearer(quizSecret))
			if resp.StatusCode != http.StatusBadGateway {
				t.Fatalf("GET %s = %d %s, want 502", tt.path, resp.StatusCode, body)
			}
			if got := ollamaError(t, resp, body); got != "upstream model list unreadable" {
				t.Errorf("GET %s error = %q, want %q", tt.path, got, "upstream model list unreadable")
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("GET %s Content-Encoding = %q on an error, want none", tt.path, ce)
			}
			if strings.Contains(string(body), tt.cause) {
				t.Errorf("GET %s body %s holds the cause %q", tt.path, body, tt.cause)
			}
			// The request's log line is written once the key is counted.
			logs.waitFor(t, tt.cause)
			if got := srv.access.Stats()["quiz-app"].ByStatus; got["502"] != 1 {
				t.Errorf("GET %s counted for the key as %v, want one 502", tt.path, got)
			}
		})
	}
}
