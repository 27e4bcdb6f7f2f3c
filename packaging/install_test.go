package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDebInstall installs the .deb with apt into a throwaway Debian 12 root
// made by debootstrap, checks what postinst did, transcribes a file with
// the installed binary as the earshot user, and purges the package. It
// downloads a minimal Debian and the runtime dependencies (several hundred
// MB, minutes), so it runs only with EARSHOT_DEB_INSTALL_TEST=1, as root,
// with debootstrap installed. EARSHOT_DEBIAN_MIRROR overrides the mirror.
func TestDebInstall(t *testing.T) {
	switch {
	case os.Getenv("EARSHOT_DEB_INSTALL_TEST") != "1":
		t.Skip("set EARSHOT_DEB_INSTALL_TEST=1 to install the .deb into a debootstrap root (network, minutes)")
	case os.Geteuid() != 0:
		t.Skip("installing into a debootstrap root needs root (chroot)")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		t.Skip("debootstrap not installed (apt-get install debootstrap)")
	}
	d := buildDeb(t)
	mirror := os.Getenv("EARSHOT_DEBIAN_MIRROR")
	if mirror == "" {
		mirror = "http://deb.debian.org/debian"
	}
	root := t.TempDir()
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	in := func(args ...string) string { t.Helper(); return sh("chroot", append([]string{root}, args...)...) }

	sh("debootstrap", "--variant=minbase", "bookworm", root, mirror)
	copyFile(t, d.path, filepath.Join(root, "tmp/earshot.deb"))
	wav := "../../shared/testdata/speech/pocketsphinx-goforward.wav"
	copyFile(t, wav, filepath.Join(root, "tmp/speech.wav"))

	out := in("apt-get", "install", "-y", "--no-install-recommends", "/tmp/earshot.deb")
	if !strings.Contains(out, "earshot: admin API key") {
		t.Errorf("install did not print the admin key:\n%s", out)
	}
	passwd := in("getent", "passwd", "earshot")
	fields := strings.Split(passwd, ":")
	if len(fields) < 7 || !strings.Contains(fields[6], "nologin") {
		t.Errorf("earshot user: %q", passwd)
	}
	for path, mode := range map[string]os.FileMode{"var/lib/earshot": 0o750, "var/lib/earshot/earshot.db": 0o600} {
		st, err := os.Stat(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if st.Mode().Perm() != mode || strings.TrimSpace(in("stat", "-c", "%U", "/"+path)) != "earshot" {
			t.Errorf("%s: mode %v owner %s; want %v earshot", path, st.Mode().Perm(), in("stat", "-c", "%U", "/"+path), mode)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/multi-user.target.wants/earshotd.service")); err != nil {
		t.Errorf("unit not enabled: %v", err)
	}
	if got, err := exec.CommandContext(t.Context(), "chroot", root, "earshotd", "config", "check", "/etc/earshot/earshot.yaml").CombinedOutput(); err != nil || strings.TrimSpace(string(got)) != "ok" {
		t.Errorf("config check of the installed config: %v\n%s", err, got)
	}
	if got := in("runuser", "-u", "earshot", "--", "earshotd", "keys", "list", "--data-dir", "/var/lib/earshot"); !strings.Contains(got, "admin") {
		t.Errorf("keys list: %q, want the admin key", got)
	}
	// The runtime dependencies suffice: libraries, model, ffmpeg.
	if got := in("runuser", "-u", "earshot", "--", "earshotd", "transcribe", "/tmp/speech.wav"); !strings.Contains(strings.ToLower(got), "forward") {
		t.Errorf("transcribe with the installed package: %s", got)
	}

	in("apt-get", "purge", "-y", "earshot")
	for _, path := range []string{"var/lib/earshot", "etc/earshot", "usr/bin/earshotd", "lib/systemd/system/earshotd.service"} {
		if _, err := os.Stat(filepath.Join(root, path)); !os.IsNotExist(err) {
			t.Errorf("purge left /%s (%v)", path, err)
		}
	}
	cmd := exec.CommandContext(t.Context(), "chroot", root, "getent", "passwd", "earshot")
	if err := cmd.Run(); err == nil {
		t.Error("purge left the earshot user")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).ExitStatus() != 2 {
		t.Errorf("getent after purge: %v", err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
