package main

import (
	"errors"
	"sync"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"
)

// ---- WHIP offerer (a pion peer sending one PCMU track) ----

type offerer struct {
	pc    *pionwebrtc.PeerConnection
	track *pionwebrtc.TrackLocalStaticRTP
	up    chan struct{}
}

func newOfferer() (*offerer, error) {
	me := &pionwebrtc.MediaEngine{}
	if err := me.RegisterCodec(pcmu, pionwebrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	var se pionwebrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]pionwebrtc.NetworkType{pionwebrtc.NetworkTypeUDP4})
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	api := pionwebrtc.NewAPI(pionwebrtc.WithMediaEngine(me), pionwebrtc.WithSettingEngine(se))
	pc, err := api.NewPeerConnection(pionwebrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	o := &offerer{pc: pc, up: make(chan struct{})}
	var once sync.Once
	pc.OnConnectionStateChange(func(s pionwebrtc.PeerConnectionState) {
		if s == pionwebrtc.PeerConnectionStateConnected {
			once.Do(func() { close(o.up) })
		}
	})
	if o.track, err = pionwebrtc.NewTrackLocalStaticRTP(pcmu.RTPCodecCapability, "audio", "whipbench"); err != nil {
		pc.Close()
		return nil, err
	}
	if _, err := pc.AddTransceiverFromTrack(o.track, pionwebrtc.RTPTransceiverInit{Direction: pionwebrtc.RTPTransceiverDirectionSendonly}); err != nil {
		pc.Close()
		return nil, err
	}
	return o, nil
}

func (o *offerer) offer() ([]byte, error) {
	offer, err := o.pc.CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	gathered := pionwebrtc.GatheringCompletePromise(o.pc)
	if err := o.pc.SetLocalDescription(offer); err != nil {
		return nil, err
	}
	<-gathered
	return []byte(o.pc.LocalDescription().SDP), nil
}

func (o *offerer) connect(answer []byte, timeout time.Duration) error {
	if err := o.pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeAnswer, SDP: string(answer)}); err != nil {
		return err
	}
	select {
	case <-o.up:
		return nil
	case <-time.After(timeout):
		return errors.New("offerer did not connect")
	}
}
