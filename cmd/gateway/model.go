package main

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/contractgateway/gateway/middleware/modelcall"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
)

// newCLIModel returns the model client of `gateway repair` without
// --offline: the guard's own, on an upstream at base.
func newCLIModel(base, model string) (repair.Model, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ollama url %q: want http://host:port", base)
	}
	// A large document on a slow model: minutes, not hours.
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 10 * time.Minute
	return modelcall.NewModel(upstream.New(upstream.Options{URL: u, Transport: t}), model), nil
}
