package diarization

import "math"

// merge is one step of agglomerative clustering: clusters a and b (by
// their index in the original items, a < b) joined at distance d.
type merge struct {
	a, b int
	d    float64
}

// dendrogram runs average-linkage agglomerative clustering on the
// symmetric distance matrix dist (n×n) and returns the n-1 merges in
// order. Average linkage never decreases from one merge to the next, so a
// threshold cut is a prefix of the merges. It costs O(n³) time and O(n²)
// memory; callers bound n (maxItems).
func dendrogram(dist [][]float64) []merge {
	n := len(dist)
	d := make([][]float64, n)
	for i := range d {
		d[i] = append([]float64(nil), dist[i]...)
	}
	size := make([]int, n)
	alive := make([]bool, n)
	for i := range size {
		size[i], alive[i] = 1, true
	}
	merges := make([]merge, 0, max(n-1, 0))
	for step := 0; step < n-1; step++ {
		bi, bj, bd := -1, -1, math.Inf(1)
		for i := 0; i < n; i++ {
			if !alive[i] {
				continue
			}
			for j := i + 1; j < n; j++ {
				if alive[j] && d[i][j] < bd {
					bi, bj, bd = i, j, d[i][j]
				}
			}
		}
		if bi < 0 {
			break
		}
		merges = append(merges, merge{bi, bj, bd})
		// Lance–Williams update for average linkage; i keeps the union.
		for k := 0; k < n; k++ {
			if !alive[k] || k == bi || k == bj {
				continue
			}
			v := (float64(size[bi])*d[bi][k] + float64(size[bj])*d[bj][k]) / float64(size[bi]+size[bj])
			d[bi][k], d[k][bi] = v, v
		}
		size[bi] += size[bj]
		alive[bj] = false
	}
	return merges
}

// cut applies the first len(merges) steps of a dendrogram of n items and
// returns each item's cluster, numbered from 0 in order of first item.
func cut(n int, merges []merge) []int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, m := range merges {
		ra, rb := find(m.a), find(m.b)
		if ra != rb {
			parent[rb] = ra
		}
	}
	label := make([]int, n)
	ids := map[int]int{}
	for i := range label {
		r := find(i)
		id, ok := ids[r]
		if !ok {
			id = len(ids)
			ids[r] = id
		}
		label[i] = id
	}
	return label
}

// chooseK returns how many clusters to keep: exactly want when > 0,
// otherwise the number left when merging stops at threshold, bounded by
// lo and hi (0 = unbounded), and always within 1..n.
func chooseK(n int, merges []merge, want, lo, hi int, threshold float64) int {
	k := want
	if k <= 0 {
		k = n
		for _, m := range merges {
			if m.d > threshold {
				break
			}
			k--
		}
		if lo > 0 && k < lo {
			k = lo
		}
		if hi > 0 && k > hi {
			k = hi
		}
	}
	return max(1, min(k, n))
}
