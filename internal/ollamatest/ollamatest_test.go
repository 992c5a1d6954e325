//go:build unix

package ollamatest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/contractgateway/gateway/internal/ollamatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	ollamatest.StopShared()
	os.Exit(code)
}

var client = &http.Client{Timeout: 2 * time.Minute}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("GET %s: decode %s: %v", url, data, err)
	}
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST %s: %s: %s", url, resp.Status, msg)
	}
	return resp
}

type generateResponse struct {
	Model    string `json:"model"`
	Response string `json:"response"`
	Done     bool   `json:"done"`
	Error    string `json:"error"`
}

func TestVersion(t *testing.T) {
	srv := ollamatest.Shared(t)
	var v struct {
		Version string `json:"version"`
	}
	getJSON(t, srv.URL+"/api/version", &v)
	if v.Version != ollamatest.Version {
		t.Errorf("version = %q, want %q", v.Version, ollamatest.Version)
	}
}

func TestTagsListModel(t *testing.T) {
	srv := ollamatest.Shared(t)
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	getJSON(t, srv.URL+"/api/tags", &tags)
	var names []string
	for _, m := range tags.Models {
		names = append(names, m.Name)
		if m.Name == srv.Model+":latest" {
			return
		}
	}
	t.Errorf("/api/tags lists %q, want %q", names, srv.Model+":latest")
}

func TestGenerateWithSchema(t *testing.T) {
	srv := ollamatest.Shared(t)
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	resp := post(t, srv.URL+"/api/generate", map[string]any{
		"model":   srv.Model,
		"prompt":  "Once upon a time there was a girl. Her name was",
		"format":  schema,
		"stream":  false,
		"options": map[string]any{"num_predict": 64},
	})
	defer resp.Body.Close()
	var gen generateResponse
	if err := json.NewDecoder(resp.Body).Decode(&gen); err != nil {
		t.Fatalf("decode response: %v", err)
	}
	if !gen.Done {
		t.Errorf("done = false, want true")
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(gen.Response), &obj); err != nil {
		t.Fatalf("response %q is not a JSON object: %v", gen.Response, err)
	}
	if _, ok := obj["name"].(string); !ok {
		t.Errorf("response %q has no string \"name\"", gen.Response)
	}
	t.Logf("response: %s", gen.Response)
}

func TestGenerateStream(t *testing.T) {
	srv := ollamatest.Shared(t)
	resp := post(t, srv.URL+"/api/generate", map[string]any{
		"model":   srv.Model,
		"prompt":  "Once upon a time",
		"stream":  true,
		"options": map[string]any{"num_predict": 32},
	})
	defer resp.Body.Close()

	var lines []generateResponse
	var text bytes.Buffer
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var gen generateResponse
		if err := json.Unmarshal(sc.Bytes(), &gen); err != nil {
			t.Fatalf("line %d %q: %v", len(lines)+1, sc.Bytes(), err)
		}
		if gen.Error != "" {
			t.Fatalf("stream error: %s", gen.Error)
		}
		text.WriteString(gen.Response)
		lines = append(lines, gen)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if len(lines) < 3 {
		t.Fatalf("got %d NDJSON lines, want several", len(lines))
	}
	for i, l := range lines[:len(lines)-1] {
		if l.Done {
			t.Errorf("line %d of %d has done=true", i+1, len(lines))
		}
	}
	if !lines[len(lines)-1].Done {
		t.Errorf("last line has done=false")
	}
	t.Logf("%d lines: %q", len(lines), text.String())
}

// TestStart checks the per-test server: a second, independent process.
func TestStart(t *testing.T) {
	srv := ollamatest.Start(t)
	if srv.Model != "stories" {
		t.Errorf("Model = %q, want stories", srv.Model)
	}
	var v struct {
		Version string `json:"version"`
	}
	getJSON(t, srv.URL+"/api/version", &v)
	if v.Version != ollamatest.Version {
		t.Errorf("version = %q, want %q", v.Version, ollamatest.Version)
	}
	if shared := ollamatest.Shared(t); shared.URL == srv.URL {
		t.Errorf("Start and Shared returned the same URL %s", srv.URL)
	}
}
