// A tiny element builder: el("div", {class: "x", onclick: f}, "text", child). Text is always text.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Base64 images arrive without their data: prefix; the first bytes say what they are.
const SIGNATURES = [["iVBOR", "image/png"], ["/9j/", "image/jpeg"], ["R0lG", "image/gif"], ["UklG", "image/webp"]];

export function imageSrc(data) {
  if (data.startsWith("data:")) return data;
  const type = SIGNATURES.find(([prefix]) => data.startsWith(prefix))?.[1] || "image/png";
  return `data:${type};base64,${data}`;
}

export function formatJson(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

export function relativeTime(iso) {
  const then = new Date(iso).getTime();
  if (!Number.isFinite(then)) return "";
  const seconds = Math.round((Date.now() - then) / 1000);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(then).toLocaleDateString();
}

let toastTimer = 0;

// A short message for the user (errors, confirmations) in the page's alert region: text, or nodes
// (a <details> in it, once opened, keeps the message up until it is closed again).
export function toast(message, kind = "error") {
  const box = document.getElementById("toast");
  if (!box) return;
  box.replaceChildren(...[message].flat());
  box.className = `toast ${kind}`;
  box.hidden = false;
  const later = () => {
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 8000 : 3000);
  };
  for (const details of box.querySelectorAll("details")) {
    details.addEventListener("toggle", () => (details.open ? clearTimeout(toastTimer) : later()));
  }
  later();
}

// A refusal that ends with the list of what is accepted ("… Navi accepts only …"): one line, the
// list behind "which files?".
export function refusal(text) {
  const at = text.search(/(?<=[.:]\s)Navi (accepts only|reads) /);
  if (at < 0) return text;
  return [text.slice(0, at).trimEnd(), " ", el("details", { class: "toast-more" },
    el("summary", {}, "which files?"), el("div", { class: "toast-more-text" }, text.slice(at)))];
}
