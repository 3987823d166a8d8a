// Drives reef's OpenAI-compatible API with the official openai npm client (installed by the
// Go test or .ci/run into testdata/npm). Usage: node openai_client.mjs <baseURL> <npm dir>.
// Prints one JSON object with what the client saw; the Go test judges it.
import { createRequire } from "node:module";
import path from "node:path";

const [baseURL, npmDir] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(npmDir), "package.json"));
const OpenAI = require("openai").default ?? require("openai");

const client = new OpenAI({ baseURL, apiKey: "test-token", maxRetries: 0, timeout: 120000 });
const out = {};

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

const first = await client.chat.completions.create({
  model: "reef/main",
  user: "npm-user",
  messages: [{ role: "system", content: "ignored" }, { role: "user", content: "hello" }],
});
out.first = { content: first.choices[0].message.content, finish: first.choices[0].finish_reason, usage: first.usage };

const stream = await client.chat.completions.create({
  model: "reef/main",
  user: "npm-user",
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: "user", content: "again" }],
});
let text = "";
let usage = null;
let finish = null;
let chunks = 0;
for await (const chunk of stream) {
  chunks++;
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    if (c.delta?.content) text += c.delta.content;
    if (c.finish_reason) finish = c.finish_reason;
  }
}
out.stream = { content: text, finish, usage, chunks };

// Stateless (no user, no X-Reef-Session): the client's system prompt and history are the
// conversation; the fake model answers "recall" with what it saw. Two at once do not mix.
const recall = (name) =>
  client.chat.completions.create({
    model: "reef/main",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: `My name is ${name}.` },
      { role: "assistant", content: `Hello ${name}.` },
      { role: "user", content: [{ type: "text", text: "recall" }] },
    ],
  });
const [ann, bob] = await Promise.all([recall("Ann"), recall("Bob")]);
out.stateless = [ann.choices[0].message.content, bob.choices[0].message.content];

// An image part (a data URL), as the SDK's vision examples send it.
const png = Buffer.from("\x89PNG\r\n\x1a\n npm cat", "latin1").toString("base64");
const seen = await client.chat.completions.create({
  model: "reef/main",
  user: "npm-image",
  messages: [
    { role: "user", content: [
      { type: "text", text: "see" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png}`, detail: "low" } },
    ] },
  ],
});
out.image = seen.choices[0].message.content;

try {
  await client.chat.completions.create({ model: "reef/nope", messages: [{ role: "user", content: "x" }] });
  out.unknownModel = { status: 200 };
} catch (e) {
  out.unknownModel = { status: e.status, code: e.code ?? e.error?.code ?? null };
}
console.log(JSON.stringify(out));
