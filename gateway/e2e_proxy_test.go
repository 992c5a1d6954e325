//go:build unix

package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// wholeBody is how the e2e tests' own proxies between the gateway and
// Ollama (the path recorder, the counting proxy and the like) take a
// request: its body is read whole first and next gets it from memory.
//
// Handed the server's own request body, an httputil.ReverseProxy cuts an
// answer at random on a loaded machine (golang/go#40747). Its transport
// sends the Content-Length bytes, then reads the body once more to check
// that it is not longer. If the upstream has answered in between and the
// proxy has written the response headers, the HTTP/1 server has drained
// and closed that body; the late read fails with "invalid Read on closed
// Body", the transport takes it for a failed request and closes the
// connection to the upstream, and the answer on its way stops short ("read
// error during body copy: use of closed network connection"). The gateway
// guards its own proxy against this (upstream's clientBody); a body in
// memory is never closed under the transport, so the tests' proxies are
// guarded too.
func wholeBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "e2e proxy: reading the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		next.ServeHTTP(w, r)
	})
}

// lateBodyReads is a RoundTripper that holds the transport's read of a
// request body after its Content-Length bytes until release is closed,
// and sends that read's error (io.EOF for a body that just ends) on ended.
// It puts in order what a loaded machine does at random: the upstream
// answers, the proxy writes the response headers to its client, and only
// then does the transport read the request body again.
type lateBodyReads struct {
	base    *http.Transport
	release <-chan struct{}
	ended   chan<- error
}

func (l *lateBodyReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.ContentLength > 0 {
		req = req.Clone(req.Context())
		req.Body = &lateBody{ReadCloser: req.Body, left: req.ContentLength, l: l}
	}
	return l.base.RoundTrip(req)
}

// CloseIdleConnections lets the proxy's cleanup close the connections.
func (l *lateBodyReads) CloseIdleConnections() { l.base.CloseIdleConnections() }

type lateBody struct {
	io.ReadCloser
	left int64
	l    *lateBodyReads
	once sync.Once
}

func (b *lateBody) Read(p []byte) (int, error) {
	if b.left > 0 {
		n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
		b.left -= int64(n)
		return n, err
	}
	<-b.l.release
	n, err := b.ReadCloser.Read(p)
	b.once.Do(func() { b.l.ended <- err })
	return n, err
}

// TestE2EProxyKeepsAnswerAfterLateBodyRead: the proxy between the gateway
// and Ollama in the e2e tests passes an upstream's answer whole when the
// transport's last read of the request body comes after the response
// headers went out — the order that cut e2e answers on a loaded machine.
// A bare ReverseProxy, handed the server's own body, is cut in that order:
// the case shows that the test sets the race up.
func TestE2EProxyKeepsAnswerAfterLateBodyRead(t *testing.T) {
	const first, second = `{"response":"Once","done":false}` + "\n", `{"response":"","done":true}` + "\n"
	tests := []struct {
		name string
		// proxy serves a proxy to target through tr and returns its URL.
		proxy   func(t *testing.T, target string, tr http.RoundTripper) string
		wantCut bool
	}{
		{"bare ReverseProxy", func(t *testing.T, target string, tr http.RoundTripper) string {
			u, err := url.Parse(target)
			if err != nil {
				t.Fatal(err)
			}
			rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }, Transport: tr, FlushInterval: -1}
			rp.ErrorLog = log.New(io.Discard, "", 0)
			srv := httptest.NewServer(rp)
			t.Cleanup(srv.Close)
			return srv.URL
		}, true},
		{"path recorder", func(t *testing.T, target string, tr http.RoundTripper) string {
			return newPathRecorderOver(t, target, tr).URL
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			ended := make(chan error, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/x-ndjson")
				_, _ = io.WriteString(w, first)
				w.(http.Flusher).Flush()
				if err := <-ended; err != io.EOF {
					// The transport drops the connection; the answer
					// cannot be finished.
					<-r.Context().Done()
					return
				}
				_, _ = io.WriteString(w, second)
			}))
			defer up.Close()
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			proxyURL := tt.proxy(t, up.URL, &lateBodyReads{base: base, release: release, ended: ended})

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxyURL+pathGenerate,
				strings.NewReader(`{"model":"stories","prompt":"Once upon a time","stream":true}`))
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			resp, err := client.Do(req)
			// The response headers are out: the server has closed the
			// request body it was handed.
			close(release)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case tt.wantCut && err == nil:
				t.Fatalf("answer %q arrived whole: the late body read no longer fails on a closed body, so this test no longer sets the race up", got)
			case !tt.wantCut && err != nil:
				t.Fatalf("answer cut after %q: %v", got, err)
			case !tt.wantCut && string(got) != first+second:
				t.Errorf("answer = %q, want %q", got, first+second)
			}
			if tt.wantCut && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("cut answer: %v, want %v", err, io.ErrUnexpectedEOF)
			}
		})
	}
}
