package kamailio

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/config"
)

// TestShippedIsDefault: the file the package installs is the rendering of
// the defaults, so `earshotd kamailio config` with no flags prints it.
func TestShippedIsDefault(t *testing.T) {
	got, err := Render(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Shipped()) {
		t.Error("Render(Config{}) differs from the shipped kamailio.cfg")
	}
}

// TestRenderChecks: Kamailio itself accepts the rendered file with a node
// list (kamailio -c parses the config and loads every module).
func TestRenderChecks(t *testing.T) {
	bin, err := exec.LookPath("kamailio")
	if err != nil {
		bin = "/usr/sbin/kamailio"
		if _, err := os.Stat(bin); err != nil {
			t.Fatal("needs kamailio (apt-get install kamailio; make test-deps)")
		}
	}
	dir := t.TempDir()
	list, err := DispatcherList([]string{"127.0.0.1:5071", "sip:127.0.0.1:5072;transport=tcp", "node-c.example"})
	if err != nil {
		t.Fatal(err)
	}
	want := "1 sip:127.0.0.1:5071 0 0\n1 sip:127.0.0.1:5072;transport=tcp 0 0\n1 sip:node-c.example:5060 0 0\n"
	if !strings.HasSuffix(string(list), want) {
		t.Errorf("dispatcher list:\n%s\nwant it to end with\n%s", list, want)
	}
	listPath := filepath.Join(dir, "dispatcher.list")
	if err := os.WriteFile(listPath, list, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Render(Config{Listen: "127.0.0.1:5099", DispatcherList: listPath, Ctl: "unix:" + filepath.Join(dir, "ctl"),
		PingInterval: 3 * time.Second, Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"#!define EARSHOT_LISTEN_UDP udp:127.0.0.1:5099\n",
		"#!define EARSHOT_LISTEN_TCP tcp:127.0.0.1:5099\n",
		"#!define EARSHOT_TCP_SOURCE_IPV4 127.0.0.1\n",
		"#!define EARSHOT_DISPATCHER_LIST \"" + listPath + "\"\n",
		"#!define EARSHOT_PING_INTERVAL 3\n",
		"#!define EARSHOT_FR_TIMER 1500\n",
	} {
		if !bytes.Contains(cfg, []byte(line)) {
			t.Errorf("rendered cfg lacks %q", line)
		}
	}
	// The example list shipped beside the config is what the command prints
	// for its nodes.
	example, err := os.ReadFile("dispatcher.list")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := DispatcherList([]string{"10.0.0.11", "10.0.0.12", "10.0.0.13"}); !bytes.HasSuffix(example, bytes.SplitAfterN(want, []byte("\n"), 3)[2]) {
		t.Errorf("the shipped dispatcher.list is not what `earshotd kamailio dispatcher` prints for its nodes:\n%s", example)
	}
	cfgPath := filepath.Join(dir, "kamailio.cfg")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "-c", "-f", cfgPath).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("config file ok")) {
		t.Fatalf("kamailio -c: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("udp: 127.0.0.1 [127.0.0.1]:5099")) || !bytes.Contains(out, []byte("tcp: 127.0.0.1 [127.0.0.1]:5099")) {
		t.Errorf("kamailio -c does not listen where asked:\n%s", out)
	}
}

// TestValidate: each bad setting is refused with its key named; values
// that would break out of the cfg's quoted strings never reach the file.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		key string
	}{
		{Config{Listen: "5060"}, "listen"},
		{Config{Listen: "kamailio.example:5060"}, "listen"},
		{Config{Listen: "0.0.0.0:0"}, "listen"},
		{Config{DispatcherList: "relative/list"}, "dispatcher-list"},
		{Config{DispatcherList: "/etc/x\"\nloadmodule \"exec.so"}, "dispatcher-list"},
		{Config{Ctl: "/run/ctl"}, "ctl"},
		{Config{Ctl: "unix:/run/\"ctl"}, "ctl"},
		{Config{PingInterval: 1500 * time.Millisecond}, "ping-interval"},
		{Config{PingInterval: 2 * time.Hour}, "ping-interval"},
		{Config{Timeout: 10 * time.Millisecond}, "timeout"},
		{Config{TLSCert: "/k.crt", TLSKey: "/k.key", TLSCA: "/ca.crt"}, "tls-listen"},
		{Config{TLSListen: "0.0.0.0:5061", TLSKey: "/k.key", TLSCA: "/ca.crt"}, "tls-cert"},
		{Config{TLSListen: "0.0.0.0:5061", TLSCert: "/k.crt", TLSCA: "/ca.crt"}, "tls-key"},
		{Config{TLSListen: "0.0.0.0:5061", TLSCert: "/k.crt", TLSKey: "/k.key", TLSCA: "ca.crt"}, "tls-ca"},
		{Config{TLSListen: "0.0.0.0:5061", TLSCert: "/k.crt\"\nloadmodule \"exec.so", TLSKey: "/k.key", TLSCA: "/ca.crt"}, "tls-cert"},
	} {
		_, err := Render(c.cfg)
		var p *config.Problem
		if !errors.As(err, &p) || p.Key != c.key {
			t.Errorf("%+v: %v, want a problem with key %s", c.cfg, err, c.key)
		}
	}
}

