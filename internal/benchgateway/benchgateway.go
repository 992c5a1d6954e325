// Package benchgateway starts the gateway that the benchmark programs
// under bench/ measure: built from a Config in the program's own process,
// its log discarded, served on loopback. It imports the whole gateway, so
// it ranks above it, beside the programs that use it, and the product
// never imports it.
package benchgateway

import (
	"io"
	"log"
	"log/slog"
	"net/http/httptest"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway"
)

// Gateway is a gateway built in this process and served on loopback.
type Gateway struct {
	// URL is the gateway's base URL, http://127.0.0.1:port.
	URL string

	srv *gateway.Server
	web *httptest.Server
}

// Start builds a gateway from cfg and serves it on loopback until Close.
// Its log goes to io.Discard but is still written, one line per request
// as in production, so the figures include it. A configuration the
// gateway refuses ends the program: a benchmark of nothing measures
// nothing.
func Start(cfg config.Config) *Gateway {
	srv, err := gateway.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		log.Fatal(err)
	}
	web := httptest.NewServer(srv.Handler())
	return &Gateway{URL: web.URL, srv: srv, web: web}
}

// Close stops serving, then releases the gateway's upstream connections
// and background work.
func (g *Gateway) Close() {
	g.web.Close()
	g.srv.Close()
}
