// clients.mjs drives real npm clients, unchanged, against a running
// gateway and prints one JSON object with what every call returned:
//
//   ollama:    generate and chat (stream false and true) on a guarded virtual
//              model and on a plain pass-through model, list;
//   openai:    chat.completions.create (stream false and true, guarded and
//              plain), chat.completions.parse with a JSON Schema,
//              completions.create, responses.create (stream false and true,
//              guarded and plain), responses.parse;
//   anthropic: messages.create (stream false and true, guarded and plain);
//   ai:        generateObject and streamObject (ollama-ai-provider-v2),
//              generateText on a plain model;
//   langchain: ChatOllama withStructuredOutput (invoke and stream), invoke
//              and stream on a plain model.
//
// gateway/e2e_test.go (TestE2ENodeClients) runs it and checks the results.
//
// Environment:
//   CG_GATEWAY_URL   base URL of the gateway, e.g. http://127.0.0.1:41234 (required)
//   CG_GUARDED_MODEL virtual model of a guarded route (default "story-json")
//   CG_PLAIN_MODEL   upstream model used as is, for pass-through (default "stories")
//   CG_PROMPT        prompt of the guarded calls (default "Tell a story")
//   CG_STORY_SCHEMA  file of the guarded route's JSON Schema (required for
//                    the structured-output calls)
//
// A failing call is recorded as {"error": "..."} under its name; the script
// itself exits 0 unless its environment is wrong.
import { readFileSync } from 'node:fs';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { generateObject, streamObject, generateText, streamText, jsonSchema } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { ChatOllama } from '@langchain/ollama';

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
    '@anthropic-ai/sdk': await versionOf('@anthropic-ai/sdk'),
    ai: await versionOf('ai'),
    'ollama-ai-provider-v2': await versionOf('ollama-ai-provider-v2'),
    '@langchain/ollama': await versionOf('@langchain/ollama'),
    '@langchain/core': await versionOf('@langchain/core'),
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
    results[name] = { error: String(err?.stack ?? err), status: err?.status ?? null, error_body: err?.error ?? null };
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

await step('plain_generate_stream', async () => {
  const it = await ollama.generate({ model: plain, prompt: 'Once upon a time', stream: true, options: { ...options, num_predict: 48 } });
  return collect(it, (p) => p.response ?? '');
});

await step('plain_chat', async () => {
  const r = await ollama.chat({ model: plain, messages: [{ role: 'user', content: 'Once upon a time' }], stream: false, options: { ...options, num_predict: 48 } });
  return { text: r.message?.content ?? null, role: r.message?.role ?? null, done: r.done, contract: r.contract ?? null };
});

await step('plain_chat_stream', async () => {
  const it = await ollama.chat({ model: plain, messages: [{ role: 'user', content: 'Once upon a time' }], stream: true, options: { ...options, num_predict: 48 } });
  return collect(it, (p) => p.message?.content ?? '');
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


const schema = process.env.CG_STORY_SCHEMA ? JSON.parse(readFileSync(process.env.CG_STORY_SCHEMA, 'utf8')) : null;
const plainShort = { max_tokens: 24, temperature: 0, seed: 42 };

await step('openai_plain', async () => {
  const r = await openai.chat.completions.create({ model: plain, messages: [{ role: 'user', content: 'Once upon a time' }], ...plainShort });
  return { text: r.choices[0]?.message?.content ?? null, finish_reason: r.choices[0]?.finish_reason ?? null, object: r.object, contract: r.contract ?? null };
});

await step('openai_plain_stream', async () => {
  const stream = await openai.chat.completions.create({ model: plain, messages: [{ role: 'user', content: 'Once upon a time' }], ...plainShort, stream: true });
  let text = '';
  let chunks = 0;
  let finish = null;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, chunks, finish_reason: finish, contract: null };
});

await step('openai_parse', async () => {
  const r = await openai.chat.completions.parse({
    model: plain, messages, max_tokens: 256, temperature: 0, seed: 42,
    response_format: { type: 'json_schema', json_schema: { name: 'story', schema, strict: true } },
  });
  const m = r.choices[0]?.message;
  return { text: m?.content ?? null, parsed: m?.parsed ?? null, finish_reason: r.choices[0]?.finish_reason ?? null, object: r.object, contract: r.contract ?? null };
});

await step('completions', async () => {
  const r = await openai.completions.create({ model: guarded, prompt, max_tokens: 256, temperature: 0, seed: 42 });
  return { text: r.choices[0]?.text ?? null, finish_reason: r.choices[0]?.finish_reason ?? null, object: r.object, contract: r.contract ?? null };
});

await step('completions_stream', async () => {
  const stream = await openai.completions.create({ model: guarded, prompt, max_tokens: 256, temperature: 0, seed: 42, stream: true });
  let text = '';
  let chunks = 0;
  let finish = null;
  let contract = null;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.text ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    contract = chunk.contract ?? contract;
  }
  return { text, chunks, finish_reason: finish, contract };
});

