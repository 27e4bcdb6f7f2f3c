package sphinx

import (
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestRecordSearch: a stream for a live session's record
// (StreamOptions.Record) on the wideband pool decodes with the record
// search, the pool's own passes capped at DefaultRecordMaxHMMsPerFrame
// (issue 41: the batch pass of a G.722 call was most of the call's CPU),
// and still gets the clip's words; the decoder's own -maxhmmpf is left
// as it was, a later stream without Record is back on the pool's own
// search, and only a pool whose own search is wider has a record search.
func TestRecordSearch(t *testing.T) {
	var wide Config
	wide.SetDefaults()
	if got := wide.recordMaxHMMs(); got != DefaultRecordMaxHMMsPerFrame {
		t.Errorf("wideband pool: record search -maxhmmpf %d, want %d", got, DefaultRecordMaxHMMsPerFrame)
	}
	for name, c := range map[string]Config{
		"live pool":  wide.Live(),
		"off":        {RecordMaxHMMsPerFrame: -1},
		"set 4000":   {RecordMaxHMMsPerFrame: 4000},
		"own leaner": {MaxHMMsPerFrame: 6000},
		"telephone batch pool (own 5000)": func() Config {
			t := wide
			t.MaxHMMsPerFrame = DefaultTelephoneMaxHMMsPerFrame
			return t
		}(),
	} {
		want := 0
		if name == "set 4000" {
			want = 4000
		}
		if got := c.recordMaxHMMs(); got != want {
			t.Errorf("%s: record search -maxhmmpf %d, want %d", name, got, want)
		}
	}

	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Record: true})
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*Stream)
	if !s.d.record || !s.d.hasRecord {
		t.Fatalf("record stream: on the record search %v, made %v; want true, true", s.d.record, s.d.hasRecord)
	}
	if hmm := s.d.configInt("-maxhmmpf"); hmm != pocketSphinxMaxHMMs {
		t.Errorf("decoder -maxhmmpf %d after making the record search, want %d", hmm, pocketSphinxMaxHMMs)
	}
	for i := range 2 { // Decode starts each segment on the record search again
		u, err := s.Decode(pcm)
		if err != nil || u.Text != c.Transcript {
			t.Fatalf("record decode %d: %q, %v; want %q", i, u.Text, err, c.Transcript)
		}
		if !s.d.record {
			t.Fatalf("record decode %d left the record search", i)
		}
	}
	s.Close()
	plain := openStream(t, e)
	if plain.d.record || !plain.d.hasRecord {
		t.Fatalf("next stream: on the record search %v, made %v; want false, true (the same decoder)", plain.d.record, plain.d.hasRecord)
	}
	if u, err := plain.Decode(pcm); err != nil || u.Text != c.Transcript {
		t.Fatalf("plain decode: %q, %v", u.Text, err)
	}
}
