// Plays an editor against `ask acp` with the official ACP client: spawns
// the binary, answers its permission requests, serves its fs requests,
// cancels when told, and prints what it saw as one JSON object on stdout.
// Every line ask writes is also appended to $ACP_RAW, and every line the
// client writes to $ACP_RAW_IN, for the Go test to validate ask's against
// the schema.
//
//   ASK_BIN=... ACP_SCENARIO=prompt|load|cancel ACP_CWD=... node client.mjs [ask flags]
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const env = process.env;
const scenario = env.ACP_SCENARIO || "prompt";
const answer = env.ACP_ANSWER || "allow_once";
const child = spawn(env.ASK_BIN, ["acp", ...process.argv.slice(2)], { stdio: ["pipe", "pipe", "inherit"] });

const raw = new TransformStream({
  transform(chunk, controller) {
    if (env.ACP_RAW) appendFileSync(env.ACP_RAW, chunk);
    controller.enqueue(chunk);
  },
});
Readable.toWeb(child.stdout).pipeTo(raw.writable).catch(() => {}); // closed with the connection
// What the client sends, to $ACP_RAW_IN: the Go test pairs each response
// of ask's with the request it answers.
const sent = new TransformStream({
  transform(chunk, controller) {
    if (env.ACP_RAW_IN) appendFileSync(env.ACP_RAW_IN, chunk);
    controller.enqueue(chunk);
  },
});
sent.readable.pipeTo(Writable.toWeb(child.stdin)).catch(() => {});
const stream = ndJsonStream(sent.writable, raw.readable);

const seen = { updates: [], permissions: [], reads: [], writes: [] };
let sessionId;
let agent;

const app = client()
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params.update);
  })
  .onRequest("session/request_permission", async ({ params }) => {
    seen.permissions.push(params);
    if (scenario === "cancel") {
      await agent.notify("session/cancel", { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  })
  .onRequest("fs/read_text_file", async ({ params }) => {
    seen.reads.push(params.path);
    return { content: "served by the editor\n" };
  })
  .onRequest("fs/write_text_file", async ({ params }) => {
    seen.writes.push(params);
    return {};
  });

try {
  await app.connectWith(stream, async (ctx) => {
    agent = ctx;
    seen.initialize = await ctx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: env.ACP_FS === "1", writeTextFile: env.ACP_FS === "1" } },
    });
    const mcpServers = env.ACP_MCP ? JSON.parse(env.ACP_MCP) : [];
    if (scenario === "load") {
      sessionId = env.ACP_SESSION;
      seen.load = await ctx.request("session/load", { sessionId, cwd: env.ACP_CWD, mcpServers });
    } else {
      const s = await ctx.request("session/new", { cwd: env.ACP_CWD, mcpServers });
      sessionId = s.sessionId;
      seen.session = s;
    }
    if (env.ACP_MODE) {
      try {
        await ctx.request("session/set_mode", { sessionId, modeId: env.ACP_MODE });
        seen.setMode = "ok";
      } catch (e) {
        seen.setMode = { code: e.code, message: e.message };
      }
    }
    // ACP_PROMPT is one text prompt; ACP_PROMPTS a JSON list of prompts,
    // each a string or a list of content blocks, sent one after another.
    const prompts = env.ACP_PROMPTS ? JSON.parse(env.ACP_PROMPTS) : env.ACP_PROMPT ? [env.ACP_PROMPT] : [];
    seen.stopReasons = [];
    for (const p of prompts) {
      const prompt = typeof p === "string" ? [{ type: "text", text: p }] : p;
      const r = await ctx.request("session/prompt", { sessionId, prompt });
      seen.stopReasons.push(r.stopReason);
      seen.stopReason = r.stopReason;
    }
  });
} catch (e) {
  seen.error = { code: e.code, message: String(e.message || e) };
}
seen.sessionId = sessionId;
child.stdin.end(); // ask exits 0 when its stdin closes
child.on("exit", (code) => {
  seen.exitCode = code;
  process.stdout.write(JSON.stringify(seen) + "\n");
});
