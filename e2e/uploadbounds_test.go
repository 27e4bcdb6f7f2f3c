package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// silentWAV writes dur of 8-bit PCM silence at rate Hz on channels
// channels (the hostile probe's shape: tiny on disk, hours of audio) and
// returns its path.
func silentWAV(t *testing.T, rate, channels int, dur time.Duration) string {
	t.Helper()
	data := int64(dur.Seconds()*float64(rate)) * int64(channels)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("silence-%dch-%dHz-%s.wav", channels, rate, dur))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	le := binary.LittleEndian
	h := []byte("RIFF")
	h = le.AppendUint32(h, uint32(36+data))
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, 16)
	h = le.AppendUint16(h, 1) // PCM
	h = le.AppendUint16(h, uint16(channels))
	h = le.AppendUint32(h, uint32(rate))
	h = le.AppendUint32(h, uint32(rate*channels)) // bytes per second
	h = le.AppendUint16(h, uint16(channels))      // block align
	h = le.AppendUint16(h, 8)
	h = append(h, "data"...)
	h = le.AppendUint32(h, uint32(data))
	w.Write(h)
	silence := bytes.Repeat([]byte{0x80}, 1<<20) // unsigned 8-bit zero
	for left := data; left > 0; left -= int64(len(silence)) {
		w.Write(silence[:min(left, int64(len(silence)))])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// uploadFile sends the file at path to /v2/upload as the multipart field
// "audio", streaming it from disk (the big files of these tests are not
// read into memory), and returns the status and body.
func (d *daemonProc) uploadFile(key, path string) (int, []byte) {
	d.t.Helper()
	f, err := os.Open(path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("audio", filepath.Base(path)); err != nil {
		d.t.Fatal(err)
	}
	prefix := bytes.Clone(head.Bytes())
	head.Reset()
	mw.Close()
	return d.do("POST", "/v2/upload", key, io.MultiReader(bytes.NewReader(prefix), f, &head), mw.FormDataContentType(), nil)
}

// procStatusBytes reads a kB field of /proc/<pid>/status (VmHWM, VmRSS).
func procStatusBytes(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// resetPeakRSS resets the peak RSS of process pid (VmHWM, by writing 5 to
// /proc/<pid>/clear_refs) and returns its RSS then, so that a later VmHWM
// measures what happened since.
func resetPeakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("reset peak RSS: %v", err)
	}
	return procStatusBytes(t, pid, "VmRSS")
}

// Bounds of TestUploadAudioBounds (audio decodes to 16 kHz 16-bit per
// channel, 115.2 MB per channel-hour).
const (
	probeDuration = 3*time.Hour + 59*time.Minute // the probe's 8-channel file
	// maxJobGrowth bounds what a refused file may add to the daemon's
	// peak RSS: a fraction of the 3.7 GB its audio decodes to.
	maxJobGrowth = 300 << 20
	// defaultMaxDecodedBytes is limits.max_decoded_bytes' default (README,
	// Limits and quotas): 2 channels of 4h.
	defaultMaxDecodedBytes = 921_600_000
)

// TestUploadAudioBounds is finding 3 of issue 43: one upload could take
// gigabytes of memory. Audio over limits.max_audio_duration, over 8
// channels, or whose channels × duration would decode to more than
// limits.max_decoded_bytes (default: 2 channels of max_audio_duration) is
// refused when stored, with 413 and a message naming audio, and is not
// charged to the account's quota; the same audio fetched from an
// audio_url ends its job as error 413 before it is decoded, so the
// probe's 8-channel 4-hour file no longer takes the daemon's peak RSS up
// by 3.7 GB. A 2-channel file of the full 4 hours is still taken, and its
// job's peak memory stays near the bound.
func TestUploadAudioBounds(t *testing.T) {
	tenHours := silentWAV(t, 1000, 1, 10*time.Hour) // 36 MB
	nine := silentWAV(t, 1000, 9, 10*time.Second)   // 90 KB
	eight := silentWAV(t, 1000, 8, probeDuration)   // 115 MB
	callOf4h := silentWAV(t, 1000, 2, 4*time.Hour)  // 28.8 MB
	st, err := os.Stat(eight)
	if err != nil {
		t.Fatal(err)
	}
	// Room for the biggest file once, not twice: a refused upload that was
	// charged makes its second try a 507.
	quota := st.Size() * 3 / 2
	d := startDaemon(t, "", fmt.Sprintf("limits:\n  max_account_bytes: %d\n  requests_per_second: 0\n", quota))
	key := createKey(t, d.DataDir, "acme")
	other := createKey(t, d.DataDir, "globex") // its quota untouched by the uploads
	waitLoaded(t, d)
	pid := d.cmd.Process.Pid
	rss0 := resetPeakRSS(t, pid)
	t.Logf("daemon VmRSS %d MB before the files", rss0>>20)

	refused := []struct {
		name, path, mention string
	}{
		{"10 hours", tenHours, "longer than"},
		{"9 channels", nine, "channels"},
		{"8 channels of 3h59m", eight, "channels"},
	}
	t.Run("uploads refused when stored", func(t *testing.T) {
		before := blobFiles(t, d.DataDir)
		for _, c := range refused {
			for try := 1; try <= 2; try++ {
				status, body := d.uploadFile(key, c.path)
				var eb errBody
				json.Unmarshal(body, &eb)
				checkError(t, status, eb, 413, c.name)
				if !strings.HasPrefix(eb.Message, "audio: ") || !strings.Contains(eb.Message, c.mention) {
					t.Errorf("%s (try %d): message %q, want one naming audio and %q", c.name, try, eb.Message, c.mention)
				}
			}
		}
		if got := blobFiles(t, d.DataDir); !slices.Equal(got, before) {
			t.Errorf("refused uploads left files: %v, before %v", got, before)
		}
	})

	t.Run("fetched audio_url refused before decoding", func(t *testing.T) {
		served := map[string]string{}
		for _, c := range refused {
			served["/"+filepath.Base(c.path)] = c.path
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			path, ok := served[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			http.ServeFile(w, r, path)
		}))
		defer srv.Close()
		for _, c := range refused {
			var j struct{ ID string }
			if status, body := d.postJSON("/v2/pre-recorded", other, map[string]any{"audio_url": srv.URL + "/" + filepath.Base(c.path)}, &j); status != 201 {
				t.Fatalf("create %s: %d %s", c.name, status, body)
			}
			rec := d.waitJob(other, j.ID, 10*time.Minute)
			msg, _ := rec["post_session_metadata"].(map[string]any)["error"].(string)
			if rec["status"] != "error" || rec["error_code"] != 413.0 || !strings.HasPrefix(msg, "audio: ") || !strings.Contains(msg, c.mention) {
				t.Errorf("fetched %s: %v %v %q, want error 413 naming audio and %q", c.name, rec["status"], rec["error_code"], msg, c.mention)
			}
		}
		hwm := procStatusBytes(t, pid, "VmHWM")
		t.Logf("daemon VmHWM %d MB after the files (+%d MB)", hwm>>20, (hwm-rss0)>>20)
		if hwm-rss0 > maxJobGrowth {
			t.Errorf("daemon peak RSS grew by %d MB, want under %d MB", (hwm-rss0)>>20, maxJobGrowth>>20)
		}
	})

	t.Run("a 2-channel call of the full duration is taken", func(t *testing.T) {
		status, body := d.uploadFile(key, callOf4h)
		var up uploadResponse
		json.Unmarshal(body, &up)
		if status != 200 || up.AudioMetadata.NumberOfChannels != 2 || up.AudioMetadata.AudioDuration != 4*3600 {
			t.Fatalf("2 channels of 4h: %d %.300s", status, body)
		}
		// Its job runs, and takes about its decoded audio (921.6 MB) more.
		var j struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL}, &j); status != 201 {
			t.Fatalf("job of 2 channels of 4h: %d %s", status, body)
		}
		start, rss := time.Now(), resetPeakRSS(t, pid)
		rec := d.waitJob(key, j.ID, 10*time.Minute)
		hwm := procStatusBytes(t, pid, "VmHWM")
		t.Logf("2 channels of 4h: job %v in %s, daemon VmHWM %d MB (+%d MB)", rec["status"], time.Since(start).Round(time.Second), hwm>>20, (hwm-rss)>>20)
		if rec["status"] != "done" {
			t.Errorf("job of 2 channels of 4h ended %v %v", rec["status"], rec["post_session_metadata"])
		}
		if limit := int64(defaultMaxDecodedBytes * 5 / 4); hwm-rss > limit {
			t.Errorf("daemon peak RSS grew by %d MB for a job within limits.max_decoded_bytes, want under %d MB", (hwm-rss)>>20, limit>>20)
		}
	})
}
