package sip

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
)

// Limits on SIPREC metadata kept in custom_metadata.
const (
	maxParticipants = 16
	maxText         = 256
	maxParts        = 8
)

// splitBody returns the SDP of an INVITE body and, for SIPREC (RFC 7866
// section 9.1: multipart/mixed with application/sdp and
// application/rs-metadata+xml), the recording metadata.
func splitBody(contentType string, body []byte) (sdpBody, metadata []byte, err error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: content type %q", ErrUnsupportedMedia, contentType)
	}
	switch mt {
	case "application/sdp":
		return body, nil, nil
	case "multipart/mixed":
	default:
		return nil, nil, fmt.Errorf("%w: %s", ErrUnsupportedMedia, mt)
	}
	if params["boundary"] == "" {
		return nil, nil, fmt.Errorf("%w: multipart without boundary", ErrBadOffer)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for range maxParts {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: multipart: %v", ErrBadOffer, err)
		}
		b, err := io.ReadAll(io.LimitReader(p, int64(len(body))))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: multipart: %v", ErrBadOffer, err)
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch ct {
		case "application/sdp":
			sdpBody = b
		case "application/rs-metadata+xml", "application/rs-metadata":
			metadata = b
		}
	}
	if sdpBody == nil {
		return nil, nil, fmt.Errorf("%w: multipart without application/sdp", ErrBadOffer)
	}
	return sdpBody, metadata, nil
}

// recording is RFC 7865 recording metadata; local names only, so both the
// namespaced form and older drafts' element names parse.
type recording struct {
	Sessions []struct {
		ID           string   `xml:"session_id,attr"`
		SIPSessionID []string `xml:"sipSessionID"`
	} `xml:"session"`
	Participants []struct {
		ID     string `xml:"participant_id,attr"`
		OldID  string `xml:"id,attr"`
		NameID []struct {
			AOR  string   `xml:"aor,attr"`
			Name []string `xml:"name"`
		} `xml:"nameID"`
		AOR  []string `xml:"aor"`
		Name []string `xml:"name"`
		Send []string `xml:"send"`
	} `xml:"participant"`
	Streams []struct {
		ID    string `xml:"stream_id,attr"`
		OldID string `xml:"id,attr"`
		Label string `xml:"label"`
	} `xml:"stream"`
	Assocs []struct {
		ID   string   `xml:"participant_id,attr"`
		Send []string `xml:"send"`
	} `xml:"participantstreamassoc"`
}

// Participant is one party of a recorded call.
type Participant struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	AOR  string `json:"aor,omitempty"`
	// Channel is the channel of the stream this participant sends, -1
	// when it sends none of the recorded streams.
	Channel int `json:"channel"`
}

// Metadata is what the door keeps of SIPREC recording metadata.
type Metadata struct {
	SessionID    string
	Participants []Participant
	// Labels maps an SDP a=label to the participant index sending it.
	Labels map[string]int
}

// parseMetadata reads RFC 7865 metadata; labels are the SDP labels of
// channels 0, 1... in order.
func parseMetadata(b []byte, labels []string) (*Metadata, error) {
	var rec recording
	if err := xml.NewDecoder(bytes.NewReader(b)).Decode(&rec); err != nil {
		return nil, fmt.Errorf("%w: rs-metadata: %v", ErrBadOffer, err)
	}
	md := &Metadata{Labels: map[string]int{}}
	if len(rec.Sessions) > 0 {
		s := rec.Sessions[0]
		md.SessionID = clip(s.ID)
		if len(s.SIPSessionID) > 0 {
			md.SessionID = clip(strings.TrimSpace(s.SIPSessionID[0]))
		}
	}
	streamLabel := map[string]string{} // stream id -> label
	for _, s := range rec.Streams {
		id := s.ID
		if id == "" {
			id = s.OldID
		}
		streamLabel[id] = strings.TrimSpace(s.Label)
	}
	channel := map[string]int{}
	for i, l := range labels {
		if l != "" {
			channel[l] = i
		}
	}
	sends := map[string][]string{}
	for _, a := range rec.Assocs {
		sends[a.ID] = append(sends[a.ID], a.Send...)
	}
	for _, p := range rec.Participants {
		if len(md.Participants) == maxParticipants {
			break
		}
		id := p.ID
		if id == "" {
			id = p.OldID
		}
		out := Participant{ID: clip(id), Channel: -1}
		if len(p.NameID) > 0 {
			n := p.NameID[0]
			out.AOR = clip(strings.TrimSpace(n.AOR))
			if len(n.Name) > 0 {
				out.Name = clip(strings.TrimSpace(n.Name[0]))
			}
		}
		if out.AOR == "" && len(p.AOR) > 0 {
			out.AOR = clip(strings.TrimSpace(p.AOR[0]))
		}
		if out.Name == "" && len(p.Name) > 0 {
			out.Name = clip(strings.TrimSpace(p.Name[0]))
		}
		for _, sid := range append(sends[id], p.Send...) {
			sid = strings.TrimSpace(sid)
			label, ok := streamLabel[sid]
			if !ok {
				label = sid // older drafts name the label directly
			}
			if ch, ok := channel[label]; ok {
				out.Channel = ch
				md.Labels[label] = len(md.Participants)
				break
			}
		}
		md.Participants = append(md.Participants, out)
	}
	return md, nil
}

// custom returns the custom_metadata entries for channels labelled
// labels.
func (m *Metadata) custom(labels []string) map[string]any {
	out := map[string]any{}
	if m.SessionID != "" {
		out["siprec_session_id"] = m.SessionID
	}
	parts := make([]map[string]any, 0, len(m.Participants))
	for _, p := range m.Participants {
		e := map[string]any{"channel": p.Channel}
		if p.ID != "" {
			e["id"] = p.ID
		}
		if p.Name != "" {
			e["name"] = p.Name
		}
		if p.AOR != "" {
			e["aor"] = p.AOR
		}
		parts = append(parts, e)
	}
	out["siprec_participants"] = parts
	streams := make([]map[string]any, 0, len(labels))
	for ch, l := range labels {
		e := map[string]any{"channel": ch, "label": clip(l)}
		if i, ok := m.Labels[l]; ok {
			p := m.Participants[i]
			e["participant"] = p.ID
			if p.AOR != "" {
				e["aor"] = p.AOR
			}
			if p.Name != "" {
				e["name"] = p.Name
			}
		}
		streams = append(streams, e)
	}
	out["siprec_streams"] = streams
	return out
}

func clip(s string) string {
	if len(s) > maxText {
		return s[:maxText]
	}
	return s
}
