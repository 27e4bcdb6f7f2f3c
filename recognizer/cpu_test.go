package recognizer_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestCPULiveDecodes: the live decodes' bound comes from
// sphinx.live_decodes (0: one per CPU Go uses, -1: none), each CPU is its
// own (no process-wide gate: two policies made with the same setting are
// two), and a nil policy runs every decode at once.
func TestCPULiveDecodes(t *testing.T) {
	if n := recognizer.NewCPU(-1).LiveDecodes(); n != 0 {
		t.Errorf("live_decodes -1: bound %d, want none", n)
	}
	if n := recognizer.NewCPU(0).LiveDecodes(); n != runtime.GOMAXPROCS(0) {
		t.Errorf("live_decodes 0: bound %d, want GOMAXPROCS %d", n, runtime.GOMAXPROCS(0))
	}
	if n := recognizer.NewCPU(5).LiveDecodes(); n != 5 {
		t.Errorf("live_decodes 5: bound %d", n)
	}
	a, b := recognizer.NewCPU(1), recognizer.NewCPU(1)
	a.LiveDecode(func() {
		ran := false
		b.LiveDecode(func() { ran = true }) // would wait for ever on a shared gate
		if !ran {
			t.Error("a second policy's decode did not run")
		}
	})
	if a.LivePeak() != 1 || b.LivePeak() != 1 {
		t.Errorf("peaks %d, %d, want 1 each", a.LivePeak(), b.LivePeak())
	}
	var none *recognizer.CPU
	ran := false
	none.LiveDecode(func() { ran = true })
	if !ran || none.Box() != nil {
		t.Error("a nil policy did not run its decode, or has a box meter")
	}
	if recognizer.NewCPU(0).Box() == nil {
		t.Error("no box meter")
	}
}

// TestCPULiveDecodesWait: with a bound of 1 a second decode waits until
// the first is done.
func TestCPULiveDecodesWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := recognizer.NewCPU(1)
		release, second := make(chan struct{}), make(chan struct{})
		go c.LiveDecode(func() { <-release })
		synctest.Wait()
		go c.LiveDecode(func() { close(second) })
		synctest.Wait()
		select {
		case <-second:
			t.Fatal("a second decode ran beside the first with a bound of 1")
		default:
		}
		close(release)
		<-second
	})
}

// TestCPULiveReadFirst: a freed slot goes to the oldest waiting read (a
// final's path, a segment's end) before any block waiting longer, then to
// the blocks in the order they came; the bound holds throughout. Before,
// one FIFO queue made a final wait behind the blocks of every stream that
// asked first (issue 41).
func TestCPULiveReadFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := recognizer.NewCPU(1)
		release := make(chan struct{})
		go c.LiveDecode(func() { <-release })
		synctest.Wait()
		var order []string
		for _, name := range []string{"block 1", "block 2", "read 1", "block 3", "read 2"} {
			do := c.LiveDecode
			if strings.HasPrefix(name, "read") {
				do = c.LiveRead
			}
			go do(func() { order = append(order, name) })
			synctest.Wait() // queued in this order
		}
		if len(order) != 0 {
			t.Fatalf("%v ran while the slot was held", order)
		}
		close(release)
		synctest.Wait()
		want := []string{"read 1", "read 2", "block 1", "block 2", "block 3"}
		if !slices.Equal(order, want) {
			t.Errorf("ran %v, want %v", order, want)
		}
		if c.LivePeak() != 1 {
			t.Errorf("%d decodes at once, bound 1", c.LivePeak())
		}
		// A read does not pass a free slot's waiting blocks when there
		// are none: it runs at once.
		ran := false
		c.LiveRead(func() { ran = true })
		if !ran {
			t.Error("a read with a free slot did not run")
		}
	})
}

// TestCPUBatch: batch passes take a decoder each up to one per CPU with no
// live session, one with any, and never one a live channel sharing their
// pool could need; a waiting pass gets its decoder when one is released,
// or its context's cause.
func TestCPUBatch(t *testing.T) {
	c := recognizer.NewCPU(0)
	ctx := t.Context()
	none := func() (int, int) { return 0, math.MaxInt }
	for range runtime.NumCPU() {
		if !c.BatchOpen(none()) {
			t.Fatal("closed before one pass per CPU with no live session")
		}
		if err := c.BatchAcquire(ctx, time.Hour, none); err != nil {
			t.Fatal(err)
		}
	}
	if c.BatchOpen(none()) {
		t.Error("open past one pass per CPU")
	}
	for range runtime.NumCPU() {
		c.BatchRelease()
	}
	if !c.BatchOpen(1, math.MaxInt) {
		t.Error("closed to the first pass beside a live session")
	}
	if c.BatchOpen(4, 4) {
		t.Error("open although 4 live channels could need all 4 shared decoders")
	}
	if !c.BatchOpen(3, 4) {
		t.Error("closed with a shared decoder no live channel could need")
	}

	synctest.Test(t, func(t *testing.T) {
		c := recognizer.NewCPU(0)
		live := func() (int, int) { return 1, math.MaxInt }
		if err := c.BatchAcquire(t.Context(), time.Second, live); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- c.BatchAcquire(t.Context(), time.Second, live) }()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("a second pass beside a live session: %v, want it to wait", err)
		default:
		}
		c.BatchRelease()
		if err := <-got; err != nil {
			t.Fatalf("after the release: %v", err)
		}
		cause := errors.New("shutdown")
		cctx, cancel := context.WithCancelCause(t.Context())
		go func() { got <- c.BatchAcquire(cctx, time.Second, live) }()
		synctest.Wait()
		cancel(cause)
		if err := <-got; !errors.Is(err, cause) {
			t.Errorf("cancelled wait: %v, want its cause", err)
		}
	})
}
