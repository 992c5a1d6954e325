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
