package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// utt is one recording with its reference transcript.
type utt struct {
	id, src, text, speaker string
	seconds                float64 // of the source, from its manifest
}

// group is one speaker's utterances adapted on together (one call leg).
type group struct {
	speaker string
	utts    []utt
}

// speakerSet is the groups of one source of speech.
type speakerSet struct {
	name   string
	groups []group
}

// rendition is the G.711 variant every utterance goes through: mu-law
// through earshot's own encoder, as bench/MODEL.md's held-out rows.
var rendition = telmodel.Variant{Law: telmodel.MuLaw, Encoder: telmodel.Magnitude}

// loadSets reads the corpus's held-out readers and the test set's mono
// clips and groups each speaker's utterances.
func loadSets(o *options) ([]speakerSet, error) {
	rows, err := telmodel.ReadTSV(filepath.Join(o.corpus, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	var held []utt
	for _, r := range rows {
		if len(r) < 5 {
			return nil, fmt.Errorf("corpus manifest: short row %q", r)
		}
		if !strings.HasPrefix(r[0], "ls-test-other-") {
			continue
		}
		secs, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			return nil, fmt.Errorf("corpus manifest %s: duration: %w", r[0], err)
		}
		held = append(held, utt{id: strings.TrimSuffix(r[0], filepath.Ext(r[0])), src: filepath.Join(o.corpus, r[0]),
			text: r[4], speaker: r[2], seconds: secs})
	}
	sets := []speakerSet{{name: "held-out corpus readers", groups: groups(held, o.group)}}
	if o.testdata == "" {
		return sets, nil
	}
	dir, err := filepath.Abs(o.testdata)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	clips, err := recognizertest.ParseManifest(f, dir)
	if err != nil {
		return nil, err
	}
	durs, err := telmodel.ReadTSV(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		return nil, err
	}
	secs := map[string]float64{}
	for _, r := range durs {
		if len(r) > 1 {
			secs[r[0]], _ = strconv.ParseFloat(r[1], 64)
		}
	}
	var tests []utt
	for _, c := range clips {
		if strings.HasPrefix(c.File, "stereo-") { // two talkers: not one call leg
			continue
		}
		id := strings.TrimSuffix(c.File, ".wav")
		tests = append(tests, utt{id: id, src: c.Path, text: c.Transcript, speaker: testSpeaker(id), seconds: secs[c.File]})
	}
	return append(sets, speakerSet{name: "testdata", groups: groups(tests, o.group)}), nil
}

// testSpeaker names the reader of a test-set clip from its file name: a
// LibriSpeech reader id, else the name without its trailing numbers.
func testSpeaker(id string) string {
	f := strings.Split(id, "-")
	if f[0] == "ls" && len(f) > 3 {
		return "ls-" + f[3]
	}
	if f[0] == "ljspeech" {
		return f[0]
	}
	for len(f) > 1 {
		if _, err := strconv.Atoi(f[len(f)-1]); err != nil {
			break
		}
		f = f[:len(f)-1]
	}
	return strings.Join(f, "-")
}

// groups splits each speaker's utterances, in order, into groups of at
// least target speech; a last group under half the target joins the one
// before. Speakers keep their first appearance's order.
func groups(us []utt, target time.Duration) []group {
	var order []string
	by := map[string][]utt{}
	for _, u := range us {
		if _, ok := by[u.speaker]; !ok {
			order = append(order, u.speaker)
		}
		by[u.speaker] = append(by[u.speaker], u)
	}
	var out []group
	for _, sp := range order {
		var gs []group
		cur, secs := group{speaker: sp}, 0.0
		for _, u := range by[sp] {
			cur.utts = append(cur.utts, u)
			if secs += u.seconds; secs >= target.Seconds() {
				gs = append(gs, cur)
				cur, secs = group{speaker: sp}, 0
			}
		}
		if len(cur.utts) > 0 {
			if len(gs) > 0 && secs < target.Seconds()/2 {
				gs[len(gs)-1].utts = append(gs[len(gs)-1].utts, cur.utts...)
			} else {
				gs = append(gs, cur)
			}
		}
		out = append(out, gs...)
	}
	return out
}

// render writes the decoder-input WAV (16 kHz, after the G.711 round
// trip through earshot's decoder and resampler) of every utterance not
// rendered yet and returns the audio seconds of each.
func render(ctx context.Context, dir string, us []utt) (map[string]float64, error) {
	for _, d := range []string{"g711", "wav"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	secs := map[string]float64{}
	for _, u := range us {
		dst := filepath.Join(dir, "wav", u.id+".wav")
		if st, err := os.Stat(dst); err == nil {
			secs[u.id] = float64(st.Size()-44) / 2 / 16000
			continue
		}
		r, err := rendition.Render(ctx, u.src, filepath.Join(dir, "g711", u.id+".wav"))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst+".tmp", telmodel.PCMWAV(r.PCM, 16000), 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(dst+".tmp", dst); err != nil {
			return nil, err
		}
		secs[u.id] = float64(len(r.PCM)) / 16000
	}
	return secs, nil
}

// score is a word error count.
type score struct{ errs, words int }

func (s score) wer() float64 {
	if s.words == 0 {
		return 0
	}
	return 100 * float64(s.errs) / float64(s.words)
}

func (s score) add(o score) score { return score{s.errs + o.errs, s.words + o.words} }

// scoreOf scores hypothesis h against reference ref.
func scoreOf(ref, h string) score {
	r := recognizertest.Normalize(ref)
	return score{recognizertest.EditDistance(r, recognizertest.Normalize(h)), len(r)}
}
