package params

import "strings"

// Callback methods (PROTOCOL.md "Values SPEC leaves open").
const (
	MethodPOST = "POST"
	MethodPUT  = "PUT"
)

// CallbackConfig is the pre-recorded callback_config: where the result is
// sent, and how. Method is filled in (POST) whenever the object is given.
type CallbackConfig struct {
	URL    string `json:"url,omitempty"`
	Method string `json:"method"`
}

// MessageSwitches are the category switches of SPEC section 6, shared by the
// live messages_config (WebSocket) and callback_config (callback), whose
// defaults differ: see WebSocketDefaults and CallbackDefaults.
type MessageSwitches struct {
	ReceivePartialTranscripts       bool `json:"receive_partial_transcripts"`
	ReceiveFinalTranscripts         bool `json:"receive_final_transcripts"`
	ReceiveSpeechEvents             bool `json:"receive_speech_events"`
	ReceivePreProcessingEvents      bool `json:"receive_pre_processing_events"`
	ReceiveRealtimeProcessingEvents bool `json:"receive_realtime_processing_events"`
	ReceivePostProcessingEvents     bool `json:"receive_post_processing_events"`
	ReceiveAcknowledgments          bool `json:"receive_acknowledgments"`
	ReceiveErrors                   bool `json:"receive_errors"`
	ReceiveLifecycleEvents          bool `json:"receive_lifecycle_events"`
	// ReceiveDTMFEvents (not in SPEC) selects the dtmf messages: a key
	// pressed on the call (PROTOCOL.md, DTMF). Default true on both.
	ReceiveDTMFEvents bool `json:"receive_dtmf_events"`
	// ReceiveRevisedTranscripts (not in SPEC) selects the
	// revised_transcript messages: a decoder segment's finals decoded again
	// over the whole segment once it has ended (PROTOCOL.md, Revised
	// finals). Default false on both: the re-decode costs CPU, and is
	// done only for a session where a switch asks for it.
	ReceiveRevisedTranscripts bool `json:"receive_revised_transcripts"`
}

// WebSocketDefaults returns the messages_config defaults (SPEC section 6,
// WebSocket column), except receive_pre_processing_events: this appliance
// has no pre-processing events, so the switch is false (what is used) and
// true is refused (422, README).
func WebSocketDefaults() MessageSwitches {
	return MessageSwitches{
		ReceivePartialTranscripts:       false,
		ReceiveFinalTranscripts:         true,
		ReceiveSpeechEvents:             true,
		ReceivePreProcessingEvents:      false,
		ReceiveRealtimeProcessingEvents: true,
		ReceivePostProcessingEvents:     true,
		ReceiveAcknowledgments:          true,
		ReceiveErrors:                   true,
		ReceiveLifecycleEvents:          false,
		ReceiveDTMFEvents:               true,
	}
}

// CallbackDefaults returns the live callback_config switch defaults (SPEC
// section 6, callback column), receive_pre_processing_events false as in
// WebSocketDefaults.
func CallbackDefaults() MessageSwitches {
	return MessageSwitches{
		ReceivePartialTranscripts:       false,
		ReceiveFinalTranscripts:         true,
		ReceiveSpeechEvents:             false,
		ReceivePreProcessingEvents:      false,
		ReceiveRealtimeProcessingEvents: true,
		ReceivePostProcessingEvents:     true,
		ReceiveAcknowledgments:          false,
		ReceiveErrors:                   false,
		ReceiveLifecycleEvents:          true,
		ReceiveDTMFEvents:               true,
	}
}

// LiveCallbackConfig is the live callback_config: url, method and the
// section 6 switches (callback column defaults), flattened into one object.
type LiveCallbackConfig struct {
	URL    string `json:"url,omitempty"`
	Method string `json:"method"`
	MessageSwitches
}

// decodeSwitches fills the switches present in o over defaults. It
// returns the path of receive_pre_processing_events when o sets it true
// (refused: see refusePreProcessingEvents), else "".
func decodeSwitches(o *object, s *MessageSwitches) (preProcessingAsked string) {
	given := o.has("receive_pre_processing_events")
	s.ReceivePartialTranscripts = o.boolean("receive_partial_transcripts", s.ReceivePartialTranscripts)
	s.ReceiveFinalTranscripts = o.boolean("receive_final_transcripts", s.ReceiveFinalTranscripts)
	s.ReceiveSpeechEvents = o.boolean("receive_speech_events", s.ReceiveSpeechEvents)
	s.ReceivePreProcessingEvents = o.boolean("receive_pre_processing_events", s.ReceivePreProcessingEvents)
	s.ReceiveRealtimeProcessingEvents = o.boolean("receive_realtime_processing_events", s.ReceiveRealtimeProcessingEvents)
	s.ReceivePostProcessingEvents = o.boolean("receive_post_processing_events", s.ReceivePostProcessingEvents)
	s.ReceiveAcknowledgments = o.boolean("receive_acknowledgments", s.ReceiveAcknowledgments)
	s.ReceiveErrors = o.boolean("receive_errors", s.ReceiveErrors)
	s.ReceiveLifecycleEvents = o.boolean("receive_lifecycle_events", s.ReceiveLifecycleEvents)
	s.ReceiveDTMFEvents = o.boolean("receive_dtmf_events", s.ReceiveDTMFEvents)
	s.ReceiveRevisedTranscripts = o.boolean("receive_revised_transcripts", s.ReceiveRevisedTranscripts)
	if given && s.ReceivePreProcessingEvents {
		return child(o.path, "receive_pre_processing_events")
	}
	return ""
}

// decodeURLMethod reads url and method of a callback_config object; given
// says whether url was there at all (malformed or not).
func decodeURLMethod(o *object) (u, method string, given bool) {
	given = o.has("url")
	if s, path, ok := o.str("url"); ok && httpURL(o.p, path, s) {
		u = s
	}
	method = MethodPOST
	// Matched without regard to case, kept upper case.
	if s, path, ok := o.str("method"); ok && oneOf(o.p, path, strings.ToUpper(s), MethodPOST, MethodPUT) {
		method = strings.ToUpper(s)
	}
	return u, method, given
}

// requireURL reports callback_config.url missing when callback is true.
func requireURL(p *problems, given bool) {
	if !given {
		p.addf("callback_config.url", "is required when callback is true")
	}
}

func decodeCallbackConfig(parent *object) (c *CallbackConfig, urlGiven bool) {
	o, ok := parent.object("callback_config")
	if !ok {
		return nil, false
	}
	defer o.done()
	c = &CallbackConfig{}
	c.URL, c.Method, urlGiven = decodeURLMethod(o)
	return c, urlGiven
}

func decodeLiveCallbackConfig(parent *object) (c LiveCallbackConfig, urlGiven bool, preProcessingAsked string) {
	c = LiveCallbackConfig{Method: MethodPOST, MessageSwitches: CallbackDefaults()}
	o, ok := parent.object("callback_config")
	if !ok {
		return c, false, ""
	}
	defer o.done()
	c.URL, c.Method, urlGiven = decodeURLMethod(o)
	preProcessingAsked = decodeSwitches(o, &c.MessageSwitches)
	return c, urlGiven, preProcessingAsked
}
