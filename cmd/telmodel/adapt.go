package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// baseFiles are the model files every adapted model shares with Debian's.
var baseFiles = []string{"feat.params", "mdef", "noisedict", "sendump", "transition_matrices"}

// model is one candidate acoustic model: a complete PocketSphinx model
// directory whose means and variances may differ from Debian's.
type model struct {
	name string
	dir  string
}

// methods are the adaptations measured, in report order.
var methods = []string{"mllr", "map", "mllr+map"}

// slug is a method's directory name.
func slug(m string) string { return strings.ReplaceAll(m, "+", "-") }

// builder runs sphinxtrain over the adaptation set.
type builder struct {
	o     *options
	train []utt
	extra []string // dictionary lines of the adaptation words Debian's dictionary lacks
	work  string   // scratch/base: Debian's model plus mixture_weights and a text mdef
}

// features runs sphinx_fe with the model's own feat.params over the
// adaptation set's renditions (the decoder's 16 kHz input), once per
// telmodel.Variants entry (law and encoder).
func features(ctx context.Context, o *options, us []utt) error {
	var missing []telmodel.Variant
	for _, v := range telmodel.Variants {
		if err := os.MkdirAll(filepath.Join(o.scratch, "mfc", v.String()), 0o755); err != nil {
			return err
		}
		for _, u := range us {
			if _, err := os.Stat(filepath.Join(o.scratch, "mfc", v.String(), u.id+".mfc")); err != nil {
				missing = append(missing, v)
				break
			}
		}
	}
	return parallel(ctx, o.jobs, len(missing), func(i int) error {
		v := missing[i]
		ctl := filepath.Join(o.scratch, "fe-"+v.String()+".ctl")
		var b strings.Builder
		for _, u := range us {
			b.WriteString(u.id + "\n")
		}
		if err := os.WriteFile(ctl, []byte(b.String()), 0o644); err != nil {
			return err
		}
		return tool(ctx, o, filepath.Join(o.scratch, "fe-"+v.String()+".log"), "sphinx_fe",
			"-argfile", filepath.Join(o.base, "feat.params"), "-samprate", "16000",
			"-c", ctl, "-di", filepath.Join(o.scratch, "wav", v.String()), "-do", filepath.Join(o.scratch, "mfc", v.String()),
			"-ei", "wav", "-eo", "mfc", "-mswav", "yes")
	})
}

// adapt builds every candidate: stock (Debian's), MLLR (means through one
// global transform), MAP (means and variances) and MLLR+MAP (MAP with the
// MLLR-transformed means as its prior).
func (b *builder) adapt(ctx context.Context) (map[string]model, error) {
	o := b.o
	b.work = filepath.Join(o.scratch, "base")
	if err := b.prepareBase(ctx); err != nil {
		return nil, err
	}
	if err := b.writeControl(); err != nil {
		return nil, err
	}
	models := map[string]model{"stock": {name: "stock", dir: o.base}}
	mk := func(m string) (model, error) {
		md := model{name: m, dir: filepath.Join(o.scratch, "models", slug(m))}
		if err := linkBase(o.base, md.dir); err != nil {
			return md, err
		}
		return md, nil
	}

	acc, err := b.bw(ctx, "stock", filepath.Join(o.base, "means"), filepath.Join(o.base, "variances"))
	if err != nil {
		return nil, err
	}

	mllr, err := mk("mllr")
	if err != nil {
		return nil, err
	}
	matrix := filepath.Join(o.scratch, "mllr_matrix")
	if err := b.st(ctx, "mllr_solve", "-meanfn", filepath.Join(o.base, "means"),
		"-varfn", filepath.Join(o.base, "variances"), "-outmllrfn", matrix, "-accumdir", strings.Join(acc, ",")); err != nil {
		return nil, err
	}
	if err := b.st(ctx, "mllr_transform", "-inmeanfn", filepath.Join(o.base, "means"),
		"-outmeanfn", filepath.Join(mllr.dir, "means"), "-mllrmat", matrix); err != nil {
		return nil, err
	}
	if err := copyFile(filepath.Join(o.base, "variances"), filepath.Join(mllr.dir, "variances")); err != nil {
		return nil, err
	}
	models["mllr"] = mllr

	mp, err := mk("map")
	if err != nil {
		return nil, err
	}
	if err := b.mapAdapt(ctx, acc, filepath.Join(o.base, "means"), filepath.Join(o.base, "variances"), mp.dir); err != nil {
		return nil, err
	}
	models["map"] = mp

	both, err := mk("mllr+map")
	if err != nil {
		return nil, err
	}
	acc2, err := b.bw(ctx, "mllr", filepath.Join(mllr.dir, "means"), filepath.Join(mllr.dir, "variances"))
	if err != nil {
		return nil, err
	}
	if err := b.mapAdapt(ctx, acc2, filepath.Join(mllr.dir, "means"), filepath.Join(mllr.dir, "variances"), both.dir); err != nil {
		return nil, err
	}
	models["mllr+map"] = both
	return models, nil
}

