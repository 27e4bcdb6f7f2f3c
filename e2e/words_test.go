package e2e

import (
	"encoding/json"
	"testing"
)

// The words of a live or pre-recorded record and of a session's transcript
// messages, with their times (the pause and PII tests' spans).

// recordWords are the words of a live record's result.
func recordWords(t *testing.T, rec map[string]any) []pauseSpan {
	t.Helper()
	return recordWordsWhere(rec, func(string) bool { return true })
}

// recordWordsWhere are the words of a record's result that keep takes.
func recordWordsWhere(rec map[string]any, keep func(word string) bool) []pauseSpan {
	var out []pauseSpan
	res, _ := rec["result"].(map[string]any)
	tr, _ := res["transcription"].(map[string]any)
	utts, _ := tr["utterances"].([]any)
	for _, u := range utts {
		for _, w := range u.(map[string]any)["words"].([]any) {
			w := w.(map[string]any)
			if s, _ := w["word"].(string); keep(s) {
				out = append(out, pauseSpan{w["start"].(float64), w["end"].(float64)})
			}
		}
	}
	return out
}

// messageWords are the words of the transcript messages (partial and
// final) a session sent.
func messageWords(t *testing.T, msgs []liveMsg) []pauseSpan {
	t.Helper()
	return messageWordsWhere(t, msgs, func(bool, string) bool { return true })
}

// messageWordsWhere are the words of the transcript messages that keep
// takes (final says whether the message is a final).
func messageWordsWhere(t *testing.T, msgs []liveMsg, keep func(final bool, word string) bool) []pauseSpan {
	t.Helper()
	var out []pauseSpan
	for _, m := range msgs {
		if m.Type != "transcript" {
			continue
		}
		var d struct {
			IsFinal   bool `json:"is_final"`
			Utterance struct {
				Words []struct {
					Word       string  `json:"word"`
					Start, End float64 // as pauseSpan
				} `json:"words"`
			} `json:"utterance"`
		}
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatalf("transcript %s: %v", m.raw, err)
		}
		for _, w := range d.Utterance.Words {
			if keep(d.IsFinal, w.Word) {
				out = append(out, pauseSpan{w.Start, w.End})
			}
		}
	}
	return out
}
