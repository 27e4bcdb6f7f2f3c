package pipeline

import (
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/transcript"
)

// A stretch where the passes differ is decided region by region: the two
// passes' words are aligned (fewest edits), and each region where they
// differ (a run of substituted, missing or extra words between words
// they agree on) is scored on its own audio, each alternative with the
// agreed word on either side as context. The record of the stretch is the
// batch pass's utterances with the regions the engine prefers replaced
// by the live finals' words.

// regionPad is the audio (seconds) taken on either side of a region's
// words (its context words included) when it is scored.
const regionPad = 0.1

// timedWord is a word of a pass (lower case, as the engine's dictionary
// has it) with its utterance in the stretch and its place there.
type timedWord struct {
	w          string
	start, end float64
	utt, idx   int
}

func timedWords(us []transcript.Utterance) []timedWord {
	var out []timedWord
	for i, u := range us {
		for j, w := range u.Words {
			if s := strings.ToLower(strings.TrimSpace(w.Word)); s != "" {
				out = append(out, timedWord{s, w.Start, w.End, i, j})
			}
		}
	}
	return out
}

// alignment is an edit alignment of two word sequences: per step the
// index into a and into b, -1 where that side has no word.
func alignment(a, b []timedWord) [][2]int {
	n, m := len(a), len(b)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := range m + 1 {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			sub := d[i-1][j-1]
			if a[i-1].w != b[j-1].w {
				sub++
			}
			d[i][j] = min(sub, d[i-1][j]+1, d[i][j-1]+1)
		}
	}
	var steps [][2]int
	for i, j := n, m; i > 0 || j > 0; {
		switch {
		case i > 0 && j > 0 && d[i][j] == d[i-1][j-1]+boolInt(a[i-1].w != b[j-1].w):
			steps = append(steps, [2]int{i - 1, j - 1})
			i, j = i-1, j-1
		case i > 0 && d[i][j] == d[i-1][j]+1:
			steps = append(steps, [2]int{i - 1, -1})
			i--
		default:
			steps = append(steps, [2]int{-1, j - 1})
			j--
		}
	}
	slices.Reverse(steps)
	return steps
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// combineRegions is the stretch's record: its batch utterances with the
// regions choose prefers the live words of replaced by them, and how
// many regions were replaced.
func combineRegions(s Stretch, choose ChooseFunc) ([]transcript.Utterance, int) {
	b, l := timedWords(s.Batch), timedWords(s.Live)
	steps := alignment(b, l)
	agree := func(k int) bool { return steps[k][0] >= 0 && steps[k][1] >= 0 && b[steps[k][0]].w == l[steps[k][1]].w }
	words := make([][]transcript.Word, len(s.Batch))
	add := func(utt int, w transcript.Word) { words[utt] = append(words[utt], w) }
	lastUtt, replaced := 0, 0
	for k := 0; k < len(steps); {
		if agree(k) {
			w := b[steps[k][0]]
			add(w.utt, s.Batch[w.utt].Words[w.idx])
			lastUtt = w.utt
			k++
			continue
		}
		e := k
		for e < len(steps) && !agree(e) {
			e++
		}
		var bw, lw []string
		var bs, ls []timedWord
		start, end := s.End, s.Start
		for _, st := range steps[k:e] {
			if st[0] >= 0 {
				bs = append(bs, b[st[0]])
				bw = append(bw, b[st[0]].w)
			}
			if st[1] >= 0 {
				ls = append(ls, l[st[1]])
				lw = append(lw, l[st[1]].w)
			}
		}
		for _, w := range slices.Concat(bs, ls) {
			start, end = min(start, w.start), max(end, w.end)
		}
		var left, right []string
		if k > 0 {
			p, q := b[steps[k-1][0]], l[steps[k-1][1]]
			left = []string{p.w}
			start = min(start, p.start, q.start)
		}
		if e < len(steps) {
			p, q := b[steps[e][0]], l[steps[e][1]]
			right = []string{p.w}
			end = max(end, p.end, q.end)
		}
		live := false
		alts := [][]string{slices.Concat(left, bw, right), slices.Concat(left, lw, right)}
		if len(alts[0]) > 0 && len(alts[1]) > 0 {
			i, err := choose(s.Channel, start-regionPad, end+regionPad, alts)
			live = err == nil && i == 1
		}
		if live {
			// The live words join the batch utterance the region's batch
			// words (or the agreed word before it, or after it) are in.
			utt := lastUtt
			if len(bs) > 0 {
				utt = bs[0].utt
			} else if k == 0 && e < len(steps) {
				utt = b[steps[e][0]].utt
			}
			for _, w := range ls {
				add(utt, s.Live[w.utt].Words[w.idx])
			}
			replaced++
		} else {
			for _, w := range bs {
				add(w.utt, s.Batch[w.utt].Words[w.idx])
			}
		}
		if len(bs) > 0 {
			lastUtt = bs[len(bs)-1].utt
		}
		k = e
	}
	if replaced == 0 {
		return s.Batch, 0
	}
	var out []transcript.Utterance
	for i, u := range s.Batch {
		if len(words[i]) == 0 {
			continue
		}
		if slices.Equal(words[i], u.Words) {
			out = append(out, u)
			continue
		}
		u.Words = words[i]
		texts := make([]string, len(u.Words))
		var conf float64
		for j, w := range u.Words {
			texts[j] = w.Word
			conf += w.Confidence
		}
		u.Text = strings.Join(texts, " ")
		u.Start, u.End = min(u.Start, u.Words[0].Start), max(u.End, u.Words[len(u.Words)-1].End)
		u.Confidence = transcript.Round3(conf / float64(len(u.Words)))
		out = append(out, u)
	}
	return out, replaced
}
