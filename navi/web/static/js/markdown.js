// Model output → safe HTML: marked renders Markdown, DOMPurify removes anything executable (scripts,
// event handlers, javascript: links), highlight.js colours code. The page's CSP is the second fence.

import { Marked } from "/static/vendor/marked.esm.js";
import DOMPurify from "/static/vendor/purify.es.mjs";
import hljs from "/static/vendor/highlight.min.js";

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

export function fillMarkdown(element, text) {
  element.innerHTML = renderMarkdown(text);
  for (const block of element.querySelectorAll("pre code")) {
    hljs.highlightElement(block);
  }
}
