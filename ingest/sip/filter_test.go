package sip

import (
	"bytes"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSourceFilter(t *testing.T) {
	var logs bytes.Buffer
	f := newSourceFilter([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, slog.New(slog.NewTextHandler(&logs, nil)))
	now := time.Unix(1000, 0)
	f.now = func() time.Time { return now }
	allowed := &net.UDPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5060}
	refused := &net.UDPAddr{IP: net.ParseIP("192.0.2.7"), Port: 5060}
	other := &net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.8"), Port: 40000}

	admitted := 0
	for i := range 1000 {
		if !f.admit(allowed) {
			t.Fatalf("allowed source dropped at %d", i)
		}
		if f.admit(refused) {
			admitted++
		}
	}
	if admitted != refusedPerWindow {
		t.Fatalf("refused source admitted %d times in a window, want %d", admitted, refusedPerWindow)
	}
	if !f.admit(other) {
		t.Fatal("a second refused source lost its own allowance")
	}
	if got, want := f.Dropped(), uint64(1000-refusedPerWindow); got != want {
		t.Fatalf("dropped %d, want %d", got, want)
	}
	if n := strings.Count(logs.String(), "dropping"); n != 1 {
		t.Fatalf("%d 'dropping' log lines for one flooding source, want 1:\n%s", n, logs.String())
	}
	now = now.Add(refusalWindow)
	if !f.admit(refused) {
		t.Fatal("refused source not answered again in a new window")
	}
	if !strings.Contains(logs.String(), "dropped="+strconv.Itoa(1000-refusedPerWindow)) {
		t.Fatalf("the window's summary line is missing:\n%s", logs.String())
	}
	if f.admit(&net.UDPAddr{}) || f.admit(dummyAddr{}) {
		t.Fatal("an unparsable source address was admitted")
	}
}

// TestSourceFilterBounded: a flood from many addresses tracks at most
// maxTracked of them; the rest are dropped unanswered.
func TestSourceFilterBounded(t *testing.T) {
	f := newSourceFilter(nil, slog.New(slog.DiscardHandler))
	now := time.Unix(1000, 0)
	f.now = func() time.Time { return now }
	for i := range maxTracked + 100 {
		f.admit(&net.UDPAddr{IP: net.IPv4(172, 16, byte(i>>8), byte(i)), Port: 1})
	}
	if len(f.tracked) != maxTracked || f.Dropped() != 100 {
		t.Fatalf("tracked %d, dropped %d; want %d, 100", len(f.tracked), f.Dropped(), maxTracked)
	}
	now = now.Add(refusalWindow)
	if !f.admit(&net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}) || len(f.tracked) != 1 {
		t.Fatalf("stale sources not pruned: %d tracked", len(f.tracked))
	}
}

type dummyAddr struct{}

func (dummyAddr) Network() string { return "x" }
func (dummyAddr) String() string  { return "not an address" }
