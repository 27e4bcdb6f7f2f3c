package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetrics: after a known set of requests (an upload, three jobs of
// which one fails, a 400, a 404, one live session, a callback) /metrics
// holds exactly those counts: every request the test made under its route
// pattern and status, jobs by kind and status, an empty queue, the live
// gauge back to 0 and its counter at 1, the decoder pool idle, one
// real-time factor sample per transcribed job, the callback delivered and
// the outbox empty, and no SIP series while the SIP door is off. The
// config also proves fetch.deny and the precedence of flags over
// EARSHOT_* variables.
func TestMetrics(t *testing.T) {
	// A WAV server on 127.0.0.1, which fetch.deny below refuses: the job
	// that points at it fails at dial time, though the server would answer.
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	audioHits := make(chan struct{}, 10)
	audioSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audioHits <- struct{}{}
		w.Write(wav)
	}))
	defer audioSrv.Close()
	hooks := make(chan string, 10)
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- string(b)
	}))
	defer hookSrv.Close()

	// The harness passes --decoders 2: the flag beats the variable.
	t.Setenv("EARSHOT_SPHINX_DECODERS", "1")
	// Callbacks obey fetch.deny too: callbacks.allow lets them reach the
	// hook server on the same loopback address the audio server is denied.
	// The pools filled as the shipped daemon fills them: the test counts them.
	d := startDaemon(t, "", "fetch:\n  deny: [127.0.0.0/8]\ncallbacks:\n  allow: [127.0.0.1/32]\n", warmPools...)
	key := createKey(t, d.DataDir, "acme")

	type series struct{ method, route, status string }
	sent := map[series]int{} // every request this test makes
	do := func(method, route, path string, body any) (int, []byte) {
		t.Helper()
		var status int
		var b []byte
		if body != nil {
			status, b = d.postJSON(path, key, body, nil)
		} else {
			status, b = d.do(method, path, key, nil, "", nil)
		}
		sent[series{method, route, fmt.Sprint(status)}]++
		return status, b
	}
	scrape := func() map[string]*dto.MetricFamily {
		t.Helper()
		status, b := d.do("GET", "/metrics", "", nil, "", nil)
		sent[series{"GET", "/metrics", fmt.Sprint(status)}]++
		if status != 200 {
			t.Fatalf("GET /metrics: %d %s", status, b)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("parse /metrics: %v\n%s", err, b)
		}
		return fams
	}
	waitJob := func(id string) string {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			var rec map[string]any
			status, b := d.do("GET", "/v2/pre-recorded/"+id, key, nil, "", &rec)
			sent[series{"GET", "/v2/pre-recorded/{id}", fmt.Sprint(status)}]++
			if status != 200 {
				t.Fatalf("GET job: %d %s", status, b)
			}
			if s, _ := rec["status"].(string); s == "done" || s == "error" {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s still %v", id, rec["status"])
			}
			time.Sleep(100 * time.Millisecond) // polling interval against a real process
		}
	}

	status, up, b := d.upload(key, path)
	sent[series{"POST", "/v2/upload", fmt.Sprint(status)}]++
	if status != 200 {
		t.Fatalf("upload: %d %s", status, b)
	}
	var ids []string
	for _, body := range []map[string]any{
		{"audio_url": up.AudioURL},
		{"audio_url": up.AudioURL, "callback": true, "callback_config": map[string]any{"url": hookSrv.URL + "/hook"}},
		{"audio_url": audioSrv.URL + "/speech.wav"}, // denied by fetch.deny
	} {
		var j struct{ ID string }
		status, b := d.postJSON("/v2/pre-recorded", key, body, &j)
		sent[series{"POST", "/v2/pre-recorded", fmt.Sprint(status)}]++
		if status != 201 {
			t.Fatalf("POST /v2/pre-recorded: %d %s", status, b)
		}
		ids = append(ids, j.ID)
	}
	if status, b := do("POST", "/v2/pre-recorded", "/v2/pre-recorded", map[string]any{"audio_url": up.AudioURL, "diarization": "yes"}); status != 400 {
		t.Fatalf("bad request: %d %s", status, b)
	}
	if status, _ := do("GET", "unmatched", "/v2/nothing-here", nil); status != 404 {
		t.Fatalf("GET /v2/nothing-here: %d", status)
	}
	for i, want := range []string{"done", "done", "error"} {
		if got := waitJob(ids[i]); got != want {
			t.Errorf("job %d: %s, want %s", i, got, want)
		}
	}
	d.WaitLog(10*time.Second, ids[2], "denied range 127.0.0.0/8")
	if n := len(audioHits); n != 0 {
		t.Errorf("the denied audio_url was fetched %d times", n)
	}

	var s liveSession
	status, b = d.postJSON("/v2/live", key, map[string]any{}, &s)
	sent[series{"POST", "/v2/live", fmt.Sprint(status)}]++
	if status != 201 {
		t.Fatalf("POST /v2/live: %d %s", status, b)
	}
	if _, code := runSession(t, s.URL, pcmOf(t, path), 32, 0); code != 1000 {
		t.Fatalf("live close code %d", code)
	}
	sent[series{"GET", "/v2/live", "101"}]++ // the WebSocket upgrade

	select {
	case body := <-hooks:
		if !strings.Contains(body, ids[1]) {
			t.Errorf("callback for another job: %.200s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no callback within 30s")
	}

	// The live gauge and the outbox settle just after the session's close
	// and the callback's answer, the decoders after the session's batch
	// pass, the background decoder loads of the fresh daemon too: poll until
	// they do (bounded).
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(time.Minute); ; {
		fams = scrape()
		if value(fams, "earshot_live_sessions", nil) == 0 && value(fams, "earshot_callback_outbox_depth", nil) == 0 &&
			value(fams, "earshot_callback_attempts_total", map[string]string{"outcome": "delivered"}) == 1 &&
			value(fams, "earshot_batch_passes_pending", nil) == 0 && value(fams, "earshot_decoders_loading", nil) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live sessions %v, outbox %v, delivered %v, batch passes %v, decoders loading %v after 1m", value(fams, "earshot_live_sessions", nil),
				value(fams, "earshot_callback_outbox_depth", nil), value(fams, "earshot_callback_attempts_total", map[string]string{"outcome": "delivered"}),
				value(fams, "earshot_batch_passes_pending", nil), value(fams, "earshot_decoders_loading", nil))
		}
		time.Sleep(100 * time.Millisecond) // polling interval against a real process
	}
	// The last scrape is counted once it is answered: scrape once more so
	// the counts below include every request made.
	fams = scrape()
	sent[series{"GET", "/metrics", "200"}]-- // this very scrape is not in its own answer

	t.Run("requests by route and status", func(t *testing.T) {
		got := map[series]int{}
		for _, m := range family(t, fams, "earshot_http_requests_total").GetMetric() {
			l := labels(m)
			got[series{l["method"], l["route"], l["status"]}] = int(m.GetCounter().GetValue())
		}
		for k, n := range sent {
			if got[k] != n {
				t.Errorf("%s %s %s: %d, want %d", k.method, k.route, k.status, got[k], n)
			}
		}
		for k, n := range got {
			if _, ok := sent[k]; !ok {
				t.Errorf("%s %s %s: %d requests the test did not make", k.method, k.route, k.status, n)
			}
		}
	})
	t.Run("jobs", func(t *testing.T) {
		for _, c := range []struct {
			name         string
			kind, status string
			want         float64
		}{
			{"earshot_jobs", "pre-recorded", "done", 2},
			{"earshot_jobs", "pre-recorded", "error", 1},
			{"earshot_jobs", "pre-recorded", "queued", 0},
			{"earshot_jobs", "pre-recorded", "processing", 0},
			{"earshot_jobs", "live", "done", 1},
			{"earshot_jobs", "live", "error", 0},
			{"earshot_jobs", "live", "queued", 0},
			{"earshot_jobs_finished_total", "pre-recorded", "done", 2},
			{"earshot_jobs_finished_total", "pre-recorded", "error", 1},
			{"earshot_jobs_finished_total", "live", "done", 1},
		} {
			if got := value(fams, c.name, map[string]string{"kind": c.kind, "status": c.status}); got != c.want {
				t.Errorf("%s{kind=%s,status=%s} = %v, want %v", c.name, c.kind, c.status, got, c.want)
			}
		}
		if got := value(fams, "earshot_queue_depth", nil); got != 0 {
			t.Errorf("earshot_queue_depth = %v", got)
		}
	})
	t.Run("live sessions", func(t *testing.T) {
		if got := value(fams, "earshot_live_sessions", nil); got != 0 {
			t.Errorf("earshot_live_sessions = %v, want 0", got)
		}
		if got := value(fams, "earshot_live_sessions_total", nil); got != 1 {
			t.Errorf("earshot_live_sessions_total = %v, want 1", got)
		}
		// The session's decoding on the full search (startDaemon turns
		// the lean one off), and the lean series there at 0.
		full := value(fams, "earshot_live_segments_total", map[string]string{"search": "full"})
		lean := value(fams, "earshot_live_segments_total", map[string]string{"search": "lean"})
		if full < 1 || lean != 0 {
			t.Errorf("earshot_live_segments_total full %v, lean %v; want at least 1 and 0", full, lean)
		}
	})
	t.Run("decoder pools", func(t *testing.T) {
		// The wideband pool (--decoders 2 over EARSHOT_SPHINX_DECODERS=1)
		// and its live pool (4 x 2), loaded; no telephone model here.
		for _, c := range []struct {
			pool string
			idle float64
		}{{"wideband", 2}, {"live", 8}, {"telephone", -1}} {
			busy := value(fams, "earshot_decoders", map[string]string{"pool": c.pool, "state": "busy"})
			idle := value(fams, "earshot_decoders", map[string]string{"pool": c.pool, "state": "idle"})
			want := 0.0
			if c.idle < 0 {
				want = -1 // no series
			}
			if busy != want || idle != c.idle {
				t.Errorf("%s pool: decoders busy %v idle %v, want %v and %v", c.pool, busy, idle, want, c.idle)
			}
		}
		// GET /v2/engines lists the same pools on the embedded engine.
		var engines struct {
			Engines []struct {
				Name  string
				Pools []struct {
					Name           string
					AcousticModel  string `json:"acoustic_model"`
					Decoders, Busy int
				}
			}
		}
		if status, body := d.do("GET", "/v2/engines", key, nil, "", &engines); status != 200 || len(engines.Engines) != 1 {
			t.Fatalf("GET /v2/engines: %d %s", status, body)
		}
		got := fmt.Sprintf("%+v", engines.Engines[0].Pools)
		if want := "[{Name:wideband AcousticModel:en-us Decoders:2 Busy:0} {Name:live AcousticModel:en-us Decoders:8 Busy:0}]"; got != want {
			t.Errorf("GET /v2/engines: sphinx pools %s, want %s", got, want)
		}
	})
	t.Run("real-time factor", func(t *testing.T) {
		ms := family(t, fams, "earshot_real_time_factor").GetMetric()
		if len(ms) != 1 {
			t.Fatalf("%d series", len(ms))
		}
		h := ms[0].GetHistogram()
		if h.GetSampleCount() != 2 || h.GetSampleSum() <= 0 {
			t.Errorf("count %d sum %v, want 2 samples (the transcribed jobs) with a positive sum", h.GetSampleCount(), h.GetSampleSum())
		}
	})
	t.Run("callbacks", func(t *testing.T) {
		if got := value(fams, "earshot_callback_outbox_depth", nil); got != 0 {
			t.Errorf("outbox depth %v", got)
		}
		for _, m := range family(t, fams, "earshot_callback_attempts_total").GetMetric() {
			if o := labels(m)["outcome"]; o != "delivered" && m.GetCounter().GetValue() != 0 {
				t.Errorf("callback attempts %s = %v, want 0", o, m.GetCounter().GetValue())
			}
		}
	})
	t.Run("no SIP series while SIP is off", func(t *testing.T) {
		for name := range fams {
			if strings.Contains(name, "sip") || strings.Contains(name, "rtp") {
				t.Errorf("%s present with the SIP door off", name)
			}
		}
	})
}

