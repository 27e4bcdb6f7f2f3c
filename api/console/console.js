// earshot operator console: plain JavaScript over the public /v2 API.
// The API key lives in sessionStorage only (this tab); nothing is sent to
// any other origin.
"use strict";

const KEY = "earshot.apiKey";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(c);
  }
  return e;
}

function fmtTime(s) {
  if (typeof s !== "number") return "";
  const m = Math.floor(s / 60);
  const r = (s - m * 60).toFixed(2).padStart(5, "0");
  return m + ":" + r;
}

function fmtDate(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

// ApiError carries the contract's error body.
class ApiError extends Error {
  constructor(status, body) {
    let msg = (body && body.message) || "HTTP " + status;
    if (body && Array.isArray(body.validation_errors) && body.validation_errors.length) {
      msg += ": " + body.validation_errors.join("; ");
    }
    super(msg);
    this.status = status;
  }
}

async function api(method, path, opts) {
  opts = opts || {};
  const headers = Object.assign({ "x-service-key": sessionStorage.getItem(KEY) || "" }, opts.headers || {});
  let body = opts.body;
  if (opts.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.json);
  }
  const resp = await fetch(path, { method, headers, body });
  if (opts.raw) {
    if (!resp.ok) throw new ApiError(resp.status, await resp.json().catch(() => null));
    return resp;
  }
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!resp.ok) {
    if (resp.status === 401 && path !== "/v2/pre-recorded?limit=1") signOut("Your API key was refused; sign in again.");
    throw new ApiError(resp.status, data);
  }
  return data;
}

function notice(text, bad) {
  const n = $("notice");
  n.textContent = text || "";
  n.hidden = !text;
  n.classList.toggle("bad", !!bad);
}

// ---- views ----

const views = ["signin", "record", "upload", "jobs", "job"];

function show(view) {
  for (const v of views) $("view-" + v).hidden = v !== view;
  const navView = view === "job" ? "jobs" : view;
  for (const b of document.querySelectorAll("#nav button[data-view]")) {
    if (b.dataset.view === navView) b.setAttribute("aria-current", "page");
    else b.removeAttribute("aria-current");
  }
  $("nav").hidden = view === "signin";
}

function signOut(message) {
  sessionStorage.removeItem(KEY);
  show("signin");
  $("signin-error").textContent = message || "";
  $("apikey").value = "";
  $("apikey").focus();
}

async function signIn(ev) {
  ev.preventDefault();
  const key = $("apikey").value.trim();
  $("signin-error").textContent = "";
  sessionStorage.setItem(KEY, key);
  try {
    await api("GET", "/v2/pre-recorded?limit=1");
  } catch (e) {
    sessionStorage.removeItem(KEY);
    $("signin-error").textContent = e.status === 401 ? "That API key was not accepted." : "Could not sign in: " + e.message;
    return;
  }
  $("apikey").value = "";
  show("record");
  $("rec-start").focus();
}

// ---- record from microphone (live session + WebSocket messages + WHIP) ----

const rec = { pc: null, ws: null, mic: null, whip: null, token: null, id: null };

function recStatus(text) { $("rec-status").textContent = text; }

function waitOpen(ws) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("the message channel did not open")), 10000);
    ws.addEventListener("open", () => { clearTimeout(t); resolve(); }, { once: true });
    ws.addEventListener("close", () => { clearTimeout(t); reject(new Error("the message channel closed")); }, { once: true });
  });
}

function waitGathering(pc) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 2000);
    pc.addEventListener("icegatheringstatechange", () => {
      if (pc.iceGatheringState === "complete") { clearTimeout(t); resolve(); }
    });
  });
}

function onLiveMessage(ev) {
  let m;
  try { m = JSON.parse(ev.data); } catch (e) { return; }
  const d = m.data || {};
  switch (m.type) {
    case "transcript": {
      const u = d.utterance || {};
      if (d.is_final) {
        if (u.text) {
          $("rec-finals").append(el("li", { class: "final" }, el("span", { class: "t" }, "[" + fmtTime(u.start) + "] "), u.text));
        }
        $("rec-partial").textContent = "";
      } else {
        $("rec-partial").textContent = u.text || "";
      }
      break;
    }
    case "post_final_transcript":
      recStatus("Finished: the transcript is saved in the job.");
      break;
    case "end_session":
      $("rec-done").hidden = false;
      break;
    case "error":
      notice("The session reported: " + ((m.error && m.error.message) || "an error"), true);
      break;
  }
}

