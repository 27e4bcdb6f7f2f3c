package subtitles

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
)

// cue is a caption parsed back from a file.
type cue struct {
	start, end float64
	rows       []string
}

// parse reads SRT or WebVTT as written by render, failing on anything
// else (strictly: index line, timing line, rows, blank line).
func parse(t *testing.T, content, format string) []cue {
	t.Helper()
	sep := ","
	if format == FormatVTT {
		sep = "."
		if !strings.HasPrefix(content, "WEBVTT\n\n") {
			t.Fatalf("vtt without header: %q", content[:min(20, len(content))])
		}
		content = strings.TrimPrefix(content, "WEBVTT\n\n")
	}
	var out []cue
	blocks := strings.Split(strings.TrimSuffix(content, "\n\n"), "\n\n")
	if content == "" {
		return nil
	}
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		if len(lines) < 3 || lines[0] != strconv.Itoa(i+1) {
			t.Fatalf("block %d malformed: %q", i+1, b)
		}
		a, z, ok := strings.Cut(lines[1], " --> ")
		if !ok {
			t.Fatalf("timing line %q", lines[1])
		}
		out = append(out, cue{start: parseTime(t, a, sep), end: parseTime(t, z, sep), rows: lines[2:]})
	}
	return out
}

func parseTime(t *testing.T, s, sep string) float64 {
	t.Helper()
	var h, m, sec, ms int
	if n, err := fmt.Sscanf(s, "%02d:%02d:%02d"+sep+"%03d", &h, &m, &sec, &ms); n != 4 || err != nil || len(s) != 12 {
		t.Fatalf("timestamp %q: %v", s, err)
	}
	return float64(h*3600+m*60+sec) + float64(ms)/1000
}

// ffmpegCheck has ffmpeg demux the file with the format's own demuxer and
// ffprobe list its packets, which must match the cues one to one.
func ffmpegCheck(t *testing.T, path, format string, cues []cue) {
	t.Helper()
	demux := map[string]string{FormatSRT: "srt", FormatVTT: "webvtt"}[format]
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", demux, "-i", path, "-f", "srt", "-y", os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("ffmpeg on %s: %v: %s", filepath.Base(path), err, out)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-f", demux, "-show_entries", "packet=pts_time,duration_time",
		"-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe on %s: %v", filepath.Base(path), err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(cues) {
		t.Fatalf("ffprobe sees %d cues in %s, we wrote %d", len(lines), filepath.Base(path), len(cues))
	}
	for i, l := range lines {
		var pts, dur float64
		if _, err := fmt.Sscanf(strings.ReplaceAll(l, ",", " "), "%f %f", &pts, &dur); err != nil {
			t.Fatalf("ffprobe line %q: %v", l, err)
		}
		if d := pts - cues[i].start; d > 0.0015 || d < -0.0015 {
			t.Errorf("cue %d: ffprobe start %.3f, ours %.3f", i+1, pts, cues[i].start)
		}
		if d := pts + dur - cues[i].end; d > 0.0015 || d < -0.0015 {
			t.Errorf("cue %d: ffprobe end %.3f, ours %.3f", i+1, pts+dur, cues[i].end)
		}
	}
}

