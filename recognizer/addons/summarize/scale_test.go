package summarize

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// syllables make synthetic content words: letters only, none a stop word.
var syllables = []string{"ba", "ke", "di", "lo", "mu", "ra", "se", "ti", "vo", "zu", "pa", "ne"}

func synthWord(i int) string {
	var b strings.Builder
	for range 3 {
		b.WriteString(syllables[i%len(syllables)])
		i /= len(syllables)
	}
	return b.String() + "n"
}

// synthSentences returns n sentences of ten words: topics of 40 sentences,
// each word drawn from its topic's 30 words or a 300-word common pool,
// the same for the same n.
func synthSentences(n int) []string {
	rng := rand.New(rand.NewPCG(43, uint64(n)))
	out := make([]string, n)
	for i := range out {
		topic := i / 40
		ws := make([]string, 10)
		for k := range ws {
			if rng.IntN(2) == 0 {
				ws[k] = synthWord(1000 + topic*30 + rng.IntN(30))
			} else {
				ws[k] = synthWord(rng.IntN(300))
			}
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

// untimed is a transcript as an engine without word timings gives it: one
// utterance a sentence, no words, no times; no chapter can last 30 s, so
// it is one chapter of every sentence.
func untimed(ss []string) []recognizer.Utterance {
	out := make([]recognizer.Utterance, len(ss))
	for i, s := range ss {
		out[i] = recognizer.Utterance{Text: s, Language: "en"}
	}
	return out
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCostLinear: summaries and chapters of 4n sentences allocate about
// four times what n sentences do, not sixteen (issue 43: one TextRank
// graph of all sentences was an n×n matrix, 654 MB for 10,000).
func TestCostLinear(t *testing.T) {
	const n = 1000
	inputs := map[string]func(int) []recognizer.Utterance{
		"spoken":  func(n int) []recognizer.Utterance { return spoken(synthSentences(n)...) },
		"untimed": func(n int) []recognizer.Utterance { return untimed(synthSentences(n)) },
	}
	for name, input := range inputs {
		small, large := input(n), input(4*n)
		for _, tt := range []struct {
			what string
			f    func([]recognizer.Utterance)
		}{
			{"Summarize", func(u []recognizer.Utterance) { Summarize(u, TypeGeneral) }},
			{"Chapters", func(u []recognizer.Utterance) { Chapters(u) }},
		} {
			t.Run(name+"/"+tt.what, func(t *testing.T) {
				a := allocated(func() { tt.f(small) })
				b := allocated(func() { tt.f(large) })
				ratio := float64(b) / float64(a)
				t.Logf("%d sentences: %d KiB, %d sentences: %d KiB, x%.1f", n, a>>10, 4*n, b>>10, ratio)
				if ratio > 5.5 {
					t.Errorf("4x the sentences allocate x%.1f: more than linear", ratio)
				}
			})
		}
	}
}

// denseTextRank is TextRank over one graph of all sentences, as it was
// before blocks: the reference for a transcript within one block.
func denseTextRank(bags []map[string]float64) []float64 {
	n := len(bags)
	w := make([][]float64, n)
	out := make([]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			shared := 0
			for s := range bags[i] {
				if bags[j][s] > 0 {
					shared++
				}
			}
			if shared == 0 {
				continue
			}
			v := float64(shared) / (math.Log(1+float64(len(bags[i]))) + math.Log(1+float64(len(bags[j]))))
			w[i][j], w[j][i] = v, v
			out[i] += v
			out[j] += v
		}
	}
	score := make([]float64, n)
	for i := range score {
		score[i] = 1
	}
	next := make([]float64, n)
	for range maxIterations {
		delta := 0.0
		for i := range n {
			sum := 0.0
			for j := range n {
				if w[j][i] > 0 {
					sum += w[j][i] / out[j] * score[j]
				}
			}
			next[i] = 1 - damping + damping*sum
			delta += math.Abs(next[i] - score[i])
		}
		score, next = next, score
		if delta < tolerance {
			break
		}
	}
	return score
}

// TestTextRankWithinOneBlock: up to rankBlock sentences, the blocked
// ranking gives the very scores of one dense graph.
func TestTextRankWithinOneBlock(t *testing.T) {
	for _, n := range []int{1, 2, 17, rankBlock} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ss := synthSentences(n)
			bags := make([]map[string]float64, n)
			for i, s := range ss {
				bags[i] = bag(terms(s))
			}
			got, want := textRank(bags), denseTextRank(bags)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("sentence %d: score %v, dense graph %v", i, got[i], want[i])
				}
			}
		})
	}
}

