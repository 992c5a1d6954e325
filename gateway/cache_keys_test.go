package gateway

import (
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// TestCachePerKey sends one guarded prompt with two keys: each key's first
// ask is a miss, its second a hit, unless cache.shared_across_keys lets
// the second key read the first key's entry. A hit across keys would tell
// one tenant what another asked.
func TestCachePerKey(t *testing.T) {
	tests := []struct {
		name   string
		shared bool
		want   []string // X-Cache of quiz-app, ops, ops
	}{
		{"per key", false, []string{"miss", "miss", "hit"}},
		{"shared across keys", true, []string{"miss", "hit", "hit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &keyUpstream{}
			gw := newAccessGateway(t, up, func(cfg *config.Config) {
				withKeys(config.AccessLimits{}, nil)(cfg)
				cfg.Access.Keys[0].Models = []string{"story"}
				cfg.Routes = []config.Route{{Model: "story", Upstream: "mistral", Contract: "json"}}
				cfg.Cache.SharedAcrossKeys = tt.shared
			}, nil)
			var got []string
			for _, secret := range []string{quizSecret, opsSecret, opsSecret} {
				resp, body := sendRequest(t, gw.URL, "POST", "/api/generate",
					strings.NewReader(`{"model":"story","prompt":"what did the other tenant ask?","stream":false}`), bearer(secret))
				if resp.StatusCode != 200 {
					t.Fatalf("generate = %d %s", resp.StatusCode, body)
				}
				got = append(got, resp.Header.Get("X-Cache"))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("X-Cache of quiz-app, ops, ops = %v, want %v", got, tt.want)
			}
		})
	}
}