// checkLimits asserts every rule of the package comment on parsed cues of
// a single-channel transcript.
// Short cues are an error when strictMin, else logged: captions of a few
// characters over continuous speech cannot all be held long.
func checkLimits(t *testing.T, cues []cue, utts []recognizer.Utterance, l limits, audio float64, strictMin bool) {
	t.Helper()
	var words []recognizer.Word
	for _, u := range utts {
		words = append(words, u.Words...)
	}
	var got []string
	prevEnd := 0.0
	wi := 0
	for i, c := range cues {
		if len(c.rows) > l.rows {
			t.Errorf("cue %d has %d rows > %d", i+1, len(c.rows), l.rows)
		}
		for _, r := range c.rows {
			if n := utf8.RuneCountInString(r); n > l.chars && strings.Contains(r, " ") {
				t.Errorf("cue %d row %q has %d chars > %d", i+1, r, n, l.chars)
			}
		}
		if c.start < prevEnd-1e-9 || c.end <= c.start || c.start < 0 || c.end > audio+0.0005 {
			t.Errorf("cue %d [%.3f, %.3f] not monotonic inside [0, %.3f] after %.3f", i+1, c.start, c.end, audio, prevEnd)
		}
		if d := c.end - c.start; d > l.maxDur+0.0005 {
			t.Errorf("cue %d lasts %.3f s > %v", i+1, d, l.maxDur)
		} else if d < l.minDur-0.0005 && strictMin {
			t.Errorf("cue %d lasts %.3f s < %v", i+1, d, l.minDur)
		} else if d < l.minDur-0.0005 {
			t.Logf("cue %d lasts %.3f s < %v (no room around it)", i+1, d, l.minDur)
		}
		n := len(strings.Fields(strings.Join(c.rows, " ")))
		if wi+n > len(words) {
			t.Fatalf("cues hold more words than the transcript")
		}
		// The cue shows the words spoken inside it, with no long pause.
		first, last := words[wi], words[wi+n-1]
		if first.Start < c.start-1e-3 && c.start > prevEnd+1e-3 {
			t.Errorf("cue %d starts at %.3f after its first word (%.3f)", i+1, c.start, first.Start)
		}
		if last.End > c.end+0.0015 && c.end-c.start < l.maxDur-0.001 {
			t.Errorf("cue %d ends at %.3f before its last word (%.3f)", i+1, c.end, last.End)
		}
		for k := wi + 1; k < wi+n; k++ {
			if g := words[k].Start - words[k-1].End; g > maxPause {
				t.Errorf("cue %d spans a %.2f s pause", i+1, g)
			}
		}
		wi += n
		got = append(got, c.rows...)
		prevEnd = c.end
	}
	var want []string
	for _, w := range words {
		want = append(want, w.Word)
	}
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(want, " ") {
		t.Errorf("cues do not hold the transcript's words in order")
	}
}

func TestRealTranscripts(t *testing.T) {
	configs := []Config{
		{Formats: []string{"srt", "vtt"}},
		{Formats: []string{"vtt", "srt"}, Style: StyleCompliance, MaximumCharactersPerRow: 60, MaximumDuration: 10},
		{Formats: []string{"srt"}, MaximumCharactersPerRow: 16, MaximumRowsPerCaption: 1, MaximumDuration: 2, MinimumDuration: 1.5},
	}
	for _, clip := range []string{"ljspeech-LJ001-0007-to-0016-long.wav", "ls-dev-clean-2412-153948-0000.wav", "ljspeech-LJ001-0002.wav"} {
		tr := addonstest.Load(t, clip)
		for ci, c := range configs {
			t.Run(fmt.Sprintf("%s/config%d", clip, ci), func(t *testing.T) {
				c.AudioDuration = tr.Clip.Duration
				files, err := Build(tr.Utterances, c)
				if err != nil {
					t.Fatal(err)
				}
				c.SetDefaults()
				if len(files) != len(c.Formats) {
					t.Fatalf("%d files for %v", len(files), c.Formats)
				}
				var counts []int
				for i, f := range files {
					if f.Format != c.Formats[i] {
						t.Errorf("file %d format %q, want %q", i, f.Format, c.Formats[i])
					}
					path := filepath.Join(t.TempDir(), "out."+f.Format)
					if err := os.WriteFile(path, []byte(f.Subtitles), 0o644); err != nil {
						t.Fatal(err)
					}
					cues := parse(t, f.Subtitles, f.Format)
					ffmpegCheck(t, path, f.Format, cues)
					checkLimits(t, cues, tr.Utterances, c.limits(), tr.Clip.Duration, ci < 2)
					counts = append(counts, len(cues))
				}
				t.Logf("%v cues; first file:\n%s", counts, files[0].Subtitles[:min(400, len(files[0].Subtitles))])
			})
		}
	}
}

func TestComplianceLimits(t *testing.T) {
	c := Config{Style: StyleCompliance, MaximumCharactersPerRow: 80, MaximumRowsPerCaption: 4, MinimumDuration: 0.2, MaximumDuration: 20}
	c.SetDefaults()
	if got, want := c.limits(), (limits{minDur: 1, maxDur: 7, chars: 42, rows: 2}); got != want {
		t.Errorf("compliance limits %+v, want %+v", got, want)
	}
}

