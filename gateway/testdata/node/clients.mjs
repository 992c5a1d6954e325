// clients.mjs drives the official npm clients, unchanged, against a running
// gateway and prints one JSON object with what every call returned:
//
//   ollama: generate and chat (stream false and true) on a guarded virtual
//           model, generate on a plain pass-through model, list;
//   openai: chat.completions.create (stream false and true) against /v1.
//
// gateway/e2e_test.go (TestE2ENodeClients) runs it and checks the results.
//
// Environment:
//   CG_GATEWAY_URL   base URL of the gateway, e.g. http://127.0.0.1:41234 (required)
//   CG_GUARDED_MODEL virtual model of a guarded route (default "story-json")
//   CG_PLAIN_MODEL   upstream model used as is, for pass-through (default "stories")
//   CG_PROMPT        prompt of the guarded calls (default "Tell a story")
//
// A failing call is recorded as {"error": "..."} under its name; the script
// itself exits 0 unless its environment is wrong.
import { Ollama } from 'ollama';
import OpenAI from 'openai';

const base = (process.env.CG_GATEWAY_URL ?? '').replace(/\/+$/, '');
if (!base) {
  console.error('clients.mjs: CG_GATEWAY_URL is not set');
  process.exit(2);
}
const guarded = process.env.CG_GUARDED_MODEL || 'story-json';
const plain = process.env.CG_PLAIN_MODEL || 'stories';
const prompt = process.env.CG_PROMPT || 'Tell a story';
const options = { num_predict: 256, temperature: 0, seed: 42 };
const messages = [{ role: 'user', content: prompt }];

const ollama = new Ollama({ host: base });
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });

const results = {
  clients: {
    ollama: await versionOf('ollama'),
    openai: await versionOf('openai'),
    node: process.version,
  },
};

async function versionOf(pkg) {
  try {
    const { readFile } = await import('node:fs/promises');
    const url = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
    return JSON.parse(await readFile(url, 'utf8')).version;
  } catch {
    return null;
  }
}

async function step(name, fn) {
  try {
    results[name] = await fn();
  } catch (err) {
    results[name] = { error: String(err?.stack ?? err) };
  }
}

// Native stream: concatenate the text of every chunk; the last chunk is the
// done chunk with the counters and the gateway's contract summary.
async function collect(iter, textOf) {
  let text = '';
  let chunks = 0;
  let last = null;
  for await (const part of iter) {
    text += textOf(part);
    chunks++;
    last = part;
  }
  return {
    text,
    chunks,
    done: last?.done ?? false,
    done_reason: last?.done_reason ?? null,
    eval_count: last?.eval_count ?? null,
    contract: last?.contract ?? null,
  };
}

await step('generate', async () => {
  const r = await ollama.generate({ model: guarded, prompt, stream: false, options });
  return { text: r.response, done: r.done, done_reason: r.done_reason ?? null, eval_count: r.eval_count ?? null, contract: r.contract ?? null };
});

await step('generate_stream', async () => {
  const it = await ollama.generate({ model: guarded, prompt, stream: true, options });
  return collect(it, (p) => p.response ?? '');
});

await step('chat', async () => {
  const r = await ollama.chat({ model: guarded, messages, stream: false, options });
  return { text: r.message?.content ?? null, role: r.message?.role ?? null, done: r.done, done_reason: r.done_reason ?? null, eval_count: r.eval_count ?? null, contract: r.contract ?? null };
});

await step('chat_stream', async () => {
  const it = await ollama.chat({ model: guarded, messages, stream: true, options });
  return collect(it, (p) => p.message?.content ?? '');
});

await step('plain_generate', async () => {
  const r = await ollama.generate({ model: plain, prompt: 'Once upon a time', stream: false, options: { ...options, num_predict: 48 } });
  return { text: r.response, done: r.done, contract: r.contract ?? null };
});

await step('list', async () => {
  const r = await ollama.list();
  return { models: r.models.map((m) => m.name) };
});

await step('openai', async () => {
  const r = await openai.chat.completions.create({ model: guarded, messages, max_tokens: 256, temperature: 0, seed: 42 });
  return {
    text: r.choices[0]?.message?.content ?? null,
    finish_reason: r.choices[0]?.finish_reason ?? null,
    object: r.object,
    contract: r.contract ?? null,
  };
});

await step('openai_stream', async () => {
  const stream = await openai.chat.completions.create({ model: guarded, messages, max_tokens: 256, temperature: 0, seed: 42, stream: true });
  let text = '';
  let chunks = 0;
  let finish = null;
  let contract = null;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    contract = chunk.contract ?? contract;
  }
  return { text, chunks, finish_reason: finish, contract };
});

console.log(JSON.stringify(results));
