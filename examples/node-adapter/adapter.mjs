#!/usr/bin/env node
// A complete runtime-adapter-v1 adapter in Node.js, speaking
// runtime-adapter-bridge-v1 over stdin/stdout with the standard library
// only. It keeps each instance's history in memory, exactly as the fixture
// gives it, and implements tool atomic grouping, capability negotiation and
// a simple privacy sanitiser itself.
//
//   go run ./cmd/adapterkit conform --exec "node examples/node-adapter/adapter.mjs"
//
// With --embeddings every instance also has a deterministic local embedding
// port (SHA-256 digests), declared at create and reached by embed requests.

import { createHash } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const PROTOCOL = "runtime-adapter-bridge-v1";
const CONTRACT = "runtime-adapter-v1";
const SCHEMA = "runtime-history-v1";
const CAPABILITY_IDS = ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"];
const MAX_DIAGNOSTICS = 100;
const EMBEDDINGS = process.argv.slice(2).includes("--embeddings");
// The embedding port: its identity, and the most texts one embed request
// may carry (the harness splits longer inputs).
const EMBEDDING_PORT = { provider: "node-example-adapter", model: "sha256-16", dimensions: 16, destination: "local", maxBatch: 2 };

// ---- protocol -------------------------------------------------------------

class AdapterError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

let helloDone = false;
let nextId = 0;
const pending = new Map();

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function callHarness(method, params) {
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
}

async function dispatch(msg) {
  try {
    const result = await handle(msg.method, msg.params ?? {});
    send({ id: msg.id, result: result === undefined ? null : result });
  } catch (err) {
    const code = err instanceof AdapterError ? err.code : "adapter-panicked";
    const message = err instanceof AdapterError ? err.message : `${msg.method} failed unexpectedly`;
    send({ id: msg.id, error: { code, message } });
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    // The harness broke the protocol: say so on stderr (never the line) and stop.
    process.stderr.write("node-example-adapter: a line from the harness is not JSON\n");
    process.exit(2);
  }
  if (typeof msg.method === "string") {
    dispatch(msg);
    return;
  }
  const waiter = pending.get(msg.id);
  if (!waiter) return;
  pending.delete(msg.id);
  if (msg.error) waiter.reject(new AdapterError(msg.error.code, msg.error.message));
  else waiter.resolve(msg.result);
});
lines.on("close", () => {
  for (const inst of instances.values()) rmSync(inst.dir, { recursive: true, force: true });
  process.exit(0);
});

// ---- instances -------------------------------------------------------------

const instances = new Map();
let nextInstance = 0;

function instance(params) {
  const inst = instances.get(params.instance);
  if (!inst) throw new AdapterError("unknown-instance", "no live instance has this id");
  return inst;
}

function open(params) {
  const inst = instance(params);
  if (inst.closed) throw new AdapterError("adapter-error", "example adapter is closed");
  return inst;
}

function record(inst, code, severity, message, capability) {
  const d = { code, severity, message };
  if (capability) d.capability = capability;
  inst.diagnostics.push(d);
  if (inst.diagnostics.length > MAX_DIAGNOSTICS) inst.diagnostics.splice(0, inst.diagnostics.length - MAX_DIAGNOSTICS);
}

