package main

import (
	"time"

	"github.com/contractgateway/gateway/gateway"
	"github.com/contractgateway/gateway/repair"
)

// newCLIModel returns the model client of `gateway repair` without --offline.
func newCLIModel(url, model string) (repair.Model, error) {
	return gateway.NewOllamaModel(url, model, nil, 10*time.Minute)
}
