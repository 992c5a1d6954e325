package main

import (
	"context"
	"strings"
	"sync"

	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/repair"
)

// slotModel is the bench's model behind a one-slot server (Ollama with
// OLLAMA_NUM_PARALLEL=1): a call made while the first answer is still
// being written waits until the answer is complete and the slot is free.
//
// It says when it begins a reply (repair.StartReporter): a queued call
// begins only once the slot is free, and withdrawn says when one was
// given up while it waited.
type slotModel struct {
	repair.Model
	once sync.Once
	free chan struct{}
	// arrived is signalled when a call comes while the slot is held (at
	// most one does: it waits), withdrawn when it is given up.
	arrived, withdrawn chan struct{}
}

func newSlotModel(m repair.Model) *slotModel {
	return &slotModel{Model: m, free: make(chan struct{}), arrived: make(chan struct{}, 1), withdrawn: make(chan struct{}, 1)}
}

// ReportsStart implements repair.StartReporter.
func (m *slotModel) ReportsStart() bool { return true }

func (m *slotModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	select {
	case <-m.free:
	default:
		m.arrived <- struct{}{}
		select {
		case <-m.free:
		case <-ctx.Done():
			m.withdrawn <- struct{}{}
			return repair.Reply{}, ctx.Err()
		}
	}
	began(req)
	return m.Model.Complete(ctx, req)
}

// release frees the slot: the first answer is complete.
func (m *slotModel) release() { m.once.Do(func() { close(m.free) }) }

// inflight brings job's answer into contract the way the guard does for
// an item contract: the answer is fed line by line to a progressive
// release (the run keeps up with the model, as it does with a local one:
// each line is judged before the next comes), whose calls wait for the
// model's slot until the answer is complete; then, as the guard's
// finishRelease does, an answer nothing of which went out, or whose run
// released nothing, goes through the ladder whole, with what the run left
// of the budget. stream says a client follows the release and takes each
// item as it goes out. The outcome counts every model call made for the
// answer; released says the release sent items (to a client that
// streams) or called the model for them, so that the answer did not
// simply go through the ladder whole.
func inflight(ctx context.Context, job repair.Job, stream bool) (out repair.Outcome, released bool) {
	slot := newSlotModel(job.Model)
	text := job.Text
	first := job
	first.Model, first.Text = slot, ""
	feed := release.NewFeed()
	var fl *release.Follower
	if stream {
		fl = feed.Follow(make(chan struct{}, 1))
	}
	run, err := release.Start(ctx, first, feed)
	if err != nil {
		return repair.Run(ctx, job), false
	}
	calling := false
	for _, line := range strings.SplitAfter(text, "\n") {
		run.Feed(line)
		calling = sync1(run)
		if fl != nil {
			fl.Take()
		}
	}
	// The answer is complete. The run sees it before a call queued for
	// the slot begins (the call still has its prompt to read): a run that
	// withdraws such calls does so, and the slot is then free.
	var rr release.Result
	if !stream && run.Abandon() {
		slot.release()
		return repair.Run(ctx, job), false
	}
	if withdraws && calling {
		// The call under way waits for the slot (once it has come).
		<-slot.arrived
		fin := make(chan release.Result)
		go func() { fin <- run.Finish() }()
		<-slot.withdrawn
		slot.release()
		rr = <-fin
	} else {
		slot.release()
		rr = run.Finish()
	}
	if !rr.Released {
		return repair.Run(ctx, job), false
	}
	out = rr.Outcome
	if out.Status == repair.StatusValid || out.Status == repair.StatusRepaired || !feed.Retract() {
		return out, true
	}
	// Nobody saw an item: the ladder takes the answer over with what is
	// left of the budget, and its outcome counts the run's calls too.
	job.MaxLLMCalls = budgetOf(job) - out.LLMCalls
	if job.MaxLLMCalls <= 0 {
		job.MaxLLMCalls = -1 // none: 0 would mean the default
	}
	withSpent(&job, rr)
	lo := repair.Run(ctx, job)
	all := out
	all.Rungs = append([]string(nil), out.Rungs...)
	all.AddCalls(lo)
	lo.LLMCalls, lo.Tokens, lo.Rungs = all.LLMCalls, all.Tokens, all.Rungs
	return lo, out.LLMCalls > 0
}

// budgetOf is the request's budget of model calls (max_llm_calls).
func budgetOf(job repair.Job) int {
	if job.MaxLLMCalls == 0 {
		return repair.DefaultMaxLLMCalls
	}
	return max(0, job.MaxLLMCalls)
}
