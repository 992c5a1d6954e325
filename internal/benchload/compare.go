package benchload

import (
	"fmt"
	"net/http"
)

// Target is one column of a side-by-side run: a gateway's base URL and
// the headers its requests carry.
type Target struct {
	Name, URL string
	Header    http.Header
}

// Compare measures send against each target in turn with l and prints
// one table of their figures, with the latency each adds to the first
// target and its ratios to it: the first is what the others are weighed
// against, so that every program reads its figures the same way.
func (l Load) Compare(targets []Target, send func(*http.Client, Target)) {
	figs := make([]Figures, len(targets))
	for i, t := range targets {
		figs[i] = l.Measure(func(cl *http.Client) { send(cl, t) })
	}
	fmt.Printf("%-14s %10s %10s %10s %12s %10s %10s\n", "target", "p50 ms", "p99 ms", "rps c="+fmt.Sprint(l.C), "added p50 ms", "p50 ratio", "rps ratio")
	base := figs[0]
	for i, f := range figs {
		fmt.Printf("%-14s %10.3f %10.3f %10.0f %12.3f %10.2f %10.2f\n", targets[i].Name, f.P50, f.P99, f.RPS, f.P50-base.P50, f.P50/base.P50, f.RPS/base.RPS)
	}
}
