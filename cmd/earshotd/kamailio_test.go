package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/packaging/kamailio"
)

// TestCommandKamailio: `earshotd kamailio config` prints the shipped file
// with no flags and the settings given; `earshotd kamailio dispatcher`
// prints the node list; bad input is refused with the setting named.
func TestCommandKamailio(t *testing.T) {
	cmd := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"kamailio"}, args...), &out, &errOut)
		return out.String(), err
	}
	if out, err := cmd("config"); err != nil || out != string(kamailio.Shipped()) {
		t.Errorf("kamailio config: %v; output differs from the shipped file: %t", err, out != string(kamailio.Shipped()))
	}
	out, err := cmd("config", "--listen", "10.0.0.5:5080", "--ping-interval", "5s", "--timeout", "800ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#!define EARSHOT_LISTEN_UDP udp:10.0.0.5:5080\n", "#!define EARSHOT_PING_INTERVAL 5\n", "#!define EARSHOT_FR_TIMER 800\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("kamailio config lacks %q", want)
		}
	}
	if out, err := cmd("dispatcher", "10.0.0.11", "10.0.0.12:5070"); err != nil || !strings.HasSuffix(out, "1 sip:10.0.0.11:5060 0 0\n1 sip:10.0.0.12:5070 0 0\n") {
		t.Errorf("kamailio dispatcher: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"dispatcher"},
		{"dispatcher", "10.0.0.1 0 0"},
		{"config", "--listen", "nowhere"},
		{"config", "extra"},
	} {
		if out, err := cmd(args...); err == nil {
			t.Errorf("kamailio %q: accepted, printed %q", args, out)
		}
	}
	if _, err := cmd("config", "--ping-interval", "500ms"); err == nil || !strings.Contains(err.Error(), "ping-interval") {
		t.Errorf("kamailio config --ping-interval 500ms: %v, want the flag named", err)
	}
}
