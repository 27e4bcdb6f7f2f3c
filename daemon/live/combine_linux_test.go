package live

import (
	"syscall"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/transcript"
)

// TestCombineBelowLive: the record's scoring searches run on a thread
// below the live decodes' priority, as the batch pass's decodes do.
func TestCombineBelowLive(t *testing.T) {
	base, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	if 20-base >= 10 {
		t.Skipf("the test runs at niceness %d already", 20-base)
	}
	utt := func(text string) []transcript.Utterance {
		return []transcript.Utterance{{Start: 1, End: 2, Text: text, Words: []transcript.Word{{Word: text, Start: 1, End: 2}}}}
	}
	nice := -100
	_, fromLive, n := combineBelowLive(recognizer.NewCPU(1), utt("hello"), utt("yellow"), func(int, float64, float64, [][]string) (int, error) {
		if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid()); err == nil {
			nice = 20 - p
		}
		return 1, nil
	})
	if n != 1 || fromLive != 1 {
		t.Fatalf("%d stretches, %d from the live finals; want 1 and 1", n, fromLive)
	}
	if nice <= 20-base {
		t.Errorf("scored at niceness %d, the caller's is %d", nice, 20-base)
	}
}
