package e2e

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// Measured WER of the README's "Try it" on make sample's synthetic speech
// (ffmpeg's flite, rms voice, SAMPLE_TEXT of the Makefile: 23 words),
// 2026-11-29: 0 for submit's transcript, stream's live finals and stream's
// record. The bound allows two words of the 23.
const werTryIt = 0.09 // measured 0

// TestReadmeTryIt runs the README's "Try it" from a copy of the checkout
// that has no ../shared beside it: make run (the e2e build's binary in
// bin/, so `-o build` skips the rebuild and the apt step) with its hints,
// then every command of the section's sh block, as a user types them in a
// second terminal. The one change: the daemon listens on a free port,
// which the block's URL is rewritten to and EARSHOT_URL names for the
// clients. The transcripts must match the synthetic sample's text.
func TestReadmeTryIt(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "earshot")
	copyCheckout(t, "..", repo)
	if err := os.MkdirAll(filepath.Join(repo, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, earshotd, filepath.Join(repo, "bin", "earshotd"), 0o755)
	if _, err := os.Stat(filepath.Join(repo, "..", "shared")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the copy has a ../shared beside it: %v", err)
	}

	addr := freeAddr(t, "127.0.0.1")
	env := []string{"EARSHOT_URL=http://" + addr}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "EARSHOT_") && name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" {
			env = append(env, kv)
		}
	}
	run := startMakeRun(t, repo, addr, env)
	hints := strings.Join(run.linesWith("earshotd"), "\n")
	if strings.Contains(strings.Join(run.tail(1000), "\n"), "../shared") || !strings.Contains(hints, "bin/earshotd stream --url http://"+addr) {
		t.Errorf("make run's hints:\n%s", strings.Join(run.tail(12), "\n"))
	}

	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(readme), "# earshot\n\n```\nmake run\nmake test\n```\n") {
		t.Error("README.md does not start with the two commands make run and make test")
	}
	block := tryItBlock(t, string(readme))
	text := sampleText(t, filepath.Join(repo, "Makefile"))
	seen := map[string]bool{}
	for line := range strings.Lines(block) {
		cmdLine := strings.TrimSpace(line)
		if cmdLine == "" || strings.HasPrefix(cmdLine, "#") {
			continue
		}
		cmdLine = strings.ReplaceAll(cmdLine, "127.0.0.1:8080", addr)
		out := runShell(t, repo, env, cmdLine)
		t.Logf("$ %s\n%s", cmdLine, out)
		switch fields := strings.Fields(cmdLine); {
		case fields[0] == "make" && fields[1] == "sample":
			seen["sample"] = true
			if !strings.Contains(out, "synthetic speech") {
				t.Errorf("make sample did not say its speech is synthetic: %q", out)
			}
		case fields[0] == "bin/earshotd" && (fields[1] == "submit" || fields[1] == "stream"):
			seen[fields[1]] = true
			h := parseHuman(t, out)
			check := map[string]string{"transcript": h.transcript}
			if fields[1] == "stream" {
				check["live finals"] = strings.Join(h.finals, " ")
				if h.pass != "(batch pass)" || len(h.partials) == 0 {
					t.Errorf("stream: transcript line %q, %d partials", h.pass, len(h.partials))
				}
			}
			for what, got := range check {
				wer := recognizertest.WER(text, got)
				t.Logf("%s %s WER %.3f", fields[1], what, wer)
				if wer > werTryIt {
					t.Errorf("%s %s WER %.3f > %.3f: %q", fields[1], what, wer, werTryIt, got)
				}
			}
		case fields[0] == "curl":
			seen["curl"] = true
			if !strings.Contains(out, `"audio_url":"http://`+addr+`/v2/files/`) {
				t.Errorf("curl printed %q, want an upload's audio_url", out)
			}
		}
	}
	for _, want := range []string{"sample", "submit", "stream", "curl"} {
		if !seen[want] {
			t.Errorf("the README's Try it block has no %s command:\n%s", want, block)
		}
	}
}

// copyCheckout copies the checkout at src (its tracked files and the new
// ones git does not ignore, as the working tree has them) to dst: a clone
// of what is being tested, without .git, bin, .data or anything beside it.
func copyCheckout(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		st, err := os.Lstat(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
			continue
		}
		copyFile(t, from, to, st.Mode().Perm())
	}
}

func copyFile(t *testing.T, from, to string, perm fs.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// startMakeRun runs make run in repo on addr, in a process group of its
// own that the test's cleanup ends, and waits for the daemon's "api
// listening" line; it returns make's output so far and to come.
func startMakeRun(t *testing.T, repo, addr string, env []string) *procLog {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "-o", "build", "run", "LISTEN="+addr)
	cmd.Dir, cmd.Env = repo, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &tailWriter{max: 8 << 10}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := &procLog{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			log.add(sc.Text())
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("make run: last lines:\n%s\nend of its stderr:\n%s", strings.Join(log.tail(30), "\n"), stderr.String())
		}
	})
	log.waitLine(t, "make run", done, 60*time.Second, []string{`"msg":"api listening"`, addr})
	return log
}

// tryItBlock is the first sh block of the README's "Try it" section.
func tryItBlock(t *testing.T, readme string) string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Try it\n")
	if !ok {
		t.Fatal(`README.md has no "## Try it" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```sh\n")
	if !ok {
		t.Fatal("Try it has no sh block")
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		t.Fatal("Try it's sh block does not end")
	}
	return block
}

// sampleText is SAMPLE_TEXT of the Makefile: what make sample's speech says.
func sampleText(t *testing.T, makefile string) string {
	t.Helper()
	b, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SAMPLE_TEXT\s*:?=\s*(.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile has no SAMPLE_TEXT")
	}
	return string(m[1])
}

// runShell runs one command line with bash in dir, bounded by 3
// minutes, and returns its stdout; a non-zero exit fails the test.
func runShell(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	r := runCmd(t, dir, env, nil, 3*time.Minute, "bash", "-e", "-o", "pipefail", "-c", line)
	if r.err != nil {
		t.Fatalf("$ %s: %v\nstdout:\n%s\nstderr:\n%s", line, r.err, r.stdout, r.stderr)
	}
	return r.stdout
}
