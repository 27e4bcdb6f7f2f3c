package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// window is what the door process did between the sender's two marks.
type window struct {
	wall, cpu time.Duration
	bytes     int64               // audio bytes (G.711) the sink or raw readers got
	voiced    int64               // of which not silence (the sink only)
	lines     map[string][]string // the sender's other output, by key
}

// child runs this binary as the sender and snapshots this process's CPU
// and the counter at its "mark start" and "mark end" lines.
func child(o opts, count func() (int64, int64), args ...string) (window, error) {
	exe, err := os.Executable()
	if err != nil {
		return window{}, err
	}
	args = append([]string{"-sender"}, args...)
	args = append(args, "-calls", strconv.Itoa(o.calls), "-setup", strconv.Itoa(o.setup), "-rounds", strconv.Itoa(o.rounds),
		"-dur", o.dur.String(), "-warm", o.warm.String(), "-speech", o.speech)
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return window{}, err
	}
	if err := cmd.Start(); err != nil {
		return window{}, err
	}
	w := window{lines: map[string][]string{}}
	var t0 time.Time
	var c0 time.Duration
	var b0, v0 int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		switch {
		case key == "mark" && val == "start":
			t0, c0 = time.Now(), cpuNow()
			b0, v0 = count()
		case key == "mark" && val == "end":
			w.wall, w.cpu = time.Since(t0), cpuNow()-c0
			b, v := count()
			w.bytes, w.voiced = b-b0, v-v0
		default:
			w.lines[key] = append(w.lines[key], val)
		}
	}
	if err := cmd.Wait(); err != nil {
		return w, fmt.Errorf("sender %s: %w", args[1], err)
	}
	return w, nil
}
