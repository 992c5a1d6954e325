package pool

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/middleware/apierr"
)

// blobStore is an Ollama's blob routes: HEAD says whether it has a blob,
// POST stores one (or fails with 500 when fail is set).
type blobStore struct {
	mu    sync.Mutex
	blobs map[string][]byte
	fail  bool
	srv   *httptest.Server
}

func newBlobStore(t *testing.T, fail bool, have ...string) *blobStore {
	b := &blobStore{blobs: map[string][]byte{}, fail: fail}
	for _, d := range have {
		b.blobs[d] = []byte("old")
	}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		digest := strings.TrimPrefix(r.URL.Path, "/api/blobs/")
		b.mu.Lock()
		defer b.mu.Unlock()
		switch r.Method {
		case http.MethodHead:
			if _, ok := b.blobs[digest]; !ok {
				w.WriteHeader(http.StatusNotFound)
			}
		case http.MethodPost:
			if b.fail {
				http.Error(w, `{"error":"disk full"}`, http.StatusInternalServerError)
				return
			}
			body, _ := io.ReadAll(r.Body)
			b.blobs[digest] = body
			w.WriteHeader(http.StatusCreated)
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *blobStore) get(digest string) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.blobs[digest]
}

// TestPoolBlobsReachEveryMember checks that a blob `ollama create` asks
// about is there only when every member has it, and that its upload
// reaches every member, whole, or says which member failed.
func TestPoolBlobsReachEveryMember(t *testing.T) {
	const digest = "sha256:abc"
	upload := bytes.Repeat([]byte("layer"), 200_000) // 1 MB, in many pieces
	tests := []struct {
		name       string
		failSecond bool
		haveFirst  bool
		headBefore int
		postStatus int
		postErr    string
	}{
		{name: "one member lacks the blob", haveFirst: true, headBefore: http.StatusNotFound, postStatus: http.StatusCreated},
		{name: "no member has it", headBefore: http.StatusNotFound, postStatus: http.StatusCreated},
		{name: "a member fails the upload", failSecond: true, headBefore: http.StatusNotFound, postErr: "blob upload failed on 1 of 2 upstreams"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var have []string
			if tt.haveFirst {
				have = []string{digest}
			}
			a, b := newBlobStore(t, false, have...), newBlobStore(t, tt.failSecond)
			ua, _ := url.Parse(a.srv.URL)
			ub, _ := url.Parse(b.srv.URL)
			p := New(Options{Members: []Member{{URL: ua}, {URL: ub}}, HealthInterval: -1, RequestModel: access.RequestModel})
			t.Cleanup(p.Close)
			// head is the status the client sees: the answer's, or the
			// error's as the proxy writes it.
			head := func() int {
				req, _ := http.NewRequest(http.MethodHead, "/api/blobs/"+digest, nil)
				resp, err := p.RoundTrip(req)
				if err != nil {
					return apierr.From(err).Status()
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if code := head(); code != tt.headBefore {
				t.Fatalf("HEAD before the upload = %d, want %d", code, tt.headBefore)
			}
			// The client's upload streams: no GetBody, as the proxy sends it.
			req, _ := http.NewRequest(http.MethodPost, "/api/blobs/"+digest, io.NopCloser(bytes.NewReader(upload)))
			req.ContentLength = int64(len(upload))
			resp, err := p.RoundTrip(req)
			if tt.postErr != "" {
				if err == nil || !strings.Contains(apierr.From(err).Message(), tt.postErr) {
					t.Fatalf("POST = %v, want an error with %q", err, tt.postErr)
				}
				if !bytes.Equal(a.get(digest), upload) {
					t.Error("the member that did not fail has not the whole upload")
				}
				return
			}
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.postStatus {
				t.Fatalf("POST = %d, want %d", resp.StatusCode, tt.postStatus)
			}
			for i, s := range []*blobStore{a, b} {
				if !bytes.Equal(s.get(digest), upload) {
					t.Errorf("member %d holds %d bytes, want the %d uploaded", i, len(s.get(digest)), len(upload))
				}
			}
			if code := head(); code != http.StatusOK {
				t.Errorf("HEAD after the upload = %d, want 200", code)
			}
		})
	}
}
