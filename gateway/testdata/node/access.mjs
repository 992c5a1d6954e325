// access.mjs drives real npm clients, unchanged, against a gateway with
// API keys, each with its key the way its users pass one and without it,
// and prints one JSON object: per call, {"ok": true} or the error the
// library raised (its class name and the HTTP status it read).
//
//   openai:    apiKey, chat.completions.create
//   anthropic: apiKey (x-api-key), messages.create
//   ollama:    headers: {Authorization: "Bearer KEY"}, generate
//   ai:        ollama-ai-provider-v2 with headers, generateText
//   langchain: ChatOllama with headers, invoke
//
// gateway/access_e2e_test.go (TestE2ENodeClientsAccess) runs it.
//
// Environment:
//   CG_GATEWAY_URL  base URL of the gateway (required)
//   CG_KEY          the API key (required)
//   CG_MODEL        a model the key may use
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { generateText } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { ChatOllama } from '@langchain/ollama';

const base = (process.env.CG_GATEWAY_URL ?? '').replace(/\/+$/, '');
const key = process.env.CG_KEY ?? '';
const model = process.env.CG_MODEL || 'quiz';
if (!base || !key) {
  console.error('access.mjs: CG_GATEWAY_URL and CG_KEY are required');
  process.exit(2);
}
const messages = [{ role: 'user', content: 'hi' }];

async function call(fn) {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, class: e?.constructor?.name ?? typeof e, status: e?.status ?? e?.status_code ?? e?.statusCode ?? null, message: String(e?.message ?? e) };
  }
}

const results = {};
for (const [name, k] of [['with_key', key], ['without_key', null]]) {
  const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: k ?? 'not-a-key', maxRetries: 0 });
  results[`openai_${name}`] = await call(() => openai.chat.completions.create({ model, messages }));
  const anthropic = new Anthropic({ baseURL: base, apiKey: k ?? 'not-a-key', maxRetries: 0 });
  results[`anthropic_${name}`] = await call(() => anthropic.messages.create({ model, max_tokens: 16, messages }));
  const ollama = new Ollama({ host: base, headers: k ? { Authorization: `Bearer ${k}` } : {} });
  results[`ollama_${name}`] = await call(() => ollama.generate({ model, prompt: 'hi', stream: false }));
  const provider = createOllama({ baseURL: `${base}/api`, headers: k ? { Authorization: `Bearer ${k}` } : {} });
  results[`ai_${name}`] = await call(() => generateText({ model: provider(model), prompt: 'hi', maxRetries: 0 }));
  const chat = new ChatOllama({ baseUrl: base, model, headers: k ? { Authorization: `Bearer ${k}` } : {}, maxRetries: 0 });
  results[`langchain_${name}`] = await call(() => chat.invoke('hi'));
}
console.log(JSON.stringify(results));
