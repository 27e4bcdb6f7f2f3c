package subtitles

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/sentences"
)

// File is one subtitle file: its format ("srt" or "vtt") and content.
type File struct {
	Format    string
	Subtitles string
}

// Build returns one File per configured format, in the order of
// c.Formats. Zero fields of c take their defaults; an invalid c returns an
// error wrapping ErrInvalidConfig. A transcript without words gives files
// without captions (a bare "WEBVTT" header for vtt).
func Build(utts []recognizer.Utterance, c Config) ([]File, error) {
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	caps := captions(utts, c.limits(), c.AudioDuration)
	files := make([]File, 0, len(c.Formats))
	for _, f := range c.Formats {
		files = append(files, File{Format: f, Subtitles: render(caps, f)})
	}
	return files, nil
}

// caption is one cue: times in milliseconds, its rows, its channel.
type caption struct {
	start, end int64
	channel    int
	rows       []string
}

// token is one word of a channel.
type token struct {
	text        string
	start, end  float64
	sentenceEnd bool // a sentence ends after it
	weakEnd     bool // a phrase cannot end after it ("the", "of" ...)
}

func captions(utts []recognizer.Utterance, l limits, audioEnd float64) []caption {
	ends := map[sentences.Position]bool{}
	for _, s := range sentences.Segments(utts) {
		if len(s.Words) > 0 {
			ends[s.Words[len(s.Words)-1]] = true
		}
	}
	byChannel := map[int][]token{}
	lastEnd := 0.0
	order := make([]int, len(utts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(utts[a].Start, utts[b].Start) })
	for _, ui := range order {
		u := utts[ui]
		var toks []token
		if len(u.Words) == 0 {
			toks = spread(u)
		}
		for wi, w := range u.Words {
			text := strings.Join(strings.Fields(w.Word), " ")
			if text == "" {
				continue
			}
			toks = append(toks, token{text: text, start: w.Start, end: max(w.End, w.Start),
				sentenceEnd: ends[sentences.Position{Utterance: ui, Word: wi}], weakEnd: !sentences.CanEnd(text)})
		}
		for _, t := range toks {
			lastEnd = max(lastEnd, t.end)
		}
		byChannel[u.Channel] = append(byChannel[u.Channel], toks...)
	}
	if audioEnd <= 0 {
		audioEnd = lastEnd
	}
	var out []caption
	for ch, toks := range byChannel {
		out = append(out, channelCaptions(toks, ch, l, audioEnd)...)
	}
	slices.SortFunc(out, func(a, b caption) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.channel, b.channel))
	})
	return out
}

// spread gives the words of an utterance that has text but no word times
// equal shares of its span.
func spread(u recognizer.Utterance) []token {
	f := strings.Fields(u.Text)
	var out []token
	step := (u.End - u.Start) / float64(max(len(f), 1))
	for i, w := range f {
		out = append(out, token{text: w, start: u.Start + float64(i)*step, end: u.Start + float64(i+1)*step,
			weakEnd: !sentences.CanEnd(w)})
	}
	if len(out) > 0 {
		out[len(out)-1].sentenceEnd = true
	}
	return out
}

