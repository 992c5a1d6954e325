package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSecondSignalStopsAtOnce runs the built binary with a shutdown delay
// far longer than the test may take: the first SIGTERM turns /readyz to
// 503 and keeps serving, the second ends the process without waiting out
// the delay.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Ollama is running"))
	}))
	defer up.Close()
	dir := t.TempDir()
	bin := buildGateway(t, dir)
	cfg := filepath.Join(dir, "gateway.yaml")
	mustWrite(t, cfg, "upstream: "+up.URL+"\nshutdown_delay: 10m\n")
	r := &replica{name: "gateway", addr: freeAddr(t), bin: bin, config: cfg, state: dir, log: filepath.Join(dir, "log")}
	r.start(t)
	defer r.kill()
	readyz := func() int {
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, "/readyz 503 after the first SIGTERM", 30*time.Second, func() bool { return readyz() == http.StatusServiceUnavailable })
	select {
	case <-r.done:
		t.Fatalf("the gateway exited on the first SIGTERM, before its 10m delay:\n%s", tail(r.log))
	default:
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the gateway still runs 30s after a second SIGTERM (its delay is 10m):\n%s", tail(r.log))
	}
}
