// Drives the operator console in headless Chromium (playwright-core):
// sign in, record from the fake microphone over WebRTC until a final
// transcript shows, stop, then upload a file and wait for its result.
// Usage: node console_browser.cjs BASE_URL API_KEY AUDIO_WAV SHOT_DIR
// Prints one JSON line with what it saw; exits non-zero on failure.
"use strict";
const { chromium } = require("playwright-core");
const launchWithMic = require("./fake_mic.cjs");
const path = require("path");

const [base, key, wav, shots] = process.argv.slice(2);

(async () => {
  const browser = await launchWithMic(chromium, wav, false);
  const out = {};
  try {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    await ctx.grantPermissions(["microphone"], { origin: base });
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });

    await page.goto(base + "/console");
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("#view-record").waitFor({ state: "visible" });

    // Record: the fake microphone loops the speech file.
    await page.getByRole("button", { name: "Start recording" }).click();
    await page.waitForFunction(() => document.getElementById("rec-status").textContent.startsWith("Recording"), null, { timeout: 20000 });
    await page.locator("#rec-finals li").first().waitFor({ timeout: 30000 });
    await page.getByRole("button", { name: "Stop recording" }).click();
    await page.locator("#rec-done").waitFor({ state: "visible", timeout: 30000 });
    out.live_finals = await page.locator("#rec-finals li").allTextContents();
    await page.screenshot({ path: path.join(shots, "console-record.png"), fullPage: true });

    // The finished live job opens with its transcript and audio.
    await page.getByRole("button", { name: "Open the finished job" }).click();
    await page.locator("#job-audio-wrap").waitFor({ state: "visible", timeout: 20000 });
    out.live_transcript = await page.locator("#job-transcript").textContent();

    // Upload a file and wait for its result.
    await page.getByRole("button", { name: "Upload a file" }).click();
    await page.getByLabel("Audio or video file").setInputFiles(wav);
    await page.getByRole("button", { name: "Upload and transcribe" }).click();
    // The upload's job runs once the one worker is free: on a loaded box
    // the recorded session's batch pass may hold it for half a minute.
    await page.locator("#view-job").waitFor({ state: "visible", timeout: 120000 });
    await page.waitForFunction(() => !document.getElementById("job-transcript").textContent.startsWith("(no result"), null, { timeout: 60000 });
    out.upload_transcript = await page.locator("#job-transcript").textContent();
    out.upload_utterances = await page.locator("#job-utterances details").count();
    await page.locator("#job-audio-wrap").waitFor({ state: "visible", timeout: 20000 });
    await page.screenshot({ path: path.join(shots, "console-upload.png"), fullPage: true });

    // The jobs list shows both kinds.
    await page.getByRole("button", { name: "Jobs", exact: true }).click();
    await page.locator("#jobs-body tr").first().waitFor();
    out.jobs_rows = await page.locator("#jobs-body tr").count();
    out.errors = errors;
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(out));
})().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
