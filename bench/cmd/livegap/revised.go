package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// revised scores the revised finals too (-revised, issue 41): each live
// decoder segment decoded again at its end on the batch pool of the
// rendition's band (recognizer.EventSegment, as the daemon does for a
// session with receive_revised_transcripts), its words replacing the
// segment's finals.
var revised bool

// reviser keeps one live session's finals and replaces a segment's with
// its revision when the segment ends.
type reviser struct {
	e     *sphinx.Engine // the batch pool
	ids   []int          // the finals' IDs, -1 for a revision's
	texts []string
	cpu   time.Duration // the revisions' decodes (this thread's CPU)
	n     int           // revisions
	err   error
}

func (r *reviser) final(id int, text string) {
	r.ids = append(r.ids, id)
	r.texts = append(r.texts, text)
}

// segment decodes an ended segment again (on the calling thread, whose
// CPU it counts) and puts its text in place of its finals.
func (r *reviser) segment(seg *recognizer.LiveSegment) {
	if r.err != nil {
		return
	}
	start := threadCPU()
	defer func() { r.cpu += threadCPU() - start }()
	st, err := r.e.NewStream(context.Background(), recognizer.StreamOptions{})
	if err != nil {
		r.err = err
		return
	}
	u, err := st.(*sphinx.Stream).Decode(seg.Audio)
	st.Close()
	if err != nil {
		r.err = err
		return
	}
	r.n++
	first := -1
	for k := len(r.ids) - 1; k >= 0; k-- {
		if slices.Contains(seg.IDs, r.ids[k]) {
			first = k
			r.ids = slices.Delete(r.ids, k, k+1)
			r.texts = slices.Delete(r.texts, k, k+1)
		}
	}
	if first >= 0 {
		r.ids = slices.Insert(r.ids, first, -1)
		r.texts = slices.Insert(r.texts, first, u.Text)
	}
}

func (r *reviser) reset() { r.ids, r.texts, r.cpu, r.n = nil, nil, 0, 0 }

func (r *reviser) text() string { return strings.Join(r.texts, " ") }
