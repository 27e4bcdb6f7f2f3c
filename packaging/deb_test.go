package packaging

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/earshot-dev/earshot/packaging/kamailio"
	"github.com/earshot-dev/earshot/systemd"
)

const testVersion = "1.2.3"

// builtDeb is one .deb built by build-deb.sh from a freshly built earshotd.
type builtDeb struct {
	path   string // the .deb
	binary string // the earshotd packaged
}

// buildDeb builds earshotd and the .deb of testVersion, or skips when the
// tools are missing. The .deb is built once for the package's tests (they
// only read it), in built's directory, which TestMain removes.
func buildDeb(t *testing.T) builtDeb {
	t.Helper()
	return buildDebVersion(t, testVersion)
}

// built is what buildDebVersion has built so far: earshotd once, and one
// .deb per version. A failed build is not kept: the next test that asks
// builds again (and fails again).
var built struct {
	mu     sync.Mutex
	dir    string              // under os.TempDir; TestMain removes it
	binary string              // earshotd, "" until built
	debs   map[string]builtDeb // by version
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildDebVersion is buildDeb for a given package version. earshotd is
// built once for all versions: a package's version is its control file's,
// not the binary's.
func buildDebVersion(t *testing.T, version string) builtDeb {
	t.Helper()
	for _, tool := range []string{"dpkg-deb", "dpkg", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	built.mu.Lock()
	defer built.mu.Unlock()
	if d, ok := built.debs[version]; ok {
		return d
	}
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "earshot-deb-test-")
		if err != nil {
			t.Fatal(err)
		}
		built.dir, built.debs = dir, map[string]builtDeb{}
	}
	if built.binary == "" {
		bin := filepath.Join(built.dir, "earshotd")
		build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/earshotd")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		built.binary = bin
	}
	out := filepath.Join(built.dir, "dist-"+version)
	cmd := exec.CommandContext(t.Context(), "./build-deb.sh", built.binary)
	cmd.Env = append(os.Environ(), "DEB_OUT="+out, "VERSION="+version)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("build-deb.sh: %v\n%s", err, exitStderr(err))
	}
	deb := strings.TrimSpace(string(stdout))
	if filepath.Dir(deb) != out || !strings.HasPrefix(filepath.Base(deb), "earshot_"+version+"_") {
		t.Fatalf("build-deb.sh printed %q, want a .deb in %s", deb, out)
	}
	d := builtDeb{path: deb, binary: built.binary}
	built.debs[version] = d
	return d
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, exitStderr(err))
	}
	return string(out)
}

// depends are the package's runtime dependencies.
var depends = []string{"libc6", "libpocketsphinx3", "libsphinxbase3", "pocketsphinx-en-us", "libspeexdsp1", "libopus0", "libspandsp2", "ffmpeg", "adduser"}

