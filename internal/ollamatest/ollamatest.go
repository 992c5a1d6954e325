//go:build unix

// Package ollamatest starts a real Ollama server on loopback for tests and
// loads the small stories260K model into it.
//
// The ollama binary is looked up in this order:
//
//  1. $OLLAMA_BIN;
//  2. the cache written by scripts/install-ollama.sh:
//     ${OLLAMA_CACHE_DIR:-$HOME/.cache/contract-gateway}/ollama-0.17.4/bin/ollama;
//  3. "ollama" on $PATH.
//
// The model file is $CG_MODEL_FILE, or shared/models/stories260K.gguf found in
// the nearest ancestor of the test's working directory that has one (the
// shared/ directory sits beside the repository checkout).
//
// When the binary or the model cannot be found the test is skipped, unless
// CG_REQUIRE_OLLAMA=1 is set, in which case it fails.
//
// A test that wants its own server calls [Start]. Tests in one package can
// share a single server with [Shared]; the package's TestMain must then call
// [StopShared] after m.Run:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		ollamatest.StopShared()
//		os.Exit(code)
//	}
//
// The model behaves as follows: without a format it writes children's-story
// English; with format set to a JSON Schema its output is schema-valid JSON;
// with the bare format "json" it never closes the object, so always bound
// generation with num_predict. It has no chat template.
package ollamatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// Version is the Ollama release the helpers are written against.
	Version = "0.17.4"
	// ModelName is the name the model is created under.
	ModelName = "stories"
	// ModelFile is the file name of the model in shared/models.
	ModelFile = "stories260K.gguf"

	startTimeout = 60 * time.Second
	stopTimeout  = 5 * time.Second
	maxLogBytes  = 64 << 10
)

// Server is a running ollama serve process with the test model loaded.
type Server struct {
	// URL is the base URL of the server, e.g. http://127.0.0.1:41234.
	URL string
	// Model is the name of the loaded model ("stories").
	Model string
	// LogFile is the path of the file holding the server's output.
	LogFile string

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
	// bin, dir and host start the same server again (Restart).
	bin, dir, host string
}

// Start starts a dedicated server for tb and stops it when tb finishes. The
// server's output is written to a file in tb.TempDir and logged through tb
// only when the test fails.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, model, err := locate()
	if err != nil {
		skipOrFatal(tb, err)
	}
	dir := tb.TempDir()
	srv, err := start(bin, model, dir)
	if srv != nil {
		// Registered after TempDir, so it runs before the directory is removed.
		tb.Cleanup(func() {
			srv.stop()
			if tb.Failed() {
				srv.logTo(tb)
			}
		})
	}
	if err != nil {
		tb.Fatalf("ollamatest: %v", err)
	}
	return srv
}

var shared struct {
	mu   sync.Mutex
	once sync.Once
	srv  *Server
	dir  string
	err  error // start failure
	miss error // binary or model not found
}

// Shared returns a server shared by all tests of the package, starting it on
// first use. The package's TestMain must call [StopShared] after m.Run to stop
// the process and remove its files. The server log is logged through tb when
// tb fails.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		bin, model, err := locate()
		if err != nil {
			shared.miss = err
			return
		}
		dir, err := os.MkdirTemp("", "ollamatest-")
		if err != nil {
			shared.err = err
			return
		}
		srv, err := start(bin, model, dir)
		shared.mu.Lock()
		shared.dir, shared.srv, shared.err = dir, srv, err
		shared.mu.Unlock()
	})
	if shared.miss != nil {
		skipOrFatal(tb, shared.miss)
	}
	shared.mu.Lock()
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if srv != nil {
		tb.Cleanup(func() {
			if tb.Failed() {
				srv.logTo(tb)
			}
		})
	}
	if err != nil {
		tb.Fatalf("ollamatest: %v", err)
	}
	if srv == nil {
		tb.Fatal("ollamatest: shared server was stopped; call StopShared only after m.Run")
	}
	return srv
}

// StopShared stops the server started by [Shared], if any, and removes its
// files. Call it from TestMain after m.Run. It is safe to call when no test
// used Shared.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.stop()
		shared.srv = nil
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
		shared.dir = ""
	}
}

func skipOrFatal(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CG_REQUIRE_OLLAMA") == "1" {
		tb.Fatalf("ollamatest: %v (CG_REQUIRE_OLLAMA=1)", err)
	}
	tb.Skipf("ollamatest: %v; skipping (run scripts/install-ollama.sh, or set CG_REQUIRE_OLLAMA=1 to fail instead)", err)
}

// locate returns the ollama binary and the model file.
func locate() (bin, model string, err error) {
	bin, err = FindBinary()
	if err != nil {
		return "", "", err
	}
	model, err = FindModel()
	if err != nil {
		return "", "", err
	}
	return bin, model, nil
}

// CachedBinary is where scripts/install-ollama.sh puts the binary.
func CachedBinary() string {
	root := os.Getenv("OLLAMA_CACHE_DIR")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(home, ".cache", "contract-gateway")
	}
	return filepath.Join(root, "ollama-"+Version, "bin", "ollama")
}

