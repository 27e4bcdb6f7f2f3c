// Package benchd starts a real earshotd for the benchmarks: it builds the
// binary, creates a key, starts the daemon on a loopback port, reads its
// CPU and memory from /proc and a live session's record after its batch
// pass. BENCHD_LOG=FILE keeps the daemon's log in FILE (diagnosis; it is
// drained unread otherwise).
package benchd

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Daemon is a running earshotd.
type Daemon struct {
	Base string // http://127.0.0.1:port
	Key  string
	Dir  string
	bin  string
	data string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// TelephoneModel is the checkout's telephone-band model, relative to the
// repository root the benchmarks run from.
const TelephoneModel = "model/en-us-telephone"

var addrRE = regexp.MustCompile(`"msg":"api listening".*"addr":"([^"]+)"`)

// Start builds ./cmd/earshotd into a temp dir (run from the repo root) and
// starts it with the given extra flags and YAML config. The per-key rate
// limit is off: a load generator is one key doing the work of many clients.
func Start(configYAML string, flags ...string) (*Daemon, error) {
	return StartIn(".", configYAML, flags...)
}

// StartIn is Start for the checkout in directory src (another commit's
// tree, for a before/after table in one sitting): its ./cmd/earshotd and
// its telephone-band model.
func StartIn(src, configYAML string, flags ...string) (*Daemon, error) {
	dir, err := os.MkdirTemp("", "earshot-bench-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "earshotd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/earshotd")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build: %v %s", err, out)
	}
	data := filepath.Join(dir, "data")
	out, err := exec.Command(bin, "keys", "create", "--data-dir", data, "--account", "bench").Output()
	if err != nil {
		return nil, fmt.Errorf("keys create: %w", err)
	}
	cfg := filepath.Join(dir, "earshot.yaml")
	if err := os.WriteFile(cfg, []byte(configYAML), 0o600); err != nil {
		return nil, err
	}
	args := []string{"run", "--listen", "127.0.0.1:0", "--data-dir", data, "--config", cfg, "--set", "limits.requests_per_second=0"}
	// The telephone-band model of this checkout, as `make run` and the
	// .deb give the daemon (its default is the .deb's installed path).
	if abs, err := filepath.Abs(filepath.Join(src, TelephoneModel)); err == nil {
		if st, err := os.Stat(abs); err == nil && st.IsDir() {
			args = append(args, "--set", "sphinx.telephone_hmm="+abs)
		}
	}
	args = append(args, flags...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		if f := os.Getenv("BENCHD_LOG"); f != "" {
			// Diagnosis: the daemon's log (after its listening line) to
			// the file BENCHD_LOG names.
			if w, err := os.Create(f); err == nil {
				io.Copy(w, stdout)
				w.Close()
			}
		}
		io.Copy(io.Discard, stdout) // the daemon's log, drained at the least cost
	}()
	d := &Daemon{Key: strings.TrimSpace(string(out)), Dir: dir, bin: bin, data: data, cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(d.done)
	}()
	select {
	case a := <-found:
		d.Base = "http://" + a
		if err := d.waitLoaded(2 * time.Minute); err != nil {
			d.Stop()
			return nil, err
		}
		return d, nil
	case <-time.After(time.Minute):
		d.Stop()
		return nil, fmt.Errorf("daemon did not start")
	}
}

// waitLoaded waits until the daemon's decoder pools have finished loading
// in the background (the earshot_decoders_loading gauge is 0), so a
// benchmark measures the steady state of a running appliance, not the
// first seconds of a fresh daemon whose pools load beside the requests.
// A daemon without the gauge (a commit before it) is not waited for.
func (d *Daemon) waitLoaded(limit time.Duration) error {
	for deadline := time.Now().Add(limit); ; {
		n, ok, err := d.gauge("earshot_decoders_loading")
		switch {
		case err != nil:
			return err
		case !ok || n == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("decoders still loading after %v: %v", limit, n)
		}
		time.Sleep(100 * time.Millisecond) // polling a real process
	}
}

// gauge reads one unlabelled gauge from the daemon's /metrics; ok is
// false when the daemon does not export it.
func (d *Daemon) gauge(name string) (v float64, ok bool, err error) {
	resp, err := http.Get(d.Base + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if rest, found := strings.CutPrefix(sc.Text(), name+" "); found {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil, err
		}
	}
	return 0, false, sc.Err()
}

// Stop kills the daemon and removes its files.
func (d *Daemon) Stop() {
	d.cmd.Process.Kill()
	<-d.done
	os.RemoveAll(d.Dir)
}

// Exited reports whether the daemon process has ended (a crash, while the
// benchmark still runs).
func (d *Daemon) Exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// CreateKey creates a key of another account through the running daemon's
// admin socket.
func (d *Daemon) CreateKey(account string) (string, error) {
	out, err := exec.Command(d.bin, "keys", "create", "--data-dir", d.data, "--account", account).Output()
	if err != nil {
		return "", fmt.Errorf("keys create %s: %w", account, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CPUSeconds is the daemon's user+system CPU time so far.
func (d *Daemon) CPUSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// RSSMB is the daemon's resident memory in MB.
func (d *Daemon) RSSMB() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// PID is the daemon's process id (for /proc readings such as open fds).
func (d *Daemon) PID() int { return d.cmd.Process.Pid }
