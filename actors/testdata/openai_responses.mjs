// Drives reef's Responses API with the official openai npm client: a function tool round trip
// continued by previous_response_id, a streamed response read with the SDK's stream helper, a
// stateless one (store: false), and an unknown previous response. Usage: node
// openai_responses.mjs <baseURL> <npm dir>. Prints one JSON object; the Go test judges it.
import { createRequire } from "node:module";
import path from "node:path";

const [baseURL, npmDir] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(npmDir), "package.json"));
const OpenAI = require("openai").default ?? require("openai");

const client = new OpenAI({ baseURL, apiKey: "test-token", maxRetries: 0, timeout: 120000 });
const out = {};
const tools = [{ type: "function", name: "lookup", description: "Looks a thing up.",
  parameters: { type: "object", properties: { q: { type: "string" } } }, strict: false }];

const r1 = await client.responses.create({ model: "reef/main", input: "look up", tools });
const call = r1.output.find((o) => o.type === "function_call");
out.call = { status: r1.status, name: call?.name, args: call?.arguments, text: r1.output_text };
const r2 = await client.responses.create({ model: "reef/main", previous_response_id: r1.id, tools,
  input: [{ type: "function_call_output", call_id: call.call_id, output: "42" }] });
out.answer = { text: r2.output_text, callID: call.call_id, usage: r2.usage };

// Streamed, continuing the same conversation: the SDK's helper checks the events fit together.
const stream = client.responses.stream({ model: "reef/main", previous_response_id: r2.id, input: "hello" });
const types = [];
for await (const ev of stream) types.push(ev.type);
const final = await stream.finalResponse();
out.stream = { types: [...new Set(types)], text: final.output_text, status: final.status };

// Streamed with create({stream: true}), ending with a call.
const calls = [];
for await (const ev of await client.responses.create({ model: "reef/main", input: "look up", tools, stream: true })) {
  if (ev.type === "response.output_item.done" && ev.item.type === "function_call") calls.push(ev.item.name);
}
out.streamedCalls = calls;

// Stateless: the input carries the conversation, nothing is stored.
const s = await client.responses.create({ model: "reef/main", store: false, instructions: "Be brief.", tools, input: [
  { role: "user", content: "look up" },
  { type: "function_call", call_id: "c_9", name: "lookup", arguments: "{}" },
  { type: "function_call_output", call_id: "c_9", output: "7" },
] });
out.stateless = s.output_text;

try {
  await client.responses.create({ model: "reef/main", previous_response_id: "resp_nope", input: "x" });
  out.unknown = { status: 200 };
} catch (e) {
  out.unknown = { status: e.status, code: e.code ?? null };
}
console.log(JSON.stringify(out));
