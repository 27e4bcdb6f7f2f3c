package daemon

import (
	"encoding/json"
	"time"

	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// omittedType is the type of the entry result.messages carries in place of
// the messages its budget left out. It is never sent to a client.
const omittedType = "messages_omitted"

// messageLog keeps a live session's messages for result.messages within a
// byte budget, so a long session's record stays bounded. While the session
// runs, messages are kept until the budget is spent (acknowledgments only
// up to a quarter of it, so they never crowd out transcripts); later ones
// are counted by type. From close on (end_recording, post_transcript, the
// post-processing messages, post_final_transcript, end_session) every
// message is kept, after one messages_omitted entry saying what was left
// out. Its owner's lock guards it.
type messageLog struct {
	budget int // bytes for the messages before close
	used   int // bytes kept before close
	acks   int // bytes of acknowledgments kept

	kept   []string
	closed bool

	omitted      int            // messages left out
	omittedBytes int            // their bytes
	omittedTypes map[string]int // by type
}

func newMessageLog(budget int) *messageLog {
	return &messageLog{budget: budget}
}

// add keeps or counts one message of type typ.
func (l *messageLog) add(typ string, b []byte) {
	if !l.closed {
		isAck := typ == "audio_chunk" || typ == "stop_recording"
		if l.used+len(b) > l.budget || isAck && l.acks+len(b) > l.budget/4 {
			l.omitted++
			l.omittedBytes += len(b)
			if l.omittedTypes == nil {
				l.omittedTypes = map[string]int{}
			}
			l.omittedTypes[typ]++
			return
		}
		l.used += len(b)
		if isAck {
			l.acks += len(b)
		}
	}
	l.kept = append(l.kept, string(b))
}

// close marks the start of the session's end: the omitted entry (if any)
// is written, and every later message is kept.
func (l *messageLog) close(session string) {
	if l.closed {
		return
	}
	l.closed = true
	if l.omitted == 0 {
		return
	}
	m := msg(omittedType, session, map[string]any{
		"messages": l.omitted, "bytes": l.omittedBytes, "types": l.omittedTypes, "budget_bytes": l.budget,
	})
	if b, err := json.Marshal(m); err == nil {
		l.kept = append(l.kept, string(b))
	}
}

// messages is result.messages.
func (l *messageLog) messages() []string { return l.kept }

// msg builds a server message {type, session_id, created_at, data}.
func msg(typ, session string, data any) map[string]any {
	m := map[string]any{"type": typ, "session_id": session, "created_at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	if data != nil {
		m["data"] = data
	}
	return m
}

// errorMsg is an `error` message, or the named message's failed ack.
func errorMsg(session, ackType, text string) map[string]any {
	if ackType != "" {
		m := msg(ackType, session, nil)
		m["acknowledged"], m["error"] = false, map[string]any{"message": text}
		return m
	}
	m := msg("error", session, nil)
	m["error"] = map[string]any{"message": text}
	return m
}

// switchFor reports whether the switches sw (messages_config or
// callback_config) select message m.
func switchFor(sw params.MessageSwitches, m map[string]any) bool {
	switch m["type"] {
	case "audio_chunk", "stop_recording":
		return sw.ReceiveAcknowledgments
	case "start_session", "start_recording", "end_recording", "end_session":
		return sw.ReceiveLifecycleEvents
	case "speech_start", "speech_end":
		return sw.ReceiveSpeechEvents
	case "transcript":
		if d, _ := m["data"].(map[string]any); d != nil && d["is_final"] == true {
			return sw.ReceiveFinalTranscripts
		}
		return sw.ReceivePartialTranscripts
	case "translation", "named_entity_recognition", "sentiment_analysis":
		return sw.ReceiveRealtimeProcessingEvents
	case "post_transcript", "post_final_transcript", "post_summarization", "post_chapterization":
		return sw.ReceivePostProcessingEvents
	case "error":
		return sw.ReceiveErrors
	}
	return false
}

// sendLocked delivers a message to the client (per messages_config), keeps
// it for result.messages, and queues it for the callback (per
// callback_config).
func (s *liveSession) sendLocked(m map[string]any) { s.deliverLocked(m, true) }

// deliverLocked is sendLocked; toClient false leaves out the WebSocket
// client and result.messages (an acknowledgment of audio that did not come
// from the WebSocket).
func (s *liveSession) deliverLocked(m map[string]any, toClient bool) {
	b, err := json.Marshal(m)
	if err != nil {
		s.log.Error("encode message", "error", err)
		return
	}
	typ, _ := m["type"].(string)
	if toClient && switchFor(s.p.MessagesConfig, m) {
		s.messages.add(typ, b)
		if s.sink != nil && !s.sink(b) {
			s.log.Warn("client too slow; message dropped", "type", typ)
		}
	}
	if url, method, ok := s.p.CallbackTarget(); ok && switchFor(s.p.CallbackConfig.MessageSwitches, m) && !s.holdsForBatchPass(typ) {
		body, err := json.Marshal(callback.Body{ID: s.id, Event: "live." + typ, Payload: json.RawMessage(b)})
		if err == nil {
			err = s.d.db.EnqueueDelivery(&store.Delivery{JobID: s.id, Account: s.account, URL: url, Method: method, Body: body})
		}
		if err != nil {
			s.log.Error("queue live callback", "error", err)
		}
		s.d.outbox.Wake()
	}
}

// ackLocked acknowledges the whole-session bytes [from, to) of audio
// written through attachment a: to the WebSocket client when the audio came
// over the WebSocket and messages_config asks for acks, and to the callback
// when callback_config does. Audio of the SIP and WHIP doors has no client
// to take acks.
func (s *liveSession) ackLocked(a *Attachment, from, to int64) {
	if !s.wantsAcks(a) {
		return // nobody takes acks: skip building one per frame
	}
	m := msg("audio_chunk", s.id, map[string]any{
		"byte_range": []int64{from, to},
		"time_range": []float64{s.secondsAt(from), s.secondsAt(to)},
	})
	m["acknowledged"], m["error"] = true, nil
	s.deliverLocked(m, a.acks)
}

// wantsAcks reports whether the WebSocket (for audio through a) or the
// callback takes acks.
func (s *liveSession) wantsAcks(a *Attachment) bool {
	return a.acks && s.p.MessagesConfig.ReceiveAcknowledgments || s.p.Callback && s.p.CallbackConfig.ReceiveAcknowledgments
}
