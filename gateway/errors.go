package gateway

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// maxHandlerErrorText bounds the text of a net/http handler's error
// answer kept for the log.
const maxHandlerErrorText = 1024

// wrapHandler serves a net/http handler (the UI's file server,
// Prometheus's handler) on echo with its errors returned like every
// handler's: an error status it answers is not written, but returned as an
// *apierr.Error of that status for the one error writer, and the text it
// wrote — http.FileServer's "404 page not found", promhttp's collector
// errors — goes to the request's log line only.
func wrapHandler(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := &errorCatcher{ResponseWriter: c.Response()}
		h.ServeHTTP(w, c.Request())
		if w.code == 0 {
			return nil
		}
		he := &apierr.Error{Code: w.code}
		if text := bytes.TrimSpace(w.text.Bytes()); len(text) > 0 {
			he.Err = errors.New(string(text))
		}
		return he
	}
}

// errorCatcher is a handler's ResponseWriter that holds back an error
// answer (a status of 400 or more): its status and the start of its text
// are kept for wrapHandler, and nothing of it is written.
type errorCatcher struct {
	http.ResponseWriter
	code int          // the error status held back; 0 while none
	text bytes.Buffer // its body, up to maxHandlerErrorText bytes
}

// WriteHeader holds an error status back and passes any other on.
func (w *errorCatcher) WriteHeader(code int) {
	if code >= http.StatusBadRequest {
		w.code = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write passes p on, or keeps the start of an error answer's text for the
// log.
func (w *errorCatcher) Write(p []byte) (int, error) {
	if w.code == 0 {
		return w.ResponseWriter.Write(p)
	}
	if room := maxHandlerErrorText - w.text.Len(); room > 0 {
		w.text.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Unwrap gives http.ResponseController the writer beneath.
func (w *errorCatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }
