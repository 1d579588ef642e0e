#!/usr/bin/env node
// A complete runtime-adapter-v1 adapter in Node.js, speaking
// runtime-adapter-bridge-v1 over stdin/stdout with the standard library
// only. It keeps each instance's history in memory, as serialised records of
// the fixture's messages, and implements tool atomic grouping, capability
// negotiation and the privacy engine of SPEC §8 itself.
//
//   go run ./cmd/adapterkit conform --exec "node examples/node-adapter/adapter.mjs"
//
// With --embeddings every instance also has a deterministic local embedding
// port (SHA-256 digests), declared at create and reached by embed requests.
// With --refuse FAMILY it refuses, as unrepresentable for that family, a
// history holding it (multi-result: a tool message with two or more
// results); with --declare FAMILY it declares the family a limit up front.
// With --provenance pi-session it holds every message under that provenance
// source, and with --drop-unknown without unknown members, as a runtime
// storing a history in its own form does; it reports the history it holds
// at create. --profile pi holds every history exactly as DS4's Pi runtime
// adapter does (its own provenance, originalRole, token estimates, atomic
// flags, createdAt and assistant models; see piForm) and refuses what Pi
// cannot hold; --profile pi-slips adds its converter's two slips (empty
// strings dropped, the flags pinned, localOnly and synthetic lost), and
// --profile pi-surface answers unknown-method where the Pi adapter has no
// method (enforcePrivacy, complete, shutdown, diagnostics) and declares an
// embedding port it does not expose. --defect upper-text holds text upper-cased while reporting
// only the differences above: a defect the kit must still find. With
// --sanitize-vectors FILE it serves no bridge and prints the sanitiser's
// result for each vector of FILE.

import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

const PROTOCOL = "runtime-adapter-bridge-v1";
const CONTRACT = "runtime-adapter-v1";
const SCHEMA = "runtime-history-v1";
const CAPABILITY_IDS = ["compaction", "provider-continuation", "embeddings", "local-kv-reuse"];
const MAX_DIAGNOSTICS = 100;
const ARGS = process.argv.slice(2);
const EMBEDDINGS = ARGS.includes("--embeddings");
// The value after each occurrence of flag.
const values = (flag) => ARGS.flatMap((a, i) => (a === flag && i + 1 < ARGS.length ? [ARGS[i + 1]] : []));
// --refuse FAMILY: the runtime cannot hold a history of that family (for
// example multi-result, a tool message carrying two or more tool results),
// and refuses such a history at create.
const REFUSE = values("--refuse");
// --declare FAMILY: the runtime declares the family a limit at create, and
// is handed no history of it.
const DECLARE = values("--declare");
// --provenance pi-session and --drop-unknown: the runtime holds a history
// in its own form (every message under its provenance source, without
// unknown members) and reports it at create as the history it holds.
const PROVENANCE = values("--provenance")[0];
const DROP_UNKNOWN = ARGS.includes("--drop-unknown");
// --defect upper-text: text blocks are held upper-cased, a content defect
// no holding difference covers.
const UPPER_TEXT = values("--defect").includes("upper-text");
// --profile pi, pi-slips, pi-surface: the runtime holds histories as DS4's
// Pi runtime adapter does.
const PROFILE = values("--profile")[0];
if (PROFILE !== undefined && !["pi", "pi-slips", "pi-surface"].includes(PROFILE)) {
  process.stderr.write("node-example-adapter: --profile is pi, pi-slips or pi-surface\n");
  process.exit(2);
}
const PI = PROFILE !== undefined;
const PI_SLIPS = PROFILE === "pi-slips";
const PI_SURFACE = PROFILE === "pi-surface";
// The families of history shapes Pi cannot hold: a tool message with two
// or more results, a result beside other blocks, an opaque block other
// than a provider's raw block, and a time no clock holds.
const PI_REFUSES = ["multi-result", "result-with-text", "opaque-provider", "created-at-out-of-range"];
// The methods the Pi adapter does not implement.
const PI_MISSING = ["enforcePrivacy", "complete", "shutdown", "diagnostics"];
const HOLDS_OWN_FORM = PROVENANCE !== undefined || DROP_UNKNOWN || UPPER_TEXT || PI;
// --sanitize-vectors FILE: sanitise each vector's payload and print the results.
const VECTORS_FILE = ARGS.includes("--sanitize-vectors") ? ARGS[ARGS.indexOf("--sanitize-vectors") + 1] : undefined;
// The embedding port: its identity, and the most texts one embed request
// may carry (the harness splits longer inputs).
const EMBEDDING_PORT = { provider: "node-example-adapter", model: "sha256-16", dimensions: 16, destination: "local", maxBatch: 2 };

