package repair

import (
	"context"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// RepairItems makes one item-scoped repair call (rung 2's scoped call)
// outside the ladder, for a stream that has released the items before
// these and may change nothing else: doc holds the items so far at the
// contract's item array, report is its validation, indices the items to
// repair. The reply's items are spliced in and merged as the ladder's
// are (every other item byte-identical, the fields no violation named
// restored), the derivable fixes applied again, and the result
// validated. The Outcome's Doc and Report are that result, Status
// StatusRepaired when the call gave usable items and StatusFailed
// otherwise (no model, no budget, no usable reply); the caller judges
// the report, for only it knows which violations the items answer for.
//
// again says an item-scoped call on these items as they are fixed
// nothing before: at temperature 0 a local model would answer the same,
// so this call is asked at the first temperature of the policy's re-run
// schedule (a different draw, as the ladder's second scoped call is), and
// none is made when the schedule has none.
func RepairItems(ctx context.Context, job Job, doc *strictjson.Value, report validators.Report, indices []int, again bool) Outcome {
	l := newLadder(job)
	l.out.Rungs = []string{}
	l.out.Before = report
	base := attempt{doc: doc, report: report}
	temperature := 0.0
	if again {
		t, ok := l.retryTemperature()
		if !ok {
			return l.finish(base, StatusFailed)
		}
		temperature = t
	}
	if job.Model == nil || job.LocalOnly || l.array == "" || len(indices) == 0 || !l.canCall(ctx) {
		return l.finish(base, StatusFailed)
	}
	a, ok := l.scopedRepair(ctx, base, indices, temperature)
	if !ok {
		return l.finish(base, StatusFailed)
	}
	return l.finish(a, StatusRepaired)
}

// RegenerateItems is RepairItems with rung 3 instead: one partial
// regeneration call writes the items at indices anew from the task
// (job.Prompt), for a stream whose item-scoped repair could not mend
// them. Only those items are taken from the reply; every other item stays
// byte-identical. It runs only where the contract's policy allows
// partial regeneration. The caller judges the report, as for RepairItems.
func RegenerateItems(ctx context.Context, job Job, doc *strictjson.Value, report validators.Report, indices []int) Outcome {
	l := newLadder(job)
	l.out.Rungs = []string{}
	l.out.Before = report
	base := attempt{doc: doc, report: report}
	if job.LocalOnly || !l.policy.PartialRegeneration || len(indices) == 0 {
		return l.finish(base, StatusFailed)
	}
	a, ok := l.regenerate(ctx, base, indices)
	if !ok {
		return l.finish(base, StatusFailed)
	}
	return l.finish(a, StatusRepaired)
}
