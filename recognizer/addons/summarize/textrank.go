package summarize

import (
	"math"
	"slices"
)

// rankBlock bounds the sentences one TextRank graph holds. A transcript
// of more is ranked in consecutive blocks of about equal size, at most
// rankBlock each (a block is 15 to 40 minutes of one speaker), each its
// own graph: the cost is then n·rankBlock sentence pairs and edges, linear
// in the transcript, where one graph of all n was n² (10,000 sentences:
// 22 s and 654 MB, issue 43). A transcript within one block is ranked
// exactly as by one graph. PageRank scores average about 1 in any block,
// so the blocks' sentences compete for the summary on one scale.
const rankBlock = 400

// textRank scores sentences by PageRank over the similarity graph
// w(i,j) = |shared stems| / (log(1+|Si|) + log(1+|Sj|)), within blocks of
// rankBlock sentences.
func textRank(bags []map[string]float64) []float64 {
	n := len(bags)
	score := make([]float64, n)
	if n == 0 {
		return score
	}
	ids := stemIDs(bags)
	blocks := (n + rankBlock - 1) / rankBlock
	var g graph
	for b := range blocks {
		lo, hi := b*n/blocks, (b+1)*n/blocks
		g.rank(ids[lo:hi], score[lo:hi])
	}
	return score
}

// stemIDs numbers the stems of bags and returns each sentence's stems as
// sorted numbers, so two sentences' shared stems are counted by a merge.
func stemIDs(bags []map[string]float64) [][]int32 {
	num := map[string]int32{}
	out := make([][]int32, len(bags))
	for i, b := range bags {
		s := make([]int32, 0, len(b))
		for stem := range b {
			id, ok := num[stem]
			if !ok {
				id = int32(len(num))
				num[stem] = id
			}
			s = append(s, id)
		}
		slices.Sort(s)
		out[i] = s
	}
	return out
}

// shared counts the numbers two sorted sets have in common.
func shared(a, b []int32) int {
	n := 0
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			a = a[1:]
		case a[0] > b[0]:
			b = b[1:]
		default:
			n++
			a, b = a[1:], b[1:]
		}
	}
	return n
}

// edge is one neighbour of a sentence in a block's graph.
type edge struct {
	to int32
	w  float64
}

// graph is the scratch space of one block's ranking, reused by the next:
// at most rankBlock² edges.
type graph struct {
	adj  [][]edge  // neighbours of each sentence, in sentence order
	out  []float64 // total outgoing weight
	next []float64
}

// rank writes into score the PageRank of the sentences whose stems are
// ids (len(score) == len(ids)).
func (g *graph) rank(ids [][]int32, score []float64) {
	n := len(ids)
	g.adj = slices.Grow(g.adj[:0], n)[:n]
	g.out = slices.Grow(g.out[:0], n)[:n]
	g.next = slices.Grow(g.next[:0], n)[:n]
	for i := range n {
		g.adj[i] = g.adj[i][:0]
		g.out[i] = 0
	}
	adj, out, next := g.adj, g.out, g.next
	for i := range n {
		for j := i + 1; j < n; j++ {
			s := shared(ids[i], ids[j])
			if s == 0 {
				continue
			}
			v := float64(s) / (math.Log(1+float64(len(ids[i]))) + math.Log(1+float64(len(ids[j]))))
			adj[i] = append(adj[i], edge{int32(j), v})
			adj[j] = append(adj[j], edge{int32(i), v})
			out[i] += v
			out[j] += v
		}
	}
	for i := range score {
		score[i] = 1
	}
	cur := score // cur and next swap each pass; the last cur is copied back
	for range maxIterations {
		delta := 0.0
		for i := range n {
			sum := 0.0
			for _, e := range adj[i] {
				sum += e.w / out[e.to] * cur[e.to]
			}
			next[i] = 1 - damping + damping*sum
			delta += math.Abs(next[i] - cur[i])
		}
		cur, next = next, cur
		if delta < tolerance {
			break
		}
	}
	if &cur[0] != &score[0] {
		copy(score, cur)
	}
}
