// Command stream compares, side by side in one run, a guarded stream with
// the same stream straight from the upstream: time to the first byte and
// to the last byte, the longest silence on the wire (the keep-alives of a
// held stream), and the time an early stop saves. The upstream is a
// paced fake Ollama on loopback that writes a quiz of -items questions
// over -d, one chunk per token, and — in the early-stop case — goes on
// writing whitespace for -tail after its JSON closed (Ollama issues
// #2577, #2623), unless its caller leaves. Then it times the progressive
// release of an mcq quiz of 8, 20 and 50 questions written at -tps
// tokens a second: the first question released validated against the
// model closing it, the last delta against the model's last token; and
// the same on the wire, through the whole gateway, against the stream
// straight from the upstream (p50 of -reps runs).
//
//	go run ./bench/stream [-items 8] [-d 4s] [-tail 3s] [-keepalive 1s] [-tps 1000] [-reps 3]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/benchgateway"
)

func main() {
	items := flag.Int("items", 8, "questions in the quiz the model writes")
	d := flag.Duration("d", 4*time.Second, "how long the model takes to write the quiz")
	tail := flag.Duration("tail", 3*time.Second, "whitespace the model writes after its JSON closed, under a schema format")
	keepAlive := flag.Duration("keepalive", time.Second, "the gateway's stream_keepalive")
	tps := flag.Int("tps", 1000, "tokens a second of the model in the progressive release's timings")
	reps := flag.Int("reps", 3, "runs of each on-the-wire timing, of which the p50 is printed")
	flag.Parse()
	log.SetFlags(0)

	doc := quiz(*items)
	tokens := tokenize(doc)
	var written, cancelled atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Format json.RawMessage `json:"format"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/x-ndjson")
		f := w.(http.Flusher)
		pace := *d / time.Duration(len(tokens))
		chunk := func(s string) bool {
			b, _ := json.Marshal(map[string]any{"model": "m", "response": s, "done": false})
			_, err := w.Write(append(b, '\n'))
			f.Flush()
			written.Add(1)
			return err == nil && r.Context().Err() == nil
		}
		n := 0
		for _, tok := range tokens {
			time.Sleep(pace)
			if !chunk(tok) {
				cancelled.Add(1)
				return
			}
			n++
		}
		if len(req.Format) > 0 {
			for end := time.Now().Add(*tail); time.Now().Before(end); n++ {
				time.Sleep(pace)
				if !chunk(" ") {
					cancelled.Add(1)
					return
				}
			}
		}
		fmt.Fprintf(w, `{"model":"m","response":"","done":true,"done_reason":"stop","eval_count":%d,"prompt_eval_count":9}`+"\n", n)
	}))
	defer up.Close()

	cfg := config.Default()
	cfg.Upstream = up.URL
	cfg.StreamKeepAlive = *keepAlive
	gw := benchgateway.Start(cfg)
	defer gw.Close()

	free := `{"model":"m","prompt":"quiz"}`
	schema := `{"model":"m","prompt":"quiz","format":{"type":"object","required":["questions"]}}`
	fmt.Printf("quiz of %d questions written in %v (%d chunks), keep-alive %v, whitespace tail %v\n\n", *items, *d, len(tokens), *keepAlive, *tail)
	fmt.Printf("%-34s %10s %10s %14s %8s\n", "", "first byte", "last byte", "longest gap", "writes")
	type pair struct {
		name, body string
		guard      http.Header
	}
	var results []measured
	for _, p := range []pair{
		{"free text, unguarded", free, nil},
		{"free text, guarded (held)", free, http.Header{"X-Contract": {"json"}}},
		{"schema format, unguarded", schema, nil},
		{"schema format, guarded (early stop)", schema, nil},
	} {
		url := up.URL
		if p.guard != nil || strings.Contains(p.name, "guarded (") {
			url = gw.URL
		}
		written.Store(0)
		m := measure(url, p.body, p.guard)
		time.Sleep(200 * time.Millisecond) // the upstream sees its caller leave
		results = append(results, m)
		fmt.Printf("%-34s %10s %10s %14s %8d   upstream chunks written %d\n", p.name, ms(m.first), ms(m.last), ms(m.gap), m.writes, written.Load())
	}
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	fmt.Printf("\nlast byte, guarded / unguarded: free text %.2f, schema format %.2f (early stop)\n",
		ratio(results[1].last, results[0].last), ratio(results[3].last, results[2].last))
	fmt.Printf("longest silence of a held stream / keep-alive interval: %.2f\n", ratio(results[1].gap, *keepAlive))
	fmt.Printf("upstream calls cancelled by their caller: %d\n", cancelled.Load())
	printProgressive(*tps)
	printWire(*tps, *reps, *keepAlive)
}

type measured struct {
	first, last, gap time.Duration
	writes           int
}

// postGenerate posts body to url's /api/generate with h's headers and
// returns the answer and when it was asked.
func postGenerate(url, body string, h http.Header) (*http.Response, time.Time) {
	req, _ := http.NewRequest(http.MethodPost, url+"/api/generate", strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	return resp, start
}

// measure posts body and times the answer's reads.
func measure(url, body string, h http.Header) measured {
	resp, start := postGenerate(url, body, h)
	defer resp.Body.Close()
	var m measured
	prev := start
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			now := time.Now()
			if m.writes == 0 {
				m.first = now.Sub(start)
			}
			m.gap = max(m.gap, now.Sub(prev))
			prev, m.last = now, now.Sub(start)
			m.writes++
		}
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("%s: status %d", url, resp.StatusCode)
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

// quiz is a document of n questions, as a model would write it.
func quiz(n int) string {
	qs := make([]map[string]any, n)
	for i := range qs {
		qs[i] = map[string]any{"id": i + 1, "question": fmt.Sprintf("What is question %d about?", i+1),
			"options": []string{"A", "B", "C", "D"}, "answer": i % 4}
	}
	b, _ := json.Marshal(map[string]any{"questions": qs})
	return string(b)
}

// tokenize cuts text into model-sized pieces of about four bytes.
func tokenize(text string) []string {
	var out []string
	for len(text) > 0 {
		k := min(4, len(text))
		out = append(out, text[:k])
		text = text[k:]
	}
	return out
}
