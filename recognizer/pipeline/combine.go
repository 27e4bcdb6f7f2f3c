package pipeline

import (
	"cmp"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/transcript"
)

// The stored record is never worse than what the client saw (issue 41):
// after the batch pass, the record takes, stretch by stretch, the live
// finals or the batch pass's utterances, whichever the embedded engine
// scores higher on the recording.
//
// A stretch is a run of a channel's utterances of either pass that
// overlap in time (or nearly: stretchJoin), so that each pass's words of
// it cover the same audio. Where the two passes agree word for word the
// batch pass's utterances stay. Where they differ, both word sequences
// are scored the same way on the stretch's audio (recognizer.Chooser:
// the batch pool's acoustic model and language model, as its search
// weighs them, both sequences in one search, a chain of states each), so
// neither pass's own search settings or confidence scale decides; the
// higher score wins, the batch pass on a tie or when the scoring fails.
// A stretch where one pass has no words stays the batch pass's, unscored:
// no words cannot be scored (a search of fillers only reports no path).
// post_session_metadata.transcription_pass is "batch" when every
// stretch is the batch pass's, "combined" when some are the live
// finals' (record_stretches counts them).

// stretchJoin is how close (seconds) utterances of a channel must come to
// fall in one stretch: the live endpointer and the batch VAD cut the same
// speech at slightly different times.
const stretchJoin = 0.3

// stretchPad is the audio (seconds) taken on either side of a stretch's
// utterances when it is scored: the silence the search starts and ends in.
const stretchPad = 0.2

// Stretch is one channel's run of overlapping utterances of both passes.
type Stretch struct {
	Channel     int
	Start, End  float64 // seconds, file time
	Live, Batch []transcript.Utterance
}

// stretches groups the utterances of both passes by channel into runs
// that overlap in time, in order of channel and start.
func Stretches(live, batch []transcript.Utterance) []Stretch {
	type tagged struct {
		u    transcript.Utterance
		live bool
	}
	all := make([]tagged, 0, len(live)+len(batch))
	for _, u := range live {
		all = append(all, tagged{u, true})
	}
	for _, u := range batch {
		all = append(all, tagged{u, false})
	}
	slices.SortStableFunc(all, func(a, b tagged) int {
		return cmp.Or(cmp.Compare(a.u.Channel, b.u.Channel), cmp.Compare(a.u.Start, b.u.Start))
	})
	var out []Stretch
	for _, t := range all {
		n := len(out)
		if n == 0 || out[n-1].Channel != t.u.Channel || t.u.Start > out[n-1].End+stretchJoin {
			out = append(out, Stretch{Channel: t.u.Channel, Start: t.u.Start, End: t.u.End})
			n++
		}
		s := &out[n-1]
		s.End = max(s.End, t.u.End)
		if t.live {
			s.Live = append(s.Live, t.u)
		} else {
			s.Batch = append(s.Batch, t.u)
		}
	}
	return out
}

// Words are the utterances' words in order, lower case (as the engine's
// dictionary has them).
func Words(us []transcript.Utterance) []string {
	var out []string
	for _, u := range us {
		for _, w := range u.Words {
			if s := strings.ToLower(strings.TrimSpace(w.Word)); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ChooseFunc scores the alternatives on a channel's audio from start to
// end (seconds) and returns the index of the best (recognizer.Chooser).
type ChooseFunc func(channel int, start, end float64, alternatives [][]string) (int, error)

// CombineUtterances is the record's utterances: per stretch, the batch
// pass's, or the live finals' where choose prefers them; live is how many
// of the stretches are the live finals'. A stretch choose cannot score
// keeps the batch pass's.
func CombineUtterances(liveUtts, batchUtts []transcript.Utterance, choose ChooseFunc) (out []transcript.Utterance, live, stretches int) {
	all := Stretches(liveUtts, batchUtts)
	for _, s := range all {
		lw, bw := Words(s.Live), Words(s.Batch)
		// A pass with no words in the stretch cannot be scored against
		// the other's (the engine reports no path of fillers only), so
		// the batch pass's stay, words or none.
		if slices.Equal(lw, bw) || len(lw) == 0 || len(bw) == 0 {
			out = append(out, s.Batch...)
			continue
		}
		i, err := choose(s.Channel, s.Start-stretchPad, s.End+stretchPad, [][]string{bw, lw})
		if err != nil || i != 1 {
			out = append(out, s.Batch...)
			continue
		}
		out = append(out, s.Live...)
		live++
	}
	slices.SortStableFunc(out, func(a, b transcript.Utterance) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Channel, b.Channel))
	})
	return out, live, len(all)
}

// JoinUtterances joins the utterances' texts as the pipeline does.
func JoinUtterances(us []transcript.Utterance) string {
	texts := make([]string, 0, len(us))
	for _, u := range us {
		if t := strings.TrimSpace(u.Text); t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, " ")
}
