// stream.mjs drives one real npm client, unchanged, through a guarded
// progressive stream of the gateway and reports when the first piece of
// the answer arrived, so that the test can tell it came before the
// upstream ended:
//
//   ollama:           generate({stream: true}), text deltas;
//   openai:           chat.completions.stream(), its 'content' events;
//   anthropic:        messages.stream(), its 'text' events;
//   ai_stream_object: the Vercel AI SDK's streamObject with the contract's
//                     JSON Schema, its partialObjectStream (a growing
//                     questions array);
//   langchain:        ChatOllama withStructuredOutput(...).stream();
//   ai_element_stream: the Vercel AI SDK's streamObject with output 'array'
//                     and the item schema of the contract's /elements
//                     array, its elementStream (one element at a time).
//
// It prints one line "first <n>" when the client reported its first text
// or its first question (n: questions seen then, or 0 for text), then one
// JSON line {"text": final document, "updates": updates received,
// "question_counts": the lengths the questions array went through (the
// structured clients)} or {"error": …}. gateway/e2e_stream_test.go
// (TestE2EStreamClients) runs it once per client.
//
// ai_element_stream prints instead one line "element <json>" the moment
// elementStream yields each element, so that the test can hold the
// upstream until the client has an element, then the JSON line with
// "text" (the array the result's object promise gives) and "updates"
// (the elements yielded). gateway/e2e_element_test.go runs it.
//
// Usage: node stream.mjs CLIENT
// Environment: CG_GATEWAY_URL (required), CG_GUARDED_MODEL, CG_SCHEMA (file
// of the contract's JSON Schema, for ai_stream_object, langchain and
// ai_element_stream), CG_OLLAMA_OPTIONS (JSON of Ollama options that
// ai_element_stream sends, for a deterministic real model).
import { readFileSync } from 'node:fs';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { streamObject, jsonSchema } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { ChatOllama } from '@langchain/ollama';

const base = (process.env.CG_GATEWAY_URL ?? '').replace(/\/+$/, '');
const model = process.env.CG_GUARDED_MODEL || 'quiz';
const client = process.argv[2];
if (!base || !client) {
  console.error('usage: CG_GATEWAY_URL=… node stream.mjs CLIENT');
  process.exit(2);
}
const prompt = 'Write a quiz about Python lists';
const messages = [{ role: 'user', content: prompt }];
const schema = () => JSON.parse(readFileSync(process.env.CG_SCHEMA, 'utf8'));

let firstSent = false;
function first(n) {
  if (!firstSent) {
    firstSent = true;
    process.stdout.write(`first ${n}\n`);
  }
}

const clients = {
  async ollama() {
    const ollama = new Ollama({ host: base });
    let text = '';
    let updates = 0;
    for await (const part of await ollama.generate({ model, prompt, stream: true })) {
      if (part.response) {
        updates++;
        text += part.response;
        first(0);
      }
    }
    return { text, updates };
  },
  async openai() {
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
    let updates = 0;
    const stream = openai.chat.completions.stream({ model, messages });
    stream.on('content', (delta) => {
      if (delta) {
        updates++;
        first(0);
      }
    });
    const done = await stream.finalChatCompletion();
    return { text: done.choices[0].message.content, updates };
  },
  async anthropic() {
    const anthropic = new Anthropic({ baseURL: base, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
    let updates = 0;
    const stream = anthropic.messages.stream({ model, max_tokens: 8192, messages });
    stream.on('text', (delta) => {
      if (delta) {
        updates++;
        first(0);
      }
    });
    const done = await stream.finalMessage();
    return { text: done.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), updates };
  },
  async ai_stream_object() {
    const ollama = createOllama({ baseURL: `${base}/api` });
    const r = streamObject({ model: ollama(model), schema: jsonSchema(schema()), prompt, maxRetries: 0 });
    let updates = 0;
    const lengths = [];
    for await (const partial of r.partialObjectStream) {
      updates++;
      const n = Array.isArray(partial?.questions) ? partial.questions.length : 0;
      if (lengths.at(-1) !== n) lengths.push(n);
      if (n > 0) first(n);
    }
    const obj = await r.object;
    return { text: JSON.stringify(obj), updates, question_counts: lengths };
  },
  async langchain() {
    const llm = new ChatOllama({ model, baseUrl: base });
    let updates = 0;
    let last = null;
    const lengths = [];
    for await (const part of await llm.withStructuredOutput(schema(), { name: 'quiz' }).stream(prompt)) {
      updates++;
      last = part;
      const n = Array.isArray(part?.questions) ? part.questions.length : 0;
      if (lengths.at(-1) !== n) lengths.push(n);
      first(n);
    }
    return { text: JSON.stringify(last), updates, question_counts: lengths };
  },
  async ai_element_stream() {
    const ollama = createOllama({ baseURL: `${base}/api` });
    // The SDK wraps the item schema itself: it asks for {"elements": [...]}.
    const item = schema().properties.elements.items;
    const options = process.env.CG_OLLAMA_OPTIONS ? JSON.parse(process.env.CG_OLLAMA_OPTIONS) : undefined;
    let failure;
    const r = streamObject({
      model: ollama(model),
      output: 'array',
      schema: jsonSchema(item),
      prompt,
      maxRetries: 0,
      providerOptions: options ? { ollama: { options } } : undefined,
      onError: ({ error }) => {
        failure = error;
      },
    });
    let updates = 0;
    for await (const element of r.elementStream) {
      updates++;
      process.stdout.write(`element ${JSON.stringify(element)}\n`);
    }
    if (failure) throw failure;
    const obj = await r.object;
    return { text: JSON.stringify(obj), updates };
  },
};

let result;
try {
  if (!clients[client]) throw new Error(`unknown client ${client}`);
  result = await clients[client]();
} catch (err) {
  result = { error: String(err?.stack ?? err) };
}
process.stdout.write(JSON.stringify(result) + '\n');
