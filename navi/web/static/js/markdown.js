// Model output → safe HTML: marked renders Markdown, DOMPurify removes anything executable (scripts,
// event handlers, javascript: links), highlight.js colours code, and each code block gets a copy
// button (added after sanitising: model output itself can hold no buttons). The page's CSP is the second fence.

import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.mjs";
import hljs from "../vendor/highlight.min.js";
import { el, toast } from "./dom.js";

const marked = new Marked({ gfm: true, breaks: true });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
};

function renderMarkdown(text) {
  const html = marked.parse(text || "");
  return DOMPurify.sanitize(html, PURIFY);
}

// The clipboard API exists only in secure contexts (https, localhost); on plain http from another
// machine the older copy command still works.
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch { /* no clipboard API here, or it refused: fall back */ }
  const area = el("textarea", { readonly: true, "aria-hidden": "true", class: "copy-buffer" });
  area.value = text;
  const focused = document.activeElement;
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  focused?.focus?.();
  if (!copied) throw new Error("the browser did not allow it");
}

function copyButton(code) {
  const button = el("button", { class: "copy-code", type: "button", title: "Copy the code" }, "Copy");
  let timer = 0;
  button.addEventListener("click", async () => {
    try {
      await copyText(code.textContent.replace(/\n$/, ""));
    } catch (error) {
      toast(`Could not copy: ${error.message}`);
      return;
    }
    button.textContent = "Copied";
    button.classList.add("copied");
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = "Copy";
      button.classList.remove("copied");
    }, 1500);
  });
  return button;
}

// Markdown as the plain text it reads as (for one-line previews and notifications): rendered and
// sanitised like an answer, then only its text is kept, on one line.
export function plainText(text) {
  const box = document.createElement("div");
  box.innerHTML = renderMarkdown(text);
  return box.textContent.replace(/\s+/g, " ").trim();
}

// What runs on every rendered answer after it is sanitised (citations.js turns citations into links).
let afterRender = null;

export function setAfterRender(fn) {
  afterRender = fn;
}

export function fillMarkdown(element, text) {
  element.innerHTML = renderMarkdown(text);
  for (const code of element.querySelectorAll("pre > code")) {
    // Only code that says its language is coloured: guessing paints plain output (a tool's result,
    // a log) as some language it is not.
    if (/\blanguage-(?!plaintext\b|text\b)/.test(code.className)) hljs.highlightElement(code);
    else code.classList.add("hljs", "plain");
    const pre = code.parentElement;
    const block = el("div", { class: "code-block" });
    pre.replaceWith(block);
    block.append(pre, copyButton(code));
  }
  afterRender?.(element);
}
