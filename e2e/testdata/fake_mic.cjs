// Launches headless Chromium with a fake microphone that plays a speech
// file (once, then silence, when once is set), shared by the browser
// scripts here. Chromium reads the file relative to its own working
// directory and, finding none, captures silence without a word: the path
// is made absolute and must name a readable file.
"use strict";
const fs = require("fs");
const path = require("path");

module.exports = function launchWithMic(chromium, file, once) {
  const wav = path.resolve(file);
  fs.accessSync(wav, fs.constants.R_OK);
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--headless", "--no-sandbox",
      "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
      // %noloop: the file plays once, then the microphone is silent.
      "--use-file-for-fake-audio-capture=" + wav + (once ? "%noloop" : ""),
    ],
  });
};
