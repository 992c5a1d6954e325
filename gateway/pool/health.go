package pool

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/middleware/upstream"
)

// health is what a member's last health check found.
type health struct {
	// healthy is false while the member fails its checks; true before the
	// first one.
	healthy bool
	// models and loaded are the keys (upstream.ModelKey) of the models it has and
	// has in memory; models is nil until a check has read them, and kept
	// through failed checks.
	models map[string]bool
	loaded map[string]bool
	names  []string
	// version is its /api/version.
	version string
	// err is why the last check failed; "" when it passed.
	err string
	at  time.Time
}

// checkTimeout bounds one member's health check.
const checkTimeout = 5 * time.Second

// loop checks every member every interval, the first time at once.
func (p *Pool) loop(ctx context.Context) {
	defer close(p.loopDone)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check asks every member, at once, for its /api/version, /api/tags and
// /api/ps, and returns when all have answered or failed (each within 5s):
// a member that answers the first two is healthy, with the models it
// lists; one that does not gets no traffic until a check passes again. A
// passing check brings a member whose breaker is open back at once, with
// a fresh breaker: the check is the proof that it answers again, and
// waiting out the breaker's open_timeout would leave a good server idle.
// The health loop calls it; tests call it to check at a moment of their
// choosing.
func (p *Pool) Check(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range p.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.check(ctx, m)
		}()
	}
	wg.Wait()
	p.lastCheck.Store(time.Now().UnixNano())
}

// refresh checks the members again when the last check is more than a
// second old, and reports whether it did; concurrent callers share one
// check.
func (p *Pool) refresh(ctx context.Context) bool {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	if time.Since(time.Unix(0, p.lastCheck.Load())) < time.Second {
		return p.lastCheck.Load() != 0
	}
	p.Check(ctx)
	return true
}

func (p *Pool) check(parent context.Context, m *member) {
	ctx, cancel := context.WithTimeout(parent, checkTimeout)
	defer cancel()
	d := direct{m}
	var h health
	version, err := getJSON[struct {
		Version string `json:"version"`
	}](ctx, d, "/api/version")
	var tags listing
	if err == nil {
		tags, err = getJSON[listing](ctx, d, "/api/tags")
	}
	if err != nil && parent.Err() != nil {
		return // the pool is closing, or the caller left: no verdict
	}
	m.mu.Lock()
	old := m.h
	h = old
	h.at = time.Now()
	if err != nil {
		h.healthy, h.err = false, err.Error()
	} else {
		h.healthy, h.err, h.version = true, "", version.Version
		h.models, h.names = map[string]bool{}, nil
		for _, it := range tags.Models {
			h.models[upstream.ModelKey(it.Name)] = true
			h.names = append(h.names, it.Name)
		}
		h.loaded = map[string]bool{}
	}
	m.h = h
	m.mu.Unlock()
	if err == nil {
		if ps, perr := getJSON[listing](ctx, d, "/api/ps"); perr == nil {
			loaded := map[string]bool{}
			for _, it := range ps.Models {
				loaded[upstream.ModelKey(it.Name)] = true
			}
			m.mu.Lock()
			m.h.loaded = loaded
			m.mu.Unlock()
		}
	}
	switch {
	case err == nil && m.client.Load().State() != gobreaker.StateClosed:
		m.client.Store(upstream.New(m.opts))
		p.log.Info("upstream back: its health check passed, its breaker is closed again", "upstream", m.name)
	case err == nil && !old.healthy:
		p.log.Info("upstream healthy again", "upstream", m.name)
	case err != nil && old.healthy:
		p.log.Warn("upstream failed its health check: it gets no requests until one passes", "upstream", m.name, "error", err.Error())
	}
}

// listing is the part of an /api/tags or /api/ps answer the pool reads.
type listing struct {
	Models []struct {
		Name string `json:"name"`
	} `json:"models"`
}

func getJSON[T any](ctx context.Context, d upstream.Doer, path string) (T, error) {
	var v T
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return v, err
	}
	reply, err := upstream.Send(d, req, MaxMemberAnswerBytes)
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal(reply.Body, &v)
}

// direct sends a member's health checks past its breaker: a check is how
// an open breaker's member is seen to be back, and its failures must not
// count twice.
type direct struct{ m *member }

func (d direct) Do(req *http.Request) (*http.Response, error) {
	return d.m.client.Load().Probe(req)
}
