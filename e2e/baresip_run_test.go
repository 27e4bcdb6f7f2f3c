package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// baresipCallEnded holds what baresip prints when the call it dialled is
// over: answered ("%s: Call with %s terminated (duration: %H)") or refused
// ("sip:...: session closed: 488 Not Acceptable Here").
var baresipCallEnded = []string{"terminated (duration:", ": session closed: "}

// runBaresipCall runs baresip (bin, with args that dial one call and -t
// limit) and returns its output. baresip hangs up when its audio file ends
// but only quits at -t; once the call has ended it is told to quit
// (SIGTERM, its /quit), so a test does not wait out -t: a refused call
// ends in milliseconds, a file's call when the file does.
func runBaresipCall(ctx context.Context, bin string, limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "-t", fmt.Sprint(int(limit.Seconds())))...)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var (
		mu  sync.Mutex
		out bytes.Buffer
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			out.Write(sc.Bytes())
			out.WriteByte('\n')
			mu.Unlock()
			for _, end := range baresipCallEnded {
				if strings.Contains(sc.Text(), end) {
					cmd.Process.Signal(syscall.SIGTERM)
				}
			}
		}
		io.Copy(io.Discard, r) // a line past the buffer: keep baresip writing
	}()
	err := cmd.Wait()
	w.Close()
	<-read
	mu.Lock()
	defer mu.Unlock()
	return out.String(), err
}
