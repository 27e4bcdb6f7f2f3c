package diarization

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/earshot-dev/earshot/recognizer"
)

const (
	// speechRange keeps frames within this many dB of the utterance's
	// loudest frame: the voiced part that carries the speaker.
	speechRange = 30.0
	// minFrames is the speech an utterance needs (in 10 ms frames) to
	// take part in clustering; shorter ones take the nearest cluster.
	minFrames = 50
	// maxItems bounds the utterances clustered directly (the clustering
	// is cubic); the shortest beyond it take the nearest cluster.
	maxItems = 1500
	// minEnergy is the frame level (dB re one LSB², about -60 dBFS)
	// below which a frame is never speech.
	minEnergy = 30.0
	// minSpeakerFrames is the speech (10 ms frames) a cluster needs to
	// count as a speaker of its own when the count is estimated.
	minSpeakerFrames = 300
)

// Diarize returns a speaker index (>= 0) for each utterance.
//
// channels holds the recording's 16 kHz audio, one slice per source
// channel, and each utterance's Channel indexes it. When distinctChannels
// is true (the channels carry different sources), the speaker is the
// utterance's channel and the audio is not read. Otherwise the utterances
// are clustered by voice (see the package comment) and speakers are
// numbered in order of first appearance. Utterances shorter than half a
// second of speech take the speaker of the nearest cluster; when none is
// long enough, all are speaker 0.
//
// It returns an error wrapping ErrConfig for an invalid c, ErrNoAudio when
// clustering is needed but channels is empty, and ErrChannel for an
// utterance whose channel is not in channels. Times outside the audio are
// clipped. Cost: an MFCC pass over the utterances' audio (about 1/50 of
// real time on one core) plus the clustering.
func Diarize(channels [][]int16, utts []recognizer.Utterance, distinctChannels bool, c Config) ([]int, error) {
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	labels := make([]int, len(utts))
	if distinctChannels {
		for i, u := range utts {
			labels[i] = max(u.Channel, 0)
		}
		return labels, nil
	}
	if len(utts) == 0 {
		return labels, nil
	}
	if len(channels) == 0 {
		return nil, ErrNoAudio
	}
	a := newMFCC()
	embs := make([][]float64, len(utts))
	halves := make([][2][]float64, len(utts))
	frames := make([]int, len(utts))
	frameSums := &moments{}
	for i, u := range utts {
		if u.Channel < 0 || u.Channel >= len(channels) {
			return nil, fmt.Errorf("utterance %d channel %d of %d: %w", i, u.Channel, len(channels), ErrChannel)
		}
		keep := speechFrames(a, clip(channels[u.Channel], u.Start, u.End))
		frames[i] = len(keep)
		if len(keep) == 0 {
			continue
		}
		embs[i] = embed(keep)
		frameSums.add(keep)
		if h := len(keep) / 2; h >= minFrames {
			halves[i] = [2][]float64{embed(keep[:h]), embed(keep[h:])}
		}
	}
	// Cluster the longest utterances (up to maxItems with enough speech).
	var items []int
	for i := range utts {
		if frames[i] >= minFrames {
			items = append(items, i)
		}
	}
	if len(items) == 0 {
		return labels, nil
	}
	if len(items) > maxItems {
		slices.SortStableFunc(items, func(x, y int) int { return cmp.Compare(frames[y], frames[x]) })
		items = items[:maxItems]
		slices.Sort(items)
	}
	// Scale each dimension by the spread of its coefficient over all the
	// speech frames, so every coefficient weighs alike.
	scale := frameScale(frameSums)
	norm := func(e []float64) []float64 {
		out := make([]float64, len(e))
		for d := range e {
			out[d] = e[d] / scale[d%len(scale)]
		}
		return out
	}
	z := make([][]float64, len(items))
	for k, i := range items {
		z[k] = norm(embs[i])
	}
	// The recording's own same-speaker distance: between the two halves
	// of each utterance long enough to halve.
	var halfDist []float64
	for _, i := range items {
		if halves[i][0] != nil {
			halfDist = append(halfDist, euclid(norm(halves[i][0]), norm(halves[i][1])))
		}
	}
	threshold := math.Inf(1) // no calibration: one speaker unless told
	if len(halfDist) > 0 {
		slices.Sort(halfDist)
		threshold = c.Threshold * halfDist[len(halfDist)/2]
	}
	dist := make([][]float64, len(items))
	for x := range dist {
		dist[x] = make([]float64, len(items))
		for y := range dist[x] {
			if y < x {
				dist[x][y] = dist[y][x]
			} else if y > x {
				dist[x][y] = euclid(z[x], z[y])
			}
		}
	}
	merges := dendrogram(dist)
	k := chooseK(len(items), merges, c.NumberOfSpeakers, c.MinSpeakers, c.MaxSpeakers, threshold)
	cl := cut(len(items), merges[:len(items)-k])
	if c.NumberOfSpeakers == 0 {
		cl = absorbSmall(cl, z, items, frames, max(c.MinSpeakers, 1))
		k = slices.Max(cl) + 1
	}
	// Centroids (in standardised space) for the utterances left out.
	cent := make([][]float64, k)
	count := make([]int, k)
	for x, lab := range cl {
		if cent[lab] == nil {
			cent[lab] = make([]float64, len(z[x]))
		}
		for d, v := range z[x] {
			cent[lab][d] += v
		}
		count[lab]++
	}
	for lab := range cent {
		for d := range cent[lab] {
			cent[lab][d] /= float64(count[lab])
		}
	}
	inItems := make(map[int]int, len(items))
	for x, i := range items {
		inItems[i] = cl[x]
	}
	raw := make([]int, len(utts))
	for i := range utts {
		if lab, ok := inItems[i]; ok {
			raw[i] = lab
			continue
		}
		best, bd := 0, math.Inf(1)
		if embs[i] != nil {
			e := norm(embs[i])
			for lab := range cent {
				if d := euclid(e, cent[lab]); d < bd {
					best, bd = lab, d
				}
			}
		} else {
			best = nearestInTime(utts, i, items, inItems)
		}
		raw[i] = best
	}
	// Number speakers by first appearance.
	order := map[int]int{}
	for i, r := range raw {
		if _, ok := order[r]; !ok {
			order[r] = len(order)
		}
		labels[i] = order[r]
	}
	return labels, nil
}

