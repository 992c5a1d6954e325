package main

import (
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/repair"
)

// withSpent gives the ladder that takes an answer over the repair and
// regeneration calls the run made on it, as the guard does.
func withSpent(job *repair.Job, rr release.Result) { job.Spent = rr.Spent }

// withdraws says the run withdraws a call still waiting for the model's
// slot when the answer ends (repair.StartReporter).
const withdraws = true

// began says the model begins to answer req.
func began(req repair.ModelRequest) {
	if req.Started != nil {
		req.Started()
	}
}

// sync1 waits until the run judged what it was fed or waits on a call,
// and says which.
func sync1(run *release.Run) bool { return run.Sync() }