// TestDispatcherListRefuses: node names that are not host[:port] (or would
// add lines or fields to the list) are refused, each named.
func TestDispatcherListRefuses(t *testing.T) {
	for _, nodes := range [][]string{
		nil,
		{"10.0.0.1:0"},
		{"10.0.0.1:99999"},
		{"10.0.0.1\n1 sip:evil:5060 0 0"},
		{"10.0.0.1 8"},
		{"sip:10.0.0.1;lr"},
		{"sip:10.0.0.1;transport=sctp"},
		{"sip:10.0.0.1;transport=tls;lr"},
		{"bad_host"},
		{"10.0.0.1", "sip:10.0.0.1:5060"},
	} {
		if out, err := DispatcherList(nodes); err == nil {
			t.Errorf("%q: accepted:\n%s", nodes, out)
		}
	}
	out, err := DispatcherList([]string{"[::1]:5070", "::2", "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(out), "1 sip:[::1]:5070 0 0\n1 sip:[::2]:5060 0 0\n1 sip:10.0.0.1:5060 0 0\n") {
		t.Errorf("IPv6 nodes:\n%s", out)
	}
}

// TestRenderTLSChecks: with the --tls-* settings the rendered file turns
// TLS on (the tls module, a tls: listen, the certificate files) and
// Kamailio accepts it, loading the certificate and key; without them the
// TLS block stays off (TestRenderChecks' file has no tls: listen).
func TestRenderTLSChecks(t *testing.T) {
	bin, err := exec.LookPath("kamailio")
	if err != nil {
		bin = "/usr/sbin/kamailio"
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/kamailio/modules/tls.so"); err != nil {
		t.Fatal("needs Kamailio's tls module (apt-get install kamailio-tls-modules; make test-deps)")
	}
	dir := t.TempDir()
	list, err := DispatcherList([]string{"sip:127.0.0.1;transport=tls", "sip:127.0.0.1:5072;transport=tls"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 sip:127.0.0.1:5061;transport=tls 0 0\n1 sip:127.0.0.1:5072;transport=tls 0 0\n"; !strings.HasSuffix(string(list), want) {
		t.Errorf("TLS dispatcher list:\n%s\nwant it to end with\n%s", list, want)
	}
	listPath := filepath.Join(dir, "dispatcher.list")
	if err := os.WriteFile(listPath, list, 0o644); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "k.crt"), filepath.Join(dir, "k.key")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=kamailio").CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	cfg, err := Render(Config{Listen: "127.0.0.1:5099", DispatcherList: listPath, Ctl: "unix:" + filepath.Join(dir, "ctl"),
		TLSListen: "127.0.0.1:5098", TLSCert: certFile, TLSKey: keyFile, TLSCA: certFile})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"\n#!define EARSHOT_WITH_TLS\n",
		"#!define EARSHOT_LISTEN_TLS tls:127.0.0.1:5098\n",
		"#!define EARSHOT_TLS_CERT \"" + certFile + "\"\n",
		"#!define EARSHOT_TLS_KEY \"" + keyFile + "\"\n",
		"#!define EARSHOT_TLS_CA \"" + certFile + "\"\n",
	} {
		if !bytes.Contains(cfg, []byte(line)) {
			t.Errorf("rendered cfg lacks %q", line)
		}
	}
	cfgPath := filepath.Join(dir, "kamailio.cfg")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "-c", "-f", cfgPath).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("config file ok")) {
		t.Fatalf("kamailio -c: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("tls: 127.0.0.1 [127.0.0.1]:5098")) {
		t.Errorf("kamailio -c does not listen on TLS where asked:\n%s", out)
	}
	// Off by default: the shipped file has no TLS listen.
	plain, _ := Render(Config{})
	if bytes.Contains(plain, []byte("\n#!define EARSHOT_WITH_TLS\n")) {
		t.Error("the shipped cfg turns TLS on")
	}
}