await step('completions_plain', async () => {
  const r = await openai.completions.create({ model: plain, prompt: 'Once upon a time', ...plainShort });
  return { text: r.choices[0]?.text ?? null, finish_reason: r.choices[0]?.finish_reason ?? null, object: r.object, contract: r.contract ?? null };
});

await step('completions_plain_stream', async () => {
  const stream = await openai.completions.create({ model: plain, prompt: 'Once upon a time', ...plainShort, stream: true });
  let text = '';
  let chunks = 0;
  let finish = null;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.text ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, chunks, finish_reason: finish, contract: null };
});

await step('responses', async () => {
  const r = await openai.responses.create({ model: guarded, input: prompt, max_output_tokens: 256, temperature: 0 });
  return { text: r.output_text, response_status: r.status, object: r.object, contract: r.contract ?? null };
});

await step('responses_stream', async () => {
  const stream = await openai.responses.create({ model: guarded, input: prompt, max_output_tokens: 256, temperature: 0, stream: true });
  let text = '';
  let chunks = 0;
  let final = null;
  for await (const ev of stream) {
    chunks++;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') final = ev.response;
  }
  return { text, chunks, response_status: final?.status ?? null, final_text: final?.output_text ?? null, contract: final?.contract ?? null };
});

await step('responses_plain', async () => {
  const r = await openai.responses.create({ model: plain, input: 'Once upon a time', max_output_tokens: 24, temperature: 0 });
  return { text: r.output_text, response_status: r.status, object: r.object, contract: r.contract ?? null };
});

await step('responses_plain_stream', async () => {
  const stream = await openai.responses.create({ model: plain, input: 'Once upon a time', max_output_tokens: 24, temperature: 0, stream: true });
  let text = '';
  let chunks = 0;
  let final = null;
  for await (const ev of stream) {
    chunks++;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') final = ev.response;
  }
  return { text, chunks, response_status: final?.status ?? null, contract: final?.contract ?? null };
});

await step('responses_parse', async () => {
  const r = await openai.responses.parse({
    model: plain, input: prompt, max_output_tokens: 256, temperature: 0,
    text: { format: { type: 'json_schema', name: 'story', schema, strict: true } },
  });
  return { text: r.output_text, parsed: r.output_parsed ?? null, response_status: r.status, contract: r.contract ?? null };
});

const anthropic = new Anthropic({ baseURL: base, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });

await step('anthropic', async () => {
  const r = await anthropic.messages.create({ model: guarded, max_tokens: 256, temperature: 0, messages });
  return { text: r.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), stop_reason: r.stop_reason, type: r.type, contract: r.contract ?? null };
});

