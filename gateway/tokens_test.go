package gateway

import (
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

func TestTokensMetric(t *testing.T) {
	url, _ := scriptedStatsGateway(t, func(c *config.Config) { c.AdminToken = "" })
	_, body := get(t, url+"/metrics")
	got := grepLines(body, "gateway_tokens_total{")
	want := strings.Join([]string{
		`gateway_tokens_total{contract="mcq@1",kind="output",model="m",phase="first"} 168`,
		`gateway_tokens_total{contract="mcq@1",kind="output",model="m",phase="repair"} 84`,
		`gateway_tokens_total{contract="mcq@1",kind="prompt",model="m",phase="first"} 28`,
		`gateway_tokens_total{contract="mcq@1",kind="prompt",model="m",phase="repair"} 14`,
	}, "\n")
	if got != want {
		t.Errorf("tokens:\n%s\nwant\n%s", got, want)
	}
}
