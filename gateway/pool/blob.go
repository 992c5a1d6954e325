package pool

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// isBlob reports whether path is a blob's, which `ollama create` asks
// about (HEAD) and uploads (POST) before it creates a model from local
// files. A create reaches every member, so its blobs must too: a blob on
// one member only fails the create on every other.
func isBlob(path string) bool { return strings.HasPrefix(path, "/api/blobs/") }

// blob answers a blob's request as one Ollama holding what every member
// holds: HEAD is 200 only when each member has the blob (else 404, and the
// client uploads it), and a POST streams the one upload to every member
// at once, answering once each has taken it (else an error naming those
// that failed). The upload is never held in memory: it may be gigabytes.
func (p *Pool) blob(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		if req.Body != nil {
			req.Body.Close()
		}
		results := p.each(req, p.members, nil, false)
		for _, r := range results {
			if r.err != nil {
				return nil, r.err // a member without the blob: 404, so it is uploaded
			}
		}
		return synthetic(req, http.StatusOK, results[0].reply.Header.Clone(), results[0].reply.Body), nil
	}
	results := make([]result, len(p.members))
	pipes := make([]*io.PipeWriter, len(p.members))
	var wg sync.WaitGroup
	for i, m := range p.members {
		pr, pw := io.Pipe()
		pipes[i] = pw
		one := req.Clone(req.Context())
		one.Body, one.GetBody = pr, nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply, err := upstream.Send(memberDoer{m}, one, MaxMemberAnswerBytes)
			p.noteSize(m, err)
			// A member that answered early (refused, failed) reads no
			// more: the upload goes on to the others.
			pr.CloseWithError(io.ErrClosedPipe)
			results[i] = result{m: m, reply: reply, err: err}
		}()
	}
	_, err := io.Copy(teeWriter(slices.Clone(pipes)), req.Body)
	req.Body.Close()
	for _, pw := range pipes {
		pw.CloseWithError(err) // nil: the members read the upload's end
	}
	wg.Wait()
	if err != nil {
		return nil, apierr.BodyRead(err)
	}
	resp, err := p.fanOutResult(req, "blob upload", results)
	if err == nil {
		// Ollama's answer to a stored blob, as a pool of one gives it.
		resp.StatusCode, resp.Status = http.StatusCreated, "201 Created"
	}
	return resp, err
}

// teeWriter writes each piece to every pipe whose reader still reads: a
// member that stopped reading does not stop the upload to the others.
type teeWriter []*io.PipeWriter

func (t teeWriter) Write(b []byte) (int, error) {
	for i, w := range t {
		if w == nil {
			continue
		}
		if _, err := w.Write(b); err != nil {
			t[i] = nil
		}
	}
	return len(b), nil
}
