package pool

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// TestFanOutErrorsShowNoPassword checks that a fanned-out pull that fails
// on a member ends in Ollama's error shape — the one error type's body as
// a stream's last line, or the error the one writer writes — and names the
// member without the password its URL carries.
func TestFanOutErrorsShowNoPassword(t *testing.T) {
	const password = "pw-MARKER-s3cret"
	tests := []struct {
		name string
		body string
	}{
		{"pull", `{"model":"m","stream":false}`},
		{"streamed pull", `{"model":"m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFakeOllama(t, "a", nil, nil)
			b := newFakeOllama(t, "b", nil, nil)
			b.pullFails = true
			withPassword := b.url()
			withPassword.User = url.UserPassword("gateway", password)
			p := New(Options{Members: []Member{{URL: a.url()}, {URL: withPassword}}, HealthInterval: -1,
				Breaker: upstream.BreakerSettings{FailureThreshold: 1}, RequestModel: access.RequestModel})
			t.Cleanup(p.Close)
			req, _ := http.NewRequest(http.MethodPost, "/api/pull", strings.NewReader(tt.body))
			resp, err := p.RoundTrip(req)
			var last []byte
			if err != nil {
				last = apierr.From(err).Body()
			} else {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if bytes.Contains(body, []byte(password)) {
					t.Errorf("%s stream = %s, holds the member's password", tt.name, body)
				}
				lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
				last = lines[len(lines)-1]
			}
			var e map[string]string
			if err := json.Unmarshal(last, &e); err != nil || len(e) != 1 || !strings.HasPrefix(e["error"], "pull failed on 1 of 2 upstreams: ") {
				t.Fatalf("%s error = %s, want exactly {\"error\": \"pull failed on 1 of 2 upstreams: …\"}", tt.name, last)
			}
			if strings.Contains(e["error"], password) || !strings.Contains(e["error"], "gateway:xxxxx@") {
				t.Errorf("%s error = %q, want the member named with its password masked", tt.name, e["error"])
			}
		})
	}
}
