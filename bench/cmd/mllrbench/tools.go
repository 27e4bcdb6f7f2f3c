package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// toolbox runs PocketSphinx and sphinxtrain over the rendered utterances.
type toolbox struct {
	o     *options
	run   string             // scratch/run: this run's files
	secs  map[string]float64 // decoder-input audio seconds by utterance id
	feCPU float64            // sphinx_fe's CPU seconds over every utterance
	fp    map[string]string  // the model's feat.params
	// lastCPU is the CPU seconds of the last tool run.
	lastCPU float64
}

// audio is the decoder-input seconds of us.
func (t *toolbox) audio(us []utt) float64 {
	s := 0.0
	for _, u := range us {
		s += t.secs[u.id]
	}
	return s
}

// prepare renders every utterance, computes its features with the
// model's feat.params (what bw reads) and gives sphinxtrain what Debian's
// model lacks: a text mdef and float mixture weights (from sendump, which
// the telephone model shares with Debian's).
func (t *toolbox) prepare(ctx context.Context, us []utt) error {
	t.run = filepath.Join(t.o.scratch, "run")
	if err := os.MkdirAll(filepath.Join(t.run, "logs"), 0o755); err != nil {
		return err
	}
	secs, err := render(ctx, t.o.scratch, us)
	if err != nil {
		return err
	}
	t.secs = secs
	fp, err := telmodel.FeatParams(filepath.Join(t.o.hmm, "feat.params"))
	if err != nil {
		return err
	}
	t.fp = fp
	ctl := filepath.Join(t.run, "fe.ctl")
	if err := os.WriteFile(ctl, []byte(ids(us)), 0o644); err != nil {
		return err
	}
	mfc := filepath.Join(t.o.scratch, "mfc")
	if err := os.MkdirAll(mfc, 0o755); err != nil {
		return err
	}
	if t.feCPU, err = t.tool(ctx, "sphinx_fe", "sphinx_fe", "-argfile", filepath.Join(t.o.hmm, "feat.params"), "-samprate", "16000",
		"-c", ctl, "-di", filepath.Join(t.o.scratch, "wav"), "-do", mfc, "-ei", "wav", "-eo", "mfc", "-mswav", "yes"); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(t.o.base, "sendump"))
	if err != nil {
		return err
	}
	mixw, err := telmodel.ReadSendump(raw)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(t.run, "mixture_weights"), mixw.S3(), 0o644); err != nil {
		return err
	}
	_, err = t.tool(ctx, "mdef_convert", "pocketsphinx_mdef_convert", "-text", filepath.Join(t.o.base, "mdef"), filepath.Join(t.run, "mdef.txt"))
	return err
}

// decoded is one pocketsphinx_batch run: hypotheses, words' posteriors,
// and the decode's CPU seconds (its TOTAL line: without the model load).
type decoded struct {
	hyps  map[string]string
	words map[string][]word
	cpu   float64
}

// word is one CTM line: a word of a hypothesis, its time in the
// utterance and its posterior.
type word struct {
	text             string
	start, end, post float64
}

// score is the word errors of us's hypotheses.
func (d decoded) score(us []utt) score {
	var s score
	for _, u := range us {
		s = s.add(scoreOf(u.text, d.hyps[u.id]))
	}
	return s
}

var (
	hypLine   = regexp.MustCompile(`^(.*?) ?\((\S+) -?\d+\)$`)
	totalLine = regexp.MustCompile(`TOTAL ([0-9.]+) seconds speech, ([0-9.]+) seconds CPU`)
)

// liveArgs turn the batch pool's search into an approximation of the
// telephone live pool's finals (sphinx.Config.Telephone; the best path
// through the first pass's lattice, as sphinx.Stream.Finish): -lw 7 and
// a cepstral mean that runs from the model's -cmninit, as a live stream's
// (the daemon's carries over from the channel's earlier segments instead,
// and its segments are cut by the endpointer, not the corpus).
var liveArgs = []string{"-lw", "7", "-cmn", "live"}