async function handle(method, params) {
  if (method === "hello") {
    if (params.protocol !== PROTOCOL) throw new AdapterError("unsupported-version", `this adapter speaks ${PROTOCOL} only`);
    helloDone = true;
    return { protocol: PROTOCOL, factory: "node-example-adapter" };
  }
  if (!helloDone) throw new AdapterError("hello-required", "send hello first");
  switch (method) {
    case "create": {
      const fx = params.fixture;
      if (!fx || !Array.isArray(fx.messages)) throw new AdapterError("invalid-params", "create needs a fixture");
      const dir = realpathSync(mkdtempSync(join(tmpdir(), "node-adapter-")));
      const id = `node-${++nextInstance}`;
      instances.set(id, {
        dir, runtimeId: fx.runtimeId, sessionId: fx.sessionId, model: fx.model,
        messages: fx.messages, closed: false, diagnostics: [], cache: null,
      });
      const result = { instance: id, expectedProjectRoot: dir };
      if (EMBEDDINGS) result.embeddingPort = EMBEDDING_PORT;
      return result;
    }
    case "cleanup": {
      const inst = instance(params);
      instances.delete(params.instance);
      rmSync(inst.dir, { recursive: true, force: true });
      return null;
    }
    case "identity":
      return { runtimeId: instance(params).runtimeId, adapterName: "node-example-adapter", adapterVersion: "0.1.0", contractVersion: CONTRACT };
    case "capabilityDeclarations":
      instance(params);
      return declarations();
    case "negotiateCapabilities":
      instance(params);
      return negotiate(declarations(), params.requests ?? []);
    case "snapshotHistory":
      return snapshot(open(params), false);
    case "rebuildDerivedState": {
      const inst = open(params);
      const s = snapshot(inst, true);
      record(inst, "derived-state-rebuilt", "info", "Disposable adapter state was rebuilt from the in-memory history");
      return s;
    }
    case "currentModel":
      return open(params).model ?? null;
    case "trustedProjectRoot":
      return open(params).dir;
    case "enforcePrivacy": {
      const inst = open(params);
      if (typeof params.provider !== "string" || params.provider.trim() === "") throw new AdapterError("adapter-error", "provider is blank");
      try {
        return enforce(params);
      } catch {
        record(inst, "privacy-enforcement-failed", "error", "Privacy enforcement failed closed before completion transport");
        throw new AdapterError("adapter-error", "privacy enforcement failed closed");
      }
    }
    case "complete":
      return complete(instance(params), params);
    case "diagnostics":
      return instance(params).diagnostics.slice();
    case "embed": {
      instance(params);
      if (!EMBEDDINGS) throw new AdapterError("unknown-method", "the instance has no embedding port");
      const texts = params.texts;
      if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string")) throw new AdapterError("invalid-params", "embed needs texts");
      if (texts.length > EMBEDDING_PORT.maxBatch) throw new AdapterError("invalid-params", "more texts than the port's maxBatch");
      return texts.map(embed);
    }
    case "shutdown": {
      const inst = instance(params);
      if (!inst.closed) {
        inst.closed = true;
        record(inst, "adapter-closed", "info", "Example adapter lifecycle closed cleanly");
      }
      return null;
    }
    default:
      throw new AdapterError("unknown-method", `unknown method ${JSON.stringify(String(method)).slice(0, 80)}`);
  }
}

async function complete(inst, params) {
  const fallback = (code, reason, retryable) => ({ status: "fallback", code, reason, retryable });
  if (inst.closed) return fallback("adapter-closed", "example adapter is closed", false);
  const blank = (s) => typeof s !== "string" || s.trim() === "";
  if (blank(params.provider) || blank(params.model)) {
    record(inst, "completion-request-invalid", "warning", "Completion request is missing provider or model identity");
    return fallback("invalid-request", "completion request is invalid", false);
  }
  let sanitised;
  try {
    sanitised = enforce(params);
  } catch {
    record(inst, "privacy-enforcement-failed", "error", "Privacy enforcement failed closed before completion transport");
    return fallback("privacy-enforcement-failed", "privacy enforcement failed closed", false);
  }
  let output;
  try {
    const res = await callHarness("transport", {
      instance: params.instance,
      request: { provider: params.provider, model: params.model, destination: sanitised.destination, payload: sanitised.payload },
    });
    output = res.output;
  } catch {
    record(inst, "completion-transport-failed", "warning", "Completion transport failed; native runtime fallback remains available");
    return fallback("transport-failed", "completion transport failed", true);
  }
  const { payload, ...privacy } = sanitised;
  return { status: "completed", output, privacy };
}

// ---- capabilities ----------------------------------------------------------

function declarations() {
  return [
    { id: "compaction", supported: false, reason: "example adapter has no native compaction hook" },
    { id: "provider-continuation", supported: false, reason: "example transport exposes no provider continuation handle" },
    EMBEDDINGS
      ? { id: "embeddings", supported: true, version: "embedding-port-v1" }
      : { id: "embeddings", supported: false, reason: "no embedding port was configured" },
    { id: "local-kv-reuse", supported: false, reason: "example transport exposes no local KV state" },
  ];
}

// embed maps a text to the first 16 bytes of its SHA-256, each scaled into (0, 1].
function embed(text) {
  const digest = createHash("sha256").update(text, "utf8").digest();
  return Array.from(digest.subarray(0, EMBEDDING_PORT.dimensions), (b) => (b + 1) / 256);
}

