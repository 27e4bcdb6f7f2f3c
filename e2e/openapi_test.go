package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
)

// TestOpenAPI serves the document, validates it as OpenAPI 3.1 with a
// maintained validator, and checks the real answers of every endpoint
// (success and errors) against it: every field of an answer is documented
// and every documented required field is there.
func TestOpenAPI(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	admin := createKey(t, d.DataDir, "admin")

	file, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	status, served := d.do("GET", "/v2/openapi.json", "", nil, "", nil)
	if status != 200 || !bytes.Equal(served, file) {
		t.Fatalf("GET /v2/openapi.json without a key: %d, %d bytes; want 200 and %s (%d bytes)", status, len(served), openAPIFile, len(file))
	}
	t.Run("valid OpenAPI 3.1", func(t *testing.T) { validateOpenAPI(t, served) })
	a := loadAPIDoc(t, served)
	a.call(t, d, "GET /v2/openapi.json", "/v2/openapi.json", "", nil, "")

	t.Run("operations", func(t *testing.T) {
		a.call(t, d, "GET /healthz", "/healthz", "", nil, "")
		a.call(t, d, "GET /readyz", "/readyz", "", nil, "")
		a.call(t, d, "GET /metrics", "/metrics", "", nil, "")
	})

	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct {
			route, path, key, body string
			want                   int
		}{
			{"GET /v2/engines", "/v2/engines", "", "", 401},
			{"GET /v2/pre-recorded", "/v2/pre-recorded?limit=0", key, "", 400},
			{"POST /v2/pre-recorded", "/v2/pre-recorded", key, `{"audio_url":7}`, 400},
			{"POST /v2/pre-recorded", "/v2/pre-recorded", key, `{"audio_url":"ftp://x/y.wav"}`, 422},
			{"GET /v2/pre-recorded/{id}", "/v2/pre-recorded/00000000-0000-4000-8000-000000000000", key, "", 404},
			{"DELETE /v2/transcription/{id}", "/v2/transcription/not-an-id", key, "", 403},
			{"GET /v2/files/{id}", "/v2/files/nope", key, "", 404},
			{"POST /v2/upload", "/v2/upload", key, "x", 400},
			{"POST /v2/live", "/v2/live", key, `{"model":"model-3"}`, 422},
			{"POST /v2/live", "/v2/live", key, `{"sample_rate":11025}`, 400},
			{"GET /v2/live/{id}", "/v2/live/00000000-0000-4000-8000-000000000000", key, "", 404},
			{"POST /admin/keys", "/admin/keys", key, `{"account":"x"}`, 403},
			{"POST /admin/keys", "/admin/keys", admin, `{"account":7}`, 400},
			{"DELETE /admin/keys/{id}", "/admin/keys/000000000000", admin, "", 404},
		} {
			method, _, _ := strings.Cut(c.route, " ")
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			ctype := ""
			if method == "POST" {
				ctype = "application/json"
			}
			if got, b := a.call(t, d, c.route, c.path, c.key, body, ctype); got != c.want {
				t.Errorf("%s %s: %d %s, want %d", method, c.path, got, b, c.want)
			}
		}
		if got, _ := a.call(t, d, "POST /v2/live/{id}/whip", "/v2/live/x/whip", "", strings.NewReader("v=0"), "text/plain"); got != 415 {
			t.Errorf("WHIP offer as text/plain: %d, want 415", got)
		}
		if got, _ := a.call(t, d, "POST /v2/live/{id}/whip", "/v2/live/x/whip", "", strings.NewReader("v=0"), "application/sdp"); got != 401 {
			t.Errorf("WHIP offer without a bearer: %d, want 401", got)
		}
		if got, _ := a.call(t, d, "PATCH /v2/live/{id}/whip/{resource}", "/v2/live/x/whip/y", "", nil, ""); got != 405 {
			t.Errorf("WHIP PATCH: %d, want 405", got)
		}
		if got, _ := a.call(t, d, "OPTIONS /v2/live/{id}/whip", "/v2/live/x/whip", "", nil, "", "Access-Control-Request-Method", "POST", "Origin", "http://example.com"); got != 204 {
			t.Errorf("WHIP OPTIONS: %d, want 204", got)
		}
	})

	t.Run("files and pre-recorded", func(t *testing.T) {
		a.call(t, d, "GET /v2/engines", "/v2/engines", key, nil, "")
		path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("audio", filepath.Base(path))
		audio, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(audio)
		mw.Close()
		status, b := a.call(t, d, "POST /v2/upload", "/v2/upload", key, &buf, mw.FormDataContentType())
		var up uploadResponse
		if status != 200 || json.Unmarshal(b, &up) != nil {
			t.Fatalf("upload: %d %s", status, b)
		}
		fileID := up.AudioMetadata.ID
		a.call(t, d, "GET /v2/files/{id}", "/v2/files/"+fileID, key, nil, "")

		// Every add-on, so each envelope's shape is checked (those without
		// a backend answer their NotConfigured envelope).
		req := map[string]any{
			"audio_url": up.AudioURL, "custom_metadata": map[string]any{"case": "openapi"},
			"sentences": true, "subtitles": true, "subtitles_config": map[string]any{"formats": []string{"srt", "vtt"}},
			"diarization": true, "summarization": true, "named_entity_recognition": true, "sentiment_analysis": true,
			"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}},
			"audio_to_llm": true, "audio_to_llm_config": map[string]any{"prompts": []string{"Who speaks?"}},
			"pii_redaction": true, "custom_spelling": true, "custom_spelling_config": map[string]any{"spelling_dictionary": map[string]any{"Stew": []string{"stew"}}},
			"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []any{"turnips", map[string]any{"value": "mutton", "intensity": 0.5}}},
			"language_config": map[string]any{"languages": []string{"en"}},
		}
		status, b = a.call(t, d, "POST /v2/pre-recorded", "/v2/pre-recorded", key, jsonBody(req), "application/json")
		var created struct{ ID string }
		if status != 201 || json.Unmarshal(b, &created) != nil {
			t.Fatalf("POST /v2/pre-recorded: %d %s", status, b)
		}
		if rec := d.waitJob(key, created.ID, 3*time.Minute); rec["status"] != "done" {
			t.Fatalf("job ended %v: %v", rec["status"], rec)
		}
		a.call(t, d, "GET /v2/pre-recorded/{id}", "/v2/pre-recorded/"+created.ID, key, nil, "")
		other := createKey(t, d.DataDir, "other")
		if got, _ := a.call(t, d, "GET /v2/pre-recorded/{id}", "/v2/pre-recorded/"+created.ID, other, nil, ""); got != 401 {
			t.Errorf("another account's job: %d, want 401", got)
		}
		a.call(t, d, "GET /v2/pre-recorded", "/v2/pre-recorded?limit=5&status=done", key, nil, "")
		a.call(t, d, "GET /v2/pre-recorded/{id}/file", "/v2/pre-recorded/"+created.ID+"/file", key, nil, "")
		// A job that fails (its audio_url answers JSON, not audio): the
		// record of status error.
		status, b = a.call(t, d, "POST /v2/pre-recorded", "/v2/pre-recorded", key, jsonBody(map[string]any{"audio_url": d.Base + "/healthz"}), "application/json")
		var failed struct{ ID string }
		if status != 201 || json.Unmarshal(b, &failed) != nil {
			t.Fatalf("POST /v2/pre-recorded: %d %s", status, b)
		}
		if rec := d.waitJob(key, failed.ID, time.Minute); rec["status"] != "error" {
			t.Fatalf("job of a non-audio URL ended %v, want error: %v", rec["status"], rec)
		}
		a.call(t, d, "GET /v2/pre-recorded/{id}", "/v2/pre-recorded/"+failed.ID, key, nil, "")
		if got, _ := a.call(t, d, "DELETE /v2/pre-recorded/{id}", "/v2/pre-recorded/"+created.ID, key, nil, ""); got != 202 {
			t.Errorf("DELETE job: %d", got)
		}
		if got, _ := a.call(t, d, "DELETE /v2/files/{id}", "/v2/files/"+fileID, key, nil, ""); got != 202 {
			t.Errorf("DELETE file: %d", got)
		}
	})

	t.Run("live", func(t *testing.T) {
		path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
		status, b := a.call(t, d, "POST /v2/live", "/v2/live?region=eu-west", key, jsonBody(map[string]any{
			"custom_metadata": map[string]any{"case": "openapi"},
			"messages_config": map[string]any{"receive_partial_transcripts": true, "receive_lifecycle_events": true},
			"realtime_processing": map[string]any{"named_entity_recognition": true, "sentiment_analysis": true,
				"translation": true, "translation_config": map[string]any{"target_languages": []string{"fr"}}},
			"post_processing": map[string]any{"summarization": true, "chapterization": true},
		}), "application/json")
		var s liveSession
		if status != 201 || json.Unmarshal(b, &s) != nil {
			t.Fatalf("POST /v2/live: %d %s", status, b)
		}
		a.call(t, d, "GET /v2/live/{id}", "/v2/live/"+s.ID, key, nil, "") // queued
		msgs, code := runSession(t, s.URL, pcmOf(t, path), 32, 0)
		if code != 1000 || len(msgs) == 0 || msgs[len(msgs)-1].Type != "end_session" {
			t.Fatalf("session closed %d after %d messages", code, len(msgs))
		}
		types := map[string]bool{}
		for _, m := range msgs {
			a.checkMessage(t, "WebSocket", m.raw)
			types[m.Type] = true
		}
		// Every kind of message this session asked for came and was checked.
		for _, typ := range []string{"start_session", "start_recording", "audio_chunk", "stop_recording", "speech_start", "speech_end",
			"transcript", "named_entity_recognition", "sentiment_analysis", "translation", "end_recording", "post_transcript",
			"post_summarization", "post_chapterization", "post_final_transcript", "end_session"} {
			if !types[typ] {
				t.Errorf("no %s message in the session (got %v)", typ, types)
			}
		}
		_, b = a.call(t, d, "GET /v2/live/{id}", "/v2/live/"+s.ID, key, nil, "")
		var rec struct {
			Result struct {
				Messages []string `json:"messages"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &rec); err != nil || len(rec.Result.Messages) == 0 {
			t.Fatalf("GET /v2/live/%s: no result.messages: %.300s", s.ID, b)
		}
		for i, m := range rec.Result.Messages {
			a.checkMessage(t, fmt.Sprintf("result.messages[%d]", i), []byte(m))
		}
		a.call(t, d, "GET /v2/live", "/v2/live?limit=5", key, nil, "")
		a.call(t, d, "GET /v2/live/{id}/file", "/v2/live/"+s.ID+"/file", key, nil, "")
		if got, _ := a.call(t, d, "DELETE /v2/live/{id}", "/v2/live/"+s.ID, key, nil, ""); got != 202 {
			t.Errorf("DELETE live job: %d", got)
		}
	})

	t.Run("limits", func(t *testing.T) {
		ld := startDaemon(t, "", "limits:\n  requests_per_second: 1\n  burst: 3\nlive:\n  max_sessions_per_account: 1\n")
		one, busy := createKey(t, ld.DataDir, "one"), createKey(t, ld.DataDir, "busy")
		if got, _ := a.call(t, ld, "POST /v2/live", "/v2/live", one, strings.NewReader(`{}`), "application/json"); got != 201 {
			t.Fatalf("first live session: %d", got)
		}
		if got, _ := a.call(t, ld, "POST /v2/live", "/v2/live", one, strings.NewReader(`{}`), "application/json"); got != 429 {
			t.Errorf("second live session of an account limited to one: %d, want 429", got)
		}
		for i := 0; ; i++ {
			got, _ := a.call(t, ld, "GET /v2/engines", "/v2/engines", busy, nil, "")
			if got == 429 {
				break
			}
			if i == 20 {
				t.Fatalf("no 429 after %d requests at burst 3, 1/s", i+1)
			}
		}
	})

	t.Run("SIP call record", func(t *testing.T) {
		sd, addr := startSIPDaemon(t, fmt.Sprintf(sipConfig, "30s", "0s"))
		skey := createKey(t, sd.DataDir, "acme")
		audio, _ := g711(t, "pocketsphinx-goforward.wav", "mulaw")
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		conn, port := udpPair(t)
		dlg, code := newPhone(t, addr).call(ctx, "transcribe", "application/sdp", offerSDP([]int{port}, "0 101", "sendrecv", false))
		if code != 200 {
			t.Fatalf("INVITE answered %d", code)
		}
		addrs, _, _, _ := answered(t, dlg.InviteResponse.Body())
		sendRTP(t, conn, addrs[0], 0, audio, 4, impair{}, 0x1234)
		if err := dlg.Bye(ctx); err != nil {
			t.Fatalf("bye: %v", err)
		}
		job := liveJobByCall(t, sd, skey, dlg.InviteRequest.CallID().Value(), 90*time.Second)
		id, _ := job["id"].(string)
		_, b := a.call(t, sd, "GET /v2/live/{id}", "/v2/live/"+id, skey, nil, "")
		var rec struct {
			Result struct {
				Messages []string `json:"messages"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &rec); err != nil || len(rec.Result.Messages) == 0 {
			t.Fatalf("GET /v2/live/%s: no result.messages: %.300s", id, b)
		}
		for i, m := range rec.Result.Messages {
			a.checkMessage(t, fmt.Sprintf("SIP call result.messages[%d]", i), []byte(m))
		}
	})

	t.Run("WHIP", func(t *testing.T) {
		wd := startDaemon(t, "", webrtcConfig)
		wkey := createKey(t, wd.DataDir, "acme")
		status, b := a.call(t, wd, "POST /v2/live", "/v2/live", wkey, jsonBody(liveG711()), "application/json")
		var s liveSession
		if status != 201 || json.Unmarshal(b, &s) != nil {
			t.Fatalf("POST /v2/live: %d %s", status, b)
		}
		tok := tokenOf(t, s.URL)
		p := newWHIPPeer(t, pcmuCap)
		route := "POST /v2/live/{id}/whip"
		if got, b := a.call(t, wd, route, "/v2/live/"+s.ID+"/whip", "", strings.NewReader(p.offer), "application/sdp", "Authorization", "Bearer nope"); got != 401 {
			t.Errorf("WHIP offer with a bad token: %d %s, want 401", got, b)
		}
		if got, b := a.call(t, wd, route, "/v2/live/"+s.ID+"/whip", "", strings.NewReader("v=0\r\n"), "application/sdp", "Authorization", "Bearer "+tok); got != 400 {
			t.Errorf("WHIP offer of bad SDP: %d %s, want 400", got, b)
		}
		if got, b := a.call(t, wd, route, "/v2/live/"+s.ID+"/whip", "", strings.NewReader(newWHIPPeer(t, opusCap).offer), "application/sdp", "Authorization", "Bearer "+tok); got != 406 {
			t.Errorf("WHIP offer without the session's codec: %d %s, want 406", got, b)
		}
		resp, answer := wd.whipPost(s.ID, tok, "application/sdp", p.offer)
		a.check(t, route, resp.StatusCode, resp.Header.Get("Content-Type"), answer)
		if resp.StatusCode != 201 {
			t.Fatalf("WHIP offer: %d %s", resp.StatusCode, answer)
		}
		if err := p.pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeAnswer, SDP: string(answer)}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.up:
		case <-time.After(10 * time.Second):
			t.Fatal("WebRTC did not connect within 10s")
		}
		if got, b := a.call(t, wd, route, "/v2/live/"+s.ID+"/whip", "", strings.NewReader(newWHIPPeer(t, pcmuCap).offer), "application/sdp", "Authorization", "Bearer "+tok); got != 409 {
			t.Errorf("second WHIP offer: %d %s, want 409", got, b)
		}
		path, _ := clip(t, "pocketsphinx-goforward.wav")
		audio := ulawOf(t, path)
		tick := time.NewTicker(20 * time.Millisecond)
		for i := 0; i < len(audio); i += 160 {
			<-tick.C
			if err := p.track.WriteSample(media.Sample{Data: audio[i:min(i+160, len(audio))], Duration: 20 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
		}
		tick.Stop()
		loc := resp.Header.Get("Location")
		if got, b := a.call(t, wd, "DELETE /v2/live/{id}/whip/{resource}", loc, "", nil, ""); got != 200 {
			t.Fatalf("WHIP DELETE: %d %s", got, b)
		}
		if got, _ := a.call(t, wd, "DELETE /v2/live/{id}/whip/{resource}", loc, "", nil, ""); got != 404 {
			t.Errorf("second WHIP DELETE: %d, want 404", got)
		}
		_, b = a.call(t, wd, "GET /v2/live/{id}", "/v2/live/"+s.ID, wkey, nil, "")
		var rec struct {
			Status string `json:"status"`
			Result struct {
				Messages []string `json:"messages"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &rec); err != nil || rec.Status != "done" || len(rec.Result.Messages) == 0 {
			t.Fatalf("GET /v2/live/%s after WHIP: %.300s", s.ID, b)
		}
		for i, m := range rec.Result.Messages {
			a.checkMessage(t, fmt.Sprintf("WHIP session result.messages[%d]", i), []byte(m))
		}
	})

	t.Run("admin", func(t *testing.T) {
		status, b := a.call(t, d, "POST /admin/keys", "/admin/keys", admin, strings.NewReader(`{"account":"team-b"}`), "application/json")
		var k struct{ ID string }
		if status != 201 || json.Unmarshal(b, &k) != nil {
			t.Fatalf("POST /admin/keys: %d %s", status, b)
		}
		if got, _ := a.call(t, d, "DELETE /admin/keys/{id}", "/admin/keys/"+k.ID, admin, nil, ""); got != 202 {
			t.Errorf("DELETE key: %d", got)
		}
		a.call(t, d, "GET /admin/keys", "/admin/keys", admin, nil, "") // with a revoked key
	})
}
