package gateway

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/labstack/echo/v4"
)

// uiFiles is the dashboard: static files in the binary, no build step, no
// CDN. They hold no data: the page asks for the admin token and reads
// /admin/stats with it, so the files themselves are served to anyone.
//
//go:embed ui
var uiFiles embed.FS

// uiRoutes serves the dashboard at /ui.
func uiRoutes(e *echo.Echo) {
	sub, _ := fs.Sub(uiFiles, "ui")
	files := http.StripPrefix("/ui/", http.FileServer(http.FS(sub)))
	e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/ui/") })
	e.GET("/ui/*", echo.WrapHandler(files))
}