// decode runs pocketsphinx_batch over us with the batch pool's search
// (sphinx.Config.TelephoneBatch) and extra arguments (they win: -mllr, or
// liveArgs).
func (t *toolbox) decode(ctx context.Context, name string, us []utt, extra ...string) (decoded, error) {
	prefix := filepath.Join(t.run, name)
	if err := os.WriteFile(prefix+".ctl", []byte(ids(us)), 0o644); err != nil {
		return decoded{}, err
	}
	search := []string{"-fwdflat", "no", "-topn", "4", "-maxhmmpf", "5000", "-lw", "6.5", "-cmn", t.fp["-cmn"]}
	for i := 0; i+1 < len(extra); i += 2 { // PocketSphinx refuses an argument given twice
		if k := slices.Index(search, extra[i]); k >= 0 && k%2 == 0 {
			search[k+1] = extra[i+1]
		} else {
			search = append(search, extra[i], extra[i+1])
		}
	}
	args := append([]string{"-hmm", t.o.hmm, "-lm", t.o.lm, "-dict", t.o.dict, "-remove_silence", "no",
		"-adcin", "yes", "-adchdr", "44", "-cepext", ".wav", "-cepdir", filepath.Join(t.o.scratch, "wav"),
		"-ctl", prefix + ".ctl", "-hyp", prefix + ".hyp", "-ctm", prefix + ".ctm"}, search...)
	if _, err := t.tool(ctx, "decode-"+name, "pocketsphinx_batch", args...); err != nil {
		return decoded{}, err
	}
	d := decoded{hyps: map[string]string{}, words: map[string][]word{}}
	if err := eachLine(prefix+".hyp", func(l string) {
		if m := hypLine.FindStringSubmatch(l); m != nil {
			d.hyps[m[2]] = m[1]
		}
	}); err != nil {
		return d, err
	}
	for _, u := range us {
		if _, ok := d.hyps[u.id]; !ok {
			return d, fmt.Errorf("%s: no hypothesis for %s", name, u.id)
		}
	}
	// CTM: uttid channel start duration word posterior.
	if err := eachLine(prefix+".ctm", func(l string) {
		f := strings.Fields(l)
		if len(f) != 6 {
			return
		}
		var w word
		var dur float64
		var errs [3]error
		w.start, errs[0] = strconv.ParseFloat(f[2], 64)
		dur, errs[1] = strconv.ParseFloat(f[3], 64)
		w.post, errs[2] = strconv.ParseFloat(f[5], 64)
		if errs[0] == nil && errs[1] == nil && errs[2] == nil {
			w.text, w.end = f[4], w.start+dur
			d.words[f[0]] = append(d.words[f[0]], w)
		}
	}); err != nil {
		return d, err
	}
	err := eachLine(filepath.Join(t.run, "logs", "decode-"+name+".log"), func(l string) {
		if m := totalLine.FindStringSubmatch(l); m != nil {
			d.cpu, _ = strconv.ParseFloat(m[2], 64)
		}
	})
	return d, err
}

// outcome is one group's adaptation: its score after, what it was adapted
// on, and the CPU of each step.
type outcome struct {
	after               score
	adapted             int // utterances adapted on (0: no transform, after is the first pass)
	bwCPU, solveCPU     float64
	decodeCPU, procsCPU float64 // the second decode alone; all three processes whole (model loads included)
}

