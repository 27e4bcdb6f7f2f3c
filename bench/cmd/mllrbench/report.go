package main

import (
	"fmt"
	"sort"
)

// row is one group's first pass and its adaptations.
type row struct {
	set, speaker string
	group, utts  int
	seconds      float64
	base         score
	modes        map[string]outcome
}

func printRow(r row, modes []string) {
	fmt.Printf("%-24s %-32s g%d %2d utt %5.1f s  first %5.1f%% (%d/%d)", r.set, r.speaker, r.group, r.utts, r.seconds,
		r.base.wer(), r.base.errs, r.base.words)
	for _, m := range modes {
		oc := r.modes[m]
		fmt.Printf("  %s %5.1f%% (%d, on %d)", m, oc.after.wer(), oc.after.errs, oc.adapted)
	}
	fmt.Println()
}

// report prints, per set, a markdown table of each speaker's WER without
// and with each adaptation, the overall WER, the groups each adaptation
// won and lost, and its CPU against the first pass's.
func report(rows []row, modes []string, o *options, firstCPU, feCPU float64) {
	var sets []string
	for _, r := range rows {
		if len(sets) == 0 || sets[len(sets)-1] != r.set {
			sets = append(sets, r.set)
		}
	}
	for _, set := range sets {
		fmt.Printf("### %s (groups of >= %s of speech)\n\n| speaker | groups | speech s | first pass WER |", set, o.group)
		for _, m := range modes {
			fmt.Printf(" %s WER |", m)
		}
		fmt.Printf("\n|---|---|---|---|")
		for range modes {
			fmt.Printf("---|")
		}
		fmt.Println()
		type agg struct {
			groups  int
			seconds float64
			base    score
			after   map[string]score
		}
		by := map[string]*agg{}
		var order []string
		total := &agg{after: map[string]score{}}
		wins, losses := map[string]int{}, map[string]int{}
		for _, r := range rows {
			if r.set != set {
				continue
			}
			a := by[r.speaker]
			if a == nil {
				a = &agg{after: map[string]score{}}
				by[r.speaker] = a
				order = append(order, r.speaker)
			}
			for _, x := range []*agg{a, total} {
				x.groups++
				x.seconds += r.seconds
				x.base = x.base.add(r.base)
				for _, m := range modes {
					x.after[m] = x.after[m].add(r.modes[m].after)
				}
			}
			for _, m := range modes {
				switch e := r.modes[m].after.errs; {
				case e < r.base.errs:
					wins[m]++
				case e > r.base.errs:
					losses[m]++
				}
			}
		}
		line := func(name string, a *agg) {
			fmt.Printf("| %s | %d | %.0f | %.1f%% (%d/%d) |", name, a.groups, a.seconds, a.base.wer(), a.base.errs, a.base.words)
			for _, m := range modes {
				s := a.after[m]
				fmt.Printf(" %.1f%% (%d/%d) |", s.wer(), s.errs, s.words)
			}
			fmt.Println()
		}
		for _, sp := range order {
			line(sp, by[sp])
		}
		line("**all**", total)
		fmt.Printf("\nGroups better / worse / same after adaptation:")
		for _, m := range modes {
			fmt.Printf(" %s %d / %d / %d;", m, wins[m], losses[m], total.groups-wins[m]-losses[m])
		}
		fmt.Printf("\n\n")
	}
	cpu(rows, modes, firstCPU, feCPU)
}

// cpu prints the adaptation's CPU per audio second, step by step, against
// the first pass's (the batch decode alone).
func cpu(rows []row, modes []string, firstCPU, feCPU float64) {
	secs := 0.0
	for _, r := range rows {
		secs += r.seconds
	}
	fmt.Printf("### CPU per audio second (all groups, %.0f s)\n\n", secs)
	fmt.Printf("| | bw | mllr_solve | second decode | features (sphinx_fe) | adaptation total | first pass | batch pass CPU after / before | three tools as processes (model loads incl.) |\n|---|---|---|---|---|---|---|---|---|\n")
	sort.Strings(modes)
	for _, m := range modes {
		var bw, solve, dec, procs float64
		for _, r := range rows {
			oc := r.modes[m]
			procs += oc.procsCPU
			bw += oc.bwCPU
			solve += oc.solveCPU
			dec += oc.decodeCPU
		}
		extra := bw + solve + dec + feCPU
		ratio := (firstCPU + extra) / firstCPU
		if m == "live" { // the adapted decode is the batch pass's only one
			ratio = extra / firstCPU
		}
		fmt.Printf("| %s | %.3f | %.3f | %.3f | %.4f | %.3f | %.3f | %.2fx | %.3f |\n", m, bw/secs, solve/secs, dec/secs, feCPU/secs,
			extra/secs, firstCPU/secs, ratio, procs/secs)
	}
	fmt.Println()
}
