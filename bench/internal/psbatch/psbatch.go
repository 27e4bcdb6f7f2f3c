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
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/earshot-dev/earshot/ingest/media"
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

// RunPCM decodes 16 kHz mono clips with m in one pocketsphinx_batch
// process (as WAV files in a temporary directory) and returns each clip's
// hypothesis, in order, with the run's times.
func RunPCM(ctx context.Context, m Model, clips [][]int16) ([]string, Result, error) {
	dir, err := os.MkdirTemp("", "psbatch-pcm-")
	if err != nil {
		return nil, Result{}, err
	}
	defer os.RemoveAll(dir)
	files := make([]string, len(clips))
	for i, pcm := range clips {
		files[i] = fmt.Sprintf("clip%05d.wav", i)
		if err := os.WriteFile(filepath.Join(dir, files[i]), wav16k(pcm), 0o600); err != nil {
			return nil, Result{}, err
		}
	}
	res, err := Run(ctx, m, dir, files)
	if err != nil {
		return nil, Result{}, err
	}
	hyps := make([]string, len(clips))
	for i, f := range files {
		h, ok := res.Hyps[strings.TrimSuffix(f, ".wav")]
		if !ok {
			return nil, Result{}, fmt.Errorf("pocketsphinx_batch gave no hypothesis for clip %d", i)
		}
		hyps[i] = h
	}
	return hyps, res, nil
}

// wav16k is pcm as a 16 kHz mono 16-bit WAV file with a 44-byte header.
func wav16k(pcm []int16) []byte {
	f := media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}
	b := media.AppendWAVHeader(make([]byte, 0, 44+2*len(pcm)), f, int64(2*len(pcm)))
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}
