package benchgateway

import (
	"net/http"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/benchload"
)

// TestStartServesUntilClose checks that a started gateway passes a
// request through to its upstream and stops answering once closed.
func TestStartServesUntilClose(t *testing.T) {
	up := benchload.FixedUpstream(`{"model":"m","response":"{}","done":true}`)
	defer up.Close()
	cfg := config.Default()
	cfg.Upstream = up.URL
	gw := Start(cfg)
	benchload.Send(http.DefaultClient, gw.URL, `{"model":"m","prompt":"p","stream":false}`, nil)
	gw.Close()
	if resp, err := http.Get(gw.URL + "/api/version"); err == nil {
		resp.Body.Close()
		t.Errorf("GET %s/api/version after Close = %d, want an error", gw.URL, resp.StatusCode)
	}
}