// absorbSmall moves the utterances of clusters with less than
// minSpeakerFrames of speech into the nearest other cluster (by centroid
// distance), smallest first, while more than lo clusters remain: a few
// odd utterances are not a speaker. Labels are renumbered 0..k-1.
func absorbSmall(cl []int, z [][]float64, items, frames []int, lo int) []int {
	for {
		k := slices.Max(cl) + 1
		if k <= lo {
			return cl
		}
		total := make([]int, k)
		cent := make([][]float64, k)
		for x, lab := range cl {
			total[lab] += frames[items[x]]
			if cent[lab] == nil {
				cent[lab] = make([]float64, len(z[x]))
			}
			for d, v := range z[x] {
				cent[lab][d] += v
			}
		}
		small := -1
		for lab := range total {
			if total[lab] < minSpeakerFrames && (small < 0 || total[lab] < total[small]) {
				small = lab
			}
		}
		if small < 0 {
			return cl
		}
		count := make([]int, k)
		for _, lab := range cl {
			count[lab]++
		}
		for lab := range cent {
			for d := range cent[lab] {
				cent[lab][d] /= float64(count[lab])
			}
		}
		to, bd := -1, math.Inf(1)
		for lab := range cent {
			if lab == small {
				continue
			}
			if d := euclid(cent[small], cent[lab]); d < bd {
				to, bd = lab, d
			}
		}
		for x, lab := range cl {
			if lab == small {
				cl[x] = to
			}
			if cl[x] > small {
				cl[x]--
			}
		}
	}
}

// nearestInTime returns the cluster of the clustered utterance closest in
// time to utterance i.
func nearestInTime(utts []recognizer.Utterance, i int, items []int, in map[int]int) int {
	best, bd := 0, math.Inf(1)
	mid := (utts[i].Start + utts[i].End) / 2
	for _, j := range items {
		if d := math.Abs((utts[j].Start+utts[j].End)/2 - mid); d < bd {
			best, bd = in[j], d
		}
	}
	return best
}

// clip returns the samples of pcm between start and end seconds.
func clip(pcm []int16, start, end float64) []int16 {
	if math.IsNaN(start) || math.IsNaN(end) {
		return nil
	}
	s := int(math.Max(0, start) * sampleRate)
	e := int(math.Min(float64(len(pcm))/sampleRate, math.Max(0, end)) * sampleRate)
	if s >= len(pcm) || e <= s {
		return nil
	}
	return pcm[s:min(e, len(pcm))]
}

// speechFrames returns the cepstra of the frames of pcm that carry
// speech: within speechRange dB of the loudest frame and above the
// absolute floor minEnergy (digital silence has none).
func speechFrames(a *mfccAnalyzer, pcm []int16) [][]float64 {
	ceps, energy := a.frames(pcm)
	if len(ceps) == 0 {
		return nil
	}
	top := slices.Max(energy)
	var keep [][]float64
	for f, e := range energy {
		if e >= top-speechRange && e >= minEnergy {
			keep = append(keep, ceps[f])
		}
	}
	return keep
}

// embed summarises frames as the mean and standard deviation of each
// cepstral coefficient.
func embed(frames [][]float64) []float64 {
	dim := len(frames[0])
	emb := make([]float64, 2*dim)
	for _, c := range frames {
		for d, v := range c {
			emb[d] += v
		}
	}
	for d := 0; d < dim; d++ {
		emb[d] /= float64(len(frames))
	}
	for _, c := range frames {
		for d, v := range c {
			dv := v - emb[d]
			emb[dim+d] += dv * dv
		}
	}
	for d := 0; d < dim; d++ {
		emb[dim+d] = math.Sqrt(emb[dim+d] / float64(len(frames)))
	}
	return emb
}

// moments accumulates per-coefficient sums over frames.
type moments struct {
	n         int
	sum, sum2 []float64
}

func (m *moments) add(frames [][]float64) {
	for _, c := range frames {
		if m.sum == nil {
			m.sum = make([]float64, len(c))
			m.sum2 = make([]float64, len(c))
		}
		for d, v := range c {
			m.sum[d] += v
			m.sum2[d] += v * v
		}
		m.n++
	}
}

// frameScale returns each coefficient's standard deviation over all
// frames added (1 where it is 0).
func frameScale(m *moments) []float64 {
	out := make([]float64, len(m.sum))
	for d := range out {
		mean := m.sum[d] / float64(m.n)
		v := m.sum2[d]/float64(m.n) - mean*mean
		out[d] = math.Sqrt(max(v, 0))
		if out[d] < 1e-9 {
			out[d] = 1
		}
	}
	return out
}

func euclid(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}
