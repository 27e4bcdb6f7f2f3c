package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMakeAptInstallsWhatIsNotInstalled runs the Makefile's apt target with
// dpkg, dpkg-query, apt-get and sudo replaced by scripts on PATH: a package
// removed but not purged (dpkg keeps its config files, and dpkg -s still
// answers 0 for it) and one dpkg never heard of are installed; one in the
// installed state is not.
func TestMakeAptInstallsWhatIsNotInstalled(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := t.TempDir()
	calls := filepath.Join(bin, "apt-get.calls")
	scripts := map[string]string{
		// dpkg's answers for three packages, as Debian 12's dpkg gives them.
		"dpkg-query": `for a; do p=$a; done
case "$p" in
removed) printf 'deinstall ok config-files';;
present) printf 'install ok installed';;
*) echo "dpkg-query: no packages found matching $p" >&2; exit 1;;
esac`,
		"dpkg": `for a; do p=$a; done
case "$p" in removed|present) exit 0;; *) exit 1;; esac`,
		"apt-get": `echo "$*" >> "` + calls + `"`,
		"sudo":    `exec "$@"`,
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", root(t), "apt", "PKGS=removed present unknown", "APT_LOCK_TIMEOUT=5")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make apt: %v\n%s", err, out)
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatalf("apt-get was not run (make said: %s): %v", out, err)
	}
	var install string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(line, " install ") {
			install = line
		}
	}
	fields := strings.Fields(install)
	if !slices.Contains(fields, "removed") || !slices.Contains(fields, "unknown") || slices.Contains(fields, "present") {
		t.Errorf("apt-get install %q: want the removed and the unknown package, not the installed one", install)
	}
}
