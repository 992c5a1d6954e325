package edge

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"
)

// TestHeapReleaser checks when the memory of large bodies is returned: once
// per burst, a quiet time after its last large request, never for small
// bodies.
func TestHeapReleaser(t *testing.T) {
	tests := []struct {
		name   string
		bodies []int         // body sizes of requests ended one after another
		gap    time.Duration // between two requests
		want   int           // releases once everything is quiet
		early  int           // releases just before the quiet time after the last request
	}{
		{name: "no requests", want: 0},
		{name: "small bodies", bodies: []int{1 << 10, 1 << 20, largeBody - 1}, gap: 100 * time.Millisecond, want: 0},
		{name: "one large body", bodies: []int{largeBody}, want: 1},
		{name: "a burst of large bodies", bodies: []int{largeBody, 20 << 20, largeBody, 8 << 20}, gap: releaseQuiet / 2, want: 1},
		{name: "two bursts", bodies: []int{largeBody, largeBody}, gap: 2 * releaseQuiet, want: 2, early: 1},
		{name: "a small body does not delay", bodies: []int{largeBody, 10}, gap: releaseQuiet / 2, want: 1, early: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var released atomic.Int32
				h := NewHeapReleaser()
				h.release = func() { released.Add(1) }
				e := echo.New()
				handler := h.Middleware(func(c echo.Context) error {
					_, err := io.Copy(io.Discard, c.Request().Body)
					return err
				})
				for i, n := range tt.bodies {
					if i > 0 {
						time.Sleep(tt.gap)
					}
					req := httptest.NewRequest(http.MethodPost, "/api/chat", bytes.NewReader(make([]byte, n)))
					if err := handler(e.NewContext(req, httptest.NewRecorder())); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(releaseQuiet - time.Millisecond)
				synctest.Wait()
				if got := int(released.Load()); got != tt.early {
					t.Errorf("releases just before the quiet time = %d, want %d", got, tt.early)
				}
				time.Sleep(time.Hour)
				synctest.Wait()
				if got := int(released.Load()); got != tt.want {
					t.Errorf("releases = %d, want %d", got, tt.want)
				}
				h.Stop()
			})
		})
	}
}

// TestLargeBodyReleasesHeap checks the middleware over a real server: a
// large body read by the handler leads to one release, read as an event.
func TestLargeBodyReleasesHeap(t *testing.T) {
	released := make(chan struct{}, 4)
	h := NewHeapReleaser()
	h.quiet = time.Millisecond
	h.release = func() { released <- struct{}{} }
	e := echo.New()
	e.Use(h.Middleware)
	e.POST("/api/embed", func(c echo.Context) error {
		_, err := io.Copy(io.Discard, c.Request().Body)
		return err
	})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Stop)

	body := `{"model":"stories","input":"` + strings.Repeat("x", largeBody) + `"}`
	resp, err := http.Post(srv.URL+"/api/embed", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case <-released:
	case <-time.After(time.Minute):
		t.Fatal("a large body was read and the heap was never released")
	}
}