// ---- protocol -------------------------------------------------------------

class AdapterError extends Error {
  constructor(code, message, family) {
    super(message);
    this.code = code;
    this.family = family;
  }
}

let helloDone = false;
let served = Promise.resolve();
let nextId = 0;
const pending = new Map();
// The harness's requests not answered yet, by id: a cancel naming one
// aborts its signal, so that a completion the harness gave up on does not
// reach the transport.
const inflight = new Map();

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

// callHarness sends a callback; when signal (the request it serves) is
// aborted, the callback is cancelled too, so the harness's transport sees
// its context end with the completion's.
function callHarness(method, params, signal) {
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    send({ id, method, params });
    signal?.addEventListener("abort", () => send({ id: ++nextId, method: "cancel", params: { id } }), { once: true });
  });
}

async function dispatch(msg, signal) {
  try {
    const result = await handle(msg.method, msg.params ?? {}, msg.id, signal);
    send({ id: msg.id, result: result === undefined ? null : result });
  } catch (err) {
    const code = err instanceof AdapterError ? err.code : "adapter-panicked";
    const message = err instanceof AdapterError ? err.message : `${msg.method} failed unexpectedly`;
    const error = { code, message };
    if (err instanceof AdapterError && err.family) error.family = err.family;
    send({ id: msg.id, error });
  } finally {
    inflight.delete(msg.id);
  }
}

if (VECTORS_FILE === undefined) serve();