func BenchmarkSummarize(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		utts := spoken(synthSentences(n)...)
		b.Run(fmt.Sprint("sentences=", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Summarize(utts, TypeGeneral)
			}
		})
	}
}

func BenchmarkChapters(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		utts := spoken(synthSentences(n)...)
		b.Run(fmt.Sprint("sentences=", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Chapters(utts)
			}
		})
	}
}

// tileByClimbing is tile as it was: a climb to each side's peak from every
// gap, and every chapter checked again for each candidate cut (n²): the
// reference the one-pass tile must equal.
func tileByClimbing(ss []sentences.Sentence, bags []map[string]float64) []int {
	n := len(ss)
	if n < 2*minChapterSents {
		return nil
	}
	sim := make([]float64, n)
	for g := 1; g < n; g++ {
		left, right := map[string]float64{}, map[string]float64{}
		for i := max(0, g-window); i < g; i++ {
			for k, v := range bags[i] {
				left[k] += v
			}
		}
		for i := g; i < min(n, g+window); i++ {
			for k, v := range bags[i] {
				right[k] += v
			}
		}
		sim[g] = cosine(left, right)
	}
	depth := make([]float64, n)
	var ds []float64
	for g := 1; g < n; g++ {
		l := sim[g]
		for i := g - 1; i >= 1 && sim[i] >= l; i-- {
			l = sim[i]
		}
		r := sim[g]
		for i := g + 1; i < n && sim[i] >= r; i++ {
			r = sim[i]
		}
		depth[g] = (l - sim[g]) + (r - sim[g])
		ds = append(ds, depth[g])
	}
	mean, sd := meanSD(ds)
	cutoff := mean - sd/2
	var order []int
	for g := 1; g < n; g++ {
		if depth[g] > cutoff && depth[g] > 0 {
			order = append(order, g)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(depth[b], depth[a]) })
	var cuts []int
	ok := func(a, b int) bool {
		return b-a >= minChapterSents && ss[b-1].End-ss[a].Start >= minChapterSecs
	}
	for _, g := range order {
		all := append(slices.Clone(cuts), g)
		slices.Sort(all)
		bounds := append(append([]int{0}, all...), n)
		fits := true
		for i := 0; i+1 < len(bounds); i++ {
			if !ok(bounds[i], bounds[i+1]) {
				fits = false
				break
			}
		}
		if fits {
			cuts = all
		}
	}
	return cuts
}

// TestTileAsByClimbing: the one-pass tile cuts where the n² one did, on
// transcripts of random topic lengths and sentence lengths.
func TestTileAsByClimbing(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var ss []string
		for len(ss) < 300 {
			topic, size := rng.IntN(1000), 2+rng.IntN(30)
			for range size {
				ws := make([]string, 2+rng.IntN(12))
				for k := range ws {
					if rng.IntN(3) > 0 {
						ws[k] = synthWord(1000 + topic*20 + rng.IntN(20))
					} else {
						ws[k] = synthWord(rng.IntN(100))
					}
				}
				ss = append(ss, strings.Join(ws, " "))
			}
		}
		sents := sentences.Split(spoken(ss...))
		bags := make([]map[string]float64, len(sents))
		for i, s := range sents {
			bags[i] = bag(terms(s.Text))
		}
		got, want := tile(sents, bags), tileByClimbing(sents, bags)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: cuts %v, by climbing %v", seed, got, want)
		}
		if seed == 0 {
			t.Logf("%d sentences, %d chapters", len(sents), len(got)+1)
		}
	}
}