func channelCaptions(toks []token, ch int, l limits, audioEnd float64) []caption {
	slices.SortStableFunc(toks, func(a, b token) int { return cmp.Compare(a.start, b.start) })
	type span struct {
		i, j       int
		start, end float64
	}
	var spans []span
	texts := make([]string, len(toks))
	for k, t := range toks {
		texts[k] = t.text
	}
	for i := 0; i < len(toks); {
		j := i + 1
		full := false // stopped by a size or duration limit
		for ; j < len(toks); j++ {
			if toks[j].start-toks[j-1].end > maxPause {
				break
			}
			if toks[j].end-toks[i].start > l.maxDur || rowsNeeded(texts[i:j+1], l.chars) > l.rows {
				full = true
				break
			}
			if toks[j-1].sentenceEnd && halfFull(toks[i:j], texts[i:j], l) {
				break
			}
		}
		// A full caption ends better at a pause among its last three
		// words, and never on "the", "of" ...: give up to two weak words
		// to the next caption.
		if full && j < len(toks) {
			best, bestGap := j, toks[j].start-toks[j-1].end
			for k := j - 1; k >= j-3 && k > i+1; k-- {
				if g := toks[k].start - toks[k-1].end; g > bestGap+0.05 && g >= 0.15 && !toks[k-1].weakEnd {
					best, bestGap = k, g
				}
			}
			j = best
			k := j
			for k-1 > i && j-k < 2 && toks[k-1].weakEnd {
				k--
			}
			if !toks[k-1].weakEnd {
				j = k
			}
		}
		start, end := toks[i].start, toks[j-1].end
		end = min(end, start+l.maxDur)
		spans = append(spans, span{i, j, start, end})
		i = j
	}
	// Hold short captions longer, or start them earlier.
	for k := range spans {
		s := &spans[k]
		limit := audioEnd
		if k+1 < len(spans) {
			limit = spans[k+1].start
		}
		if s.end-s.start < l.minDur {
			s.end = max(s.end, min(s.start+l.minDur, limit))
		}
		if s.end-s.start < l.minDur {
			floor := 0.0
			if k > 0 {
				floor = spans[k-1].end
			}
			s.start = min(s.start, max(floor, s.end-l.minDur))
		}
	}
	out := make([]caption, 0, len(spans))
	var prevEnd int64
	for _, s := range spans {
		c := caption{start: ms(s.start), end: ms(s.end), channel: ch, rows: layout(texts[s.i:s.j], l.chars)}
		c.start = max(c.start, prevEnd)
		c.end = max(c.end, c.start+1)
		prevEnd = c.end
		out = append(out, c)
	}
	return out
}

func ms(s float64) int64 { return int64(math.Round(max(s, 0) * 1000)) }

// halfFull reports whether a caption holding these words is at least half
// its character or duration budget.
func halfFull(toks []token, texts []string, l limits) bool {
	n := len(strings.Join(texts, " "))
	return n*2 >= l.chars*l.rows || (toks[len(toks)-1].end-toks[0].start)*2 >= l.maxDur
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// rowsNeeded is the fewest rows of at most chars runes that hold words
// in order, each word longer than a row taking a row of its own (greedy
// filling is optimal for this).
func rowsNeeded(words []string, chars int) int {
	rows, cur := 0, 0
	for _, w := range words {
		n := runes(w)
		switch {
		case n > chars:
			if cur > 0 {
				rows++
			}
			rows++
			cur = 0
		case cur == 0:
			cur = n
		case cur+1+n <= chars:
			cur += 1 + n
		default:
			rows++
			cur = n
		}
	}
	if cur > 0 {
		rows++
	}
	return rows
}

// layout breaks words into the fewest rows that fit, balanced so that the
// longest row is as short as possible (later rows win ties, giving the
// bottom-heavy shape captioners prefer).
func layout(words []string, chars int) []string {
	n := len(words)
	r := rowsNeeded(words, chars)
	width := func(i, j int) int { // words[i:j] on one row
		w := j - i - 1
		for _, s := range words[i:j] {
			w += runes(s)
		}
		return w
	}
	ok := func(i, j int) bool { return width(i, j) <= chars || j-i == 1 }
	const inf = math.MaxInt
	// best[k][i]: smallest possible longest row for words[i:] in k rows.
	best := make([][]int, r+1)
	next := make([][]int, r+1)
	for k := range best {
		best[k] = make([]int, n+1)
		next[k] = make([]int, n+1)
		for i := range best[k] {
			best[k][i] = inf
		}
	}
	best[0][n] = 0
	for k := 1; k <= r; k++ {
		for i := n - 1; i >= 0; i-- {
			for j := i + 1; j <= n; j++ {
				if !ok(i, j) || best[k-1][j] == inf {
					continue
				}
				if v := max(width(i, j), best[k-1][j]); v < best[k][i] {
					best[k][i], next[k][i] = v, j
				}
			}
		}
	}
	if best[r][0] == inf { // cannot happen: greedy found r rows
		return []string{strings.Join(words, " ")}
	}
	var rows []string
	for k, i := r, 0; k > 0; k-- {
		j := next[k][i]
		rows = append(rows, strings.Join(words[i:j], " "))
		i = j
	}
	return rows
}