func TestDeb(t *testing.T) {
	d := buildDeb(t)

	t.Run("control", func(t *testing.T) {
		fields := map[string]string{}
		for _, f := range []string{"Package", "Version", "Architecture", "Depends", "Maintainer", "Description"} {
			fields[f] = strings.TrimSpace(run(t, "dpkg-deb", "-f", d.path, f))
		}
		arch := strings.TrimSpace(run(t, "dpkg", "--print-architecture"))
		if fields["Package"] != "earshot" || fields["Version"] != testVersion || fields["Architecture"] != arch {
			t.Errorf("control: %v", fields)
		}
		got := strings.Split(fields["Depends"], ", ")
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(depends))) {
			t.Errorf("Depends: %q, want %v", fields["Depends"], depends)
		}
		if fields["Maintainer"] == "" || fields["Description"] == "" {
			t.Errorf("control lacks Maintainer or Description: %v", fields)
		}
	})

	t.Run("contents", func(t *testing.T) {
		// dpkg-deb -c: "-rwxr-xr-x root/root 16432776 2026-11-21 21:13 ./usr/bin/earshotd"
		entries := map[string]string{}
		for line := range strings.Lines(run(t, "dpkg-deb", "-c", d.path)) {
			f := strings.Fields(line)
			if len(f) >= 6 {
				entries[f[len(f)-1]] = f[0] + " " + f[1]
			}
		}
		for path, want := range map[string]string{
			"./usr/bin/earshotd":                              "-rwxr-xr-x root/root",
			"./lib/systemd/system/earshotd.service":           "-rw-r--r-- root/root",
			"./etc/earshot/earshot.yaml":                      "-rw-r--r-- root/root",
			"./usr/share/doc/earshot/README.md":               "-rw-r--r-- root/root",
			"./usr/share/earshot/model/en-us-telephone/means": "-rw-r--r-- root/root",
			"./usr/share/earshot/kamailio/kamailio.cfg":       "-rw-r--r-- root/root",
			"./usr/share/earshot/kamailio/dispatcher.list":    "-rw-r--r-- root/root",
			"./usr/lib/sysctl.d/30-earshot.conf":              "-rw-r--r-- root/root",
		} {
			if entries[path] != want {
				t.Errorf("%s: %q, want %q", path, entries[path], want)
			}
		}
		x := t.TempDir()
		run(t, "dpkg-deb", "-x", d.path, x)
		for path, want := range map[string][]byte{
			"lib/systemd/system/earshotd.service":     []byte(systemd.Unit()),
			"etc/earshot/earshot.yaml":                DefaultConfig(),
			"usr/share/earshot/kamailio/kamailio.cfg": kamailio.Shipped(),
			"usr/lib/sysctl.d/30-earshot.conf":        SysctlConf(),
		} {
			got, err := os.ReadFile(filepath.Join(x, path))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s in the .deb differs from its source (%v)", path, err)
			}
		}
		// The telephone model as committed: its own files (means at least)
		// and links to Debian's model (pocketsphinx-en-us, a dependency).
		for _, f := range []string{"feat.params", "mdef", "means", "noisedict", "sendump", "transition_matrices", "variances"} {
			src := filepath.Join("..", "model", "en-us-telephone", f)
			dst := filepath.Join(x, "usr/share/earshot/model/en-us-telephone", f)
			if target, err := os.Readlink(src); err == nil {
				if got, err := os.Readlink(dst); err != nil || got != target || !strings.HasPrefix(target, "/usr/share/pocketsphinx/model/en-us/en-us/") {
					t.Errorf("telephone model %s: link to %q (%v), want %q", f, got, err, target)
				}
				continue
			}
			want, _ := os.ReadFile(src)
			got, err := os.ReadFile(dst)
			if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
				t.Errorf("telephone model %s in the .deb differs from model/en-us-telephone (%v)", f, err)
			}
		}
		a, _ := os.ReadFile(d.binary)
		b, _ := os.ReadFile(filepath.Join(x, "usr/bin/earshotd"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Error("usr/bin/earshotd is not the binary given to build-deb.sh")
		}
	})

	t.Run("maintainer scripts", func(t *testing.T) {
		ctrl := t.TempDir()
		run(t, "dpkg-deb", "-e", d.path, ctrl)
		conf, err := os.ReadFile(filepath.Join(ctrl, "conffiles"))
		if err != nil || strings.TrimSpace(string(conf)) != "/etc/earshot/earshot.yaml" {
			t.Errorf("conffiles = %q, %v", conf, err)
		}
		for _, s := range []string{"postinst", "prerm", "postrm"} {
			p := filepath.Join(ctrl, s)
			st, err := os.Stat(p)
			if err != nil || st.Mode().Perm() != 0o755 {
				t.Errorf("%s: %v, mode %v", s, err, st.Mode())
				continue
			}
			if out, err := exec.CommandContext(t.Context(), "sh", "-n", p).CombinedOutput(); err != nil {
				t.Errorf("sh -n %s: %v\n%s", s, err, out)
			}
		}
	})

	t.Run("depends cover the binary's libraries", func(t *testing.T) {
		f, err := elf.Open(d.binary)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		libs, err := f.ImportedLibraries()
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range libs {
			out, err := exec.CommandContext(t.Context(), "dpkg", "-S", "*/"+lib).Output()
			if err != nil {
				t.Errorf("%s: no Debian package ships it (%v)", lib, err)
				continue
			}
			// "libpocketsphinx3:amd64: /usr/lib/x86_64-linux-gnu/libpocketsphinx.so.3"
			var pkgs []string
			for line := range strings.Lines(string(out)) {
				pkg, _, _ := strings.Cut(line, ":")
				pkg, _, _ = strings.Cut(pkg, ",")
				pkgs = append(pkgs, strings.TrimSpace(pkg))
			}
			if !slices.ContainsFunc(pkgs, func(p string) bool { return slices.Contains(depends, p) }) {
				t.Errorf("%s comes from %v, none of which is in Depends", lib, pkgs)
			}
		}
	})
}

