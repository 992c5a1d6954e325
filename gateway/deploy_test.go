package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

var seriesName = regexp.MustCompile(`\bgateway_[a-z_]+`)

// TestDeployFilesNameRealSeries: every series the Grafana dashboard and the
// alert rules name exists in /metrics after scripted requests (a valid, a
// repaired, a failed answer, a cache hit, a pass-through), so that neither
// file shows nothing or never fires because a name drifted.
func TestDeployFilesNameRealSeries(t *testing.T) {
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json"), readFixture(t, "mcq_derivable.txt"), "no JSON here"}}
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.Cache.Redis = "redis://127.0.0.1:1/0" })
	mcq := map[string]string{"X-Contract": "mcq"}
	for _, p := range []string{"a", "b", "c", "a"} {
		post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"`+p+`","stream":false}`, mcq)
	}
	get(t, gw.URL+"/api/tags")
	_, metrics := get(t, gw.URL+"/metrics")
	var have []string
	for _, l := range strings.Split(string(metrics), "\n") {
		if name, _, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "#") {
			name, _, _ = strings.Cut(name, "{")
			have = append(have, name)
		}
	}
	dash, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "contract-gateway.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(dash) {
		t.Fatal("the Grafana dashboard is not JSON")
	}
	alerts, err := os.ReadFile(filepath.Join("..", "deploy", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for file, b := range map[string][]byte{"grafana": dash, "alerts": alerts} {
		names := seriesName.FindAllString(string(b), -1)
		if len(names) == 0 {
			t.Errorf("%s names no gateway series", file)
		}
		for _, n := range names {
			if !slices.Contains(have, n) {
				t.Errorf("%s names %s, which /metrics does not have", file, n)
			}
		}
	}
}
