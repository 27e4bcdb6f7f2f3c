// Sends a speech file from headless Chromium's fake microphone to a live
// session over WHIP (RFC 9725), offering only one codec, then ends the
// resource. The page is the daemon's own /console (same origin: the WHIP
// fetches need no CORS preflight beyond what the door answers anyway).
// Usage: node whip_browser.cjs BASE_URL SESSION_ID TOKEN AUDIO_WAV MIME SECONDS [DTMF]
// MIME is audio/opus or audio/pcmu; SECONDS is how long to send (the file
// plus trailing silence), counted in packets sent after the track is on.
// DTMF, when given, offers telephone-event too and keys those digits
// (RTCDTMFSender.insertDTMF, 100 ms tones 70 ms apart) one second after the
// track is on.
// Prints one JSON line: {codec (negotiated, from the answer), status,
// packets_sent, dtmf_played (the tones the sender reported), errors}; exits
// non-zero on failure.
"use strict";
const { chromium } = require("playwright-core");
const launchWithMic = require("./fake_mic.cjs");

const [base, id, token, wav, mime, seconds, dtmf = ""] = process.argv.slice(2);

(async () => {
  const browser = await launchWithMic(chromium, wav, true);
  let out;
  try {
    const ctx = await browser.newContext();
    await ctx.grantPermissions(["microphone"], { origin: base });
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(base + "/console");
    out = await page.evaluate(async ({ id, token, mime, seconds, dtmf }) => {
      const pc = new RTCPeerConnection();
      // The track is attached once connected: the fake microphone starts
      // playing the file when it is opened, and nothing may be lost to
      // connection set-up on a loaded machine.
      const tr = pc.addTransceiver("audio", { direction: "sendonly" });
      const caps = RTCRtpReceiver.getCapabilities("audio").codecs.filter((c) => c.mimeType.toLowerCase() === mime ||
        (dtmf !== "" && c.mimeType.toLowerCase() === "audio/telephone-event"));
      tr.setCodecPreferences(caps);
      await pc.setLocalDescription(await pc.createOffer());
      await new Promise((resolve) => {
        if (pc.iceGatheringState === "complete") return resolve();
        const t = setTimeout(resolve, 3000);
        pc.addEventListener("icegatheringstatechange", () => { if (pc.iceGatheringState === "complete") { clearTimeout(t); resolve(); } });
      });
      const resp = await fetch("/v2/live/" + id + "/whip", {
        method: "POST", headers: { "Content-Type": "application/sdp", Authorization: "Bearer " + token },
        body: pc.localDescription.sdp,
      });
      const answer = await resp.text();
      if (resp.status !== 201) return { status: resp.status, body: answer };
      const loc = resp.headers.get("Location");
      await pc.setRemoteDescription({ type: "answer", sdp: answer });
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("not connected within 15 s: " + pc.connectionState)), 15000);
        const check = () => { if (pc.connectionState === "connected") { clearTimeout(t); resolve(); } };
        pc.addEventListener("connectionstatechange", check);
        check();
      });
      const mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
      await tr.sender.replaceTrack(mic.getAudioTracks()[0]);
      // Let the file play out: 20 ms packets for SECONDS (the track keeps
      // sending silence after the file ends), whatever the machine's load.
      const want = Math.ceil(Number(seconds) * 50);
      const limit = Date.now() + Number(seconds) * 3000 + 10000;
      let packets = 0;
      let played = "";
      let keyed = null;
      while (packets < want && Date.now() < limit) {
        await new Promise((r) => setTimeout(r, 100));
        (await pc.getStats()).forEach((s) => { if (s.type === "outbound-rtp" && s.kind === "audio") packets = s.packetsSent; });
        if (dtmf !== "" && keyed === null && packets >= 50) {
          const sender = tr.sender.dtmf;
          if (!sender || !sender.canInsertDTMF) return { status: 0, body: "cannot insert DTMF: telephone-event not negotiated" };
          keyed = new Promise((resolve) => {
            const t = setTimeout(resolve, 20000);
            sender.addEventListener("tonechange", (e) => { if (e.tone === "") { clearTimeout(t); resolve(); } else played += e.tone; });
          });
          sender.insertDTMF(dtmf, 100, 70);
        }
      }
      if (keyed !== null) await keyed;
      if (packets < want) return { status: 0, body: "sent " + packets + " packets of " + want };
      const del = await fetch(loc, { method: "DELETE", headers: { Authorization: "Bearer " + token } });
      pc.close();
      mic.getTracks().forEach((t) => t.stop());
      const m = answer.match(/a=rtpmap:\d+ ([A-Za-z0-9]+)\//);
      return { status: 201, delete_status: del.status, codec: m ? m[1] : "", packets_sent: packets, dtmf_played: played };
    }, { id, token, mime, seconds, dtmf });
    out.errors = errors;
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
})().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