// words makes an utterance of the given words, each 0.4 s, with the
// listed silences (seconds) before word i.
func words(ch int, start float64, text string, gaps map[int]float64) recognizer.Utterance {
	u := recognizer.Utterance{Channel: ch, Text: text}
	at := start
	for i, w := range strings.Fields(text) {
		at += gaps[i]
		u.Words = append(u.Words, recognizer.Word{Word: w, Start: at, End: at + 0.4, Confidence: 1})
		at += 0.4
	}
	u.Start, u.End = u.Words[0].Start, u.Words[len(u.Words)-1].End
	return u
}

func TestCaptions(t *testing.T) {
	long := strings.Repeat("x", 30)
	tests := []struct {
		name string
		utts []recognizer.Utterance
		c    Config
		want string
	}{
		{"pause splits", []recognizer.Utterance{words(0, 1, "hello there how are you", map[int]float64{2: 1.6})},
			Config{}, "1\n00:00:01,000 --> 00:00:01,800\nhello there\n\n2\n00:00:03,400 --> 00:00:04,600\nhow are you\n\n"},
		{"minimum duration holds short captions", []recognizer.Utterance{words(0, 1, "hi", nil)},
			Config{MinimumDuration: 1, AudioDuration: 5}, "1\n00:00:01,000 --> 00:00:02,000\nhi\n\n"},
		{"minimum duration bounded by the audio", []recognizer.Utterance{words(0, 1, "hi", nil)},
			Config{MinimumDuration: 1, AudioDuration: 1.6}, "1\n00:00:00,600 --> 00:00:01,600\nhi\n\n"},
		{"balanced rows", []recognizer.Utterance{words(0, 0, "aaa bbb ccc ddd eee fff ggg", nil)},
			Config{MaximumCharactersPerRow: 20, MaximumDuration: 10},
			"1\n00:00:00,000 --> 00:00:02,800\naaa bbb ccc\nddd eee fff ggg\n\n"},
		{"over-long word gets its own row", []recognizer.Utterance{words(0, 0, "a "+long+" b", nil)},
			Config{MaximumCharactersPerRow: 10, MaximumRowsPerCaption: 3},
			"1\n00:00:00,000 --> 00:00:01,200\na\n" + long + "\nb\n\n"},
		{"does not end on an article", []recognizer.Utterance{words(0, 0, "we saw the big dog run", nil)},
			Config{MaximumCharactersPerRow: 10, MaximumRowsPerCaption: 1, MinimumDuration: 0.1},
			"1\n00:00:00,000 --> 00:00:00,800\nwe saw\n\n2\n00:00:00,800 --> 00:00:01,600\nthe big\n\n3\n00:00:01,600 --> 00:00:02,400\ndog run\n\n"},
		{"full caption ends at a pause", []recognizer.Utterance{words(0, 0, "one two three four five six", map[int]float64{3: 0.3})},
			Config{MaximumCharactersPerRow: 20, MaximumRowsPerCaption: 1, MinimumDuration: 0.1},
			"1\n00:00:00,000 --> 00:00:01,200\none two three\n\n2\n00:00:01,500 --> 00:00:02,700\nfour five six\n\n"},
		{"channels interleave, vtt escapes", []recognizer.Utterance{words(1, 0.5, "a<b", nil), words(0, 0, "x&y", nil)},
			Config{Formats: []string{"vtt"}, MinimumDuration: 0.1},
			"WEBVTT\n\n1\n00:00:00.000 --> 00:00:00.400\nx&amp;y\n\n2\n00:00:00.500 --> 00:00:00.900\na&lt;b\n\n"},
		{"empty transcript", nil, Config{Formats: []string{"vtt"}}, "WEBVTT\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Build(tc.utts, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if files[0].Subtitles != tc.want {
				t.Errorf("got\n%s\nwant\n%s", files[0].Subtitles, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		key  string
	}{
		{"format", Config{Formats: []string{"ass"}}, "formats"},
		{"duplicate format", Config{Formats: []string{"srt", "srt"}}, "formats"},
		{"minimum above maximum", Config{MinimumDuration: 8, MaximumDuration: 4}, "minimum_duration"},
		{"chars", Config{MaximumCharactersPerRow: 3}, "maximum_characters_per_row"},
		{"rows", Config{MaximumRowsPerCaption: 11}, "maximum_rows_per_caption"},
		{"style", Config{Style: "fancy"}, "style"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(nil, tc.c)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("got %v, want ErrInvalidConfig naming %s", err, tc.key)
			}
		})
	}
	var c Config
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}
