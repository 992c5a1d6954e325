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
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/upstream"
)

func main() {
	upstreamURL := flag.String("upstream", "http://127.0.0.1:11434", "Ollama base URL")
	listen := flag.String("listen", "127.0.0.1:8080", "listen address")
	flag.Parse()

	u, err := url.Parse(*upstreamURL)
	if err != nil {
		log.Fatal(err)
	}
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		log.Fatal(err)
	}
	// Header-selected contracts and ad-hoc schemas; no virtual models.
	routes, err := route.NewRoutes(reg, nil, true)
	if err != nil {
		log.Fatal(err)
	}
	// One client of Ollama for everything: it knows where Ollama is, and
	// its breaker sees guarded calls and pass-through alike.
	up := upstream.New(upstream.Options{URL: u})
	cfg := middleware.DefaultGuardConfig
	cfg.Resolver = routes
	// The guard asks Ollama itself: the first answer, repair calls and
	// re-runs go through the upstream client.
	cfg.Upstream = up
	guard, err := cfg.ToMiddleware()
	if err != nil {
		log.Fatal(err)
	}

	proxy := &httputil.ReverseProxy{
		// The client points each request at Ollama; the proxy only says
		// who asked.
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetXForwarded() },
		Transport:     up,
		FlushInterval: -1,
		// The client's errors carry their status and Ollama's message.
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			he := apierr.From(err)
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(he.Status())
			_, _ = w.Write(he.Body())
		},
	}
	e := echo.New()
	// The guard returns its errors; this handler writes them in the shape
	// of the request's API (Ollama's {"error": …} on its own paths).
	e.HTTPErrorHandler = middleware.ErrorHandler
	// The request id comes first: the guard logs it and answers with it
	// (X-Request-Id).
	e.Use(echomw.RequestID(), guard)
	e.Any("/*", echo.WrapHandler(proxy))
	log.Fatal(e.Start(*listen))
}