// prepareBase gives sphinxtrain what Debian's model lacks: mixture_weights
// (from sendump) and a text mdef.
func (b *builder) prepareBase(ctx context.Context) error {
	if err := linkBase(b.o.base, b.work); err != nil {
		return err
	}
	for _, f := range []string{"means", "variances"} {
		if err := relink(filepath.Join(b.o.base, f), filepath.Join(b.work, f)); err != nil {
			return err
		}
	}
	raw, err := os.ReadFile(filepath.Join(b.o.base, "sendump"))
	if err != nil {
		return err
	}
	mixw, err := telmodel.ReadSendump(raw)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.work, "mixture_weights"), mixw.S3(), 0o644); err != nil {
		return err
	}
	return tool(ctx, b.o, filepath.Join(b.work, "mdef_convert.log"), "pocketsphinx_mdef_convert", "-text",
		filepath.Join(b.o.base, "mdef"), filepath.Join(b.work, "mdef.txt"))
}

// writeControl writes bw's control file (one line per rendition) and
// transcript file.
func (b *builder) writeControl() error {
	base, err := os.ReadFile(b.o.dict)
	if err != nil {
		return err
	}
	dict := append(base, []byte(strings.Join(b.extra, "\n")+"\n")...)
	if err := os.WriteFile(filepath.Join(b.o.scratch, "train.dict"), dict, 0o644); err != nil {
		return err
	}
	var ctl, lsn strings.Builder
	for _, v := range telmodel.Variants {
		for _, u := range b.train {
			fmt.Fprintf(&ctl, "%s/%s\n", v, u.id)
			fmt.Fprintf(&lsn, "<s> %s </s> (%s)\n", u.text, u.id)
		}
	}
	if err := os.WriteFile(filepath.Join(b.o.scratch, "train.ctl"), []byte(ctl.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.o.scratch, "train.lsn"), []byte(lsn.String()), 0o644)
}

// bwParts is how many parts bw's work is split in (run in parallel). It is
// fixed, not -jobs: the parts' sums are added in map_adapt and mllr_solve,
// so another split could change the last bits of the model.
const bwParts = 2

