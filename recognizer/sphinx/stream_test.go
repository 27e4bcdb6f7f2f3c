package sphinx

import "testing"

// TestWriteGathersBlocks: a stream written 10 ms at a time (as
// recognizer.Live writes) decodes in blocks of writeBlock, not on every
// Write, and whatever reads the decoder first decodes what is pending:
// Path and Finish still see every sample written. Before, each Write was
// its own ps_process_raw call, and a narrowband call cost a third more
// CPU in the daemon than in blocks (livebench -narrow 1, 2026-11-25).
func TestWriteGathersBlocks(t *testing.T) {
	e := newEngine(t, 1)
	c, pcm := clip(t, "pocketsphinx-goforward.wav")
	st := openStream(t, e)
	const frame = 160 // 10 ms
	decodes, written := 0, 0
	for i := 0; i < len(pcm); i += frame {
		before := st.d.nSamples
		chunk := pcm[i:min(i+frame, len(pcm))]
		if err := st.Write(chunk); err != nil {
			t.Fatal(err)
		}
		written += len(chunk)
		if st.d.nSamples != before {
			decodes++
		}
		if behind := written - st.d.nSamples; behind >= writeBlock {
			t.Fatalf("after %d samples written, %d not decoded (block %d)", written, behind, writeBlock)
		}
	}
	if max := written/writeBlock + 1; decodes > max {
		t.Errorf("%d writes of 10 ms decoded %d times, want at most %d", (written+frame-1)/frame, decodes, max)
	}
	if got := pathText(st); got != c.Transcript {
		t.Errorf("path %q, want %q", got, c.Transcript)
	}
	if st.d.nSamples != written {
		t.Errorf("Path decoded %d of %d samples written", st.d.nSamples, written)
	}
	u, err := st.Finish()
	if err != nil || u.Text != c.Transcript {
		t.Fatalf("Finish: %q, %v; want %q", u.Text, err, c.Transcript)
	}
}
