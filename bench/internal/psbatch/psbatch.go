// Package psbatch runs Debian's pocketsphinx_batch, the reference decoder
// the benchmarks hold earshot against (bench/cmd/asrbench for accuracy and
// CPU, bench/cmd/livebench for CPU), so both run it one way: 16-bit WAV
// files with a 44-byte header, the same -hmm/-lm/-dict as the embedded
// engine, hypotheses read back from -hyp.
package psbatch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Model is the acoustic model, language model and dictionary to decode
// with.
type Model struct{ HMM, LM, Dict string }

// DefaultModel is Debian's en-us model, the embedded engine's default.
func DefaultModel() Model {
	const m = "/usr/share/pocketsphinx/model/en-us/"
	return Model{HMM: m + "en-us", LM: m + "en-us.lm.bin", Dict: m + "cmudict-en-us.dict"}
}

// Result is one run over a set of files.
type Result struct {
	// Hyps maps each file's name without ".wav" to its hypothesis.
	Hyps map[string]string
	// Wall is the run's elapsed time, CPU its user plus system time.
	Wall, CPU time.Duration
}

// hypLine is a line of pocketsphinx_batch's -hyp output: "text (uttid score)".
var hypLine = regexp.MustCompile(`^(.*?) ?\((\S+) -?\d+\)$`)

// Run decodes files (names of WAV files in dir) with m in one
// pocketsphinx_batch process.
func Run(ctx context.Context, m Model, dir string, files []string) (Result, error) {
	tmp, err := os.MkdirTemp("", "psbatch-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	var ctl strings.Builder
	for _, f := range files {
		ctl.WriteString(strings.TrimSuffix(f, ".wav") + "\n")
	}
	ctlPath, hypPath := filepath.Join(tmp, "ctl"), filepath.Join(tmp, "hyp")
	if err := os.WriteFile(ctlPath, []byte(ctl.String()), 0o600); err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, "pocketsphinx_batch",
		"-hmm", m.HMM, "-lm", m.LM, "-dict", m.Dict,
		"-adcin", "yes", "-adchdr", "44", "-cepext", ".wav", "-cepdir", dir,
		"-ctl", ctlPath, "-hyp", hypPath, "-logfn", "/dev/null")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("pocketsphinx_batch: %w: %s", err, out.Bytes())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := Result{Hyps: map[string]string{}, Wall: time.Since(start), CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	f, err := os.Open(hypPath)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := hypLine.FindStringSubmatch(sc.Text()); m != nil {
			r.Hyps[m[2]] = m[1]
		}
	}
	return r, sc.Err()
}