// FindBinary returns the path of the ollama binary to run.
func FindBinary() (string, error) {
	if p := os.Getenv("OLLAMA_BIN"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("OLLAMA_BIN=%s is not an executable file", p)
	}
	if p := CachedBinary(); p != "" && isExecutable(p) {
		return p, nil
	}
	if p, err := exec.LookPath("ollama"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("ollama binary not found (looked at $OLLAMA_BIN, %s and $PATH)", CachedBinary())
}

// FindModel returns the path of stories260K.gguf.
func FindModel() (string, error) {
	if p := os.Getenv("CG_MODEL_FILE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("CG_MODEL_FILE: %w", err)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		p := filepath.Join(dir, "shared", "models", ModelFile)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("model shared/models/%s not found above %s (set CG_MODEL_FILE)", ModelFile, wd)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs ollama serve with its state under dir, waits for it to answer and
// imports the model. On error after the process started it returns the server
// (already stopped) so the caller can show its log.
func start(bin, model, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("pick port: %w", err)
	}
	srv, err := run(bin, dir, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return srv, err
	}
	if err := srv.importModel(model); err != nil {
		srv.stop()
		return srv, fmt.Errorf("import %s: %w", model, err)
	}
	return srv, nil
}

// run starts `ollama serve` on host with its files in dir and waits until
// it answers.
func run(bin, dir, host string) (*Server, error) {
	home := filepath.Join(dir, "home")
	models := filepath.Join(dir, "models")
	for _, d := range []string{home, models} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	logPath := filepath.Join(dir, "ollama.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}

	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = []string{
		"OLLAMA_HOST=" + host,
		"OLLAMA_MODELS=" + models,
		"OLLAMA_NO_CLOUD=1",
		"HOME=" + home,
		"PATH=/usr/local/bin:/usr/bin:/bin",
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Own process group, so the runner subprocess can be killed with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}

	srv := &Server{
		URL:     "http://" + host,
		Model:   ModelName,
		LogFile: logPath,
		cmd:     cmd,
		done:    make(chan struct{}),
		bin:     bin,
		dir:     dir,
		host:    host,
	}
	go func() {
		srv.waitErr = cmd.Wait()
		logFile.Close()
		close(srv.done)
	}()

	if err := srv.waitReady(startTimeout); err != nil {
		srv.stop()
		return srv, err
	}
	return srv, nil
}

// Kill ends the server at once (SIGKILL to its process group, the model
// runner included), as a crash would: requests in flight are cut.
func (s *Server) Kill() {
	s.stopOnce.Do(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	})
}

// Restart starts the killed (or stopped) server again, on the same address
// with the same models, and waits until it answers. The test's cleanup
// stops the new process too.
func (s *Server) Restart() error {
	s.stop()
	srv, err := run(s.bin, s.dir, s.host)
	if err != nil {
		return err
	}
	s.cmd, s.done, s.LogFile = srv.cmd, srv.done, srv.LogFile
	s.stopOnce = sync.Once{}
	return nil
}

func (s *Server) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(s.URL + "/api/version")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("ollama serve exited before answering: %v", s.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ollama serve did not answer GET %s/api/version within %s", s.URL, timeout)
		}
	}
}

func (s *Server) importModel(path string) error {
	digest, size, err := fileDigest(path)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/blobs/"+digest, f)
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	if err := do(req, nil); err != nil {
		return fmt.Errorf("upload blob: %w", err)
	}

	body, err := json.Marshal(map[string]any{
		"model": ModelName,
		"files": map[string]string{filepath.Base(path): digest},
		"parameters": map[string]any{
			"num_thread":  1,
			"temperature": 0,
			"seed":        42,
			"num_ctx":     512,
		},
		"stream": false,
	})
	if err != nil {
		return err
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/create", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		Status string `json:"status"`
	}
	if err := do(req, &out); err != nil {
		return fmt.Errorf("create model: %w", err)
	}
	if out.Status != "success" {
		return fmt.Errorf("create model: status %q", out.Status)
	}
	return nil
}

// do sends req and decodes a JSON response into out when out is not nil.
func do(req *http.Request, out any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, strings.TrimSpace(string(data)))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode %q: %w", req.Method, req.URL.Path, data, err)
		}
	}
	return nil
}

func fileDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after stopTimeout.
func (s *Server) stop() {
	s.stopOnce.Do(func() {
		pid := s.cmd.Process.Pid
		select {
		case <-s.done:
		default:
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(stopTimeout):
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				<-s.done
			}
		}
		// The runner subprocess shares the group; make sure nothing is left.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	})
}

// logTo writes the server log (its last maxLogBytes) through tb.Log.
func (s *Server) logTo(tb testing.TB) {
	tb.Helper()
	data, err := os.ReadFile(s.LogFile)
	if err != nil {
		tb.Logf("ollamatest: read server log: %v", err)
		return
	}
	if len(data) > maxLogBytes {
		data = append([]byte("...\n"), data[len(data)-maxLogBytes:]...)
	}
	tb.Logf("ollama serve log (%s):\n%s", s.LogFile, data)
}