async function recStart() {
  $("rec-start").disabled = true;
  $("rec-finals").replaceChildren();
  $("rec-partial").textContent = "";
  $("rec-done").hidden = true;
  notice("");
  try {
    recStatus("Asking for the microphone…");
    rec.mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    recStatus("Opening a live session…");
    // Opus (wideband, decoded by earshot to 16 kHz) when the browser has it;
    // otherwise G.711 µ-law at 8 kHz.
    const codec = sendCodec();
    const format = codec === "audio/opus"
      ? { encoding: "wav/pcm", bit_depth: 16, sample_rate: 16000, channels: 1 }
      : { encoding: "wav/ulaw", bit_depth: 8, sample_rate: 8000, channels: 1 };
    const s = await api("POST", "/v2/live", { json: {
      ...format,
      custom_metadata: { source: "console" },
      messages_config: {
        receive_partial_transcripts: true, receive_final_transcripts: true, receive_lifecycle_events: true,
        receive_post_processing_events: true, receive_errors: true, receive_acknowledgments: false, receive_speech_events: false,
      },
    } });
    rec.id = s.id;
    rec.token = new URL(s.url).searchParams.get("token");
    // The WebSocket listens for messages; it must connect before WHIP.
    rec.ws = new WebSocket(s.url);
    rec.ws.addEventListener("message", onLiveMessage);
    await waitOpen(rec.ws);
    recStatus("Connecting audio…");
    const pc = new RTCPeerConnection();
    rec.pc = pc;
    const tr = pc.addTransceiver(rec.mic.getAudioTracks()[0], { direction: "sendonly" });
    preferCodec(tr, codec);
    await pc.setLocalDescription(await pc.createOffer());
    await waitGathering(pc);
    const resp = await fetch("/v2/live/" + encodeURIComponent(s.id) + "/whip", {
      method: "POST",
      headers: { "Content-Type": "application/sdp", Authorization: "Bearer " + rec.token },
      body: pc.localDescription.sdp,
    });
    if (resp.status !== 201) throw new ApiError(resp.status, await resp.json().catch(() => null));
    rec.whip = resp.headers.get("Location");
    await pc.setRemoteDescription({ type: "answer", sdp: await resp.text() });
    pc.addEventListener("connectionstatechange", () => {
      if (pc.connectionState === "connected") recStatus("Recording: speak now.");
      if (pc.connectionState === "failed") recStatus("The audio connection failed.");
    });
    recStatus("Recording: speak now.");
    $("rec-stop").disabled = false;
    $("rec-stop").focus();
  } catch (e) {
    recStatus("Not recording.");
    notice("Could not start recording: " + e.message, true);
    recCleanup();
    $("rec-start").disabled = false;
  }
}

// sendCodec is the codec the page asks for: Opus when the browser can send
// it (every current browser), else PCMU. earshot takes Opus for a 16 kHz
// session and PCMU/PCMA for an 8 kHz one.
function sendCodec() {
  try {
    const caps = RTCRtpSender.getCapabilities("audio").codecs;
    if (caps.some((c) => c.mimeType.toLowerCase() === "audio/opus")) return "audio/opus";
  } catch (e) { /* no capabilities API: fall back to G.711 */ }
  return "audio/pcmu";
}

// preferCodec offers only the session's codec (mime type), so the answer
// cannot pick another.
function preferCodec(tr, mime) {
  if (!tr.setCodecPreferences) return;
  for (const src of [window.RTCRtpReceiver, window.RTCRtpSender]) {
    try {
      const caps = src.getCapabilities("audio").codecs.filter((c) => c.mimeType.toLowerCase() === mime);
      if (caps.length) { tr.setCodecPreferences(caps); return; }
    } catch (e) { /* try the other list */ }
  }
}

function recCleanup() {
  if (rec.pc) rec.pc.close();
  if (rec.mic) rec.mic.getTracks().forEach((t) => t.stop());
  rec.pc = null;
  rec.mic = null;
}

