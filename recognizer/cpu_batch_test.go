//go:build linux

package recognizer

import (
	"syscall"
	"testing"
)

// threadNice is the calling thread's niceness (the raw getpriority
// syscall answers 20 - nice).
func threadNice(t *testing.T) int {
	t.Helper()
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestBatchDecodeNice: a batch pass's decode runs on a thread at
// batchNice, the caller's thread keeps its priority, and a panic in the
// decode reaches the caller (the batch pass confines it there).
func TestBatchDecodeNice(t *testing.T) {
	base := threadNice(t)
	if base >= batchNice {
		t.Skipf("the test runs at niceness %d already", base)
	}
	var c *CPU
	got := -1
	c.BatchDecode(func() {
		if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid()); err == nil {
			got = 20 - p
		}
	})
	if got != batchNice {
		t.Errorf("batch decode at niceness %d, want %d", got, batchNice)
	}
	if n := threadNice(t); n != base {
		t.Errorf("caller's thread at niceness %d after the decode, want %d", n, base)
	}
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the decode's panic", r)
		}
	}()
	c.BatchDecode(func() { panic("boom") })
}
