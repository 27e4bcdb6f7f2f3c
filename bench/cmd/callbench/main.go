// Command callbench measures conversational calls end to end (issue 41):
// two-party calls made of real speech, each leg one speaker, turns taking
// each other with gaps of 0.3-1.5 s and some overlap, sent at real time in
// RTP through the real SIP door of a real earshotd, as SIPREC (two labelled
// streams, the record's channels 0 and 1) or as plain calls (one stream,
// both legs mixed), in G.711 mu-law or G.722, with bursty packet loss,
// N calls at once. The utterances are shared/testdata's mono clips and the
// corpus's held-out readers (as livegap -corpus -held-out picks them).
//
// Per row it prints the WER of the live finals and of the stored record
// (after the batch pass), per channel, next to the same utterances
// uploaded one by one as pre-recorded clips in the same codec (the
// reference, decoded by the same daemon in the same run); the daemon's CPU
// seconds per call-second while the calls run (the live pass) and from
// the hang-ups until every record is final (the batch pass), from
// /proc/PID/stat; the live finals' latency (created_at of the final minus
// the wall time the utterance's audio ended at the sender) p50/p95; and
// the time from BYE to the final record, p50 and max.
//
//	go run ./bench/cmd/callbench [-speech DIR] [-corpus DIR] [-rows SUBSTR] [-n 2,4,8] [-before REV] [-dump DIR]
//
// Run from the repository root. It uses the SIP and RTP ports it picks
// (RTP 35000-35199), none of the fixed ports of the e2e doors.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// row is one measured condition.
type row struct {
	siprec bool
	codec  string
	loss   float64 // percent
	n      int
}

func (r row) String() string {
	mode := "plain"
	if r.siprec {
		mode = "SIPREC"
	}
	return fmt.Sprintf("%s %s %g%% N=%d", mode, r.codec, r.loss, r.n)
}

// dumpDir is -dump: where each call's diagnosis goes ("": none).
var dumpDir string

// rows is the default table.
var rows = []row{
	{true, "PCMU", 0, 2}, {true, "PCMU", 0, 4}, {true, "PCMU", 0, 8},
	{true, "PCMU", 1, 4}, {true, "PCMU", 3, 4},
	{true, "G722", 0, 4}, {true, "G722", 3, 4},
	{false, "PCMU", 0, 4}, {false, "G722", 0, 4},
}

func main() {
	speech := flag.String("speech", "../shared/testdata/speech", "speech test set")
	corpus := flag.String("corpus", "../shared/corpus", "corpus (its held-out readers are used)")
	only := flag.String("rows", "", "run only the rows whose name contains this (e.g. \"SIPREC PCMU 0%\")")
	ns := flag.String("n", "", "replace each row's N by these (comma separated)")
	maxSeconds := flag.Float64("max-seconds", 12, "longest utterance used")
	before := flag.String("before", "", "also measure the daemon of this git revision, first, on the same calls (a before/after table in one sitting)")
	flag.StringVar(&dumpDir, "dump", "", "diagnosis: write each call's recording, stored job, turns and lost packets to this directory (dumpCall)")
	flag.Parse()
	if err := run(*speech, *corpus, *only, *ns, *maxSeconds, *before); err != nil {
		fmt.Fprintln(os.Stderr, "callbench:", err)
		os.Exit(1)
	}
}

func run(speech, corpus, only, ns string, maxSeconds float64, before string) error {
	var todo []row
	for _, r := range rows {
		if !strings.Contains(r.String(), only) {
			continue
		}
		if ns == "" {
			todo = append(todo, r)
			continue
		}
		for _, f := range strings.Split(ns, ",") {
			r := r
			fmt.Sscan(f, &r.n)
			if !slices.Contains(todo, r) {
				todo = append(todo, r)
			}
		}
	}
	maxN := 0
	for _, r := range todo {
		maxN = max(maxN, r.n)
	}
	utts, err := loadUtts(speech, corpus, maxSeconds)
	if err != nil {
		return err
	}
	calls, err := buildCalls(utts, maxN)
	if err != nil {
		return err
	}
	sipAddr, err := freeAddr()
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf("live:\n  capacity: 64\n  max_sessions_per_account: 0\n  max_channels_per_account: 0\n  decoder_share: 1\n"+
		"sip:\n  listen: %s\n  rtp_ports: 35000-35199\n  allow: [127.0.0.0/8]\n  routes:\n    - user: bench\n      account: bench\n", sipAddr)
	if before != "" {
		src, err := checkout(before)
		if err != nil {
			return err
		}
		defer os.RemoveAll(src)
		fmt.Printf("Before: the daemon of %s.\n\n", before)
		if err := table(src, cfg, sipAddr, todo, calls); err != nil {
			return fmt.Errorf("before: %w", err)
		}
		fmt.Printf("\nAfter: the daemon of this checkout.\n\n")
	}
	return table(".", cfg, sipAddr, todo, calls)
}

