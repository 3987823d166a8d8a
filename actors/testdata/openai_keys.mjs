// Drives reef's per-key access with the official openai npm client: a key sees only its
// agents, reaches its own sessions, and gets 404 for another agent's model and another key's
// session. Usage: node openai_keys.mjs <baseURL> <npm dir>; the key in REEF_KEY. Prints one
// JSON object; the Go test judges it.
import { createRequire } from "node:module";
import path from "node:path";

const [baseURL, npmDir] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(npmDir), "package.json"));
const OpenAI = require("openai").default ?? require("openai");

const client = new OpenAI({ baseURL, apiKey: process.env.REEF_KEY, maxRetries: 0, timeout: 120000 });
const out = {};
const refused = async (f) => {
  try {
    await f();
    return { status: 200 };
  } catch (e) {
    return { status: e.status, code: e.code ?? null };
  }
};
out.models = (await client.models.list()).data.map((m) => m.id);
const own = await client.chat.completions.create({ model: "reef/work", user: "ann", messages: [{ role: "user", content: "hello" }] });
out.own = own.choices[0].message.content;
out.otherModel = await refused(() => client.chat.completions.create({ model: "reef/main", messages: [{ role: "user", content: "x" }] }));
out.otherSession = await refused(() => client.chat.completions.create({ model: "reef/work", messages: [{ role: "user", content: "x" }] },
  { headers: { "X-Reef-Session": "agent:work:openai:direct:zap.bob" } }));
out.ownerSession = await refused(() => client.chat.completions.create({ model: "reef/work", messages: [{ role: "user", content: "x" }] },
  { headers: { "X-Reef-Session": "agent:work:openai:direct:bob" } }));
out.badKey = await refused(() => new OpenAI({ baseURL, apiKey: "wrong", maxRetries: 0 }).models.list());
console.log(JSON.stringify(out));
