// Command embed shows the guard mounted in another echo application: a
// small gateway of its own that proxies to Ollama and guards /api/generate,
// /api/chat and /v1/chat/completions with the built-in contracts.
//
//	go run ./examples/embed -upstream http://127.0.0.1:11434 -listen 127.0.0.1:8080
//	curl localhost:8080/api/generate -H 'X-Contract: mcq' -d '{"model":"qwen2.5","prompt":"…"}'
package main

import (
	"flag"
	"log"
	"net/http/httputil"
	"net/url"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware"
)

func main() {
	upstream := flag.String("upstream", "http://127.0.0.1:11434", "Ollama base URL")
	listen := flag.String("listen", "127.0.0.1:8080", "listen address")
	flag.Parse()

	u, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		log.Fatal(err)
	}
	// Header-selected contracts and ad-hoc schemas; no virtual models.
	routes, err := middleware.NewRoutes(reg, nil, true)
	if err != nil {
		log.Fatal(err)
	}
	cfg := middleware.DefaultGuardConfig
	cfg.Resolver = routes
	// The guard asks Ollama itself: the first answer, repair calls and
	// re-runs go through this one upstream.
	cfg.Upstream = middleware.NewUpstream(u, nil)
	guard, err := cfg.ToMiddleware()
	if err != nil {
		log.Fatal(err)
	}

	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u) },
		FlushInterval: -1,
	}
	e := echo.New()
	// The request id comes first: the guard logs it and answers with it
	// (X-Request-Id).
	e.Use(echomw.RequestID(), guard)
	e.Any("/*", echo.WrapHandler(proxy))
	log.Fatal(e.Start(*listen))
}
