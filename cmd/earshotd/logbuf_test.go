package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the flush timer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLineBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		b := newLineBuffer(&out)
		b.Write([]byte("one\n"))
		b.Write([]byte("two\n"))
		synctest.Wait()
		if out.String() != "" {
			t.Fatalf("written before the flush interval: %q", out.String())
		}
		time.Sleep(logFlushEvery)
		synctest.Wait()
		if out.String() != "one\ntwo\n" {
			t.Fatalf("after %v: %q", logFlushEvery, out.String())
		}
		// A full buffer is written at once.
		big := strings.Repeat("x", logFlushBytes) + "\n"
		b.Write([]byte(big))
		if out.String() != "one\ntwo\n"+big {
			t.Fatal("a full buffer was not written at once")
		}
		b.Write([]byte("three\n"))
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(out.String(), big+"three\n") {
			t.Fatal("Close did not flush")
		}
		b.Write([]byte("four\n"))
		if !strings.HasSuffix(out.String(), "three\nfour\n") {
			t.Fatal("a write after Close was held")
		}
	})
}
