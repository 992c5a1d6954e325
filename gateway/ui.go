package gateway

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/labstack/echo/v4"
)

// uiFiles are the dashboard's static files: plain HTML, JavaScript and CSS,
// no build step, nothing fetched from elsewhere.
//
//go:embed ui
var uiFiles embed.FS

// uiRoutes registers the dashboard at /ui. Its files hold no data and are
// served without the admin token; the page asks for the token and sends it
// with its calls to /admin/stats, /admin/requests, /admin/trends and
// /admin/outcomes.
func uiRoutes(e *echo.Echo) {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err)
	}
	// A file the UI does not have is a 404 of the one error writer, not
	// the file server's text.
	files := wrapHandler(http.StripPrefix("/ui/", http.FileServer(http.FS(sub))))
	serve := func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		return files(c)
	}
	e.GET("/ui", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/ui/")
	})
	e.GET("/ui/*", serve)
}