// TestMaintainerScripts runs postinst, prerm and postrm as dpkg would, with
// DPKG_ROOT pointing at a scratch tree and the system commands they call
// (adduser, runuser, systemctl ...) replaced by stubs that log their
// arguments, so the test needs neither root nor systemd.
func TestMaintainerScripts(t *testing.T) {
	root := t.TempDir()
	stubs := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls.log")
	users := filepath.Join(t.TempDir(), "users")
	stub := func(name, body string) {
		script := "#!/bin/sh\necho \"" + name + " $*\" >>" + calls + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub("getent", `grep -qx "$2" `+users+` 2>/dev/null`)
	stub("adduser", `for a; do last=$a; done; echo "$last" >>`+users)
	stub("deluser", `grep -vx earshot `+users+` >`+users+`.new; mv `+users+`.new `+users)
	stub("delgroup", "")
	stub("chown", "")
	stub("runuser", "echo es_TESTKEY")
	stub("systemctl", "")
	stub("deb-systemd-helper", "")
	if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil { // systemd runs
		t.Fatal(err)
	}
	env := append(os.Environ(), "DPKG_ROOT="+root, "PATH="+stubs+":/usr/sbin:/usr/bin:/sbin:/bin")
	script := func(name string, args ...string) string {
		t.Helper()
		os.Remove(calls)
		cmd := exec.CommandContext(t.Context(), "sh", append([]string{filepath.Join("debian", name)}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		log, _ := os.ReadFile(calls)
		return string(out) + "\n--- calls\n" + string(log)
	}
	state := filepath.Join(root, "var/lib/earshot")
	mustContain := func(what, got string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s: missing %q in:\n%s", what, w, got)
			}
		}
	}

	// First install.
	out := script("postinst", "configure", "")
	mustContain("first install", out,
		"adduser --system --group --home /var/lib/earshot --no-create-home",
		"chown earshot:earshot "+state,
		"runuser -u earshot -- /usr/bin/earshotd keys create --data-dir "+state+" --account admin",
		"es_TESTKEY", // the key, printed once
		"deb-systemd-helper enable earshotd.service",
		"systemctl start earshotd.service")
	if st, err := os.Stat(state); err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("state dir: %v, mode %v; want 0750", err, st.Mode().Perm())
	}

	// Upgrade: the user and the database exist; no new key, no re-enable.
	if err := os.WriteFile(filepath.Join(state, "earshot.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out = script("postinst", "configure", "1.0.0")
	mustContain("upgrade", out, "systemctl try-restart earshotd.service")
	for _, not := range []string{"adduser", "runuser", "es_TESTKEY", "enable", "systemctl start"} {
		if strings.Contains(out, not) {
			t.Errorf("upgrade ran %q:\n%s", not, out)
		}
	}

	out = script("prerm", "remove")
	mustContain("prerm", out, "systemctl stop earshotd.service")
	script("postrm", "remove")
	if _, err := os.Stat(state); err != nil {
		t.Errorf("remove (not purge) deleted the data: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/earshot"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = script("postrm", "purge")
	mustContain("purge", out, "deluser --system --quiet earshot")
	for _, dir := range []string{state, filepath.Join(root, "etc/earshot")} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("purge left %s (%v)", dir, err)
		}
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		cmd := exec.CommandContext(t.Context(), "sh", filepath.Join("debian", s), "bogus")
		cmd.Env = env
		if err := cmd.Run(); err == nil {
			t.Errorf("%s bogus succeeded", s)
		}
	}
}
