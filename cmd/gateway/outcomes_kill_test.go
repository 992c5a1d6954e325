package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// buildGateway builds the gateway binary into dir, as the Dockerfile does.
func buildGateway(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "gateway")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestOutcomesSIGKILLLosesLastInterval kills a gateway (SIGKILL, no
// shutdown) under a load of guarded requests and starts it again on the
// same store: the records it lost must be those of the answers given in
// the last batch intervals before the kill, never older ones, and the
// figure is logged.
func TestOutcomesSIGKILLLosesLastInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/generate" {
			w.Write([]byte(`{"model":"m","response":"{\"a\":1}","done":true}`))
			return
		}
		w.Write([]byte("Ollama is running"))
	}))
	defer up.Close()
	dir := t.TempDir()
	bin := buildGateway(t, dir)
	const token = "kill-test-admin-token"
	cfg := filepath.Join(dir, "gateway.yaml")
	mustWrite(t, cfg, fmt.Sprintf("upstream: %s\nadmin_token: %s\nshutdown_delay: -1s\noutcomes:\n  sqlite: %s\n",
		up.URL, token, filepath.Join(dir, "outcomes.db")))
	r := &replica{name: "gateway", addr: freeAddr(t), bin: bin, config: cfg, state: dir, log: filepath.Join(dir, "log")}
	r.start(t)
	defer r.kill()

	// The load runs for several batch intervals before the kill, so that
	// records old enough to be written are among those answered.
	const clients, loadFor = 4, 5 * outcomes.DefaultInterval
	var (
		mu       sync.Mutex
		answered = map[string]time.Time{} // request id → when its answer was read
		first    = make(chan struct{})
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("kill-%d-%d", c, i)
				body := fmt.Sprintf(`{"model":"m","prompt":"record %s","stream":false,"format":{"type":"object"}}`, id)
				status, _, _, err := topoDo(client, http.MethodPost, "http://"+r.addr+"/api/generate", "", id, body)
				if err != nil || status != http.StatusOK {
					continue // the gateway is gone
				}
				mu.Lock()
				answered[id] = time.Now()
				if len(answered) == 1 {
					close(first)
				}
				mu.Unlock()
			}
		}()
	}
	<-first
	<-time.After(loadFor)
	mu.Lock()
	killAt := time.Now()
	r.cmd.Process.Kill()
	mu.Unlock()
	<-r.done
	close(stop)
	wg.Wait()

	r.start(t)
	stored := listOutcomeIDs(t, client, "http://"+r.addr, token)
	lost, oldest := 0, time.Duration(0)
	for id, at := range answered {
		if !stored[id] {
			lost++
			oldest = max(oldest, killAt.Sub(at))
		}
	}
	if lost == len(answered) {
		t.Fatalf("all %d records lost: none was written in %v of load", lost, loadFor)
	}
	t.Logf("SIGKILL under load: %d guarded requests answered, %d outcome records lost; the oldest lost was answered %v before the kill (batch interval %v)",
		len(answered), lost, oldest.Round(time.Millisecond), outcomes.DefaultInterval)
	// A record waits at most one interval for its batch, and the batch's
	// write takes a moment more: anything older was written before the kill.
	if bound := 3 * outcomes.DefaultInterval; oldest > bound {
		t.Errorf("a record answered %v before the kill was lost; want only those of the last %v", oldest, bound)
	}
}

// listOutcomeIDs reads every page of a gateway's /admin/outcomes.
func listOutcomeIDs(t *testing.T, client *http.Client, base, token string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	cursor := ""
	for {
		u := base + "/admin/outcomes?limit=1000"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Outcomes   []struct{ ID string }
			NextCursor string `json:"next_cursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET %s = %d %v", u, resp.StatusCode, err)
		}
		for _, o := range page.Outcomes {
			ids[o.ID] = true
		}
		if page.NextCursor == "" {
			return ids
		}
		cursor = page.NextCursor
	}
}