async function recStop() {
  $("rec-stop").disabled = true;
  recStatus("Finishing: recognising the last words…");
  try {
    if (rec.whip) {
      const resp = await fetch(rec.whip, { method: "DELETE", headers: { Authorization: "Bearer " + rec.token } });
      if (!resp.ok) throw new ApiError(resp.status, await resp.json().catch(() => null));
    }
    recStatus("Finished: the transcript is saved in the job.");
    $("rec-done").hidden = false;
  } catch (e) {
    notice("Stopping failed: " + e.message, true);
  } finally {
    recCleanup();
    rec.whip = null;
    $("rec-start").disabled = false;
  }
}

// ---- upload a file ----

async function uploadSubmit(ev) {
  ev.preventDefault();
  const file = $("upload-file").files[0];
  if (!file) return;
  const status = (t) => { $("upload-status").textContent = t; };
  $("upload-submit").disabled = true;
  try {
    status("Uploading " + file.name + "…");
    const fd = new FormData();
    fd.append("audio", file, file.name);
    const up = await api("POST", "/v2/upload", { body: fd });
    const body = { audio_url: up.audio_url };
    if ($("opt-diarization").checked) body.diarization = true;
    if ($("opt-subtitles").checked) { body.subtitles = true; body.subtitles_config = { formats: ["srt", "vtt"] }; }
    const job = await api("POST", "/v2/pre-recorded", { json: body });
    status("Transcribing… (job " + job.id + ")");
    for (;;) {
      const j = await api("GET", "/v2/pre-recorded/" + encodeURIComponent(job.id));
      if (j.status === "done" || j.status === "error") break;
      status("Transcribing… (" + j.status + ")");
      await new Promise((r) => setTimeout(r, 1000));
    }
    status("Done.");
    await openJob("pre-recorded", job.id);
  } catch (e) {
    status("Failed: " + e.message);
  } finally {
    $("upload-submit").disabled = false;
  }
}

// ---- jobs list ----

const list = { offset: 0, next: null };

async function loadJobs() {
  const kind = $("jobs-kind").value;
  const limit = $("jobs-limit").value;
  const q = new URLSearchParams({ offset: String(list.offset), limit });
  for (const c of document.querySelectorAll('#jobs-form input[name="status"]:checked')) q.append("status", c.value);
  const tbody = $("jobs-body");
  try {
    const page = await api("GET", "/v2/" + kind + "?" + q);
    list.next = page.next;
    tbody.replaceChildren();
    for (const j of page.items) {
      const f = j.file || {};
      tbody.append(el("tr", {},
        el("td", {}, fmtDate(j.created_at)),
        el("td", { class: "status-" + j.status }, j.status),
        el("td", {}, typeof f.audio_duration === "number" ? fmtTime(f.audio_duration) : ""),
        el("td", {}, f.filename || f.source || ""),
        el("td", {}, el("button", { type: "button", class: "link", "aria-label": "Open job " + j.id, onclick: () => openJob(kind, j.id) }, j.id.slice(0, 8)))));
    }
    if (!page.items.length) tbody.append(el("tr", {}, el("td", { colspan: "5" }, "No jobs match.")));
    const n = Number(limit);
    $("jobs-caption").textContent = (kind === "live" ? "Live" : "Pre-recorded") + " jobs, newest first";
    $("jobs-page").textContent = page.items.length ? "Jobs " + (list.offset + 1) + "–" + (list.offset + page.items.length) : "";
    $("jobs-prev").disabled = list.offset === 0;
    $("jobs-next").disabled = !page.next || page.items.length < n;
  } catch (e) {
    notice("Could not list jobs: " + e.message, true);
  }
}

// ---- job view ----

const job = { kind: null, id: null, audioURL: null };

async function openJob(kind, id) {
  job.kind = kind;
  job.id = id;
  show("job");
  $("job-h").textContent = (kind === "live" ? "Live job " : "Job ") + id;
  $("job-h").focus();
  await renderJob();
}