// bw accumulates Baum-Welch statistics of the adaptation set under the given
// means and variances, split in bwParts parts run in parallel, and returns
// the accumulator directories. A finished part (its gauden_counts present)
// is reused.
func (b *builder) bw(ctx context.Context, name, means, vars string) ([]string, error) {
	o := b.o
	fp, err := telmodel.FeatParams(filepath.Join(o.base, "feat.params"))
	if err != nil {
		return nil, err
	}
	n := bwParts
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(o.scratch, "accum", name, fmt.Sprint(i+1))
	}
	err = parallel(ctx, n, n, func(i int) error {
		if _, err := os.Stat(filepath.Join(dirs[i], "gauden_counts")); err == nil {
			return nil
		}
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			return err
		}
		args := []string{
			"-hmmdir", b.work, "-moddeffn", filepath.Join(b.work, "mdef.txt"), "-ts2cbfn", ".ptm.",
			"-meanfn", means, "-varfn", vars,
			"-mixwfn", filepath.Join(b.work, "mixture_weights"), "-tmatfn", filepath.Join(b.work, "transition_matrices"),
			"-feat", fp["-feat"], "-svspec", fp["-svspec"], "-cmn", fp["-cmn"], "-agc", fp["-agc"], "-varnorm", fp["-varnorm"],
			"-dictfn", filepath.Join(o.scratch, "train.dict"), "-fdictfn", filepath.Join(b.work, "noisedict"),
			"-ctlfn", filepath.Join(o.scratch, "train.ctl"), "-lsnfn", filepath.Join(o.scratch, "train.lsn"),
			"-cepdir", filepath.Join(o.scratch, "mfc"), "-cepext", "mfc",
			"-accumdir", dirs[i], "-part", fmt.Sprint(i + 1), "-npart", fmt.Sprint(n),
		}
		return tool(ctx, o, filepath.Join(dirs[i], "bw.log"), filepath.Join(o.sphinxtrain, "bw"), args...)
	})
	return dirs, err
}

// mapAdapt runs map_adapt with the given prior means and variances and
// writes the MAP means to dir with the prior's variances: MAP-updated
// variances were measured to wreck recognition (the first held-out
// utterances went from 2 to 6 errors in 11 words with MAP means and
// variances, and stayed at 2 with MAP means and Debian's variances;
// bench/MODEL.md). Mixture weights and transition matrices stay Debian's:
// the decoder reads sendump.
func (b *builder) mapAdapt(ctx context.Context, acc []string, means, vars, dir string) error {
	junk := filepath.Join(dir, "..", filepath.Base(dir)+".unused")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		return err
	}
	args := []string{"-moddeffn", filepath.Join(b.work, "mdef.txt"), "-ts2cbfn", ".ptm.",
		"-meanfn", means, "-varfn", vars,
		"-mixwfn", filepath.Join(b.work, "mixture_weights"), "-tmatfn", filepath.Join(b.work, "transition_matrices"),
		"-mapmeanfn", filepath.Join(dir, "means"), "-mapvarfn", filepath.Join(junk, "variances"),
		"-mapmixwfn", filepath.Join(junk, "mixture_weights"), "-maptmatfn", filepath.Join(junk, "transition_matrices"),
		"-accumdir", strings.Join(acc, ",")}
	if err := b.st(ctx, "map_adapt-"+filepath.Base(dir), args...); err != nil {
		return err
	}
	return copyFile(vars, filepath.Join(dir, "variances"))
}

// st runs a sphinxtrain tool, logging to scratch/logs/name.log; name is the
// tool's, or the tool's, a dash and a tag.
func (b *builder) st(ctx context.Context, name string, args ...string) error {
	logs := filepath.Join(b.o.scratch, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	prog, _, _ := strings.Cut(name, "-")
	return tool(ctx, b.o, filepath.Join(logs, name+".log"), filepath.Join(b.o.sphinxtrain, prog), args...)
}

// tool runs one external program at low priority (nice 10) with its output
// in logPath.
func tool(ctx context.Context, o *options, logPath, name string, args ...string) error {
	return toolNice(ctx, o, 10, logPath, name, args...)
}

// toolNice is tool at a given niceness (the measurements run at the
// priority of other work, so that a loaded box still finishes them).
func toolNice(ctx context.Context, _ *options, nice int, logPath, name string, args ...string) error {
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	cmd := exec.CommandContext(ctx, "nice", append([]string{"-n", fmt.Sprint(nice), name}, args...)...)
	cmd.Stdout, cmd.Stderr = lf, lf
	slog.Info("run", "tool", filepath.Base(name), "log", logPath)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (log %s)", filepath.Base(name), err, logPath)
	}
	return nil
}

// linkBase makes dir a model directory whose shared files are symbolic
// links to Debian's.
func linkBase(base, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range baseFiles {
		if err := relink(filepath.Join(base, f), filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	return nil
}

func relink(target, link string) error {
	if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.Symlink(target, link)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