function normaliseReason(reason) {
  if (typeof reason !== "string") return "";
  return reason.replace(/\s+/g, " ").trim().slice(0, 240).trim();
}

function negotiate(decls, requests) {
  const first = new Map();
  const duplicate = new Set();
  for (const d of decls) {
    if (first.has(d.id)) duplicate.add(d.id);
    else first.set(d.id, d);
  }
  const requested = new Map();
  for (const r of requests) requested.set(r.id, (requested.get(r.id) ?? false) || r.required === true);
  const statuses = [];
  const diagnostics = [];
  for (const id of CAPABILITY_IDS) {
    const d = first.get(id);
    const isRequested = requested.has(id);
    const required = requested.get(id) ?? false;
    const version = d && typeof d.version === "string" ? d.version.trim() : undefined;
    const validVersion = version !== undefined && /^[a-z0-9][a-z0-9._-]{0,63}$/i.test(version);
    const reason = d ? normaliseReason(d.reason) : "";
    const dup = duplicate.has(id);
    const badVersion = !!d && d.supported === true && !validVersion;
    const noReason = !!d && d.supported !== true && reason === "";
    const malformed = dup || badVersion || noReason;
    const supported = !!d && d.supported === true && !malformed;
    const status = { id, supported, requested: isRequested, required, enabled: isRequested && supported };
    if (validVersion) status.version = version;
    if (!supported) {
      status.reason = dup ? "runtime adapter declared this capability more than once"
        : badVersion ? "supported capability has a missing or invalid version"
        : noReason ? "unsupported capability is missing a reason"
        : reason || "runtime adapter did not declare this capability";
    } else if (reason) {
      status.reason = reason;
    }
    statuses.push(status);
    if (isRequested && !supported) {
      diagnostics.push({
        code: malformed ? "capability-declaration-invalid" : "capability-unsupported",
        severity: required ? "warning" : "info",
        message: `${required ? "Required" : "Optional"} runtime capability ${id} is disabled: ${status.reason}`,
        capability: id,
      });
    }
  }
  return {
    contractVersion: CONTRACT,
    statuses,
    enabled: statuses.filter((s) => s.enabled).map((s) => s.id),
    disabled: statuses.filter((s) => s.requested && !s.enabled).map((s) => s.id),
    diagnostics,
  };
}

// ---- history ---------------------------------------------------------------

