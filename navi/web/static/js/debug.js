// The debug panel: one session's display history beside the context the model sees (with the system
// prompt and memory), its planning logs, and the profiles, tools and memory Navi has.

import { api } from "./api.js";
import { el, formatJson, toast } from "./dom.js";
import { sessionTitle } from "./sidebar.js";

const $ = (id) => document.getElementById(id);

function flags(m) {
  const names = ["is_summary", "is_plan", "is_compression", "stopped"].filter((f) => m[f]);
  if (m.images?.length) names.push(`${m.images.length} image(s)`);
  const rated = { up: "rated 👍", down: "rated 👎" }[m.metadata?.feedback];
  if (rated) names.push(rated);
  return names.length ? el("span", { class: "flags", text: names.join(" · ") }) : null;
}

// A model call's facts on the assistant message it wrote (issue 48): model (and the endpoint of the
// model list that wrote it), tokens, time to first token, duration, cost; then why a chain passed
// over the endpoints before it (`fallback`).
function callFacts(m) {
  const meta = m.metadata || {};
  const usage = meta.usage;
  if (m.role !== "assistant" || (!usage && !meta.model)) return null;
  const facts = [];
  if (meta.model) facts.push(meta.endpoint ? `${meta.model} (${meta.endpoint})` : meta.model);
  if (usage) {
    const total = usage.total_tokens ?? (usage.prompt_tokens || 0) + (usage.completion_tokens || 0);
    facts.push(`${usage.estimated ? "~" : ""}${usage.prompt_tokens ?? 0} in + ${usage.completion_tokens ?? 0} out = ${total} tokens`);
  }
  if (meta.ttft_ms != null) facts.push(`first token ${Math.round(meta.ttft_ms)} ms`);
  if (meta.duration_ms != null) facts.push(`${Math.round(meta.duration_ms)} ms`);
  if (meta.cost != null) facts.push(`$${meta.cost.toFixed(6)}`);
  const line = el("p", { class: "muted call-facts", text: facts.join(" · ") });
  if (!meta.fallback?.length) return line;
  return el("div", {}, line, el("p", { class: "muted call-fallback", text: `fell back: ${meta.fallback.join("; ")}` }));
}

function messageEntry(m) {
  const parts = [];
  const call = callFacts(m);
  if (call) parts.push(call);
  if (m.thinking) parts.push(el("details", {}, el("summary", { text: "thinking" }), el("pre", { text: m.thinking })));
  if (m.content) parts.push(el("pre", { text: m.content }));
  if (m.tool_calls?.length) {
    parts.push(el("pre", { class: "calls", text: m.tool_calls.map((c) => `${c.name}(${formatJson(c.arguments)})`).join("\n") }));
  }
  const seen = m.role === "tool" && m.name === "browser" ? browserElements(m.content || "") : null;
  if (seen) parts.unshift(el("details", { class: "browser-elements" }, el("summary", { text: "elements the model saw" }), el("pre", { text: seen })));
  const who = m.role === "tool" ? `tool · ${m.name}` : m.role;
  return el("div", { class: "entry", dataset: { role: m.role } },
    el("span", { class: "role", text: who }), flags(m),
    el("span", { class: "muted", text: ` ${new Date(m.created_at).toLocaleString()}` }), ...parts);
}

// The numbered elements a browser result showed the model (between its heading and the page block's end).
function browserElements(content) {
  const at = content.lastIndexOf("Interactive elements:");
  if (at < 0) return null;
  const end = content.indexOf("</page>", at);
  return content.slice(at + "Interactive elements:".length, end < 0 ? undefined : end).trim() || null;
}

function list(container, items, render, empty) {
  container.replaceChildren(...(items.length ? items.map(render) : [el("p", { class: "muted", text: empty })]));
}

// What the shown path's model calls spent, summed (GET /usage counts every branch).
function spent(messages) {
  let tokens = 0, cost = null;
  for (const m of messages) {
    const meta = m.role === "assistant" ? m.metadata || {} : {};
    if (meta.usage) tokens += meta.usage.total_tokens ?? (meta.usage.prompt_tokens || 0) + (meta.usage.completion_tokens || 0);
    if (meta.cost != null) cost = (cost || 0) + meta.cost;
  }
  return tokens ? ` · ${tokens.toLocaleString()} tokens spent${cost != null ? ` · $${cost.toFixed(4)}` : ""}` : "";
}

