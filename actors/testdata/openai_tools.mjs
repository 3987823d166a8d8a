// Drives reef's client tools with the official openai npm client: a durable round trip
// (tool_calls, then the result, then the answer), a streamed stateless one, and the SDK's own
// tool loop (runTools). Usage: node openai_tools.mjs <baseURL> <npm dir>. Prints one JSON
// object with what the client saw; the Go test judges it.
import { createRequire } from "node:module";
import path from "node:path";

const [baseURL, npmDir] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(npmDir), "package.json"));
const OpenAI = require("openai").default ?? require("openai");

const client = new OpenAI({ baseURL, apiKey: "test-token", maxRetries: 0, timeout: 120000 });
const out = {};
const tools = [{ type: "function", function: { name: "lookup", description: "Looks a thing up.",
  parameters: { type: "object", properties: { q: { type: "string" } } } } }];

// Durable, not streamed.
const messages = [{ role: "user", content: "look up" }];
const first = await client.chat.completions.create({ model: "reef/main", user: "npm-tools", tools, messages });
const call = first.choices[0].message.tool_calls?.[0];
out.durable = { finish: first.choices[0].finish_reason, name: call?.function.name, args: call?.function.arguments };
messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "42" });
const second = await client.chat.completions.create({ model: "reef/main", user: "npm-tools", tools, messages });
out.durable.answer = second.choices[0].message.content;
out.durable.id = call.id;

// Stateless, streamed: the calls are assembled from the deltas as the SDK's users do.
const streamed = async (msgs) => {
  const stream = await client.chat.completions.create({ model: "reef/main", stream: true, tools, messages: msgs });
  let text = "", finish = null;
  const calls = [];
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      if (c.delta?.content) text += c.delta.content;
      for (const tc of c.delta?.tool_calls ?? []) {
        calls[tc.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
        if (tc.id) calls[tc.index].id = tc.id;
        if (tc.function?.name) calls[tc.index].function.name += tc.function.name;
        if (tc.function?.arguments) calls[tc.index].function.arguments += tc.function.arguments;
      }
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { text, finish, calls };
};
const sm = [{ role: "system", content: "Be brief." }, { role: "user", content: "look up" }];
const s1 = await streamed(sm);
sm.push({ role: "assistant", content: s1.text, tool_calls: s1.calls });
for (const c of s1.calls) sm.push({ role: "tool", tool_call_id: c.id, content: "42" });
const s2 = await streamed(sm);
out.stateless = { finish: s1.finish, calls: s1.calls.map((c) => c.function.name), answer: s2.text, finish2: s2.finish };

// The SDK's own loop: it runs the tool and sends the result until the model answers.
const runner = client.chat.completions.runTools({
  model: "reef/main",
  messages: [{ role: "user", content: "look up" }],
  tools: [{ type: "function", function: { name: "lookup", parameters: tools[0].function.parameters,
    parse: JSON.parse, function: async (args) => `found ${args.q}` } }],
});
out.runTools = await runner.finalContent();

console.log(JSON.stringify(out));
