// Package pgtest starts a throwaway PostgreSQL server for tests: initdb in
// a fresh directory, pg_ctl start on a loopback port, one database per
// test, everything removed by Stop. It finds the server programs of the
// Debian package postgresql (/usr/lib/postgresql/<version>/bin) or on
// PATH. PostgreSQL refuses to run as root, so when the test runs as root
// (CI does) the server runs as the unprivileged user nobody.
//
// A test package starts one Server in TestMain and hands out databases
// with NewDatabase; starting a server costs about a second, a database
// tens of milliseconds.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoServer is returned by Start when no PostgreSQL server programs are
// installed.
var ErrNoServer = errors.New("pgtest: PostgreSQL server programs (initdb, pg_ctl) not found: install the Debian package postgresql")

// Server is a running throwaway PostgreSQL server.
type Server struct {
	bin  string // directory of initdb, pg_ctl
	dir  string // holds data/, the socket and the log; removed by Stop
	data string
	port int
	uid  int // the server's user when started as root, else -1
	// durable keeps fsync, synchronous_commit and full_page_writes on.
	durable bool
	n       atomic.Int64
}

// BinDir returns the directory holding initdb and pg_ctl: the newest
// /usr/lib/postgresql/<version>/bin, else the directory of initdb on PATH.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && isExec(filepath.Join(filepath.Dir(p), "pg_ctl")) {
		return filepath.Dir(p), nil
	}
	return "", ErrNoServer
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start initialises and starts a server on 127.0.0.1 with durability off
// (fsync, synchronous_commit, full_page_writes: a test's data need not
// survive a power cut). Call Stop when done.
func Start() (*Server, error) { return start(false) }

// StartDurable is Start with PostgreSQL's durable defaults (fsync,
// synchronous commit, full page writes), for benchmarks that must pay
// what production pays; it preloads pg_stat_statements, so a benchmark can
// count the statements its work costs.
func StartDurable() (*Server, error) { return start(true) }

func start(durable bool) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "earshot-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data"), uid: -1, durable: durable}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the user nobody: %w", err)
		}
		s.uid, _ = strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, s.uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	if out, err := s.run("initdb", "-D", s.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions"); err != nil {
		return fmt.Errorf("pgtest: initdb: %w: %s", err, out)
	}
	// A free port: bind :0, note it, release it. Another process could take
	// it before the server binds; pg_ctl then fails and we try again.
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
		if lastErr = s.pgStart(); lastErr == nil {
			return nil
		}
	}
	return lastErr
}

// pgStart starts the initialised server on s.port.
func (s *Server) pgStart() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200 -c shared_buffers=32MB", s.port, s.dir)
	if !s.durable {
		opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	} else {
		opts += " -c shared_preload_libraries=pg_stat_statements"
	}
	out, err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.data, "-l", filepath.Join(s.dir, "log"), "-o", opts)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w: %s %s", err, out, log)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run runs one of the server programs, as nobody when we are root.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, prog), args...)
	cmd.Dir = s.dir
	// A server started with its output on our pipe would hold it open:
	// stop waiting for the pipe soon after the program itself exits.
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.uid >= 0 {
		u, _ := user.LookupId(strconv.Itoa(s.uid))
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(gid)}}
	}
	return cmd.CombinedOutput()
}

// DataDir returns the server's data directory (PGDATA): a test scans it
// for what the database wrote to disk.
func (s *Server) DataDir() string { return s.data }

// Port returns the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// DSN returns a libpq URL for database name on the server.
func (s *Server) DSN(name string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + name, RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDatabase creates an empty database and returns its name (see DSN).
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.n.Add(1))
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return name, nil
}

// NewDatabase creates an empty database for one test and returns its DSN;
// a cleanup drops it (forcing off whoever is still connected).
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name, err := s.CreateDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	return s.DSN(name)
}

// StartTest starts a throwaway server for one test (Start), stopped in a
// cleanup; a server that does not start or stop fails the test.
func StartTest(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// StartDatabase starts a throwaway server for one test (StartTest) and
// returns the DSN of a fresh database on it.
func StartDatabase(t testing.TB) string {
	t.Helper()
	return StartTest(t).NewDatabase(t)
}

// Stop stops the server (fast shutdown) and removes its directory.
func (s *Server) Stop() error {
	var err error
	if _, statErr := os.Stat(filepath.Join(s.data, "postmaster.pid")); statErr == nil {
		if out, e := s.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", s.data); e != nil {
			err = fmt.Errorf("pgtest: pg_ctl stop: %w: %s", e, out)
		}
	}
	if e := os.RemoveAll(s.dir); e != nil && err == nil {
		err = fmt.Errorf("pgtest: %w", e)
	}
	return err
}

// Restart stops the server and starts it again on the same port (a fault
// test's PostgreSQL restart).
func (s *Server) Restart() error {
	if out, err := s.run("pg_ctl", "restart", "-w", "-m", "fast", "-D", s.data, "-l", filepath.Join(s.dir, "log")); err != nil {
		return fmt.Errorf("pgtest: pg_ctl restart: %w: %s", err, out)
	}
	return nil
}

// Halt stops the server (fast shutdown) and keeps its data, so Resume
// starts it again on the same port: a fault test's PostgreSQL outage.
func (s *Server) Halt() error {
	if out, err := s.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", s.data); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Resume starts a halted server again on its port.
func (s *Server) Resume() error { return s.pgStart() }

// Main is a test package's TestMain body: it starts a throwaway server into
// *srv, runs the tests and stops the server, and returns the exit code.
func Main(m *testing.M, srv **Server) int {
	var err error
	*srv, err = Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := (*srv).Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}
