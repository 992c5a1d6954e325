package gateway

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// TestRequestLogJSON: the request log line in JSON gives its latency in
// milliseconds with the unit in the key (slog.Duration would be
// nanoseconds), and its error says the cause once.
func TestRequestLogJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	cfg := config.Default()
	cfg.Upstream = dead
	logs := &logBuffer{}
	srv, err := Build(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	get(t, gw.URL+"/api/tags")
	var line map[string]any
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"msg":"request"`) {
			json.Unmarshal([]byte(l), &line)
		}
	}
	if line == nil {
		t.Fatalf("no request log line in:\n%s", logs.String())
	}
	if _, ok := line["latency_ms"].(float64); !ok || line["latency"] != nil {
		t.Errorf("latency fields %v / %v, want latency_ms only", line["latency_ms"], line["latency"])
	}
	msg, _ := line["error"].(string)
	if strings.Count(msg, "connection refused") != 1 || strings.Count(msg, "upstream unreachable") != 1 {
		t.Errorf("error %q, want the message and the cause once each", msg)
	}
}