function serve() {
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
    if (msg.method === "cancel") {
      // Acted on at once, not behind the request it cancels.
      inflight.get(msg.params?.id)?.abort();
      send({ id: msg.id, result: null });
      return;
    }
    if (typeof msg.method === "string") {
      // Requests are served one at a time, in arrival order, as a
      // single-threaded runtime would: an answer is sent only after every
      // earlier request, transport callbacks included, has finished.
      const controller = new AbortController();
      inflight.set(msg.id, controller);
      served = served.then(() => dispatch(msg, controller.signal));
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
}

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

async function handle(method, params, id, signal) {
  if (method === "hello") {
    if (params.protocol !== PROTOCOL) throw new AdapterError("unsupported-version", `this adapter speaks ${PROTOCOL} only`);
    helloDone = true;
    return { protocol: PROTOCOL, factory: "node-example-adapter" };
  }
  if (!helloDone) throw new AdapterError("hello-required", "send hello first");
  if (PI_SURFACE && PI_MISSING.includes(method)) throw new AdapterError("unknown-method", `the Pi adapter has no ${method}`);
  switch (method) {
    case "create": {
      const fx = params.fixture;
      if (!fx || !Array.isArray(fx.messages)) throw new AdapterError("invalid-params", "create needs a fixture");
      const held = familiesOf(fx.messages);
      const refused = [...REFUSE, ...(PI ? PI_REFUSES : [])].find((f) => held.includes(f));
      if (refused !== undefined) {
        throw new AdapterError("unrepresentable", refused === "multi-result" ? "tool message with two results" : "", refused);
      }
      const dir = realpathSync(mkdtempSync(join(tmpdir(), "node-adapter-")));
      const id = `node-${++nextInstance}`;
      const store = fx.messages.map((m) => JSON.stringify(ownForm(m, fx.model)));
      // The store names the runtime and the project root it belongs to,
      // as a session file's header does; whole keeps the store as it was
      // before the harness damaged it (sourceCorrupt, sourceBreak).
      instances.set(id, {
        dir, runtimeId: fx.runtimeId, sessionId: fx.sessionId, model: fx.model,
        store, storeRuntimeId: fx.runtimeId, storeRoot: dir, whole: null, closed: false, diagnostics: [], cache: null,
      });
      const result = { instance: id, expectedProjectRoot: dir, source: true, sourceRewrite: true, sourceBreak: !PI, privacyConfig: PRIVACY_CONFIG };
      if (DECLARE.length > 0) result.limits = DECLARE;
      if (HOLDS_OWN_FORM) result.held = store.map((r) => JSON.parse(r));
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
      return complete(instance(params), params, id, signal);
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
    case "sourceAppend": {
      const inst = open(params);
      const m = params.message;
      if (m === null || typeof m !== "object" || Array.isArray(m)) throw new AdapterError("invalid-params", "sourceAppend needs a message");
      piRefusal([m]);
      inst.store.push(JSON.stringify(ownForm(m, inst.model)));
      inst.cache = null;
      return null;
    }
    case "sourceRewrite": {
      const inst = open(params);
      const m = params.message;
      if (m === null || typeof m !== "object" || Array.isArray(m)) throw new AdapterError("invalid-params", "sourceRewrite needs a message");
      const at = inst.store.findIndex((rec) => {
        try {
          return JSON.parse(rec).id === m.id;
        } catch {
          return false;
        }
      });
      if (at < 0) throw new AdapterError("adapter-error", "no stored message has the id of the rewrite");
      piRefusal([m]);
      inst.store[at] = JSON.stringify(ownForm(m, inst.model));
      inst.cache = null;
      return null;
    }
    case "sourceCorrupt": {
      const inst = open(params);
      keepWhole(inst);
      inst.store.push("{\"id\":");
      inst.cache = null;
      return null;
    }
    case "sourceBreak":
      return breakStore(open(params), params.damage);
    case "sourceRepair": {
      const inst = open(params);
      if (inst.whole) Object.assign(inst, inst.whole, { whole: null, cache: null });
      return null;
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

async function complete(inst, params, call, signal) {
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
  // The harness gave this completion up: nothing is sent, and the
  // completion fails as a transport call under an ended context would.
  if (signal.aborted) {
    record(inst, "completion-transport-failed", "warning", "Completion transport failed; native runtime fallback remains available");
    return fallback("transport-failed", "completion transport failed", true);
  }
  let output;
  try {
    const res = await callHarness("transport", {
      instance: params.instance,
      call,
      request: { provider: params.provider, model: params.model, destination: sanitised.destination, payload: sanitised.payload },
    }, signal);
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
    EMBEDDINGS || PI_SURFACE
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

// readStore decodes the instance's canonical store, one JSON record per
// message; a record that does not decode is an adapter error, recorded as a
// diagnostic (metadata only).
function readStore(inst) {
  try {
    return inst.store.map((line) => {
      const m = JSON.parse(line);
      if (m === null || typeof m !== "object" || !Array.isArray(m.blocks)) throw new Error("not a message");
      return m;
    });
  } catch {
    record(inst, "canonical-history-read-failed", "error", "The canonical history store could not be read");
    throw new AdapterError("adapter-error", "canonical history store is unreadable");
  }
}

// keepWhole saves the store before its first damage since it was whole.
function keepWhole(inst) {
  if (!inst.whole) inst.whole = { store: inst.store.slice(), storeRuntimeId: inst.storeRuntimeId, storeRoot: inst.storeRoot };
}

// breakStore damages the store as the harness asks (sourceBreak): a record
// written as it is, a record cut short, a record that is no message, or
// the store naming another runtime or project root. A store of JavaScript
// strings cannot hold bytes that are not UTF-8.
function breakStore(inst, d) {
  if (d === null || typeof d !== "object") throw new AdapterError("invalid-params", "sourceBreak needs a damage");
  const record = () => {
    if (d.message === null || typeof d.message !== "object") throw new AdapterError("invalid-params", "this damage needs a message");
    return JSON.stringify(d.message);
  };
  let change;
  switch (d.kind) {
    case "record": { const r = record(); change = () => inst.store.push(r); break; }
    case "torn-record": { const r = record(); change = () => inst.store.push(r.slice(0, r.length >> 1)); break; }
    case "trailing": change = () => inst.store.push(""); break;
    case "identity": change = () => { inst.storeRuntimeId += "-other"; }; break;
    case "root": change = () => { inst.storeRoot = dirname(inst.dir); }; break;
    case "invalid-utf8": throw new AdapterError("unsupported", "a store of strings holds no bytes that are not UTF-8");
    default: throw new AdapterError("unsupported", "unknown damage");
  }
  keepWhole(inst);
  change();
  inst.cache = null;
  return null;
}

// blank is SPEC's blank: empty after JavaScript's trim.
const blank = (s) => typeof s !== "string" || s.trim() === "";

// historyIssues counts what SPEC §7's validation rejects in messages, of
// the instance's runtime and session: ids missing or repeated, provenance
// of another session or runtime, tool call ids blank or repeated, results
// whose call the history does not hold.
function historyIssues(inst, messages) {
  let issues = 0;
  const ids = new Set();
  const calls = new Map();
  const results = [];
  for (const m of messages) {
    if (ids.has(m.id) || blank(m.id)) issues++;
    ids.add(m.id);
    const p = m.provenance ?? {};
    if (p.sessionId !== inst.sessionId || blank(p.entryId) || m.sourceEntryId !== p.entryId ||
        (p.source === "runtime-session" && p.runtimeId !== inst.runtimeId)) issues++;
    for (const b of m.blocks) {
      if (b.type === "toolCall") calls.set(b.id, (calls.get(b.id) ?? 0) + 1);
      if (b.type === "toolResult") results.push(b.toolCallId);
    }
  }
  for (const [id, n] of calls) if (blank(id) || n !== 1) issues++;
  for (const id of new Set(results)) if (blank(id) || !calls.has(id)) issues++;
  return issues;
}

function snapshot(inst, rebuild) {
  if (rebuild) inst.cache = null;
  if (inst.cache) return inst.cache;
  if (inst.storeRuntimeId !== inst.runtimeId || inst.storeRoot !== inst.dir) {
    record(inst, "canonical-history-identity-mismatch", "error", "The canonical history store belongs to another runtime or project root");
    throw new AdapterError("adapter-error", "canonical history identity does not match the adapter's");
  }
  const messages = readStore(inst);
  if (historyIssues(inst, messages) > 0) {
    record(inst, "canonical-history-invalid", "error", "The canonical history store does not validate");
    throw new AdapterError("adapter-error", "canonical history is invalid");
  }
  // The revision digests the store's serialised records, so it changes
  // exactly when the stored content does.
  const revision = sha256(stableJSON({ runtimeId: inst.runtimeId, sessionId: inst.sessionId, projectRoot: inst.dir, records: inst.store }));
  inst.cache = {
    schemaVersion: SCHEMA, runtimeId: inst.runtimeId, sessionId: inst.sessionId, revision,
    projectRoot: inst.dir, messages, toolAtomicGroups: buildToolAtomicGroups(messages),
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

// The adapter's privacy configuration: SPEC §8's reference default, declared
// at create so the harness can compare this engine with the reference one.
const PRIVACY_CONFIG = {
  enabled: true, defaultClassification: "normal", localProviders: ["ollama", "llama-cpp", "lmstudio"],
  remoteDefaultAllowed: ["normal", "internal"], remoteProviders: {}, redactSecrets: true,
};
const CLASSES = ["normal", "internal", "sensitive", "local-only"];
const rank = (c) => CLASSES.indexOf(c);
const maxClass = (a, b) => (rank(a) >= rank(b) ? a : b);
const normaliseProvider = (name) => name.trim().toLowerCase();

// policy resolves a provider under a configuration: its destination and
// the classes it may see.
function policy(cfg, provider) {
  const name = normaliseProvider(provider);
  if (cfg.localProviders.some((p) => normaliseProvider(p) === name)) return { destination: "local", allowed: CLASSES };
  for (const [p, classes] of Object.entries(cfg.remoteProviders ?? {})) {
    if (normaliseProvider(p) === name) return { destination: "remote", allowed: classes };
  }
  return { destination: "remote", allowed: cfg.remoteDefaultAllowed };
}

// enforce sanitises the bridge's payload under the adapter's configuration.
// A payload the harness could not encode fails closed.
function enforce(params) {
  if (params.payloadUninspectable === true) throw new Error("payload cannot be inspected");
  const r = sanitizePayload(PRIVACY_CONFIG, params.provider, params.payload ?? null);
  return { provider: params.provider, destination: r.destination, payload: r.value, changed: r.changed, blockedBlocks: r.blockedBlocks, secretRedactions: r.secretRedactions };
}

// markerAt reads a marker tag starting at the '[' at i, or returns null.
function markerAt(s, i) {
  let j = i + 1;
  let closing = false;
  if (s[j] === "/") { closing = true; j++; }
  if (asciiLower(s.slice(j, j + 4)) !== "ds4:") return null;
  j += 4;
  for (const c of CLASSES) {
    if (asciiLower(s.slice(j, j + c.length)) === c && s[j + c.length] === "]") {
      return { start: i, end: j + c.length + 1, cls: c, closing };
    }
  }
  return null;
}

// asciiLower folds ASCII letters only, as marker classes compare.
function asciiLower(s) {
  return s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

// findMarkers lists the unescaped markers of s in order; a '[' preceded by
// a backslash is never a marker.
function findMarkers(s) {
  const out = [];
  for (let i = 0; ;) {
    const k = s.indexOf("[", i);
    if (k < 0) return out;
    i = k;
    if (i > 0 && s[i - 1] === "\\") { i++; continue; }
    const m = markerAt(s, i);
    if (m) {
      out.push(m);
      i = m.end;
      continue;
    }
    i++;
  }
}

const hasMarker = (s) => findMarkers(s).length > 0;

// findPairs pairs each opening marker with the nearest following close of
// its class; the markers in between belong to the pair's content.
function findPairs(ms) {
  const pairs = [];
  for (let i = 0; i < ms.length; i++) {
    if (ms[i].closing) continue;
    let j = i + 1;
    while (j < ms.length && !(ms[j].closing && ms[j].cls === ms[i].cls)) j++;
    if (j === ms.length) continue;
    pairs.push({ open: ms[i], close: ms[j] });
    i = j;
  }
  return pairs;
}

function placeholder(cls) {
  return `[DS4 ${cls} content excluded by privacy policy]`;
}

const SECRETS = [
  [/-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----[\s\S]*?-----END (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----/g, () => "[DS4 REDACTED PRIVATE KEY]"],
  [/\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{12,}|AKIA[0-9A-Z]{16})\b/g, () => "[DS4 REDACTED CREDENTIAL]"],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, (_, prefix) => `${prefix}[DS4 REDACTED TOKEN]`],
  [/\b(api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|password)(\s*[:=]\s*)(["']?)[^\s,"';}\]]{4,}\3/gi, (_, k, sep, q) => `${k}${sep}${q}[DS4 REDACTED SECRET]${q}`],
];

// sanitizeText applies §8's text rules under the sanitiser z, adding to its stats.
function sanitizeText(z, s) {
  const st = z.st;
  st.cls = maxClass(st.cls, z.def);
  if (s === "") return s;
  const ms = findMarkers(s);
  const pairs = findPairs(ms);
  const allows = (c) => z.allowed.includes(c);
  const segment = (text, c, always) => {
    st.cls = maxClass(st.cls, c);
    if (text === "" && !always) return "";
    if (allows(c)) return text;
    st.blocked++;
    return placeholder(c);
  };
  let out;
  let applied = false;
  if (pairs.length > 0) {
    applied = true;
    out = "";
    let pos = 0;
    for (const p of pairs) {
      out += segment(s.slice(pos, p.open.start), z.def, false);
      out += segment(s.slice(p.open.end, p.close.start), maxClass(z.def, p.open.cls), true);
      pos = p.close.end;
    }
    out += segment(s.slice(pos), z.def, false);
  } else if (ms.length > 0 && !ms[0].closing && s.slice(0, ms[0].start).trimStart() === "") {
    applied = true;
    out = segment(s.slice(ms[0].end).trimStart(), maxClass(z.def, ms[0].cls), true);
  } else if (allows(z.def)) {
    out = s;
  } else {
    out = placeholder(z.def);
    st.blocked++;
  }
  if (z.redact) {
    for (const [re, fn] of SECRETS) {
      out = out.replace(re, (...args) => {
        st.redactions++;
        return fn(...args);
      });
    }
  }
  if (applied || out !== s) st.changed = true;
  return out;
}

const STRUCTURAL_KEYS = new Set(["api", "id", "model", "name", "role", "stopreason", "stop_reason", "toolcallid", "tool_call_id", "type"]);
const CONTENT_KEYS = new Set(["arguments", "content", "contents", "context", "description", "input", "instructions", "messages",
  "metadata", "parts", "prompt", "requestmetadata", "system", "system_instruction", "systeminstruction",
  "systemprompt", "text", "thinking", "toolconfig", "tools"]);
const KEY_OTHER = 0;
const KEY_STRUCTURAL = 1;
const KEY_CONTENT = 2;

function classifyKey(name) {
  const k = name.toLowerCase();
  if (STRUCTURAL_KEYS.has(k)) return KEY_STRUCTURAL;
  if (CONTENT_KEYS.has(k)) return KEY_CONTENT;
  return KEY_OTHER;
}

// markerFloor checks the marker structure across every string value in walk
// order and returns the floor it raises, or "" when the structure is sound.
// Open markers form a stack: an opening marker while others are open raises
// the floor to every open class and its own; a closing marker pops the top
// entry and raises the floor to both classes unless that entry is of its
// class and in the same string; markers left open raise it at the end. A
// member name, anywhere in the payload, raises it to the class of each
// opening marker in it that does not begin a closed pair of the name (the
// Go kit's rule: the TypeScript kit counts values only).
function markerFloor(root) {
  let floor = "";
  const open = []; // { cls, upto, in }: upto is the highest class at or below
  let idx = 0;
  const raise = (...cs) => { for (const c of cs) floor = floor === "" ? c : maxClass(floor, c); };
  const value = (v) => {
    for (const m of findMarkers(v)) {
      const top = open[open.length - 1];
      if (!m.closing) {
        const upto = top ? maxClass(top.upto, m.cls) : m.cls;
        if (top) raise(upto);
        open.push({ cls: m.cls, upto, in: idx });
      } else if (!top) {
        raise(m.cls);
      } else {
        open.pop();
        if (top.cls !== m.cls || top.in !== idx) raise(top.cls, m.cls);
      }
    }
    idx++;
  };
  const name = (n) => {
    const ms = findMarkers(n);
    const begins = new Set(findPairs(ms).map((p) => p.open.start));
    for (const m of ms) if (!m.closing && !begins.has(m.start)) raise(m.cls);
  };
  const walk = (v) => {
    if (typeof v === "string") {
      value(v);
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item);
    } else if (v !== null && typeof v === "object") {
      for (const k of Object.keys(v)) {
        name(k);
        walk(v[k]);
      }
    }
  };
  walk(root);
  if (open.length > 0) raise(open[open.length - 1].upto);
  return floor;
}

function defineMember(obj, name, value) {
  Object.defineProperty(obj, name, { value, enumerable: true, writable: true, configurable: true });
}

// sanitizePayload is SPEC §8's payload sanitisation of a JSON value (as
// JSON.parse gives it, so keys walk in JavaScript property order).
function sanitizePayload(cfg, provider, payload) {
  const { destination, allowed } = policy(cfg, provider);
  if (!cfg.enabled) {
    return { value: payload, classification: cfg.defaultClassification, changed: false, blockedBlocks: 0, secretRedactions: 0, destination };
  }
  const floor = markerFloor(payload);
  const def = floor === "" ? cfg.defaultClassification : maxClass(cfg.defaultClassification, floor);
  const z = { allowed, def, redact: cfg.redactSecrets && destination === "remote", st: { cls: def, changed: false, blocked: 0, redactions: 0 } };
  const value = (v, key, ctx) => {
    if (typeof v === "string") return (ctx && key !== KEY_STRUCTURAL) || hasMarker(v) ? sanitizeText(z, v) : v;
    if (Array.isArray(v)) return v.map((item) => value(item, key, ctx));
    if (v !== null && typeof v === "object") return object(v, ctx);
    return v;
  };
  const object = (obj, ctx) => {
    const out = {};
    const names = new Set();
    Object.keys(obj).forEach((orig, idx) => {
      const kc = classifyKey(orig);
      let name = orig;
      if ((ctx && kc === KEY_OTHER) || hasMarker(name)) name = sanitizeText(z, name);
      const child = value(obj[orig], kc, ctx || kc === KEY_CONTENT);
      while (names.has(name)) name += `_${idx}`;
      names.add(name);
      defineMember(out, name, child);
    });
    return out;
  };
  const result = value(payload, KEY_OTHER, false);
  return { value: result, classification: z.st.cls, changed: z.st.changed, blockedBlocks: z.st.blocked, secretRedactions: z.st.redactions, destination };
}

// ---- sanitiser vectors -------------------------------------------------------

// With --sanitize-vectors FILE the adapter serves no bridge: it reads the
// JSON Lines vectors ({name, input:{config, provider, payload}}) and prints,
// one line each, {name, output} with the sanitiser's result, so a test can
// compare it with the vector's expected output.
if (VECTORS_FILE !== undefined) {
  if (!VECTORS_FILE) {
    process.stderr.write("node-example-adapter: --sanitize-vectors needs a file\n");
    process.exit(2);
  }
  for (const line of readFileSync(VECTORS_FILE, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const v = JSON.parse(line);
    const { config, provider, payload } = v.input;
    process.stdout.write(JSON.stringify({ name: v.name, output: sanitizePayload(config, provider, payload) }) + "\n");
  }
}

// ---- the runtime's own form -------------------------------------------------

// The members the contract defines, for each object of a message.
const MESSAGE_MEMBERS = ["id", "sourceEntryId", "role", "blocks", "createdAt", "provider", "model", "provenance", "tokenEstimate", "flags"];
const PROVENANCE_MEMBERS = ["source", "sessionId", "entryId", "originalRole", "runtimeId"];
const FLAG_MEMBERS = ["pinned", "atomic", "localOnly", "synthetic"];
const BLOCK_MEMBERS = {
  text: ["text"], thinking: ["thinking"], toolCall: ["id", "name", "arguments"],
  toolResult: ["toolCallId", "toolName", "content", "isError"], image: ["mimeType", "data"],
  fileReference: ["path"], artifactReference: ["artifactId"], summaryReference: ["summaryId"],
  opaqueProvider: ["originalType", "value"],
};

// known keeps the members of obj named in members, in obj's order.
function known(obj, members) {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => members.includes(k)));
}

// ownForm is a message as this runtime holds it under the flags of its
// profile (model is the instance's); without them, the message itself.
function ownForm(m, model) {
  if (!HOLDS_OWN_FORM) return m;
  if (PI) return piForm(m, model);
  let out = structuredClone(m);
  if (DROP_UNKNOWN) {
    out = known(out, MESSAGE_MEMBERS);
    if (out.provenance) out.provenance = known(out.provenance, PROVENANCE_MEMBERS);
    if (out.flags) out.flags = known(out.flags, FLAG_MEMBERS);
    if (Array.isArray(out.blocks)) out.blocks = out.blocks.map((b) => ({ type: b.type, ...known(b, BLOCK_MEMBERS[b.type] ?? []) }));
  }
  if (PROVENANCE !== undefined && out.provenance) out.provenance.source = PROVENANCE;
  if (UPPER_TEXT && Array.isArray(out.blocks)) {
    for (const b of out.blocks) if (b.type === "text" && typeof b.text === "string") b.text = b.text.toUpperCase();
  }
  return out;
}

// dropUnknown returns a copy of m without the members the contract does
// not define.
function dropUnknown(m) {
  const out = known(structuredClone(m), MESSAGE_MEMBERS);
  if (out.provenance) out.provenance = known(out.provenance, PROVENANCE_MEMBERS);
  if (out.flags) out.flags = known(out.flags, FLAG_MEMBERS);
  if (Array.isArray(out.blocks)) out.blocks = out.blocks.map((b) => ({ type: b.type, ...known(b, BLOCK_MEMBERS[b.type] ?? []) }));
  return out;
}

// piRefusal refuses, as unrepresentable, messages holding a family Pi
// cannot hold.
function piRefusal(msgs) {
  if (!PI) return;
  const held = familiesOf(msgs);
  const refused = PI_REFUSES.find((f) => held.includes(f));
  if (refused !== undefined) throw new AdapterError("unrepresentable", "Pi cannot hold it", refused);
}

// piForm is a message as DS4's Pi runtime adapter holds it, measured on
// generated histories: the converter writes the pi-session source, the
// session, the entry and Pi's own role name only; Pi's estimator gives the
// token estimate; atomic follows the tool blocks; every entry has a time
// (a custom entry's from its ISO timestamp, so whole milliseconds); an
// assistant message has the session's model where it had none, other
// messages have no provider or model; unknown members are not kept;
// tool-role text is a custom message and a reference block an opaque
// provider block. With pi-slips the converter also treats an empty string
// as absent and loses pinned, localOnly and synthetic.
function piForm(m, model) {
  const out = dropUnknown(m);
  const blocks = Array.isArray(out.blocks) ? out.blocks : [];
  const tool = blocks.some((b) => b.type === "toolCall" || b.type === "toolResult");
  out.blocks = blocks.map((b) => {
    if (b.type === "fileReference" || b.type === "artifactReference" || b.type === "summaryReference") {
      return { type: "opaqueProvider", originalType: b.type, value: b };
    }
    if (PI_SLIPS && b.type === "image") {
      const img = { ...b };
      if (img.mimeType === "") delete img.mimeType;
      if (img.data === "") delete img.data;
      return img;
    }
    return b;
  });
  if (out.role === "tool" && !tool) out.role = "custom";
  const piRole = { user: "user", assistant: "assistant", tool: "toolResult" }[out.role] ?? "custom";
  out.provenance = { source: "pi-session", sessionId: out.provenance?.sessionId, entryId: out.provenance?.entryId, originalRole: piRole };
  let units = 0;
  for (const b of out.blocks) {
    if (b.type === "text") units += b.text.length;
    else if (b.type === "thinking") units += b.thinking.length;
    else if (b.type === "toolCall") units += b.name.length + (b.arguments === undefined ? 0 : JSON.stringify(b.arguments).length);
    else if (b.type === "toolResult") units += b.toolName.length + b.content.length;
  }
  out.tokenEstimate = Math.ceil(units / 4);
  const flags = { atomic: tool };
  if (!PI_SLIPS) for (const f of ["pinned", "localOnly", "synthetic"]) if (out.flags?.[f] !== undefined) flags[f] = out.flags[f];
  out.flags = flags;
  if (out.createdAt === undefined) out.createdAt = Date.now();
  else if (piRole === "custom") out.createdAt = new Date(out.createdAt).getTime();
  if (PI_SLIPS && out.provider === "") delete out.provider;
  if (out.role === "assistant") {
    if (out.provider === undefined) out.provider = model?.provider;
    if (out.model === undefined) out.model = model?.id;
  } else {
    delete out.provider;
    delete out.model;
  }
  return out;
}

// rawProviderBlock reports whether an opaque block holds a provider's own
// block as it came, as gen.IsRawProviderBlock says.
function rawProviderBlock(b) {
  const v = b.value;
  if (v === null || typeof v !== "object" || Array.isArray(v)) return b.originalType === undefined && v !== undefined;
  return b.originalType !== undefined && typeof v.type === "string" && v.type === b.originalType;
}

// familiesOf names the families of history shapes (gen.Families) msgs
// holds, as the kit's FamiliesOf does.
function familiesOf(msgs) {
  const set = new Set();
  const calls = new Set();
  const results = new Map();
  const extra = (obj, members) => obj && Object.keys(obj).some((k) => !members.includes(k));
  const reference = { thinking: "thinking", image: "image", fileReference: "file-reference", artifactReference: "artifact-reference", summaryReference: "summary-reference", opaqueProvider: "opaque-provider" };
  for (const m of msgs) {
    if (m.provenance?.source === "pi-session") set.add("pi-session");
    if (extra(m, MESSAGE_MEMBERS) || extra(m.provenance, PROVENANCE_MEMBERS) || extra(m.flags, FLAG_MEMBERS)) set.add("unknown-members");
    if (["pinned", "localOnly", "synthetic"].some((f) => m.flags?.[f] !== undefined)) set.add("message-flags");
    if (typeof m.createdAt === "number" && Math.abs(m.createdAt) > 8.64e15) set.add("created-at-out-of-range");
    let nCalls = 0, nResults = 0, other = 0;
    for (const b of m.blocks ?? []) {
      if (extra(b, ["type", ...(BLOCK_MEMBERS[b.type] ?? [])])) set.add("unknown-members");
      if (b.type === "toolCall") {
        nCalls++;
        calls.add(b.id);
      } else if (b.type === "toolResult") {
        nResults++;
        results.set(b.toolCallId, (results.get(b.toolCallId) ?? 0) + 1);
      } else {
        other++;
        if (b.type === "opaqueProvider") set.add(rawProviderBlock(b) ? "raw-provider-block" : "opaque-provider");
        else if (reference[b.type]) set.add(reference[b.type]);
      }
    }
    if (nCalls > 1) set.add("parallel-batch");
    if (nResults > 1) set.add("multi-result");
    if (nResults > 0 && other > 0) set.add("result-with-text");
  }
  if ([...calls].some((id) => !results.has(id))) set.add("live-call");
  if ([...results.values()].some((n) => n > 1)) set.add("repeated-result");
  if (msgs.length >= 100) set.add("long-history");
  return [...set];
}
