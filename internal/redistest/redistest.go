// Package redistest starts a real redis-server (Debian's) on a loopback
// port for tests, without persistence, in the test's temp dir.
package redistest

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	// Addr is host:port; URL is redis://Addr/0.
	Addr, URL string
	cmd       *exec.Cmd
	dir       string
	port      string
}

// Start starts a redis-server and stops it at the test's end. Without
// redis-server on the PATH the test is skipped, or fails when
// CG_REQUIRE_REDIS=1 (CI).
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CG_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not found and CG_REQUIRE_REDIS=1 (scripts/install-redis.sh installs it)")
		}
		t.Skip("redis-server not found (scripts/install-redis.sh installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	s := &Server{Addr: addr, URL: "redis://" + addr + "/0", dir: t.TempDir(), port: port}
	s.start(t)
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	s.cmd = exec.Command("redis-server", "--port", s.port, "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.dir)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Poll until it answers PING: start-up takes milliseconds, bounded to
	// ten seconds on a loaded machine.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if Ping(s.Addr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	t.Fatalf("redis-server on %s did not answer PING", s.Addr)
}

// Stop kills the server (idempotent): a Redis going away mid-run.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.start(t)
}

// Ping reports whether a Redis answers PING on addr.
func Ping(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return false
	}
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.HasPrefix(line, "+PONG")
}
