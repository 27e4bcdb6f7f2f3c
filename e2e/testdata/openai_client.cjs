// Drives the daemon's /v1 door with the official openai npm package,
// unchanged, its baseURL pointed at the daemon (e2e/openai_test.go).
// Usage: node openai_client.cjs BASE_URL KEY LONG_CLIP SHORT_CLIP
// Prints one JSON object: what each call answered.
const fs = require('fs');
const { OpenAI } = require('openai');

const [base, key, longClip, shortClip] = process.argv.slice(2);
const opts = { baseURL: base + '/v1', maxRetries: 0, timeout: 120000 };
const client = new OpenAI({ apiKey: key, ...opts });
const file = (p) => fs.createReadStream(p);

async function refusal(f) {
  try {
    await f();
    return { status: 'accepted' };
  } catch (e) {
    return { status: e.status, error: e.error, name: e.constructor.name };
  }
}

(async () => {
  const out = {};
  out.models = [];
  for await (const m of client.models.list()) out.models.push(m);
  out.model = await client.models.retrieve('whisper-1');
  out.json = await client.audio.transcriptions.create({ file: file(longClip), model: 'whisper-1', language: 'en' });
  out.text = await client.audio.transcriptions.create({ file: file(shortClip), model: 'whisper-1', response_format: 'text' });
  out.srt = await client.audio.transcriptions.create({ file: file(shortClip), model: 'gpt-4o-transcribe', response_format: 'srt' });
  out.vtt = await client.audio.transcriptions.create({ file: file(shortClip), model: 'whisper-1', response_format: 'vtt' });
  out.verbose = await client.audio.transcriptions.create({
    file: file(shortClip), model: 'whisper-1', response_format: 'verbose_json',
    timestamp_granularities: ['word', 'segment'], prompt: 'forward, meters',
  });
  const stream = await client.audio.transcriptions.create({ file: file(shortClip), model: 'whisper-1', stream: true });
  out.events = [];
  for await (const e of stream) out.events.push(e);
  out.translation = await client.audio.translations.create({ file: file(shortClip), model: 'whisper-1' });
  out.translation_verbose = await client.audio.translations.create({ file: file(shortClip), model: 'whisper-1', response_format: 'verbose_json' });
  const wrong = new OpenAI({ apiKey: 'sk-not-an-earshot-key', ...opts });
  out.wrong_key = await refusal(() => wrong.audio.transcriptions.create({ file: file(shortClip), model: 'whisper-1' }));
  out.bad_format = await refusal(() => client.audio.transcriptions.create({ file: file(shortClip), model: 'whisper-1', response_format: 'xml' }));
  out.bad_model = await refusal(() => client.audio.transcriptions.create({ file: file(shortClip), model: 'no-such-model' }));
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
