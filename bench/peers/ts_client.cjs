// The TypeScript SDK's client for bench/http_client.py and bench/stdio_client.py: the SDK's
// `Client`, used as its README shows, calls `echo` WARMUP times, then COUNT times one after the
// other, then COUNT * 2 times with IN_FLIGHT calls outstanding, and prints one JSON object:
// calls/s and this process's CPU time (process.cpuUsage: user + system) per call of each phase.
//
//   node ts_client.cjs CACHE COUNT WARMUP IN_FLIGHT http URL
//   node ts_client.cjs CACHE COUNT WARMUP IN_FLIGHT stdio COMMAND [ARG...]
//   node ts_client.cjs CACHE versions      (the SDK's version, the revisions it speaks, Node's)
//
// CACHE is the npm folder holding `@modelcontextprotocol/sdk` (where the benchmarks install it).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { createRequire } = require("node:module");

const [cache, ...rest] = process.argv.slice(2);
const load = createRequire(path.join(cache, "package.json"));
const SDK = "@modelcontextprotocol/sdk";

function versions() {
  const manifest = path.join(cache, "node_modules", SDK, "package.json");
  const { version } = JSON.parse(fs.readFileSync(manifest, "utf8"));
  const { SUPPORTED_PROTOCOL_VERSIONS } = load(`${SDK}/types.js`);
  return { version, supported: SUPPORTED_PROTOCOL_VERSIONS, node: process.version };
}

function transport(kind, target) {
  if (kind === "http") {
    const { StreamableHTTPClientTransport } = load(`${SDK}/client/streamableHttp.js`);
    return new StreamableHTTPClientTransport(new URL(target[0]));
  }
  const { StdioClientTransport } = load(`${SDK}/client/stdio.js`);
  return new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "ignore" });
}

async function echo(client) {
  const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
  if (result.content[0].text !== "hello") throw new Error(`bad echo: ${JSON.stringify(result)}`);
}

// Calls/s and CPU us per call of `count` echo calls, `inFlight` outstanding at a time.
async function timed(client, count, inFlight) {
  let remaining = count;
  const worker = async () => {
    while (remaining > 0) {
      remaining -= 1;
      await echo(client);
    }
  };
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return { rate: count / seconds, cpu_us: (used.user + used.system) / count };
}

async function bench([count, warmup, inFlight, kind, ...target]) {
  const { Client } = load(`${SDK}/client/index.js`);
  const client = new Client({ name: "bench-typescript-sdk", version: "0" });
  await client.connect(transport(kind, target));
  await timed(client, Number(warmup), 1);
  const sequential = await timed(client, Number(count), 1);
  const inParallel = await timed(client, Number(count) * 2, Number(inFlight));
  await client.close();
  return { sequential, in_flight: inParallel };
}

async function main() {
  const report = rest[0] === "versions" ? versions() : await bench(rest);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