async function renderJob() {
  const { kind, id } = job;
  let j;
  try {
    j = await api("GET", "/v2/" + kind + "/" + encodeURIComponent(id));
  } catch (e) {
    notice("Could not read the job: " + e.message, true);
    return;
  }
  const f = j.file || {};
  const meta = [
    ["Status", j.status], ["Created", fmtDate(j.created_at)], ["Completed", fmtDate(j.completed_at)],
    ["File", f.filename || f.source || ""], ["Duration", typeof f.audio_duration === "number" ? fmtTime(f.audio_duration) : ""],
    ["Channels", f.number_of_channels != null ? String(f.number_of_channels) : ""],
  ];
  if (j.status === "error") meta.push(["Error", (j.error_code || "") + " " + ((j.post_session_metadata || {}).error || "")]);
  $("job-meta").replaceChildren(...meta.filter((m) => m[1]).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));

  const tr = (j.result && j.result.transcription) || {};
  $("job-transcript").textContent = tr.full_transcript || (j.status === "done" ? "(no speech recognised)" : "(no result yet: " + j.status + ")");
  const utts = tr.utterances || [];
  const box = $("job-utterances");
  box.replaceChildren();
  for (const u of utts) {
    const who = "channel " + u.channel + (u.speaker !== undefined && u.speaker !== null ? ", speaker " + u.speaker : "");
    const words = el("ul", { class: "words", "aria-label": "Words with start and end times" },
      ...(u.words || []).map((w) => el("li", {}, w.word + " ", el("span", { class: "t" }, fmtTime(w.start) + "–" + fmtTime(w.end)))));
    box.append(el("details", {},
      el("summary", {}, el("span", { class: "t" }, fmtTime(u.start) + "–" + fmtTime(u.end) + " · " + who + ": "), u.text),
      el("button", { type: "button", class: "link", onclick: () => playFrom(u.start) }, "Play from " + fmtTime(u.start)),
      words));
  }
  if (!utts.length) box.append(el("p", {}, "No utterances."));
  const subs = tr.subtitles || [];
  $("job-subtitles-wrap").hidden = !subs.length;
  $("job-subtitles").replaceChildren(...subs.flatMap((s) => [el("h4", {}, s.format.toUpperCase()), el("pre", {}, s.subtitles)]));
  await loadAudio(j.status === "done");
}

async function loadAudio(ready) {
  const audio = $("job-audio");
  if (job.audioURL) { URL.revokeObjectURL(job.audioURL); job.audioURL = null; }
  audio.removeAttribute("src");
  $("job-audio-wrap").hidden = true;
  if (!ready) return;
  try {
    const resp = await api("GET", "/v2/" + job.kind + "/" + encodeURIComponent(job.id) + "/file", { raw: true });
    job.audioURL = URL.createObjectURL(await resp.blob());
    audio.src = job.audioURL;
    $("job-audio-wrap").hidden = false;
  } catch (e) {
    // No audio kept (deleted, or the job failed before storing it).
  }
}

function playFrom(t) {
  const a = $("job-audio");
  if (!a.src) return;
  a.currentTime = t;
  a.play();
}

async function deleteJob() {
  if (!confirm("Delete this job, its audio and its transcript? This cannot be undone.")) return;
  try {
    await api("DELETE", "/v2/" + job.kind + "/" + encodeURIComponent(job.id));
    notice("Job " + job.id + " deleted.");
    show("jobs");
    await loadJobs();
  } catch (e) {
    notice("Could not delete: " + e.message, true);
  }
}

// ---- wiring ----

document.addEventListener("DOMContentLoaded", () => {
  $("signin-form").addEventListener("submit", signIn);
  $("signout").addEventListener("click", () => signOut("Signed out."));
  for (const b of document.querySelectorAll("#nav button[data-view]")) {
    b.addEventListener("click", () => {
      notice("");
      show(b.dataset.view);
      if (b.dataset.view === "jobs") { list.offset = 0; loadJobs(); }
    });
  }
  $("rec-start").addEventListener("click", recStart);
  $("rec-stop").addEventListener("click", recStop);
  $("rec-open").addEventListener("click", () => openJob("live", rec.id));
  $("upload-form").addEventListener("submit", uploadSubmit);
  $("jobs-form").addEventListener("submit", (ev) => { ev.preventDefault(); list.offset = 0; loadJobs(); });
  $("jobs-prev").addEventListener("click", () => { list.offset = Math.max(0, list.offset - Number($("jobs-limit").value)); loadJobs(); });
  $("jobs-next").addEventListener("click", () => { list.offset += Number($("jobs-limit").value); loadJobs(); });
  $("job-back").addEventListener("click", () => { show("jobs"); loadJobs(); });
  $("job-refresh").addEventListener("click", renderJob);
  $("job-delete").addEventListener("click", deleteJob);
  if (sessionStorage.getItem(KEY)) show("record");
  else show("signin");
});
