package gateway

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/contractgateway/gateway/config"
)

// deployExprs are the PromQL expressions of the Grafana dashboard and of
// the Prometheus alert rules under deploy/.
func deployExprs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	raw, err := os.ReadFile("../deploy/grafana/contract-gateway.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out["grafana: "+p.Title] = append(out["grafana: "+p.Title], tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(string); ok && strings.HasPrefix(q, "label_values(") {
			out["grafana: variables"] = append(out["grafana: variables"], q)
		}
	}
	raw, err = os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts: %v", err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts++
			out["alert: "+r.Alert] = append(out["alert: "+r.Alert], r.Expr)
		}
	}
	if alerts == 0 {
		t.Error("no alert rules")
	}
	return out
}

var (
	seriesName   = regexp.MustCompile(`\bgateway_[a-z0-9_]+`)
	selector     = regexp.MustCompile(`\b(gateway_[a-z0-9_]+)\{([^}]*)\}`)
	matcherLabel = regexp.MustCompile(`(\w+)\s*(?:=~|!~|!=|=)`)
	byClause     = regexp.MustCompile(`\bby\s*\(([^)]*)\)`)
	labelValues  = regexp.MustCompile(`label_values\((gateway_[a-z0-9_]+),\s*(\w+)\)`)
)

// exposedLabels reads /metrics: every series name with its label names.
func exposedLabels(body []byte) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, rest, _ := strings.Cut(l, "{")
		name, _, _ = strings.Cut(name, " ")
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		if labels, _, ok := strings.Cut(rest, "}"); ok {
			for _, m := range matcherLabel.FindAllStringSubmatch(labels, -1) {
				out[name][m[1]] = true
			}
		}
	}
	return out
}

// TestDeploySeriesExist: every series and label the Grafana dashboard and
// the alert rules name is exposed on /metrics after guarded requests.
func TestDeploySeriesExist(t *testing.T) {
	url, _ := scriptedStatsGateway(t, func(c *config.Config) { c.AdminToken = "" })
	_, body := get(t, url+"/metrics")
	exposed := exposedLabels(body)

	for where, exprs := range deployExprs(t) {
		for _, expr := range exprs {
			var inExpr []string
			for _, name := range seriesName.FindAllString(expr, -1) {
				if _, ok := exposed[name]; !ok {
					t.Errorf("%s: series %s is not on /metrics", where, name)
				}
				inExpr = append(inExpr, name)
			}
			if len(inExpr) == 0 {
				t.Errorf("%s: %q names no gateway series", where, expr)
			}
			for _, m := range selector.FindAllStringSubmatch(expr, -1) {
				for _, lm := range matcherLabel.FindAllStringSubmatch(m[2], -1) {
					if !exposed[m[1]][lm[1]] {
						t.Errorf("%s: %s has no label %s", where, m[1], lm[1])
					}
				}
			}
			for _, m := range byClause.FindAllStringSubmatch(expr, -1) {
				for _, label := range strings.Split(m[1], ",") {
					label = strings.TrimSpace(label)
					if !slices.ContainsFunc(inExpr, func(n string) bool { return exposed[n][label] }) {
						t.Errorf("%s: no series of %q has label %s", where, expr, label)
					}
				}
			}
			for _, m := range labelValues.FindAllStringSubmatch(expr, -1) {
				if !exposed[m[1]][m[2]] {
					t.Errorf("%s: %s has no label %s", where, m[1], m[2])
				}
			}
		}
	}
}
