// Package pgtest starts a real PostgreSQL (Debian's binaries) for tests,
// on a loopback port, its data and socket in a temp dir, stopped at the
// test's end.
//
// initdb and postgres refuse to run as root: as root the server runs as
// the postgres user, in a temp dir it owns.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL.
type Server struct {
	// DSN is the URL of its postgres database, as its superuser.
	DSN  string
	port string
	dir  string
	bin  string
	cred *syscall.Credential
	cmd  *exec.Cmd
	exit chan struct{}
}

// errNoBinaries is newServer's error when PostgreSQL is not installed.
var errNoBinaries = errors.New("initdb and postgres not found (make deps installs postgresql)")

// Start initialises a cluster and starts its server; the test's cleanup
// stops it and removes its files. Without initdb and postgres (on the PATH
// or in /usr/lib/postgresql/*/bin) the test is skipped, or fails when
// CG_REQUIRE_POSTGRES=1 (CI). A test that stops or restarts the server
// starts its own; others share one (Shared).
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := newServer()
	check(t, err)
	t.Cleanup(s.remove)
	return s
}

// shared is the package's server of Shared, started by the first test
// that asks for it.
var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// Shared returns the server the tests of a package share (each in a
// database of its own: NewDatabase), started on first use: initdb costs
// seconds, a database milliseconds. The package's TestMain calls Main,
// which stops it once every test has run. A test that stops the server
// uses Start instead.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() { shared.s, shared.err = newServer() })
	check(t, shared.err)
	return shared.s
}

// Main runs the package's tests and then stops the shared server, if one
// was started: func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.s != nil {
		shared.s.remove()
	}
	return code
}

// check skips or fails t for newServer's error.
func check(t testing.TB, err error) {
	t.Helper()
	switch {
	case errors.Is(err, errNoBinaries) && os.Getenv("CG_REQUIRE_POSTGRES") == "1":
		t.Fatal(err.Error() + " and CG_REQUIRE_POSTGRES=1")
	case errors.Is(err, errNoBinaries):
		t.Skip(err.Error())
	case err != nil:
		t.Fatal(err)
	}
}

// newServer initialises a cluster in a temp dir of its own and starts it.
func newServer() (*Server, error) {
	bin := findBin()
	if bin == "" {
		return nil, errNoBinaries
	}
	s := &Server{bin: bin}
	// Not t.TempDir: its parent is private to the test's user, and the
	// server may run as another one.
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("running as root needs the postgres user to run PostgreSQL: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			s.remove()
			return nil, err
		}
	}
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		s.remove()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.remove()
		return nil, err
	}
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	ln.Close()
	s.DSN = "postgres://postgres@127.0.0.1:" + s.port + "/postgres?sslmode=disable"
	if err := s.start(); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// remove stops the server and removes its files.
func (s *Server) remove() {
	s.Stop()
	os.RemoveAll(s.dir)
}

// findBin returns the directory that holds initdb and postgres: the
// PATH's, else the newest /usr/lib/postgresql/N/bin; "" when none does.
func findBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		// Debian links initdb into the PATH, not postgres.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(real), "postgres")); err == nil {
				return filepath.Dir(real)
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		_, e1 := os.Stat(filepath.Join(d, "initdb"))
		_, e2 := os.Stat(filepath.Join(d, "postgres"))
		if e1 == nil && e2 == nil {
			return d
		}
	}
	return ""
}

func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	// A test binary that dies (a panic, a timeout) takes its server with
	// it: SIGQUIT is PostgreSQL's immediate shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

func (s *Server) start() error {
	log, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd = s.command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"), "-p", s.port,
		"-k", s.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	s.exit = exit
	go func(cmd *exec.Cmd) {
		cmd.Wait()
		close(exit)
	}(s.cmd)
	// Poll until it accepts a connection: start-up takes a second or two,
	// bounded to thirty on a loaded machine.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exit:
			s.cmd = nil
			out, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			return fmt.Errorf("postgres exited at start:\n%s", out)
		default:
		}
		if s.ping() == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("postgres on port %s did not accept connections", s.port)
}

func (s *Server) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// Stop shuts the server down (idempotent), its data kept: a database
// going away mid-run.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	// SIGINT is PostgreSQL's fast shutdown: connections are cut at once.
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exit
	}
	s.cmd = nil
}

// Restart starts the server again on the same port, with its data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// NewDatabase creates an empty database of its own for one test and
// returns its DSN.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "t" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%s/%s?sslmode=disable", s.port, name)
}
