package benchd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// LiveRecord is a finished live session's stored record once its batch
// pass has replaced the live result.
type LiveRecord struct {
	// Finals are the session's live finals: the final transcript
	// messages of result.messages, in order.
	Finals []string
	// FullTranscript is the batch pass's (the stored record's).
	FullTranscript string
}

// BatchPassRecord waits up to limit for live session id's batch pass
// (polling GET /v2/live/{id}) and returns the record it left; an error when
// the pass failed, is off or did not finish in time.
func (d *Daemon) BatchPassRecord(id string, limit time.Duration) (LiveRecord, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var job struct {
			Result struct {
				Messages      []string
				Transcription struct {
					FullTranscript string `json:"full_transcript"`
				}
			}
			PostSessionMetadata struct {
				TranscriptionPass string `json:"transcription_pass"`
				BatchPass         string `json:"batch_pass"`
				BatchPassError    string `json:"batch_pass_error"`
			} `json:"post_session_metadata"`
		}
		if err := d.Call("GET", "/v2/live/"+id, d.Key, "", http.StatusOK, &job); err != nil {
			return LiveRecord{}, err
		}
		switch md := job.PostSessionMetadata; {
		case md.TranscriptionPass == "batch":
			rec := LiveRecord{FullTranscript: job.Result.Transcription.FullTranscript}
			for _, raw := range job.Result.Messages {
				if text, ok := FinalText([]byte(raw)); ok {
					rec.Finals = append(rec.Finals, text)
				}
			}
			return rec, nil
		case md.BatchPass != "pending":
			return LiveRecord{}, fmt.Errorf("live session %s: batch pass %q %s", id, md.BatchPass, md.BatchPassError)
		}
		time.Sleep(200 * time.Millisecond) // polling a real process
	}
	return LiveRecord{}, fmt.Errorf("live session %s: no batch pass result in %s", id, limit)
}

// FinalText is the utterance text of a live session's message when it is
// a final transcript (as the WebSocket sends it and result.messages keeps
// it); false for any other message.
func FinalText(msg []byte) (string, bool) {
	var m struct {
		Type string
		Data struct {
			IsFinal   bool `json:"is_final"`
			Utterance struct{ Text string }
		}
	}
	if json.Unmarshal(msg, &m) != nil || m.Type != "transcript" || !m.Data.IsFinal {
		return "", false
	}
	return m.Data.Utterance.Text, true
}
