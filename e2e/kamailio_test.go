package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kamailioHost is the loopback address Kamailio listens on in the tests:
// apart from 127.0.0.1 (the phones and the nodes), so a node whose
// sip.allow names only it proves the proxy, not the phone, is admitted.
const kamailioHost = "127.0.0.10"

// kamailioProc is a real Kamailio started by a test on loopback with the
// config `earshotd kamailio config` prints, run unprivileged (as nobody
// when the test runs as root) with its runtime files in a temp dir.
type kamailioProc struct {
	t    *testing.T
	Addr string // host:port, UDP and TCP
	// TLSAddr is host:port of its SIP over TLS, when started with TLS.
	TLSAddr string
	dir     string
	cmd     *exec.Cmd
	done    chan struct{}

	procLog // its log so far
}

// startKamailio starts Kamailio in front of the SIP doors nodes (host:port)
// with OPTIONS probes every ping (whole seconds) and a node silent for two
// seconds skipped (a loaded node's OPTIONS answer may take a second), and waits until its control socket answers. It is
// stopped in a cleanup.
func startKamailio(t *testing.T, nodes []string, ping time.Duration) *kamailioProc {
	t.Helper()
	return startKamailioTLS(t, nodes, ping, nil)
}

// kamailioTLS is what Kamailio's TLS side is started with: its certificate
// and key, and the CA file the nodes' certificates must chain to (PEM
// files; copied into Kamailio's directory, readable by it).
type kamailioTLS struct {
	cert, key, ca string
}