// TestMetricsSIPDoor: with the SIP door on, /metrics has earshot_sip_calls
// (0: no call placed).
func TestMetricsSIPDoor(t *testing.T) {
	d := startDaemon(t, "", "sip:\n  listen: 127.0.0.1:0\n  rtp_ports: 31400-31409\n  max_calls: 2\n  allow: [127.0.0.0/8]\n")
	status, b := d.do("GET", "/metrics", "", nil, "", nil)
	if status != 200 {
		t.Fatalf("GET /metrics: %d", status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got := value(fams, "earshot_sip_calls", nil); got != 0 {
		t.Errorf("earshot_sip_calls = %v, want 0 (-1: absent)", got)
	}
}

// metric scrapes /metrics and returns the value of the unlabelled series
// name, -1 when it is absent.
func (d *daemonProc) metric(name string) float64 {
	d.t.Helper()
	status, b := d.do("GET", "/metrics", "", nil, "", nil)
	if status != 200 {
		d.t.Fatalf("GET /metrics: %d", status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		d.t.Fatal(err)
	}
	return value(fams, name, nil)
}

// family returns the named family or fails.
func family(t *testing.T, fams map[string]*dto.MetricFamily, name string) *dto.MetricFamily {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("/metrics has no %s", name)
	}
	return f
}

// value is the value of the series of name whose labels include want; -1
// when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
	for _, m := range f.GetMetric() {
		l := labels(m)
		match := true
		for k, v := range want {
			match = match && l[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		}
	}
	return -1
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
