package packaging

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// TestDebInstall installs the .deb with apt into a throwaway Debian 12 root
// made by mmdebstrap, checks what postinst did, transcribes a file with
// the installed binary as the earshot user, upgrades to a newer version
// (data and edited config kept), and purges the package. It downloads a
// minimal Debian and the runtime dependencies (a few hundred MB), so it
// needs root, mmdebstrap and the Debian mirror (EARSHOT_DEBIAN_MIRROR,
// default deb.debian.org); without them it skips and says why.
// EARSHOT_DEB_INSTALL_TEST=0 skips it on purpose.
func TestDebInstall(t *testing.T) {
	mirror := os.Getenv("EARSHOT_DEBIAN_MIRROR")
	if mirror == "" {
		mirror = "http://deb.debian.org/debian"
	}
	switch {
	case os.Getenv("EARSHOT_DEB_INSTALL_TEST") == "0":
		t.Skip("EARSHOT_DEB_INSTALL_TEST=0")
	case os.Geteuid() != 0:
		t.Skip("installing into a throwaway Debian root needs root (chroot)")
	}
	for _, tool := range []string{"mmdebstrap", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install mmdebstrap)", tool)
		}
	}
	if err := reachable(t, mirror+"/dists/bookworm/Release"); err != nil {
		t.Skipf("Debian mirror %s not reachable: %v", mirror, err)
	}
	d := buildDeb(t)
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

	// mmdebstrap, not debootstrap: 16 CPU s against 39 for the same
	// minbase root (apt unpacks each package once, in parallel downloads);
	// the package lists are kept for the apt-get install of the .deb.
	sh("mmdebstrap", "--variant=minbase", "--skip=cleanup/apt/lists", "bookworm", root, mirror)
	copyFile(t, d.path, filepath.Join(root, "tmp/earshot.deb"))
	wav := "../../shared/testdata/speech/pocketsphinx-goforward.wav"
	copyFile(t, wav, filepath.Join(root, "tmp/speech.wav"))
	// The same speech as an 8 kHz mu-law call recording.
	if _, err := telmodel.Render(t.Context(), wav, filepath.Join(root, "tmp/call.wav"), telmodel.MuLaw); err != nil {
		t.Fatal(err)
	}

	rmemMax := func() string { b, _ := os.ReadFile("/proc/sys/net/core/rmem_max"); return string(b) }
	hostRmem := rmemMax()
	out := in("apt-get", "install", "-y", "--no-install-recommends", "/tmp/earshot.deb")
	// 30-earshot.conf is installed, and applied only where systemd runs:
	// an install into a root (this chroot) leaves the host's kernel alone.
	if _, err := os.Stat(filepath.Join(root, "usr/lib/sysctl.d/30-earshot.conf")); err != nil {
		t.Errorf("sysctl.d file: %v", err)
	}
	if got := rmemMax(); got != hostRmem {
		t.Errorf("installing into a chroot changed the host's net.core.rmem_max: %q -> %q", hostRmem, got)
	}
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
	// 8 kHz input decodes with the installed telephone-band model.
	if got := in("runuser", "-u", "earshot", "--", "earshotd", "transcribe", "/tmp/call.wav"); !strings.Contains(got, "acoustic model en-us-telephone") ||
		!strings.Contains(strings.ToLower(got), "forward") {
		t.Errorf("transcribe of 8 kHz audio with the installed package: %s", got)
	}

	// Upgrade: a newer package keeps the data and the operator's config.
	conf := filepath.Join(root, "etc/earshot/earshot.yaml")
	edited, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	edited = append(edited, []byte("# edited by the operator\n")...)
	if err := os.WriteFile(conf, edited, 0o640); err != nil {
		t.Fatal(err)
	}
	in("runuser", "-u", "earshot", "--", "earshotd", "keys", "create", "--account", "kept", "--data-dir", "/var/lib/earshot")
	next := buildDebVersion(t, "1.2.4")
	copyFile(t, next.path, filepath.Join(root, "tmp/earshot-next.deb"))
	out = in("apt-get", "install", "-y", "--no-install-recommends", "-o", "Dpkg::Options::=--force-confold", "/tmp/earshot-next.deb")
	if strings.Contains(out, "earshot: admin API key") {
		t.Errorf("the upgrade created another admin key:\n%s", out)
	}
	if got := in("dpkg-query", "-W", "-f", "${Version}", "earshot"); got != "1.2.4" {
		t.Errorf("installed version after upgrade: %q", got)
	}
	if got, _ := os.ReadFile(conf); !bytes.Equal(got, edited) {
		t.Errorf("the upgrade changed the operator's config")
	}
	if got := in("runuser", "-u", "earshot", "--", "earshotd", "keys", "list", "--data-dir", "/var/lib/earshot"); !strings.Contains(got, "kept") || !strings.Contains(got, "admin") {
		t.Errorf("keys after upgrade: %q, want the admin and the kept key", got)
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

// reachable GETs url with a short timeout.
func reachable(t *testing.T, url string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return nil
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
