package daemon

import "testing"

// TestJobEnds: every waiter taken before an end is woken by it; one taken
// after waits for the next.
func TestJobEnds(t *testing.T) {
	var e jobEnds
	a, b := e.wait(), e.wait()
	e.ended()
	for i, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Errorf("waiter %d not woken by the end", i)
		}
	}
	next := e.wait()
	select {
	case <-next:
		t.Fatal("a waiter taken after the end is woken by it")
	default:
	}
	e.ended()
	e.ended() // no waiter: nothing to close twice
	select {
	case <-next:
	default:
		t.Error("the next end did not wake its waiter")
	}
}