function sha256(text) {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

// stableJSON writes JSON with object keys sorted, so equal histories hash equally.
function stableJSON(v) {
  if (Array.isArray(v)) return `[${v.map(stableJSON).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => `${JSON.stringify(k)}:${stableJSON(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

function snapshot(inst, rebuild) {
  if (rebuild) inst.cache = null;
  if (inst.cache) return inst.cache;
  const revision = sha256(stableJSON({ runtimeId: inst.runtimeId, sessionId: inst.sessionId, projectRoot: inst.dir, messages: inst.messages }));
  inst.cache = {
    schemaVersion: SCHEMA, runtimeId: inst.runtimeId, sessionId: inst.sessionId, revision,
    projectRoot: inst.dir, messages: inst.messages, toolAtomicGroups: buildToolAtomicGroups(inst.messages),
  };
  return inst.cache;
}

// buildToolAtomicGroups joins every tool call with its results (and calls
// sharing a message) into connected groups, ordered by their first message
// id compared as bytes.
function buildToolAtomicGroups(messages) {
  const calls = new Map();
  const results = new Map();
  const isTool = [];
  const add = (map, id, i) => {
    if (!map.has(id)) map.set(id, []);
    map.get(id).push(i);
  };
  messages.forEach((m, i) => {
    for (const b of m.blocks) {
      if (b.type === "toolCall") { add(calls, b.id, i); isTool[i] = true; }
      else if (b.type === "toolResult") { add(results, b.toolCallId, i); isTool[i] = true; }
    }
  });
  const parent = messages.map((_, i) => i);
  const find = (i) => {
    while (parent[i] !== i) { parent[i] = parent[parent[i]]; i = parent[i]; }
    return i;
  };
  for (const id of new Set([...calls.keys(), ...results.keys()])) {
    const members = [...(calls.get(id) ?? []), ...(results.get(id) ?? [])];
    for (const j of members) {
      const a = find(members[0]);
      const b = find(j);
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  }
  const components = new Map();
  messages.forEach((_, i) => {
    if (!isTool[i]) return;
    const r = find(i);
    if (!components.has(r)) components.set(r, []);
    components.get(r).push(i);
  });
  const groups = [];
  for (const [root, members] of components) {
    const ids = new Set();
    for (const i of members) {
      for (const b of messages[i].blocks) {
        if (b.type === "toolCall") ids.add(b.id);
        else if (b.type === "toolResult") ids.add(b.toolCallId);
      }
    }
    const toolCallIds = [...ids].sort();
    const inside = (i) => find(i) === root;
    const complete = toolCallIds.every((id) => {
      const c = calls.get(id) ?? [];
      const r = results.get(id) ?? [];
      return c.length === 1 && r.length >= 1 && c.every(inside) && r.every(inside);
    });
    const messageIds = members.map((i) => messages[i].id);
    groups.push({ id: "runtime-tool-group:" + sha256(messageIds.join("\u0000")).slice(0, 16), messageIds, toolCallIds, complete });
  }
  return groups.sort((a, b) => Buffer.compare(Buffer.from(a.messageIds[0]), Buffer.from(b.messageIds[0])));
}

// ---- privacy ---------------------------------------------------------------

const LOCAL_PROVIDERS = ["ollama", "llama-cpp", "lmstudio"];
const CLASSES = ["normal", "internal", "sensitive", "local-only"];
const REMOTE_ALLOWED = ["normal", "internal"];

// enforce sanitises every string (and member name) of the payload: marked
// segments whose class the destination may not see become placeholders, and
// for a remote destination credentials and secrets are redacted. A payload
// the harness could not encode fails closed.
function enforce(params) {
  if (params.payloadUninspectable === true) throw new Error("payload cannot be inspected");
  const provider = params.provider;
  const local = LOCAL_PROVIDERS.includes(provider.trim().toLowerCase());
  const allowed = local ? CLASSES : REMOTE_ALLOWED;
  const counts = { changed: false, blockedBlocks: 0, secretRedactions: 0 };
  const text = (s) => sanitiseText(s, allowed, !local, counts);
  const walk = (v) => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out = {};
      for (const [k, x] of Object.entries(v)) out[text(k)] = walk(x);
      return out;
    }
    return v;
  };
  const payload = walk(params.payload ?? null);
  return { provider, destination: local ? "local" : "remote", payload, ...counts };
}

const PAIR = /(\\?)\[ds4:([a-z-]+)\]([\s\S]*?)\[\/ds4:\2\]/gi;
const LEADING = /^\s*\[ds4:([a-z-]+)\]\s*/i;
const SECRETS = [
  [/-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----[\s\S]*?-----END (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----/g, () => "[DS4 REDACTED PRIVATE KEY]"],
  [/\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{12,}|AKIA[0-9A-Z]{16})\b/g, () => "[DS4 REDACTED CREDENTIAL]"],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, (_, prefix) => `${prefix}[DS4 REDACTED TOKEN]`],
  [/\b(api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|password)(\s*[:=]\s*)(["']?)[^\s,"';}\]]{4,}\3/gi, (_, k, sep, q) => `${k}${sep}${q}[DS4 REDACTED SECRET]${q}`],
];

function placeholder(cls) {
  return `[DS4 ${cls} content excluded by privacy policy]`;
}

function sanitiseText(s, allowed, remote, counts) {
  if (s === "") return s;
  let out = s;
  let applied = false;
  const visible = (cls, content) => {
    const c = cls.toLowerCase();
    if (allowed.includes(c) || !CLASSES.includes(c)) return content;
    counts.blockedBlocks++;
    return placeholder(c);
  };
  out = out.replace(PAIR, (match, escape, cls, content) => {
    if (escape) return match;
    applied = true;
    return visible(cls, content);
  });
  if (!applied) {
    const m = LEADING.exec(out);
    if (m) {
      applied = true;
      out = visible(m[1], out.slice(m[0].length));
    }
  }
  if (remote) {
    for (const [re, fn] of SECRETS) {
      out = out.replace(re, (...args) => {
        counts.secretRedactions++;
        return fn(...args);
      });
    }
  }
  if (applied || out !== s) counts.changed = true;
  return out;
}