await step('anthropic_stream', async () => {
  const stream = await anthropic.messages.create({ model: guarded, max_tokens: 256, temperature: 0, messages, stream: true });
  let text = '';
  let chunks = 0;
  let stop = null;
  let contract = null;
  for await (const ev of stream) {
    chunks++;
    if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    if (ev.type === 'message_delta') {
      stop = ev.delta.stop_reason;
      contract = ev.contract ?? null;
    }
  }
  return { text, chunks, stop_reason: stop, contract };
});

await step('anthropic_plain', async () => {
  const r = await anthropic.messages.create({ model: plain, max_tokens: 24, temperature: 0, messages: [{ role: 'user', content: 'Once upon a time' }] });
  return { text: r.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), stop_reason: r.stop_reason, type: r.type, contract: r.contract ?? null };
});

await step('anthropic_plain_stream', async () => {
  const stream = anthropic.messages.stream({ model: plain, max_tokens: 24, temperature: 0, messages: [{ role: 'user', content: 'Once upon a time' }] });
  const m = await stream.finalMessage();
  return { text: m.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), stop_reason: m.stop_reason, chunks: 1, contract: null };
});

const aiOllama = createOllama({ baseURL: `${base}/api` });

await step('ai_generate_object', async () => {
  const r = await generateObject({ model: aiOllama(guarded), schema: jsonSchema(schema), prompt, temperature: 0, seed: 42, maxRetries: 0 });
  return { text: JSON.stringify(r.object), object_value: r.object, finish_reason: r.finishReason };
});

await step('ai_stream_object', async () => {
  const r = streamObject({ model: aiOllama(guarded), schema: jsonSchema(schema), prompt, temperature: 0, seed: 42, maxRetries: 0 });
  let chunks = 0;
  for await (const _ of r.partialObjectStream) chunks++;
  const obj = await r.object;
  return { text: JSON.stringify(obj), chunks, finish_reason: await r.finishReason };
});

await step('ai_plain', async () => {
  const r = await generateText({ model: aiOllama(plain), prompt: 'Once upon a time', temperature: 0, seed: 42, maxOutputTokens: 24, maxRetries: 0 });
  return { text: r.text, finish_reason: r.finishReason };
});

await step('ai_plain_stream', async () => {
  const r = streamText({ model: aiOllama(plain), prompt: 'Once upon a time', temperature: 0, seed: 42, maxOutputTokens: 24, maxRetries: 0 });
  let text = '';
  let chunks = 0;
  for await (const part of r.textStream) {
    chunks++;
    text += part;
  }
  return { text, chunks, finish_reason: await r.finishReason };
});

await step('langchain_structured', async () => {
  const llm = new ChatOllama({ model: guarded, baseUrl: base, temperature: 0, seed: 42, numPredict: 256 });
  const r = await llm.withStructuredOutput(schema, { name: 'story' }).invoke(prompt);
  return { text: JSON.stringify(r), object_value: r };
});

await step('langchain_structured_stream', async () => {
  const llm = new ChatOllama({ model: guarded, baseUrl: base, temperature: 0, seed: 42, numPredict: 256 });
  let chunks = 0;
  let last = null;
  for await (const part of await llm.withStructuredOutput(schema, { name: 'story' }).stream(prompt)) {
    chunks++;
    last = part;
  }
  return { text: JSON.stringify(last), chunks };
});

await step('langchain_plain', async () => {
  const llm = new ChatOllama({ model: plain, baseUrl: base, temperature: 0, seed: 42, numPredict: 24 });
  const r = await llm.invoke('Once upon a time');
  return { text: r.content, contract: r.response_metadata?.contract ?? null };
});

await step('langchain_plain_stream', async () => {
  const llm = new ChatOllama({ model: plain, baseUrl: base, temperature: 0, seed: 42, numPredict: 24 });
  let text = '';
  let chunks = 0;
  for await (const part of await llm.stream('Once upon a time')) {
    chunks++;
    text += part.content;
  }
  return { text, chunks, contract: null };
});

console.log(JSON.stringify(results));
