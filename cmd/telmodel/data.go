package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// utt is one recording with its reference transcript.
type utt struct {
	id      string // file name without extension
	src     string // 16 kHz original
	text    string
	speaker string
	set     string // corpus: "train" or "held"; testdata: "test"
}

// rendered returns the decoder-input WAV (16 kHz) of u's rendition v.
func (u utt) rendered(scratch string, v telmodel.Variant) string {
	return filepath.Join(scratch, "wav", v.String(), u.id+".wav")
}

// loadCorpus reads the corpus manifest: file, duration_s, speaker, gender,
// transcript, ...
func loadCorpus(dir string) ([]utt, error) {
	rows, err := telmodel.ReadTSV(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	var us []utt
	for _, r := range rows {
		if len(r) < 5 {
			return nil, fmt.Errorf("corpus manifest: short row %q", r)
		}
		set := "train"
		if strings.HasPrefix(r[0], "ls-test-other-") {
			set = "held"
		}
		us = append(us, utt{id: strings.TrimSuffix(r[0], filepath.Ext(r[0])), src: filepath.Join(dir, r[0]),
			text: r[4], speaker: r[2], set: set})
	}
	return us, nil
}

// loadTestdata reads the developer set's mono clips (the stereo clip's two
// talkers are not one telephone channel).
func loadTestdata(dir string) ([]utt, error) {
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	clips, err := recognizertest.ParseManifest(f, dir)
	if err != nil {
		return nil, err
	}
	var us []utt
	for _, c := range clips {
		if strings.HasPrefix(c.File, "stereo-") {
			continue
		}
		us = append(us, utt{id: strings.TrimSuffix(c.File, ".wav"), src: filepath.Join(dir, c.File),
			text: c.Transcript, set: "test"})
	}
	return us, nil
}

// render writes every rendition vs of every recording in sets that is
// not in scratch yet, o.jobs at a time.
func render(ctx context.Context, o *options, vs []telmodel.Variant, sets ...[]utt) error {
	type job struct {
		u utt
		v telmodel.Variant
	}
	var jobs []job
	for _, v := range vs {
		for _, d := range []string{"g711", "wav"} {
			if err := os.MkdirAll(filepath.Join(o.scratch, d, v.String()), 0o755); err != nil {
				return err
			}
		}
		for _, s := range sets {
			for _, u := range s {
				if _, err := os.Stat(u.rendered(o.scratch, v)); err != nil {
					jobs = append(jobs, job{u, v})
				}
			}
		}
	}
	return parallel(ctx, o.jobs, len(jobs), func(i int) error {
		j := jobs[i]
		g711 := filepath.Join(o.scratch, "g711", j.v.String(), j.u.id+".wav")
		r, err := j.v.Render(ctx, j.u.src, g711)
		if err != nil {
			return err
		}
		dst := j.u.rendered(o.scratch, j.v)
		if err := os.WriteFile(dst+".tmp", telmodel.PCMWAV(r.PCM, 16000), 0o644); err != nil {
			return err
		}
		return os.Rename(dst+".tmp", dst)
	})
}

// parallel runs fn(0..n-1) on at most jobs goroutines and returns the
// first error.
func parallel(ctx context.Context, jobs, n int, fn func(int) error) error {
	var (
		mu   sync.Mutex
		errs []error
		next int
		wg   sync.WaitGroup
	)
	for range max(1, jobs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := len(errs) > 0
				mu.Unlock()
				if i >= n || stop || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// dictionary is a PocketSphinx dictionary's first pronunciation of each
// word ("word(2)" lines are alternatives and left to the aligner's choice
// of the first).
type dictionary map[string][]string

// loadDict reads a PocketSphinx dictionary.
func loadDict(path string) (dictionary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := dictionary{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 || strings.Contains(fs[0], "(") {
			continue
		}
		d[fs[0]] = fs[1:]
	}
	return d, sc.Err()
}

// pronounce finds a pronunciation for a word the dictionary lacks: a
// possessive or plural of a known word, a British spelling of one
// ("colour", "favourable"), else the letter-to-sound guess of
// sphinx.GuessPronunciation.
func (d dictionary) pronounce(w string) []string {
	if p, ok := d[w]; ok {
		return p
	}
	voicedS := func(p []string) []string {
		switch p[len(p)-1] {
		case "P", "T", "K", "F", "TH":
			return append(slices.Clone(p), "S")
		case "S", "Z", "SH", "ZH", "CH", "JH":
			return append(slices.Clone(p), "IH", "Z")
		}
		return append(slices.Clone(p), "Z")
	}
	if base, ok := strings.CutSuffix(w, "'s"); ok {
		if p, ok := d[base]; ok {
			return voicedS(p)
		}
	}
	if base, ok := strings.CutSuffix(w, "s"); ok {
		if p, ok := d[base]; ok {
			return voicedS(p)
		}
	}
	if us := strings.Replace(w, "our", "or", 1); us != w {
		if p, ok := d[us]; ok {
			return p
		}
	}
	return sphinx.GuessPronunciation(w)
}

// extraWords returns a dictionary of the words of us that d lacks, each with
// its pronounce guess, sorted; words with no guess are left out (their
// utterances too, by inVocabulary).
func extraWords(us []utt, d dictionary) []string {
	seen := map[string]bool{}
	var lines []string
	for _, u := range us {
		for _, w := range strings.Fields(u.text) {
			if _, ok := d[w]; ok || seen[w] {
				continue
			}
			seen[w] = true
			if p := d.pronounce(w); len(p) > 0 {
				lines = append(lines, w+" "+strings.Join(p, " "))
			}
		}
	}
	sort.Strings(lines)
	return lines
}

// split separates the corpus's adaptation readers from its held-out ones.
func split(us []utt) (train, held []utt) {
	for _, u := range us {
		if u.set == "held" {
			held = append(held, u)
		} else {
			train = append(train, u)
		}
	}
	return train, held
}

// inVocabulary keeps the utterances whose every word has a pronunciation
// (bw cannot align a word it cannot say) and names the others.
func inVocabulary(us []utt, d dictionary, extra []string) (kept []utt, dropped []string) {
	known := map[string]bool{}
	for _, l := range extra {
		w, _, _ := strings.Cut(l, " ")
		known[w] = true
	}
	for _, u := range us {
		ok := true
		for _, w := range strings.Fields(u.text) {
			if _, in := d[w]; !in && !known[w] {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, u)
		} else {
			dropped = append(dropped, u.id)
		}
	}
	sort.Strings(dropped)
	return kept, dropped
}

// perReader keeps the first n utterances of each speaker, in order.
func perReader(us []utt, n int) []utt {
	count := map[string]int{}
	var out []utt
	for _, u := range us {
		if count[u.speaker] < n {
			count[u.speaker]++
			out = append(out, u)
		}
	}
	return out
}