// table starts the daemon of the checkout in src, measures every row on it
// and prints the table.
func table(src, cfg, sipAddr string, todo []row, calls []call) error {
	d, err := benchd.StartIn(src, cfg)
	if err != nil {
		return err
	}
	defer d.Stop()
	p, err := newPhone(sipAddr)
	if err != nil {
		return err
	}
	defer p.close()
	var secs, speechSecs float64
	for _, c := range calls {
		secs += c.seconds
		for _, t := range c.turns {
			speechSecs += t.end() - t.start
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("callbench %s: %d calls of %.0f s on average (%.0f %% of each leg speech), 4 utterances each, legs of %s; %d CPUs; load average at start %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(calls), secs/float64(len(calls)), 100*speechSecs/2/secs,
		"testdata's mono clips and the corpus's held-out readers", runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))

	refs := map[string]clipErrs{} // codec -> utterance -> word errors as a single clip
	fmt.Println("| calls | words | clip reference WER | clip as its file (frame phase 0) WER | live finals WER | record WER | record ch0 / ch1 | record − reference points | CPU s per call-s: live | batch | both | live final latency p50 / p95 ms | hang-up → record p50 / max s | packets lost | live segments on the lean search |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|---:|---:|")
	for _, r := range todo {
		if refs[r.codec].phased == nil {
			if refs[r.codec], err = reference(d, codecs[r.codec], calls); err != nil {
				return fmt.Errorf("reference %s: %w", r.codec, err)
			}
		}
		res, err := measure(d, p, r, calls[:r.n])
		if err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
		refErrs, fileErrs := 0, 0
		for _, c := range calls[:r.n] {
			for _, t := range c.turns {
				refErrs += refs[r.codec].phased[t.u]
				fileErrs += refs[r.codec].file[t.u]
			}
		}
		w := float64(max(res.words, 1))
		chans := "-"
		if r.siprec {
			chans = fmt.Sprintf("%.3f / %.3f", float64(res.recErrCh[0])/float64(max(res.wordsCh[0], 1)), float64(res.recErrCh[1])/float64(max(res.wordsCh[1], 1)))
		}
		slices.Sort(res.latency)
		slices.Sort(res.toRecord)
		fmt.Printf("| %s | %d | %.3f | %.3f | %.3f | %.3f | %s | %+.1f | %.3f | %.3f | %.3f | %.0f / %.0f | %.1f / %.1f | %.1f %% | %s |\n",
			r, res.words, float64(refErrs)/w, float64(fileErrs)/w, float64(res.liveErrs)/w, float64(res.recErrs)/w, chans, 100*float64(res.recErrs-refErrs)/w,
			res.liveCPU/res.callSecs, res.batchCPU/res.callSecs, (res.liveCPU+res.batchCPU)/res.callSecs,
			1000*pct(res.latency, 0.5), 1000*pct(res.latency, 0.95), pct(res.toRecord, 0.5), pct(res.toRecord, 1),
			100*float64(res.dropped)/float64(max(res.dropped+res.sent, 1)), leanShare(res))
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average at end %s\n", strings.Join(strings.Fields(string(load))[:3], " "))
	return nil
}

// checkout writes the tree of git revision rev to a temp dir (git archive:
// no worktree left registered) and returns the dir.
func checkout(rev string) (string, error) {
	dir, err := os.MkdirTemp("", "callbench-before-")
	if err != nil {
		return "", err
	}
	arch := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", rev, dir)
	if out, err := arch.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("checkout %s: %v %s", rev, err, out)
	}
	return dir, nil
}

// leanShare is how many live segments decoded on the lean search (the
// daemon's overload response, post_session_metadata.live_search), in how
// many calls.
func leanShare(r *result) string {
	if r.lean == 0 {
		return "0"
	}
	return fmt.Sprintf("%d in %d calls", r.lean, r.leanCalls)
}

// clipErrs is each utterance's word errors as a single clip.
type clipErrs struct {
	phased map[*utt]int // framed as in its call (turn.phase): the reference
	file   map[*utt]int // the file as it is (frame phase 0), as before 2026-11-30
}

// reference uploads every utterance of the calls as a single clip in
// codec k's rendition, two at a time, twice: framed as in its call and as
// the file is. PocketSphinx's words move with the frame phase (issue 41,
// bench/CALLS.md 2026-11-30: a clip of 24 words had 9, 13, 13 and 13
// errors 0, 20, 28 and 68 samples into its first 8 kHz frame), so only
// the phased clip is the same audio as the call's stretch; the file's
// column shows how far the phase alone moves a row.
func reference(d *benchd.Daemon, k codec, calls []call) (clipErrs, error) {
	type job struct {
		u      *utt
		pad    int
		phased bool
	}
	out := clipErrs{phased: map[*utt]int{}, file: map[*utt]int{}}
	var jobs []job
	for _, c := range calls {
		for _, t := range c.turns {
			jobs = append(jobs, job{t.u, t.phase(k.rate), true}, job{t.u, 0, false})
		}
	}
	texts := map[string]string{} // for the dump: each phased clip's words
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			audio, err := k.clipAudio(j.u, j.pad)
			if err == nil {
				var text string
				if _, text, err = d.PreRecorded(j.u.file+".wav", audio, 100*time.Millisecond, 5*time.Minute); err == nil {
					mu.Lock()
					errs := recognizertest.EditDistance(recognizertest.Normalize(j.u.transcript), recognizertest.Normalize(text))
					if j.phased {
						out.phased[j.u] = errs
						texts[j.u.file] = text
					} else {
						out.file[j.u] = errs
					}
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			first = cmpErr(first, fmt.Errorf("%s: %w", j.u.file, err))
			mu.Unlock()
		})
	}
	wg.Wait()
	if dumpDir != "" && first == nil {
		first = dumpReference(dumpDir, k, texts)
	}
	return out, first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// result is one row's measurements.
type result struct {
	words, liveErrs, recErrs int
	wordsCh, recErrCh        [2]int
	liveCPU, batchCPU        float64
	callSecs                 float64
	latency, toRecord        []float64 // seconds
	dropped, sent            int
	lean, leanCalls          int // live segments on the lean search (post_session_metadata.live_search), and the calls that had any
}

// measure places r.n calls at once, streams them, hangs up, and waits for
// every record.
func measure(d *benchd.Daemon, p *phone, r row, calls []call) (*result, error) {
	k := codecs[r.codec]
	type leg struct {
		payloads [][]byte
		drop     [][]bool
	}
	legs := make([]leg, len(calls))
	for i, c := range calls {
		streams := []int{0, 1}
		if !r.siprec {
			streams = []int{-1}
		}
		for _, s := range streams {
			enc, err := ffmpeg(c.legPCM(s, k.rate), k.rate, k.args...)
			if err != nil {
				return nil, err
			}
			legs[i].payloads = append(legs[i].payloads, enc)
			legs[i].drop = append(legs[i].drop, losses(len(enc)/k.frame+1, r.loss/100, uint64(100*i+s+1)))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res := &result{}
	type done struct {
		callID  string
		t0, bye time.Time
		err     error
	}
	dones := make([]done, len(calls))
	cpu0 := d.CPUSeconds()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range calls {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 150 * time.Millisecond) // calls not in phase
			pc, err := p.place(ctx, len(legs[i].payloads), k, r.siprec)
			if err != nil {
				dones[i].err = err
				return
			}
			t0 := time.Now()
			dr, se := pc.stream(t0, k, legs[i].payloads, legs[i].drop)
			bye := time.Now()
			err = pc.hangup(ctx)
			mu.Lock()
			res.dropped += dr
			res.sent += se
			mu.Unlock()
			dones[i] = done{pc.callID, t0, bye, err}
		})
	}
	wg.Wait()
	cpu1 := d.CPUSeconds()
	for _, dn := range dones {
		if dn.err != nil {
			return nil, dn.err
		}
	}
	// Every record, polled together: the time each became final.
	recs := make([]map[string]any, len(calls))
	final := make([]time.Time, len(calls))
	deadline := time.Now().Add(5 * time.Minute)
	for left := len(calls); left > 0; {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d records not final after 5 minutes", left)
		}
		for i, dn := range dones {
			if recs[i] != nil {
				continue
			}
			job, err := jobByCall(d, dn.callID)
			if err != nil {
				return nil, err
			}
			if job == nil {
				continue
			}
			md, _ := job["post_session_metadata"].(map[string]any)
			switch {
			case md["transcription_pass"] == "batch":
				recs[i], final[i] = job, time.Now()
				left--
			case job["status"] == "error" || (md["batch_pass"] != nil && md["batch_pass"] != "pending"):
				return nil, fmt.Errorf("call %d: status %v, batch pass %v %v", i, job["status"], md["batch_pass"], md["batch_pass_error"])
			}
		}
		time.Sleep(200 * time.Millisecond) // polling a real process
	}
	res.liveCPU, res.batchCPU = cpu1-cpu0, d.CPUSeconds()-cpu1
	if dumpDir != "" {
		for i, c := range calls {
			if err := dumpCall(d, dumpDir, r, i, c, recs[i], legs[i].drop); err != nil {
				return nil, fmt.Errorf("dump call %d: %w", i, err)
			}
		}
	}
	for i, c := range calls {
		res.callSecs += c.seconds
		res.toRecord = append(res.toRecord, final[i].Sub(dones[i].bye).Seconds())
		legsOf := []int{0, 1}
		if !r.siprec {
			legsOf = []int{-1}
		}
		finals := finalsOf(recs[i])
		md, _ := recs[i]["post_session_metadata"].(map[string]any)
		if ls, _ := md["live_search"].(string); ls != "" {
			var lean int
			fmt.Sscanf(ls, "lean in %d", &lean)
			res.lean += lean
			res.leanCalls++
		}
		for _, leg := range legsOf {
			ch := max(leg, 0)
			ref := recognizertest.Normalize(c.reference(leg))
			var live []string
			for _, f := range finals {
				if f.Channel == ch {
					live = append(live, f.Text)
					if end := c.turnEnd(leg, f.Start, f.End); end > 0 {
						res.latency = append(res.latency, f.at.Sub(dones[i].t0).Seconds()-end)
					}
				}
			}
			res.words += len(ref)
			res.liveErrs += recognizertest.EditDistance(ref, recognizertest.Normalize(strings.Join(live, " ")))
			e := recognizertest.EditDistance(ref, recognizertest.Normalize(channelText(recs[i], ch)))
			res.recErrs += e
			res.wordsCh[ch] += len(ref)
			res.recErrCh[ch] += e
		}
	}
	return res, nil
}

