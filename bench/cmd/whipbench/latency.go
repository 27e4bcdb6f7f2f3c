package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
	"github.com/earshot-dev/earshot/ingest/webrtc"
)

// ---- offer → answer latency ----

type latResult struct {
	ms     []float64
	errors int
}

// latency times offers sequential offers, answered by the door or by a bare
// pion PeerConnection; every offerer connects after its answer and stays up
// until the end of the row.
func latency(offers int, useDoor bool) (*latResult, error) {
	var d *webrtc.Door
	// The reference shares one DTLS certificate too, as the door does.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	cert0, err := pionwebrtc.GenerateCertificate(key)
	if err != nil {
		return nil, err
	}
	cert := *cert0
	if useDoor {
		var err error
		if d, _, err = newDoor(); err != nil {
			return nil, err
		}
		defer d.Close()
	}
	var pcs []*pionwebrtc.PeerConnection
	defer func() {
		for _, pc := range pcs {
			pc.Close()
		}
	}()
	r := &latResult{}
	for i := range offers {
		o, err := newOfferer()
		if err != nil {
			return nil, err
		}
		pcs = append(pcs, o.pc)
		offer, err := o.offer()
		if err != nil {
			return nil, err
		}
		var answer []byte
		start := time.Now()
		if useDoor {
			id := fmt.Sprintf("lat%d", i)
			answer, _, err = d.Offer(context.Background(), id, id+".x", "", offer)
		} else {
			var pc *pionwebrtc.PeerConnection
			pc, answer, err = pionAnswer(offer, cert)
			if pc != nil {
				pcs = append(pcs, pc)
			}
		}
		el := time.Since(start)
		if err != nil {
			r.errors++
			continue
		}
		r.ms = append(r.ms, float64(el.Microseconds())/1000)
		if err := o.connect(answer, 10*time.Second); err != nil {
			return nil, err
		}
	}
	slices.Sort(r.ms)
	return r, nil
}

// latencyHTTP times WHIP offers over HTTP against the real daemon: for
// each, POST /v2/live (not timed), then POST .../whip with the session
// token (timed until the 201 is read), connect, DELETE the resource.
func latencyHTTP(offers int) (*latResult, error) {
	d, err := benchd.Start("webrtc:\n  include_loopback: true\n  udp_ports: \"47000-47999\"\n", "--log-level", "info")
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	r := &latResult{}
	for range offers {
		var live struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		}
		body := `{"encoding":"wav/ulaw","bit_depth":8,"sample_rate":8000,"channels":1}`
		if err := d.Call("POST", "/v2/live", d.Key, body, 201, &live); err != nil {
			return nil, err
		}
		u, err := url.Parse(live.URL)
		if err != nil {
			return nil, err
		}
		o, err := newOfferer()
		if err != nil {
			return nil, err
		}
		offer, err := o.offer()
		if err != nil {
			o.pc.Close()
			return nil, err
		}
		req, _ := http.NewRequest("POST", d.Base+"/v2/live/"+live.ID+"/whip", bytes.NewReader(offer))
		req.Header.Set("Content-Type", "application/sdp")
		req.Header.Set("Authorization", "Bearer "+u.Query().Get("token"))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			o.pc.Close()
			return nil, err
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		el := time.Since(start)
		if resp.StatusCode != 201 {
			r.errors++
			o.pc.Close()
			continue
		}
		r.ms = append(r.ms, float64(el.Microseconds())/1000)
		err = o.connect(answer, 10*time.Second)
		if err == nil {
			err = d.Call("DELETE", resp.Header.Get("Location"), "", "", 200, nil)
		}
		o.pc.Close()
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(r.ms)
	return r, nil
}

// pionAnswer answers like the door does (PCMU/PCMA only, UDP host
// candidates on the same port range, loopback included, complete
// gathering) with nothing of the door around it.
func pionAnswer(offer []byte, cert pionwebrtc.Certificate) (*pionwebrtc.PeerConnection, []byte, error) {
	me := &pionwebrtc.MediaEngine{}
	pcma := pcmu
	pcma.MimeType, pcma.PayloadType = pionwebrtc.MimeTypePCMA, 8
	for _, c := range []pionwebrtc.RTPCodecParameters{pcmu, pcma} {
		if err := me.RegisterCodec(c, pionwebrtc.RTPCodecTypeAudio); err != nil {
			return nil, nil, err
		}
	}
	var se pionwebrtc.SettingEngine
	lo, hi := 47000, 47999
	if err := se.SetEphemeralUDPPortRange(uint16(lo), uint16(hi)); err != nil {
		return nil, nil, err
	}
	se.SetNetworkTypes([]pionwebrtc.NetworkType{pionwebrtc.NetworkTypeUDP4, pionwebrtc.NetworkTypeUDP6})
	se.SetIncludeLoopbackCandidate(true)
	api := pionwebrtc.NewAPI(pionwebrtc.WithMediaEngine(me), pionwebrtc.WithSettingEngine(se))
	pc, err := api.NewPeerConnection(pionwebrtc.Configuration{
		Certificates: []pionwebrtc.Certificate{cert}, BundlePolicy: pionwebrtc.BundlePolicyMaxBundle,
	})
	if err != nil {
		return nil, nil, err
	}
	if err := pc.SetRemoteDescription(pionwebrtc.SessionDescription{Type: pionwebrtc.SDPTypeOffer, SDP: string(offer)}); err != nil {
		return pc, nil, err
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return pc, nil, err
	}
	gathered := pionwebrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return pc, nil, err
	}
	<-gathered
	return pc, []byte(pc.LocalDescription().SDP), nil
}