// startKamailioTLS is startKamailio with SIP over TLS on as well when tls
// is not nil (`earshotd kamailio config --tls-*`): k.TLSAddr is then where
// it takes calls over TLS, and nodes may be sip:host:port;transport=tls.
func startKamailioTLS(t *testing.T, nodes []string, ping time.Duration, tls *kamailioTLS) *kamailioProc {
	t.Helper()
	bin, err := exec.LookPath("kamailio")
	if err != nil {
		bin = "/usr/sbin/kamailio"
		if _, err := os.Stat(bin); err != nil {
			t.Fatal("needs kamailio (apt-get install kamailio; make test-deps)")
		}
	}
	dir, err := os.MkdirTemp("", "earshot-kamailio-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("running Kamailio unprivileged needs the user nobody: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var tlsFlags []string
	if tls != nil {
		for _, f := range []struct{ flag, from string }{{"--tls-cert", tls.cert}, {"--tls-key", tls.key}, {"--tls-ca", tls.ca}} {
			to := filepath.Join(dir, strings.TrimPrefix(f.flag, "--")+".pem")
			if err := os.WriteFile(to, mustRead(t, f.from), 0o600); err != nil {
				t.Fatal(err)
			}
			if cred != nil {
				if err := os.Chown(to, int(cred.Uid), int(cred.Gid)); err != nil {
					t.Fatal(err)
				}
			}
			tlsFlags = append(tlsFlags, f.flag, to)
		}
	}
	list, err := exec.Command(earshotd, append([]string{"kamailio", "dispatcher"}, nodes...)...).Output()
	if err != nil {
		t.Fatalf("earshotd kamailio dispatcher: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dispatcher.list"), list, 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port: bind UDP and TCP on it, note it, release both. Another
	// process could take it before Kamailio binds; it then exits at once
	// and we try again.
	for range 5 {
		port, err := freeSIPPort(kamailioHost)
		if err != nil {
			t.Fatal(err)
		}
		k := &kamailioProc{t: t, Addr: net.JoinHostPort(kamailioHost, strconv.Itoa(port)), dir: dir, done: make(chan struct{})}
		args := []string{"kamailio", "config", "--listen", k.Addr,
			"--dispatcher-list", filepath.Join(dir, "dispatcher.list"), "--ctl", k.ctl(),
			"--ping-interval", ping.String(), "--timeout", "2s"}
		if tls != nil {
			tlsPort, err := freeSIPPort(kamailioHost)
			if err != nil {
				t.Fatal(err)
			}
			k.TLSAddr = net.JoinHostPort(kamailioHost, strconv.Itoa(tlsPort))
			args = append(append(args, "--tls-listen", k.TLSAddr), tlsFlags...)
		}
		cfg, err := exec.Command(earshotd, args...).Output()
		if err != nil {
			t.Fatalf("earshotd kamailio config: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "kamailio.cfg"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := k.start(bin, cred); err == nil {
			return k
		} else if !errors.Is(err, errKamailioExited) {
			t.Fatal(err)
		}
		t.Logf("kamailio exited at start (port %d taken?); trying another port:\n%s", port, strings.Join(k.linesWith(""), "\n"))
	}
	t.Fatal("kamailio did not start in 5 tries")
	return nil
}

var errKamailioExited = errors.New("kamailio exited")

func (k *kamailioProc) ctl() string { return "unix:" + filepath.Join(k.dir, "ctl") }

// start runs Kamailio in the foreground, logging to stderr, and waits
// until its control socket answers.
func (k *kamailioProc) start(bin string, cred *syscall.Credential) error {
	k.cmd = exec.Command(bin, "-DD", "-E", "-f", filepath.Join(k.dir, "kamailio.cfg"), "-Y", k.dir, "-w", k.dir, "-m", "64", "-M", "8")
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	k.cmd.Stdout, k.cmd.Stderr = w, w
	if err := k.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	w.Close()
	go func() {
		defer close(k.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			k.add(sc.Text())
		}
		r.Close()
		k.cmd.Wait()
	}()
	k.t.Cleanup(func() {
		k.stop()
		if k.t.Failed() {
			k.t.Logf("kamailio's log:\n%s", strings.Join(k.linesWith(""), "\n"))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := k.rpc("core.version"); err == nil {
			return nil
		}
		select {
		case <-k.done:
			return errKamailioExited
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kamailio's control socket did not answer within 30s:\n%s", strings.Join(k.linesWith(""), "\n"))
		}
		time.Sleep(50 * time.Millisecond) // polling a starting process, not settling
	}
}

// stop ends Kamailio with SIGTERM (its main process stops its children),
// and its process group with SIGKILL if it lingers.
func (k *kamailioProc) stop() {
	select {
	case <-k.done:
		return
	default:
	}
	k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
		k.t.Errorf("kamailio did not stop within 15s of SIGTERM")
	}
}

// rpc runs one kamcmd command on Kamailio's control socket.
func (k *kamailioProc) rpc(args ...string) (string, error) {
	out, err := exec.Command("kamcmd", append([]string{"-s", k.ctl()}, args...)...).CombinedOutput()
	return string(out), err
}

// dispatcherRE finds each node and its flags in `kamcmd dispatcher.list`.
var dispatcherRE = regexp.MustCompile(`URI: (\S+)\s+FLAGS: (\S+)`)

// waitNodes polls `kamcmd dispatcher.list` until every node (sip:host:port)
// has its wanted flags ("AP" active and probed, "IP" inactive and probed,
// "AX" active and not probed yet).
func (k *kamailioProc) waitNodes(timeout time.Duration, want map[string]string) {
	k.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := k.rpc("dispatcher.list")
		got := map[string]string{}
		for _, m := range dispatcherRE.FindAllStringSubmatch(out, -1) {
			got[m[1]] = m[2]
		}
		ok := err == nil
		for uri, flags := range want {
			ok = ok && got[uri] == flags
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("kamailio's nodes %v (%v), want %v within %s:\n%s", got, err, want, timeout, out)
		}
		time.Sleep(100 * time.Millisecond) // polling a real process, not settling
	}
}

// WaitLog waits until a log line contains every one of parts.
func (k *kamailioProc) WaitLog(timeout time.Duration, parts ...string) string {
	k.t.Helper()
	return k.waitLine(k.t, "kamailio", k.done, timeout, parts)
}

// freeSIPPort is a port free for both UDP and TCP on host just now.
func freeSIPPort(host string) (int, error) {
	for range 20 {
		u, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			return 0, err
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		u.Close()
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, errors.New("no port free for both UDP and TCP")
}
