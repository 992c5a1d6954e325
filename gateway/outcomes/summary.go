package outcomes

import "time"

// SummaryFailures is how many of the newest failures a Summary lists.
const SummaryFailures = 20

// SummaryQuery bounds the records a Summary counts: Since (inclusive) and
// Until (exclusive); the zero time leaves that side open.
type SummaryQuery struct {
	Since, Until time.Time
}

// Summary is what /admin/stats counts, read from the store: the counts of
// every replica's requests over a window, which survive restarts. It holds
// the groups the counts are made of rather than the report itself, so
// that the store knows nothing of how the guard names its rungs.
type Summary struct {
	// Groups are the requests by route, contract, model, status, cache
	// and rungs, with what they cost.
	Groups []Group
	// Codes are the violation codes of first answers, one count per
	// request that had the code, by route, contract, model and status.
	Codes []CodeCount
	// Latency are nearest-rank percentiles over every record counted.
	Latency LatencySummary
	// Failures are the newest records that ended failed, in fallback or
	// in an error, newest first, at most SummaryFailures.
	Failures []Record
	// Oldest is the time of the oldest record the store holds; zero when
	// it holds none. A window open at its start begins there.
	Oldest time.Time
}

// Group is the requests that share a route, contract, model, status,
// cache result and rungs.
type Group struct {
	Route, Contract, Model, Status, Cache string
	Rungs                                 []string
	// N counts the group's requests; NoLLMCalls those whose ladder made
	// no model call.
	N, NoLLMCalls int64
	// LLMCalls, LocalFixes and Tokens are the group's sums.
	LLMCalls, LocalFixes int64
	Tokens               Tokens
}

// CodeCount is how many requests' first answers had Code.
type CodeCount struct {
	Route, Contract, Model, Status, Code string
	N                                    int64
}

// LatencySummary are percentiles of latency_ms over Samples records.
type LatencySummary struct {
	Samples       int64
	P50, P90, P99 float64
}