// turnEnd is the moment (call time) the final of [start, end] on leg had
// its last audio sent: the end of the latest turn of leg it overlaps, or
// the final's own end when that is earlier (a turn cut into several
// finals). 0 when the final overlaps no turn. On a plain call's one mixed
// channel a final may hold the end of one turn and the start of the next
// (turns overlap, and a clip's trailing silence runs into the next turn);
// before 2026-11-29 its latency was counted from the first turn's end,
// which added the next turn's length: the plain rows' p95 of ~3 s were
// that, not late finals.
func (c call) turnEnd(leg int, start, end float64) float64 {
	last := 0.0
	for _, t := range c.turns {
		if (leg < 0 || t.leg == leg) && start < t.end() && end > t.start {
			last = max(last, min(end, t.end()))
		}
	}
	return last
}

// final is a live final transcript of a record's result.messages.
type final struct {
	Text       string
	Channel    int
	Start, End float64
	at         time.Time
}

func finalsOf(job map[string]any) []final {
	res, _ := job["result"].(map[string]any)
	msgs, _ := res["messages"].([]any)
	var out []final
	for _, m := range msgs {
		s, _ := m.(string)
		var msg struct {
			Type      string `json:"type"`
			CreatedAt string `json:"created_at"`
			Data      struct {
				IsFinal   bool `json:"is_final"`
				Utterance struct {
					Text    string  `json:"text"`
					Channel int     `json:"channel"`
					Start   float64 `json:"start"`
					End     float64 `json:"end"`
				} `json:"utterance"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(s), &msg) != nil || msg.Type != "transcript" || !msg.Data.IsFinal {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, msg.CreatedAt)
		u := msg.Data.Utterance
		out = append(out, final{Text: u.Text, Channel: u.Channel, Start: u.Start, End: u.End, at: at})
	}
	return out
}

// channelText is the stored record's text of one channel.
func channelText(job map[string]any, ch int) string {
	res, _ := job["result"].(map[string]any)
	tr, _ := res["transcription"].(map[string]any)
	utts, _ := tr["utterances"].([]any)
	var words []string
	for _, u := range utts {
		m, _ := u.(map[string]any)
		if c, _ := m["channel"].(float64); int(c) == ch {
			t, _ := m["text"].(string)
			words = append(words, t)
		}
	}
	return strings.Join(words, " ")
}

// jobByCall is the call's live job once it is done or error (nil before).
func jobByCall(d *benchd.Daemon, callID string) (map[string]any, error) {
	var page struct {
		Items []struct{ ID, Status string } `json:"items"`
	}
	if err := d.Call("GET", "/v2/live?custom_metadata[sip_call_id]="+url.QueryEscape(callID), d.Key, "", 200, &page); err != nil {
		return nil, err
	}
	if len(page.Items) != 1 || (page.Items[0].Status != "done" && page.Items[0].Status != "error") {
		return nil, nil
	}
	var job map[string]any
	err := d.Call("GET", "/v2/live/"+page.Items[0].ID, d.Key, "", 200, &job)
	return job, err
}

// freeAddr is a loopback address free for both UDP and TCP just now.
func freeAddr() (string, error) {
	for range 20 {
		u, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := u.LocalAddr().String()
		tc, err := net.Listen("tcp", addr)
		u.Close()
		if err == nil {
			tc.Close()
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free port for the SIP door")
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(p*float64(len(v))))]
}