// adapt estimates one global MLLR transform of the group us from the
// transcripts mode gives (the first pass's hypotheses, the confident ones,
// the live search's hypotheses, or the references) and decodes us again with it.
func (t *toolbox) adapt(ctx context.Context, name, mode string, us []utt, first, live decoded) (outcome, error) {
	prefix := filepath.Join(t.run, name)
	cepdir := filepath.Join(t.o.scratch, "mfc")
	var ctl, lsn strings.Builder
	n := 0
	var cutCPU float64
	if mode == "conf" {
		segs, err := t.cut(prefix+".cut", us, first)
		if err != nil {
			return outcome{}, err
		}
		for _, sg := range segs {
			fmt.Fprintf(&ctl, "%s\n", sg.id)
			fmt.Fprintf(&lsn, "<s> %s </s> (%s)\n", sg.text, sg.id)
		}
		n = len(segs)
		if n > 0 {
			cepdir = prefix + ".cut"
			if err := os.WriteFile(prefix+".cut.ctl", []byte(ctl.String()), 0o644); err != nil {
				return outcome{}, err
			}
			if cutCPU, err = t.tool(ctx, "fe-"+name, "sphinx_fe", "-argfile", filepath.Join(t.o.hmm, "feat.params"), "-samprate", "16000",
				"-c", prefix+".cut.ctl", "-di", cepdir, "-do", cepdir, "-ei", "wav", "-eo", "mfc", "-mswav", "yes"); err != nil {
				return outcome{}, err
			}
		}
	}
	for _, u := range us {
		if mode == "conf" {
			break
		}
		text := first.hyps[u.id]
		switch mode {
		case "sup":
			text = u.text
		case "live":
			text = live.hyps[u.id]
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		n++
		fmt.Fprintf(&ctl, "%s\n", u.id)
		fmt.Fprintf(&lsn, "<s> %s </s> (%s)\n", text, u.id)
	}
	if n == 0 {
		return outcome{after: first.score(us)}, nil
	}
	acc := prefix + ".accum"
	if err := os.MkdirAll(acc, 0o755); err != nil {
		return outcome{}, err
	}
	if err := os.WriteFile(prefix+".bw.ctl", []byte(ctl.String()), 0o644); err != nil {
		return outcome{}, err
	}
	if err := os.WriteFile(prefix+".lsn", []byte(lsn.String()), 0o644); err != nil {
		return outcome{}, err
	}
	oc := outcome{adapted: n}
	var err error
	oc.bwCPU, err = t.tool(ctx, "bw-"+name, filepath.Join(t.o.sphinxtrain, "bw"),
		"-hmmdir", t.o.hmm, "-moddeffn", filepath.Join(t.run, "mdef.txt"), "-ts2cbfn", ".ptm.",
		"-meanfn", filepath.Join(t.o.hmm, "means"), "-varfn", filepath.Join(t.o.hmm, "variances"),
		"-mixwfn", filepath.Join(t.run, "mixture_weights"), "-tmatfn", filepath.Join(t.o.hmm, "transition_matrices"),
		"-feat", t.fp["-feat"], "-svspec", t.fp["-svspec"], "-cmn", t.fp["-cmn"], "-agc", t.fp["-agc"], "-varnorm", t.fp["-varnorm"],
		"-dictfn", t.o.dict, "-fdictfn", filepath.Join(t.o.hmm, "noisedict"),
		"-ctlfn", prefix+".bw.ctl", "-lsnfn", prefix+".lsn",
		"-cepdir", cepdir, "-cepext", "mfc", "-accumdir", acc)
	if err != nil {
		return oc, err
	}
	oc.bwCPU += cutCPU
	matrix := prefix + ".mllr"
	if oc.solveCPU, err = t.tool(ctx, "solve-"+name, filepath.Join(t.o.sphinxtrain, "mllr_solve"),
		"-meanfn", filepath.Join(t.o.hmm, "means"), "-varfn", filepath.Join(t.o.hmm, "variances"),
		"-outmllrfn", matrix, "-accumdir", acc); err != nil {
		return oc, err
	}
	d, err := t.decode(ctx, name, us, "-mllr", matrix)
	if err != nil {
		return oc, err
	}
	oc.after, oc.decodeCPU = d.score(us), d.cpu
	oc.procsCPU = oc.bwCPU + oc.solveCPU + t.lastCPU
	return oc, nil
}

// tool runs name with args, its output in run/logs/log.log, and returns
// its CPU seconds (user + system); lastCPU keeps them too.
func (t *toolbox) tool(ctx context.Context, log, name string, args ...string) (float64, error) {
	path := filepath.Join(t.run, "logs", log+".log")
	lf, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w (log %s)", filepath.Base(name), err, path)
	}
	st := cmd.ProcessState
	t.lastCPU = (st.UserTime() + st.SystemTime()).Seconds()
	return t.lastCPU, nil
}

func eachLine(path string, fn func(string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}

// ids is one utterance id a line.
func ids(us []utt) string {
	var b strings.Builder
	for _, u := range us {
		b.WriteString(u.id + "\n")
	}
	return b.String()
}
