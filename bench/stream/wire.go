package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/benchgateway"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/middleware/progressive"
)

// wireRun is one stream as its client read it: when the first question
// was whole in the client's text, when the last byte came, and the
// longest silence between two reads.
type wireRun struct {
	first, last, gap time.Duration
}

// printWire times, on the wire through the whole gateway, a guarded
// progressive stream of an mcq quiz of 8, 20 and 50 questions against the
// same stream straight from the paced upstream, the p50 of reps runs each:
// the client holding the first question whole (validated, when guarded),
// the last byte, the longest silence; then their ratios and differences.
func printWire(tps, reps int, keepAlive time.Duration) {
	pace := time.Second / time.Duration(tps)
	var doc string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		f := w.(http.Flusher)
		tokens := tokenize(doc)
		start := time.Now()
		for i, tok := range tokens {
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * pace)))
			b, _ := json.Marshal(map[string]any{"model": "m", "response": tok, "done": false})
			if _, err := w.Write(append(b, '\n')); err != nil {
				return
			}
			f.Flush()
		}
		fmt.Fprintf(w, `{"model":"m","response":"","done":true,"done_reason":"stop","eval_count":%d,"prompt_eval_count":9}`+"\n", len(tokens))
	}))
	defer up.Close()
	cfg := config.Default()
	cfg.Upstream = up.URL
	cfg.StreamKeepAlive = keepAlive
	cfg.Cache.MaxBytes = -1 // each run asks the model: a hit would time nothing
	gw := benchgateway.Start(cfg)
	defer gw.Close()

	fmt.Printf("\non the wire: guarded progressive stream vs the same stream unguarded, the model writing %d tokens/s, p50 of %d runs\n", tps, reps)
	fmt.Printf("%-10s %12s %12s %8s %12s %12s %8s %10s %10s\n", "questions", "plain: 1st", "guard: 1st", "+ms", "plain: last", "guard: last", "+ms", "plain gap", "guard gap")
	for _, n := range []int{8, 20, 50} {
		doc = mcqgen.Questions(n)
		var plain, guarded []wireRun
		for range reps {
			plain = append(plain, readWire(up.URL, nil))
			guarded = append(guarded, readWire(gw.URL, http.Header{"X-Contract": {"mcq"}}))
		}
		p, g := p50(plain), p50(guarded)
		fmt.Printf("%-10d %12s %12s %8.1f %12s %12s %8.1f %10s %10s\n", n, ms(p.first), ms(g.first), msf(g.first-p.first),
			ms(p.last), ms(g.last), msf(g.last-p.last), ms(p.gap), ms(g.gap))
	}
	fmt.Println("(+ms: guarded minus unguarded; targets: first question within 50 ms of the model closing it, last byte within 100 ms of the model's last token)")
}

// readWire reads one stream of /api/generate and times it.
func readWire(url string, h http.Header) wireRun {
	resp, start := postGenerate(url, `{"model":"m","prompt":"quiz"}`, h)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("%s: status %d", url, resp.StatusCode)
	}
	split, _ := progressive.NewSplitter("/questions")
	var run wireRun
	prev := start
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		now := time.Now()
		run.gap = max(run.gap, now.Sub(prev))
		prev, run.last = now, now.Sub(start)
		var chunk struct {
			Response string `json:"response"`
		}
		_ = json.Unmarshal(sc.Bytes(), &chunk)
		if run.first == 0 && slices.ContainsFunc(split.Feed(chunk.Response), func(e progressive.Event) bool { return e.Kind == progressive.ItemClosed }) {
			run.first = now.Sub(start)
		}
	}
	return run
}

// p50 is the median of each timing on its own.
func p50(runs []wireRun) wireRun {
	med := func(get func(wireRun) time.Duration) time.Duration {
		ds := make([]time.Duration, len(runs))
		for i, r := range runs {
			ds[i] = get(r)
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	return wireRun{first: med(func(r wireRun) time.Duration { return r.first }), last: med(func(r wireRun) time.Duration { return r.last }),
		gap: med(func(r wireRun) time.Duration { return r.gap })}
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