async function showSession(id) {
  if (!id) return;
  try {
    const [detail, context, planning] = await Promise.all([api.session(id), api.context(id), api.planning(id)]);
    $("session-facts").textContent =
      `${detail.messages.length} messages · ${context.messages.length} in context · ` +
      `${context.context_token_count.toLocaleString()} of ${detail.max_context_tokens.toLocaleString()} tokens · ` +
      `profile ${detail.profile_id}${detail.active ? " · running" : ""}` + spent(detail.messages);
    list($("debug-messages"), detail.messages, messageEntry, "No messages yet.");
    list($("debug-context"), context.messages, messageEntry, "The context is empty.");
    $("debug-system").textContent = context.system_prompt;
    $("debug-memory").textContent = context.memory || "(nothing remembered yet)";
    list($("debug-planning"), planning, (entry) => el("div", { class: "entry" }, el("pre", { text: formatJson(entry) })),
      "No planning logs for this session.");
  } catch (error) {
    toast(`Could not load the session: ${error.message}`);
  }
}

async function showStatic() {
  let profiles, tools, facts, summary;
  try {
    [profiles, tools, facts, summary] = await Promise.all([api.profiles(), api.tools(), api.facts(), api.summary()]);
  } catch (error) {
    toast(`Could not load profiles, tools and memory: ${error.message}`);
    return;
  }
  list($("debug-profiles"), profiles, (p) => el("div", { class: "entry" },
    el("strong", { text: p.name }), el("span", { class: "muted", text: ` ${p.id} · ${p.llm_backend} · ${p.model}` }),
    el("p", { text: p.description }),
    el("p", { class: "muted", text: `tools: ${p.tools.join(", ") || "(all)"} · planning ${p.planning_enabled ? "on" : "off"}` })),
  "No profiles.");
  list($("debug-tools"), tools, (t) => el("details", { class: "entry" },
    el("summary", {}, el("strong", { text: t.name }), el("span", { class: "muted", text: t.server ? ` MCP: ${t.server}` : t.builtin ? " built-in" : " user" })),
    el("p", { text: t.description }), el("pre", { text: formatJson(t.parameters) })), "No tools.");
  $("debug-summary").textContent = summary.summary || "(no summary yet)";
  list($("debug-facts"), facts, (f) => el("div", { class: "entry" },
    el("span", { class: "role", text: f.category }), ` ${f.key} = ${f.value}`,
    el("span", { class: "muted", text: ` · confirmed ${f.confirmations}× · ${new Date(f.updated_at).toLocaleString()}` })),
  "No facts remembered yet.");
}

// The session in the address (?session=<id>, as the chat page links it, or #<id>) is shown first,
// and the address follows the picker, so a reload stays on it and "Back to the chat" returns to it.
function wantedSession() {
  return new URLSearchParams(location.search).get("session") || location.hash.slice(1) || null;
}

function follow(id) {
  if (!id) return;
  history.replaceState(null, "", `/debug?session=${encodeURIComponent(id)}`);
  $("back-to-chat").href = `/#/s/${encodeURIComponent(id)}`;
}

async function start() {
  const picker = $("debug-session");
  try {
    const sessions = await api.sessions();
    picker.replaceChildren(...sessions.map((s) => el("option", { value: s.id, text: `${sessionTitle(s)} · ${s.id.slice(0, 8)}` })));
    const wanted = wantedSession();
    if (wanted && sessions.some((s) => s.id === wanted)) picker.value = wanted;
    else if (wanted) toast("That conversation no longer exists.");
    follow(picker.value);
    picker.addEventListener("change", () => {
      follow(picker.value);
      showSession(picker.value);
    });
    $("debug-reload").addEventListener("click", () => { showSession(picker.value); showStatic(); });
    await Promise.all([showSession(picker.value), showStatic()]);
  } catch (error) {
    toast(`Navi is not answering: ${error.message}`);
  }
  document.body.dataset.ready = "true";
}

start();
