package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/middleware/progressive"
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/packs"
)

// progressiveRelease times the progressive release of an mcq quiz of n
// questions written at tps tokens a second: when the model's text holds
// the first question whole (what an unguarded client can read) against
// when the guard releases it validated, and the model's last token
// against the guard's last delta (the members derived at the end). It
// times the guard's own work — splitting, checking each question with the
// ones before it, assembling — on the model's clock; the codecs' stream
// writers add only the framing of each delta.
func progressiveRelease(n, tps int) (modelFirst, guardFirst, modelLast, guardLast time.Duration) {
	v, err := packs.Builtin("mcq")
	if err != nil {
		log.Fatal(err)
	}
	params, _ := v.Params(nil)
	ready := make(chan struct{}, 1)
	feed := release.NewFeed()
	feed.Follow(ready)
	run, err := release.Start(context.Background(), repair.Job{Validator: v, Params: params}, feed)
	if err != nil {
		log.Fatal(err)
	}
	watch, _ := progressive.NewSplitter(v.Contract.ItemArray)
	tokens := tokenize(mcqgen.Questions(n))
	pace := time.Second / time.Duration(tps)
	start := time.Now()
	firstOut := make(chan time.Duration, 1)
	go func() {
		<-ready
		firstOut <- time.Since(start)
	}()
	for i, tok := range tokens {
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * pace)))
		run.Feed(tok)
		for _, e := range watch.Feed(tok) {
			if e.Kind == progressive.ItemClosed && e.Index == 0 {
				modelFirst = time.Since(start)
			}
		}
	}
	modelLast = time.Since(start)
	res := run.Finish()
	guardLast = time.Since(start)
	if !res.Released || res.Outcome.Status != repair.StatusValid {
		log.Fatalf("%d questions: released %v, status %s (%s)", n, res.Released, res.Outcome.Status, res.Reason)
	}
	return modelFirst, <-firstOut, modelLast, guardLast
}

// printProgressive prints the progressive release's times for 8, 20 and
// 50 questions, and their ratios.
func printProgressive(tps int) {
	fmt.Printf("\nprogressive release of an mcq quiz, the model writing %d tokens/s (release package, before the wire)\n", tps)
	fmt.Printf("%-10s %14s %14s %8s %14s %14s %8s\n", "questions", "model: 1st q", "guard: 1st q", "ratio", "model: last", "guard: last", "ratio")
	for _, n := range []int{8, 20, 50} {
		mf, gf, ml, gl := progressiveRelease(n, tps)
		fmt.Printf("%-10d %14s %14s %8.3f %14s %14s %8.3f\n", n, ms(mf), ms(gf), float64(gf)/float64(mf), ms(ml), ms(gl), float64(gl)/float64(ml))
	}
	fmt.Println("(a held stream has its first question at the model's last token: ratio to the model's first question = its last / its first)")
}
