// An MCP server's question to the user in the middle of a tool call (elicitation_required): a
// form built from the server's flat JSON Schema (text, numbers, yes/no, choices), or a page the
// server asks the user to open. Only the user answers — Send, Decline, or Open page — and nothing
// is filled in but the schema's own defaults. Text from the server is inserted as text, never
// markup; the URL is shown whole, so the user sees where it leads before opening it.

import { el } from "./dom.js";

const OUTCOMES = {
  accept: "Answered.",
  decline: "Declined.",
  cancel: "Dismissed.",
};

function choices(spec) {
  if (Array.isArray(spec.enum)) return spec.enum.map((v, i) => [String(v), String(spec.enumNames?.[i] ?? v)]);
  if (Array.isArray(spec.oneOf)) return spec.oneOf.map((o) => [String(o.const), String(o.title ?? o.const)]);
  return null;
}

// One field: its input, and how to read its value back (undefined: left empty).
function field(name, spec, required) {
  const id = `elicit-${name}-${Math.random().toString(36).slice(2, 8)}`;
  const label = el("label", { for: id, text: `${spec.title || name}${required ? " *" : ""}` });
  const hint = spec.description ? el("small", { class: "elicit-hint", text: spec.description }) : null;
  const options = choices(spec);
  let input;
  let read;
  if (spec.type === "boolean") {
    input = el("input", { id, type: "checkbox", name });
    input.checked = spec.default === true;
    read = () => input.checked;
  } else if (options) {
    input = el("select", { id, name },
      required ? null : el("option", { value: "", text: "—" }),
      ...options.map(([value, text]) => el("option", { value, text })));
    if (spec.default !== undefined) input.value = String(spec.default);
    read = () => (input.value === "" ? undefined : input.value);
  } else if (spec.type === "number" || spec.type === "integer") {
    input = el("input", { id, type: "number", name, step: spec.type === "integer" ? "1" : "any" });
    if (spec.default !== undefined) input.value = String(spec.default);
    read = () => (input.value.trim() === "" ? undefined : Number(input.value));
  } else {
    const type = { email: "email", uri: "url", date: "date" }[spec.format] || "text";
    input = el("input", { id, type, name });
    if (spec.default !== undefined) input.value = String(spec.default);
    read = () => (input.value === "" ? undefined : input.value);
  }
  input.required = Boolean(required && spec.type !== "boolean");
  return { node: el("div", { class: "elicit-field" }, label, input, hint), read, name };
}

// `onAnswer(id, action, content)` sends the answer; false when it could not be sent.
export class QuestionCard {
  constructor(frame, onAnswer) {
    this.id = frame.elicitation_id;
    this.onAnswer = onAnswer;
    this.error = el("p", { class: "elicit-error", role: "alert", hidden: true });
    const intro = el("p", { class: "elicit-from", text: `The MCP server “${frame.server}” asks you:` });
    const message = el("p", { class: "elicit-message", text: frame.message });
    this.actions = el("div", { class: "approval-actions elicit-actions" });
    const button = (label, action, cls, onclick) =>
      el("button", { type: "button", class: cls, dataset: { action }, onclick }, label);
    if (frame.mode === "url") {
      const link = el("code", { class: "elicit-url", text: frame.url });
      this.body = el("div", {}, el("p", { text: "It asks you to open this page:" }), link);
      this.actions.append(
        button("Open page", "accept", "approve-allow", () => {
          if (/^https?:\/\//i.test(frame.url)) window.open(frame.url, "_blank", "noopener,noreferrer");
          this.send("accept");
        }),
        button("Decline", "decline", "approve-deny", () => this.send("decline")));
    } else {
      const schema = frame.requested_schema || {};
      const required = new Set(schema.required || []);
      this.fields = Object.entries(schema.properties || {}).map(([name, spec]) => field(name, spec || {}, required.has(name)));
      this.body = el("form", { class: "elicit-form", onsubmit: (e) => { e.preventDefault(); this.submit(); } },
        ...this.fields.map((f) => f.node));
      this.actions.append(
        button("Send", "accept", "approve-allow", () => this.submit()),
        button("Decline", "decline", "approve-deny", () => this.send("decline")));
    }
    this.node = el("div", { class: "approval elicitation", role: "group", "aria-label": "Question from an MCP server", dataset: { elicitationId: this.id } },
      intro, message, this.body, this.error, this.actions);
  }

  submit() {
    if (this.body.reportValidity && !this.body.reportValidity()) return;
    const content = {};
    for (const f of this.fields) {
      const value = f.read();
      if (value !== undefined) content[f.name] = value;
    }
    this.send("accept", content);
  }

  send(action, content) {
    this.error.hidden = true;
    for (const b of this.actions.querySelectorAll("button")) b.disabled = true;
    if (!this.onAnswer(this.id, action, content)) this.enable();
  }

  enable() {
    for (const b of this.actions.querySelectorAll("button")) b.disabled = false;
  }

  // Navi refused the answer (bad_answer): it says why; the question still waits.
  refused(message) {
    this.error.textContent = message;
    this.error.hidden = false;
    this.enable();
  }

  answered(action, by) {
    const text = by === "timeout" ? "Nobody answered in time." : by === "stop" ? "Stopped." : by === "unattended" ? "Nobody could be asked." : OUTCOMES[action] || action;
    this.actions.replaceWith(el("p", { class: `approval-outcome ${action === "accept" ? "allow" : "deny"}`, role: "status", text }));
    for (const input of this.node.querySelectorAll("input, select")) input.disabled = true;
    this.error.hidden = true;
  }
}
