// The header's context gauge: the tokens the model saw in the last turn, of its window; a mark where
// compression starts; and, on hover (or focus), what the last turns read and wrote.

const KEPT = 8; // turns listed in the gauge's tooltip
const $ = (id) => document.getElementById(id);
let turns = []; // newest last: {read, wrote, estimated}

const n = (value) => Number(value || 0).toLocaleString();

// The turns of a stored history: the usage of every model call of a turn's answers, added up.
export function turnsFrom(messages) {
  turns = [];
  let turn = null;
  for (const message of messages) {
    if (message.role === "user" && !message.metadata?.synthetic) {
      turn = null;
      continue;
    }
    const usage = message.role === "assistant" ? message.metadata?.usage : null;
    if (!usage) continue;
    if (!turn) {
      turn = { read: 0, wrote: 0, estimated: false };
      turns.push(turn);
    }
    turn.read += usage.prompt_tokens || 0;
    turn.wrote += usage.completion_tokens || 0;
    turn.estimated ||= Boolean(usage.estimated);
  }
  turns = turns.slice(-KEPT);
}

// A turn that just answered (`stream_end`'s usage).
export function addTurn(usage) {
  if (!usage) return;
  turns.push({
    read: usage.prompt_tokens || 0,
    wrote: usage.completion_tokens || 0,
    estimated: Boolean(usage.estimated),
  });
  turns = turns.slice(-KEPT);
}

export function setMeter(tokens, max, compressAt) {
  const meter = $("context-meter");
  if (!max || !tokens) {
    meter.hidden = true;
    return;
  }
  const share = Math.min(1, tokens / max);
  meter.hidden = false;
  meter.setAttribute("aria-valuenow", String(tokens));
  meter.setAttribute("aria-valuemax", String(max));
  $("context-fill").style.width = `${(share * 100).toFixed(1)}%`;
  const mark = $("context-mark");
  const at = compressAt ? Math.min(1, compressAt / max) : null;
  mark.hidden = at === null;
  if (at !== null) mark.style.left = `${(at * 100).toFixed(1)}%`;
  $("context-fill").classList.toggle("high", at !== null ? tokens >= at * max * 0.9 : share > 0.75);
  $("context-text").textContent = `${n(tokens)} / ${n(max)} tokens`;
  $("context-short").textContent = `${Math.round(share * 100)}%`;
  const lines = [`Context the model saw in the last turn: ${n(tokens)} of ${n(max)} tokens.`];
  lines.push(
    at !== null
      ? `Earlier messages are summarised from ${n(compressAt)} tokens (${Math.round(at * 100)}%).`
      : "Compression is off.",
  );
  if (turns.length) {
    lines.push("Last turns (read / written tokens):");
    for (const t of turns) lines.push(`  ${n(t.read)} / ${n(t.wrote)}${t.estimated ? " (estimated)" : ""}`);
  }
  meter.title = lines.join("\n");
}
