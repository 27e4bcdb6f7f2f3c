package live

import (
	"encoding/json"
	"time"

	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// Message types (PROTOCOL.md).
const (
	typeAudioChunk          = "audio_chunk"
	typeStopRecording       = "stop_recording"
	typeStartSession        = "start_session"
	typeStartRecording      = "start_recording"
	typeEndRecording        = "end_recording"
	typeEndSession          = "end_session"
	typeSpeechStart         = "speech_start"
	typeSpeechEnd           = "speech_end"
	typeTranscript          = "transcript"
	typeTranslation         = "translation"
	typeEntities            = "named_entity_recognition"
	typeSentiment           = "sentiment_analysis"
	typePostTranscript      = "post_transcript"
	typePostFinalTranscript = "post_final_transcript"
	typePostSummarization   = "post_summarization"
	typePostChapterization  = "post_chapterization"
	typeError               = "error"
	typePauseRecording      = "pause_recording"  // the ack of a client's pause_recording
	typeResumeRecording     = "resume_recording" // the ack of a client's resume_recording
	typePaused              = "paused"
	typeResumed             = "resumed"
	// omittedType is the type of the entry result.messages carries in
	// place of the messages its budget left out. It is never sent to a
	// client.
	omittedType = "messages_omitted"
)

// message is one server message {type, session_id, created_at, data}, with
// acknowledged and error where its type has them. Fields (and those of the
// data types below) are in alphabetical order: the order of the maps
// earlier versions marshalled, so the bytes a client sees are unchanged.
type message struct {
	Acknowledged *bool      `json:"acknowledged,omitempty"`
	CreatedAt    string     `json:"created_at"`
	Data         any        `json:"data,omitempty"`
	Error        *errorJSON `json:"error,omitempty"`
	SessionID    string     `json:"session_id"`
	Type         string     `json:"type"`

	final bool // a final transcript (switchFor)
}

// errorJSON is a message's error field: present (null when v is nil)
// whenever the message has one.
type errorJSON struct{ v any }

func (e *errorJSON) MarshalJSON() ([]byte, error) { return json.Marshal(e.v) }

// errorText is the error of an error message or a failed ack.
type errorText struct {
	Message string `json:"message"`
}

// Data of the messages that carry it.
type (
	ackData struct {
		ByteRange []int64   `json:"byte_range"`
		TimeRange []float64 `json:"time_range"`
	}
	stopData struct {
		RecordingDuration      float64 `json:"recording_duration"`
		RecordingLeftToProcess float64 `json:"recording_left_to_process"`
	}
	durationData struct {
		RecordingDuration float64 `json:"recording_duration"`
	}
	speechData struct {
		Channel int     `json:"channel"`
		Time    float64 `json:"time"`
	}
	transcriptData struct {
		ID        string `json:"id"`
		IsFinal   bool   `json:"is_final"`
		Utterance any    `json:"utterance"`
	}
	realtimeData struct {
		Results     any    `json:"results"`
		Utterance   any    `json:"utterance"`
		UtteranceID string `json:"utterance_id"`
	}
	translationData struct {
		OriginalLanguage    string `json:"original_language"`
		TargetLanguage      string `json:"target_language"`
		TranslatedUtterance any    `json:"translated_utterance"`
		Utterance           any    `json:"utterance"`
		UtteranceID         string `json:"utterance_id"`
	}
	resultsData struct {
		Results any `json:"results"`
	}
	omittedData struct {
		BudgetBytes int            `json:"budget_bytes"`
		Bytes       int            `json:"bytes"`
		Messages    int            `json:"messages"`
		Types       map[string]int `json:"types"`
	}
)

// msg builds a server message of type typ; data nil leaves it out.
func msg(typ, session string, data any) *message {
	return &message{Type: typ, SessionID: session, CreatedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"), Data: data}
}

// withError gives m its error field (null when v is nil).
func (m *message) withError(v any) *message {
	m.Error = &errorJSON{v}
	return m
}

// ack makes m an acknowledgment: ok, or failed with text.
func (m *message) ack(ok bool, text string) *message {
	m.Acknowledged = &ok
	if ok {
		return m.withError(nil)
	}
	return m.withError(errorText{Message: text})
}

// errorMsg is an `error` message, or the named message's failed ack.
func errorMsg(session, ackType, text string) *message {
	if ackType != "" {
		return msg(ackType, session, nil).ack(false, text)
	}
	return msg(typeError, session, nil).withError(errorText{Message: text})
}

// switchFor reports whether the switches sw (messages_config or
// callback_config) select message m.
func switchFor(sw params.MessageSwitches, m *message) bool {
	switch m.Type {
	case typeAudioChunk, typeStopRecording, typePauseRecording, typeResumeRecording:
		return sw.ReceiveAcknowledgments
	case typeStartSession, typeStartRecording, typeEndRecording, typeEndSession, typePaused, typeResumed:
		return sw.ReceiveLifecycleEvents
	case typeSpeechStart, typeSpeechEnd:
		return sw.ReceiveSpeechEvents
	case typeTranscript:
		if m.final {
			return sw.ReceiveFinalTranscripts
		}
		return sw.ReceivePartialTranscripts
	case typeTranslation, typeEntities, typeSentiment:
		return sw.ReceiveRealtimeProcessingEvents
	case typePostTranscript, typePostFinalTranscript, typePostSummarization, typePostChapterization:
		return sw.ReceivePostProcessingEvents
	case typeError:
		return sw.ReceiveErrors
	case typeDTMF:
		return sw.ReceiveDTMFEvents
	case typeRevisedTranscript:
		return sw.ReceiveRevisedTranscripts
	}
	return false
}

// delivery is the callback delivery of message m (already encoded as b)
// of job id.
func delivery(id, account, url, method string, m *message, b []byte) (*store.Delivery, error) {
	body, err := json.Marshal(callback.Body{ID: id, Event: "live." + m.Type, Payload: json.RawMessage(b)})
	if err != nil {
		return nil, err
	}
	return &store.Delivery{JobID: id, Account: account, URL: url, Method: method, Body: body}, nil
}

// messageLog keeps a live session's messages for result.messages within a
// byte budget, so a long session's record stays bounded. While the session
// runs, messages are kept until the budget is spent (acknowledgments only
// up to a quarter of it, so they never crowd out transcripts); later ones
// are counted by type. From close on (end_recording, post_transcript, the
// post-processing messages, post_final_transcript, end_session) every
// message is kept, after one messages_omitted entry saying what was left
// out. Its session's goroutine owns it.
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
		isAck := typ == typeAudioChunk || typ == typeStopRecording
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
	m := msg(omittedType, session, omittedData{Messages: l.omitted, Bytes: l.omittedBytes, Types: l.omittedTypes, BudgetBytes: l.budget})
	if b, err := json.Marshal(m); err == nil {
		l.kept = append(l.kept, string(b))
	}
}

// messages is result.messages.
func (l *messageLog) messages() []string { return l.kept }

// send delivers a message to the client (per messages_config), keeps it
// for result.messages, and queues it for the callback (per
// callback_config).
func (s *session) send(m *message) { s.deliver(m, true) }

// deliver is send; toClient false leaves out the WebSocket client and
// result.messages (an acknowledgment of audio that did not come from the
// WebSocket). Callback deliveries wait in pending for the loop's next
// commit (flushDeliveries): one store commit for all of them.
func (s *session) deliver(m *message, toClient bool) {
	b, err := json.Marshal(m)
	if err != nil {
		s.log.Error("encode message", "error", err)
		return
	}
	if toClient && switchFor(s.p.MessagesConfig, m) {
		s.messages.add(m.Type, b)
		if s.listener != nil && !s.listener.Send(b) {
			s.log.Warn("client too slow; message dropped", "type", m.Type)
		}
	}
	if url, method, ok := s.p.CallbackTarget(); ok && switchFor(s.p.CallbackConfig.MessageSwitches, m) && !s.holdsForBatchPass(m.Type) {
		d, err := delivery(s.id, s.account, url, method, m, b)
		if err != nil {
			s.log.Error("queue live callback", "error", err)
			return
		}
		s.pending = append(s.pending, d)
	}
}

// ackAudio acknowledges the whole-session bytes [from, to) of audio
// written through an attachment: to the WebSocket client when the audio
// came over the WebSocket (acks) and messages_config asks for acks, and to
// the callback when callback_config does. Audio of the SIP and WHIP doors
// has no client to take acks.
func (s *session) ackAudio(acks bool, from, to int64) {
	if !s.wantsAcks(acks) {
		return // nobody takes acks: skip building one per frame
	}
	m := msg(typeAudioChunk, s.id, ackData{ByteRange: []int64{from, to}, TimeRange: []float64{s.secondsAt(from), s.secondsAt(to)}}).ack(true, "")
	s.deliver(m, acks)
}

// wantsAcks reports whether the WebSocket (for audio of an attachment
// with acks) or the callback takes acks.
func (s *session) wantsAcks(acks bool) bool {
	return acks && s.p.MessagesConfig.ReceiveAcknowledgments || s.p.Callback && s.p.CallbackConfig.ReceiveAcknowledgments
}
