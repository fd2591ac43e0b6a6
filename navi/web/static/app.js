// Built by scripts/bundle-page from navi/web/static/js/ (esbuild 0.28.2): do not edit; edit the modules and run it again.

// navi/web/static/js/api.js
var ApiError = class extends Error {
  constructor(status, message, { network = false } = {}) {
    super(message);
    this.status = status;
    this.network = network;
  }
};
var connectivity = new EventTarget();
async function request(method, path, body, { raw = false } = {}) {
  const options = { method, credentials: "same-origin", headers: {} };
  if (body instanceof FormData) {
    options.body = body;
  } else if (body instanceof Blob) {
    options.headers["Content-Type"] = body.type || "application/octet-stream";
    options.body = body;
  } else if (body !== void 0) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch {
    connectivity.dispatchEvent(new Event("offline"));
    throw new ApiError(0, "Navi is not answering; it may be stopped or restarting.", { network: true });
  }
  connectivity.dispatchEvent(new Event("online"));
  if (response.status === 401) {
    window.location.assign("/login");
    throw new ApiError(401, "Please sign in.");
  }
  if (!response.ok) {
    let detail = response.statusText;
    try {
      detail = (await response.json()).detail || detail;
    } catch {
    }
    throw new ApiError(response.status, detail);
  }
  return raw ? response : response.json();
}
var api = {
  pushKey: () => request("GET", "/push/key"),
  jobs: () => request("GET", "/jobs"),
  notifySettings: () => request("GET", "/push/settings"),
  saveNotifySettings: (settings2) => request("PUT", "/push/settings", settings2),
  startJob: (prompt, sessionId, mode = "task") => request("POST", "/jobs", { prompt, session_id: sessionId, mode }),
  stopJob: (id) => request("POST", `/jobs/${encodeURIComponent(id)}/stop`),
  subscribePush: (subscription) => request("POST", "/push/subscriptions", subscription),
  unsubscribePush: (endpoint) => request("DELETE", "/push/subscriptions", { endpoint }),
  profiles: () => request("GET", "/agents/profiles"),
  tools: () => request("GET", "/agents/tools"),
  sessions: (archived = false) => request("GET", archived ? "/sessions?archived=true" : "/sessions"),
  session: (id) => request("GET", `/sessions/${id}`),
  context: (id) => request("GET", `/sessions/${id}/context`),
  planning: (id) => request("GET", `/sessions/${id}/planning`),
  create: (profileId, { temporary = false } = {}) => request("POST", "/sessions", { profile_id: profileId, temporary }),
  // Where a conversation sits: {folder: "name" | null} and/or {archived: true | false}.
  place: (id, changes) => request("PATCH", `/sessions/${id}`, changes),
  rename: (id, name) => request("PATCH", `/sessions/${id}`, { name }),
  setProfile: (id, profileId) => request("PATCH", `/sessions/${id}`, { profile_id: profileId }),
  setOptions: (id, options) => request("PATCH", `/sessions/${id}`, options),
  // model, system_prompt
  instructions: () => request("GET", "/agents/instructions"),
  setInstructions: (body) => request("PUT", "/agents/instructions", body),
  createProfile: (spec) => request("POST", "/agents/profiles", spec),
  updateProfile: (id, spec) => request("PUT", `/agents/profiles/${encodeURIComponent(id)}`, spec),
  renameFolder: (folder, to) => request("POST", "/sessions/folders/rename", { folder, to }),
  pickModel: (id, model) => request("PUT", `/agents/profiles/${encodeURIComponent(id)}/model`, { model }),
  deleteProfile: (id) => request("DELETE", `/agents/profiles/${encodeURIComponent(id)}`, void 0, { raw: true }),
  pin: (id, pinned) => request("PATCH", `/sessions/${id}/pin`, { pinned }),
  remove: (id) => request("DELETE", `/sessions/${id}`),
  rate: (id, messageId, rating2) => request("PUT", `/sessions/${id}/messages/${encodeURIComponent(messageId)}/feedback`, { rating: rating2 }),
  exportRaw: (id, format = "json") => request("GET", `/sessions/${id}/export?format=${format}`, void 0, { raw: true }),
  // A ChatGPT or Claude export (its .zip or conversations.json) or a Navi archive, whichever it is.
  importFile: (file) => {
    const form = new FormData();
    form.append("file", file);
    return request("POST", "/sessions/import?from=auto", form);
  },
  stop: (id) => request("POST", `/sessions/${id}/stop`),
  queue: (id) => request("GET", `/sessions/${id}/queue`),
  branch: (id, messageId) => request("POST", `/sessions/${id}/branch`, { message_id: messageId }),
  fork: (id, messageId) => request("POST", `/sessions/${id}/fork`, { message_id: messageId }),
  markRead: (id) => request("POST", `/sessions/${id}/read`),
  schedules: () => request("GET", "/schedules"),
  schedule: (id) => request("GET", `/schedules/${id}`),
  createSchedule: (body) => request("POST", "/schedules", body),
  updateSchedule: (id, changes) => request("PATCH", `/schedules/${id}`, changes),
  deleteSchedule: (id) => request("DELETE", `/schedules/${id}`),
  runSchedule: (id) => request("POST", `/schedules/${id}/run`),
  upload: (id, file) => {
    const form = new FormData();
    form.append("file", file, file.name);
    return request("POST", `/sessions/${id}/files`, form);
  },
  search: (q3, limit = 20) => request("GET", `/search?q=${encodeURIComponent(q3)}&limit=${limit}`),
  facts: () => request("GET", "/memory/facts"),
  memoryFacts: (q3 = "") => request("GET", `/memory/facts?limit=1000${q3 ? `&q=${encodeURIComponent(q3)}` : ""}`),
  addFact: (body) => request("POST", "/memory/facts", body),
  editFact: (id, value) => request("PATCH", `/memory/facts/${id}`, { value }),
  deleteFact: (id) => request("DELETE", `/memory/facts/${id}`),
  factHistory: (id) => request("GET", `/memory/facts/${id}/history`),
  factSource: (id) => request("GET", `/memory/facts/${id}/source`),
  summary: () => request("GET", "/memory/summary"),
  modelStatus: () => request("GET", "/models/status"),
  health: () => request("GET", "/health"),
  remembered: () => request("GET", "/approvals/remembered"),
  // The model list (each endpoint's state unless `check` is false) and `choices`, the models to pick.
  models: ({ check = true } = {}) => request("GET", check ? "/models" : "/models?check=false"),
  forget: (tool, program) => request("DELETE", `/approvals/remembered/${encodeURIComponent(tool)}${program ? `?program=${encodeURIComponent(program)}` : ""}`),
  logout: () => request("POST", "/logout", void 0, { raw: true }),
  // Documents (the Knowledge panel, citations): collections, their documents, search, attaching.
  collections: () => request("GET", "/collections"),
  createCollection: (name) => request("POST", "/collections", { name }),
  deleteCollection: (id) => request("DELETE", `/collections/${id}`, void 0, { raw: true }),
  documents: (collectionId) => request("GET", `/documents?collection=${encodeURIComponent(collectionId)}`),
  document: (id) => request("GET", `/documents/${id}`),
  deleteDocument: (id) => request("DELETE", `/documents/${id}`, void 0, { raw: true }),
  reindexDocument: (id) => request("POST", `/documents/${id}/reindex`),
  addDocuments: (collectionId, files) => {
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    return request("POST", `/collections/${collectionId}/documents`, form);
  },
  searchDocuments: ({ q: q3, collection, document: document2, limit = 5 }) => {
    const query = new URLSearchParams({ q: q3, limit: String(limit) });
    if (collection) query.set("collection", collection);
    if (document2) query.set("document", document2);
    return request("GET", `/documents/search?${query}`);
  },
  chunk: (id) => request("GET", `/documents/chunks/${id}`),
  sessionCollections: (sid) => request("GET", `/sessions/${sid}/collections`),
  attachCollection: (sid, cid) => request("PUT", `/sessions/${sid}/collections/${cid}`, void 0, { raw: true }),
  // Agent Skills (the Skills panel): list, view, install from a zip, turn on and off, remove.
  skills: () => request("GET", "/skills"),
  skill: (name) => request("GET", `/skills/${encodeURIComponent(name)}`),
  installSkill: (file, replace = false) => request("POST", `/skills${replace ? "?replace=true" : ""}`, new Blob([file], { type: "application/zip" })),
  setSkill: (name, enabled) => request("PATCH", `/skills/${encodeURIComponent(name)}`, { enabled }),
  removeSkill: (name) => request("DELETE", `/skills/${encodeURIComponent(name)}`, void 0, { raw: true }),
  browserProfiles: () => request("GET", "/browser/profiles"),
  forgetBrowserProfile: (name) => request("DELETE", `/browser/profiles/${encodeURIComponent(name)}`, void 0, { raw: true }),
  detachCollection: (sid, cid) => request("DELETE", `/sessions/${sid}/collections/${cid}`, void 0, { raw: true }),
  attachToProfile: (cid, pid) => request("PUT", `/collections/${cid}/profiles/${encodeURIComponent(pid)}`, void 0, { raw: true }),
  detachFromProfile: (cid, pid) => request("DELETE", `/collections/${cid}/profiles/${encodeURIComponent(pid)}`, void 0, { raw: true })
};

// navi/web/static/js/dom.js
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === void 0 || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === void 0 || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
var SIGNATURES = [["iVBOR", "image/png"], ["/9j/", "image/jpeg"], ["R0lG", "image/gif"], ["UklG", "image/webp"]];
function imageSrc(data) {
  if (data.startsWith("data:")) return data;
  const type = SIGNATURES.find(([prefix]) => data.startsWith(prefix))?.[1] || "image/png";
  return `data:${type};base64,${data}`;
}
function formatJson(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
function relativeTime(iso) {
  const then = new Date(iso).getTime();
  if (!Number.isFinite(then)) return "";
  const seconds = Math.round((Date.now() - then) / 1e3);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(then).toLocaleDateString();
}
var toastTimer = 0;
function toast(message, kind = "error") {
  const box = document.getElementById("toast");
  if (!box) return;
  box.replaceChildren(...[message].flat());
  box.className = `toast ${kind}`;
  box.hidden = false;
  const later = () => {
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => {
      box.hidden = true;
    }, kind === "error" ? 8e3 : 3e3);
  };
  for (const details of box.querySelectorAll("details")) {
    details.addEventListener("toggle", () => details.open ? clearTimeout(toastTimer) : later());
  }
  later();
}
function refusal(text2) {
  const at2 = text2.search(/(?<=[.:]\s)Navi (accepts only|reads) /);
  if (at2 < 0) return text2;
  return [text2.slice(0, at2).trimEnd(), " ", el(
    "details",
    { class: "toast-more" },
    el("summary", {}, "which files?"),
    el("div", { class: "toast-more-text" }, text2.slice(at2))
  )];
}

// navi/web/static/js/icons.js
var PATHS = {
  pin: "M9 3h6l-1 6 4 4H6l4-4-1-6zM12 13v8",
  unpin: "M9 3h6l-1 6 4 4H6l4-4-1-6zM12 13v8M4 4l16 16",
  edit: "M4 20h4L19 9l-4-4L4 16v4zM13 7l4 4",
  download: "M12 4v11M7 10l5 5 5-5M5 20h14",
  trash: "M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6",
  clip: "M20 11l-8 8a5 5 0 0 1-7-7l9-9a3.5 3.5 0 0 1 5 5l-9 9a2 2 0 0 1-3-3l8-8",
  file: "M6 3h8l4 4v14H6zM14 3v4h4",
  tool: "M14 6a4 4 0 0 0 5 5l-9 9a2 2 0 0 1-3-3l9-9a4 4 0 0 0-2-2zM14 6l3-3",
  plan: "M4 6l5-2 6 2 5-2v14l-5 2-6-2-5 2zM9 4v14M15 6v14",
  menu: "M4 7h16M4 12h16M4 17h16",
  close: "M6 6l12 12M18 6L6 18",
  more: "M5 11a1 1 0 1 0 0 2a1 1 0 1 0 0-2zM12 11a1 1 0 1 0 0 2a1 1 0 1 0 0-2zM19 11a1 1 0 1 0 0 2a1 1 0 1 0 0-2z",
  search: "M11 4a7 7 0 1 0 0 14a7 7 0 1 0 0-14zM20 20l-4-4",
  clock: "M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18zM12 7v5l3 2",
  gear: "M12 9a3 3 0 1 0 0 6a3 3 0 1 0 0-6zM12 2v3M12 19v3M4.9 4.9l2.1 2.1M17 17l2.1 2.1M2 12h3M19 12h3M4.9 19.1L7 17M17 7l2.1-2.1",
  memory: "M9 4a3 3 0 0 0-3 3a3 3 0 0 0-2 5a3 3 0 0 0 2 5a3 3 0 0 0 6 1V5a3 3 0 0 0-3-1zM15 4a3 3 0 0 1 3 3a3 3 0 0 1 2 5a3 3 0 0 1-2 5a3 3 0 0 1-6 1",
  book: "M5 4a1 1 0 0 1 1-1h13v15H6a1 1 0 0 0-1 1zM5 19a2 2 0 0 0 2 2h12v-3M9 7h6",
  keyboard: "M3 6h18v12H3zM7 10h.01M11 10h.01M15 10h.01M7 14h10",
  skill: "M13 2L4 14h7l-1 8 9-12h-7z",
  mic: "M12 3a3 3 0 0 0-3 3v6a3 3 0 0 0 6 0V6a3 3 0 0 0-3-3zM6 11a6 6 0 0 0 12 0M12 17v4M8 21h8",
  speaker: "M4 9h4l5-4v14l-5-4H4zM16 9a4 4 0 0 1 0 6M18.5 6.5a7.5 7.5 0 0 1 0 11",
  handsfree: "M4 14v-2a8 8 0 0 1 16 0v2M4 14h3v6H4zM17 14h3v6h-3z",
  folder: "M3 6a1 1 0 0 1 1-1h5l2 2h9a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1z",
  archive: "M3 4h18v4H3zM5 8v12h14V8M10 12h4",
  upload: "M12 20V9M7 14l5-5 5 5M5 4h14",
  "thumb-up": "M4 11h3v9H4zM7 11l4-7a2 2 0 0 1 3 2l-1 4h5a2 2 0 0 1 2 2.3l-1.5 6.2A2 2 0 0 1 16.5 20H7",
  "thumb-down": "M4 13h3V4H4zM7 13l4 7a2 2 0 0 0 3-2l-1-4h5a2 2 0 0 0 2-2.3l-1.5-6.2A2 2 0 0 0 16.5 4H7"
};
function icon(name, label = "") {
  const svg2 = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg2.setAttribute("viewBox", "0 0 24 24");
  svg2.setAttribute("class", `icon icon-${name}`);
  svg2.setAttribute("aria-hidden", label ? "false" : "true");
  if (label) svg2.setAttribute("aria-label", label);
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", PATHS[name]);
  svg2.append(path);
  return svg2;
}
function fillIcons(root = document) {
  for (const slot of root.querySelectorAll("[data-icon]")) slot.replaceChildren(icon(slot.dataset.icon));
}

// navi/web/static/vendor/marked.esm.js
function G() {
  return { async: false, breaks: false, extensions: null, gfm: true, hooks: null, pedantic: false, renderer: null, silent: false, tokenizer: null, walkTokens: null };
}
var S = G();
function ue(l4) {
  S = l4;
}
var q = { exec: () => null };
function D(l4) {
  let e2 = [];
  return (t2) => {
    let n3 = Math.max(0, Math.min(3, t2 - 1)), r2 = e2[n3];
    return r2 || (r2 = l4(n3), e2[n3] = r2), r2;
  };
}
function g(l4, e2 = "") {
  let t2 = typeof l4 == "string" ? l4 : l4.source, n3 = { replace: (r2, s2) => {
    let o2 = typeof s2 == "string" ? s2 : s2.source;
    return o2 = o2.replace(O.caret, "$1"), t2 = t2.replace(r2, o2), n3;
  }, getRegex: () => new RegExp(t2, e2) };
  return n3;
}
var _e = ((l4 = "") => {
  try {
    return !!new RegExp("(?<=1)(?<!1)" + l4);
  } catch {
    return false;
  }
})();
var O = { codeRemoveIndent: /^(?: {0,3}\t| {1,4})/gm, listInterruptsParagraph: /^ {0,3}(?:[*+-]|1[.)])[ \t]+[^ \t\n]/, outputLinkReplace: /\\([\[\]])/g, indentCodeCompensation: /^(\s+)(?:```)/, beginningSpace: /^\s+/, endingHash: /#$/, startingSpaceChar: /^ /, endingSpaceChar: / $/, endingSpaceTabChar: /[ \t]$/, nonSpaceChar: /[^ ]/, newLineCharGlobal: /\n/g, tabCharGlobal: /\t/g, leadingSpaceTab: /^[ \t]+/, multipleSpaceGlobal: /\s+/g, blankLine: /^[ \t]*$/, doubleBlankLine: /\n[ \t]*\n[ \t]*$/, blockquoteStart: /^ {0,3}>/, blockquoteSetextReplace: /\n {0,3}((?:=+|-+)[ \t]*)(?=\n|$)/g, blockquoteSetextReplace2: /^ {0,3}>[ \t]?/gm, blockquoteMarkerWhitespace: /^( {0,3}>)(\t[ \t]*)/gm, nestedBlockMarker: /^ {0,3}(?:(?:[*+-]|\d{1,9}[.)])(?: |$)|> ?)/, listReplaceNesting: /^ {1,4}(?=( {4})*[^ ])/g, listIsTask: /^\[[ xX]\][ \t]+\S/, listReplaceTask: /^\[[ xX]\][ \t]+/, listTaskCheckbox: /\[[ xX]\]/, anyLine: /\n.*\n/, hrefBrackets: /^<(.*)>$/, tableDelimiter: /[:|]/, tableAlignChars: /^\||\| *$/g, tableRowBlankLine: /\n[ \t]*$/, tableAlignRight: /^ *-+: *$/, tableAlignCenter: /^ *:-+: *$/, tableAlignLeft: /^ *:-+ *$/, startATag: /^<a /i, endATag: /^<\/a>/i, startPreScriptTag: /^<(pre|code|kbd|script)(\s|>)/i, endPreScriptTag: /^<\/(pre|code|kbd|script)(\s|>)/i, startAngleBracket: /^</, endAngleBracket: />$/, pedanticHrefTitle: /^([^'"]*[^\s])\s+(['"])(.*)\2/, unicodeAlphaNumeric: /[\p{L}\p{N}]/u, numericCharacterReference: /&#(?:(\d{1,7})|[Xx]([A-Fa-f0-9]{1,6}));/, numericCharacterReferenceOrAmpersand: /&#(?:(\d{1,7})|[Xx]([A-Fa-f0-9]{1,6}));|&(?!(#\d{1,7}|#[Xx][a-fA-F0-9]{1,6}|\w+);)/g, escapeTest: /[&<>"']/, escapeReplace: /[&<>"']/g, escapeTestNoEncode: /[<>"']|&(?!(#\d{1,7}|#[Xx][a-fA-F0-9]{1,6}|\w+);)/, escapeReplaceNoEncode: /[<>"']|&(?!(#\d{1,7}|#[Xx][a-fA-F0-9]{1,6}|\w+);)/g, caret: /(^|[^\[])\^/g, percentDecode: /%25/g, findPipe: /\|/g, splitPipe: / \|/, slashPipe: /\\\|/g, carriageReturn: /\r\n|\r/g, spaceLine: /^ +$/gm, notSpaceStart: /^\S*/, endingNewline: /\n$/, listItemRegex: (l4) => new RegExp(`^( {0,3}${l4})((?:[	 ][^\\n]*)?(?:\\n|$))`), nextBulletRegex: D((l4) => new RegExp(`^ {0,${l4}}(?:[*+-]|\\d{1,9}[.)])((?:[ 	][^\\n]*)?(?:\\n|$))`)), hrRegex: D((l4) => new RegExp(`^ {0,${l4}}((?:-[ 	]*){3,}|(?:_[ 	]*){3,}|(?:\\*[ 	]*){3,})(?:\\n+|$)`)), fencesBeginRegex: D((l4) => new RegExp(`^ {0,${l4}}(?:\`\`\`|~~~)`)), headingBeginRegex: D((l4) => new RegExp(`^ {0,${l4}}#{1,6}(?:\\s|$)`)), pedanticHeadingBeginRegex: D((l4) => new RegExp(`^ {0,${l4}}#`)), htmlBeginRegex: D((l4) => new RegExp(`^ {0,${l4}}(?:</?(?:${he})(?:[ \\t]+|$|/?>)|<(?:(?:script|pre|style|textarea)(?:[\\s>]|$)|!--)|<\\?|<![A-Za-z]|<!\\[CDATA\\[)`, "i")), blockquoteBeginRegex: D((l4) => new RegExp(`^ {0,${l4}}>`)), nestedContainerMarkers: /^(?: {0,3}(?:(?:[*+-]|\d{1,9}[.)])[ \t]+|>[ \t]?))+/ };
var Ge = /^(?:[ \t]*(?:\n|$))+/;
var Ne = /^((?: {4}| {0,3}\t)[^\n]+(?:\n(?:[ \t]*(?:\n|$))*)?)+/;
var Fe = /^ {0,3}(`{3,}(?=[^`\n]*(?:\n|$))|~{3,})([^\n]*)(?:\n|$)(?:|([\s\S]*?)(?:\n|$))(?: {0,3}(?:(?=`)\1`*|(?=~)\1~*) *(?=\n|$)|$)/;
var V = /^ {0,3}((?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})(?:\n+|$)/;
var Qe = /^ {0,3}(#{1,6})(?=\s|$)(.*)(?:\n+|$)/;
var ce = / {0,3}(?:[*+-]|\d{1,9}[.)])/;
var he = "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|meta|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul";
var J = g(" {0,3}(?:</?(?:tag)(?:[ \\t]+|\\n|/?>)|<(?:(?:script|pre|style|textarea)(?:[\\s>]|$)|!--)|<\\?|<![A-Za-z]|<!\\[CDATA\\[)").replace("tag", he).getRegex();
var $e = /^(?!bull |blockCode|fences|blockquote|heading|html|table)((?:.|\n(?!\s*?\n|bull |fences|blockquote|heading|hr|html|table))+?)\n {0,3}(=+|-+)[ \t]*(?:\n+|$)/;
var Le = g($e).replace(/bull/g, ce).replace(/blockCode/g, /(?: {4}| {0,3}\t)/).replace(/fences/g, / {0,3}(?:`{3,}|~{3,})/).replace(/blockquote/g, / {0,3}>/).replace(/heading/g, / {0,3}#{1,6}(?:\s|$)/).replace(/hr/g, / {0,3}(?:(?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})(?:\n+|$)/).replace(/\|table/g, "").replace(/html/g, J).getRegex();
var We = g($e).replace(/bull/g, ce).replace(/blockCode/g, /(?: {4}| {0,3}\t)/).replace(/fences/g, / {0,3}(?:`{3,}|~{3,})/).replace(/blockquote/g, / {0,3}>/).replace(/heading/g, / {0,3}#{1,6}(?:\s|$)/).replace(/hr/g, / {0,3}(?:(?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})(?:\n+|$)/).replace(/table/g, / {0,3}\|?(?:[:\- ]*\|)+[\:\- ]*\n/).replace(/html/g, J).getRegex();
var de = /^([^\n]+(?:\n(?!hr|heading|lheading|blockquote|fences|list|html|table|[ \t]+\n)[^\n]+)*)/;
var Ue = /^[^\n]+/;
var ge = /(?!\s*\])(?:\\[\s\S]|[^\[\]\\\n]|\n(?![ \t]*\n))+/;
var Ke = g(/^ {0,3}\[(label)\]: *(?:\n[ \t]*)?([^<\s][^\s]*|<(?:\\.|[^\n<>\\])*>)(?:(?: +(?:\n[ \t]*)?| *\n[ \t]*)(title))? *(?:\n+|$)/).replace("label", ge).replace("title", /(?:"(?:\\[\s\S]|[^"\\])*"|'(?:\\[\s\S]|[^'\\\n]|\n(?!\n))*'|\((?:\\[\s\S]|[^()\\])*\))/).getRegex();
var Xe = g(/^(bull)([ \t][^\n]*?)?(?:\n|$)/).replace(/bull/g, ce).getRegex();
var ke = /<!--(?:-?>|[\s\S]*?(?:-->|$))/;
var Ve = g("^ {0,3}(?:<(script|pre|style|textarea)[\\s>][\\s\\S]*?(?:</\\1>[^\\n]*\\n*|$)|comment[^\\n]*(\\n+|$)|<\\?[\\s\\S]*?(?:\\?>[^\\n]*\\n*|$)|<![A-Z][\\s\\S]*?(?:>[^\\n]*\\n*|$)|<!\\[CDATA\\[[\\s\\S]*?(?:\\]\\]>[^\\n]*\\n*|$)|</?(tag)(?:[ \\t]+|\\n|/?>|$)[\\s\\S]*?(?:(?:\\n[ 	]*)+\\n|$)|<(?!(?:script|pre|style|textarea)(?![a-z0-9-]))([a-z][a-z0-9-]*)(?:attribute)*?[ \\t]*/?>(?=[ \\t]*(?:\\n|$))[\\s\\S]*?(?:(?:\\n[ 	]*)+\\n|$)|</[a-z][a-z0-9-]*\\s*>(?=[ \\t]*(?:\\n|$))[\\s\\S]*?(?:(?:\\n[ 	]*)+\\n|$))", "i").replace("comment", ke).replace("tag", he).replace("attribute", /[ \t]+[a-zA-Z:_][\w.:-]*(?:[ \t]*=[ \t]*"[^"\n]*"|[ \t]*=[ \t]*'[^'\n]*'|[ \t]*=[ \t]*[^\s"'=<>`]+)?/).getRegex();
var Ce = (l4) => g(de).replace("hr", V).replace("heading", " {0,3}#{1,6}(?:\\s|$)").replace("|lheading", "").replace("|table", "").replace("blockquote", " {0,3}>").replace("fences", " {0,3}(?:`{3,}(?=[^`\\n]*(?:\\n|$))|~~~)[^\\n]*(?:\\n|$)").replace("list", l4).replace("html", J).getRegex();
var Je = Ce(/ {0,3}(?:[*+-]|1[.)])[ \t]+[^ \t\n]/);
var Ye = Ce(/ {0,3}(?:[*+-]|\d{1,9}[.)])(?:[ \t]|\n|$)/);
var et = g(/^( {0,3}> ?(?:(?![ \t]*(?:\n|$))(paragraph)|[^\n]*)(?:\n|$))+/).replace("paragraph", Ye).getRegex();
var fe = { blockquote: et, code: Ne, def: Ke, fences: Fe, heading: Qe, hr: V, html: Ve, lheading: Le, list: Xe, newline: Ge, paragraph: Je, table: q, text: Ue };
var Pe = g("^ *([^\\n ].*)\\n {0,3}((?:\\| *)?:?-+:? *(?:\\| *:?-+:? *)*(?:\\| *)?)(?:\\n((?:(?! *\\n|hr|heading|blockquote|code|fences|list|html).*(?:\\n|$))*)\\n*|$)").replace("hr", V).replace("heading", " {0,3}#{1,6}(?:\\s|$)").replace("blockquote", " {0,3}>").replace("code", "(?: {4}| {0,3}	)[^\\n]").replace("fences", " {0,3}(?:`{3,}(?=[^`\\n]*(?:\\n|$))|~~~)[^\\n]*(?:\\n|$)").replace("list", " {0,3}(?:[*+-]|1[.)])[ \\t]").replace("html", J).getRegex();
var tt = { ...fe, lheading: We, table: Pe, paragraph: g(de).replace("hr", V).replace("heading", " {0,3}#{1,6}(?:\\s|$)").replace("|lheading", "").replace("table", Pe).replace("blockquote", " {0,3}>").replace("fences", " {0,3}(?:`{3,}(?=[^`\\n]*(?:\\n|$))|~~~)[^\\n]*(?:\\n|$)").replace("list", " {0,3}(?:[*+-]|1[.)])[ \\t]+[^ \\t\\n]").replace("html", J).getRegex() };
var nt = { ...fe, html: g(`^ *(?:comment(?: *\\n|\\s*$)|<(tag)[\\s\\S]+?</\\1>(?: *\\n{2,}|\\s*$)|<tag(?:"[^"]*"|'[^']*'|\\s[^'"/>\\s]*)*?/?>(?: *\\n{2,}|\\s*$))`).replace("comment", ke).replace(/tag/g, "(?!(?:a|em|strong|small|s|cite|q|dfn|abbr|data|time|code|var|samp|kbd|sub|sup|i|b|u|mark|ruby|rt|rp|bdi|bdo|span|br|wbr|ins|del|img)\\b)\\w+(?!:|[^\\w\\s@]*@)\\b").getRegex(), def: /^ *\[([^\]]+)\]: *<?([^\s>]+)>?(?: +(["(][^\n]+[")]))? *(?:\n+|$)/, heading: /^(#{1,6})(.*)(?:\n+|$)/, fences: q, lheading: /^(.+?)\n {0,3}(=+|-+) *(?:\n+|$)/, paragraph: g(de).replace("hr", V).replace("heading", ` *#{1,6} *[^
]`).replace("|table", "").replace("blockquote", " {0,3}>").replace("|fences", "").replace("|list", "").replace("|html", "").replace("|tag", "").replace("lheading", Le).getRegex() };
var rt = /^\\([!"#$%&'()*+,\-./:;<=>?@\[\]\\^_`{|}~])/;
var st = /^(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/;
var Ie = /^( {2,}|\\)\n(?!\s*$)[ \t]*/;
var it = /^(`+|[^`])(?:(?= {2,}\n)|[\s\S]*?(?:(?=[\\<!\[`*_]|\b_|$)|[^ ](?= {2,}\n)))/;
var L = /[\p{P}\p{S}]/u;
var N = /[\s\p{P}\p{S}]/u;
var Y = /[^\s\p{P}\p{S}]/u;
var ot = g(/^((?![*_])punctSpace)/, "u").replace(/punctSpace/g, N).getRegex();
var at = /[\p{Pi}\p{Ps}"']/u;
var Ae = /(?!~)[\p{P}\p{S}]/u;
var lt = /(?!~)[\s\p{P}\p{S}]/u;
var ut = /(?:[^\s\p{P}\p{S}]|~)/u;
var pt = g(/link|precode-code|html/, "g").replace("link", /\[(?:[^\[\]`]|(?<a>`+)[^`]+\k<a>(?!`))*?\]\((?:\\[\s\S]|[^\\\(\)]|\((?:\\[\s\S]|[^\\\(\)])*\))*\)/).replace("precode-", _e ? "(?<!`)()" : "(^^|[^`])").replace("code", /(?<b>`+)[^`]+\k<b>(?!`)/).replace("html", /<(?! )[^<>]*?>/).getRegex();
var Ee = /^(?:\*+(?:((?!\*)punct)|([^\s*]))?)|^_+(?:((?!_)punct)|([^\s_]))?/;
var ct = g(Ee, "u").replace(/punct/g, L).getRegex();
var ht = g(Ee, "u").replace(/punct/g, Ae).getRegex();
var dt = /^(?:\*+(?:((?!\*)(?!openQuote)punct)|([^\s*]))?)|^_+(?:((?!_)(?!openQuote)punct)|([^\s_]))?/;
var gt = g(dt, "u").replace(/openQuote/g, at).replace(/punct/g, L).getRegex();
var ze = "^[^_*]*?__[^_*]*?\\*[^_*]*?(?=__)|[^*]+(?=[^*])|(?!\\*)punct(\\*+)(?=[\\s]|$)|notPunctSpace(\\*+)(?!\\*)(?=punctSpace|$)|(?!\\*)punctSpace(\\*+)(?=notPunctSpace)|[\\s](\\*+)(?!\\*)(?=punct)|(?!\\*)punct(\\*+)(?!\\*)(?=punct)|notPunctSpace(\\*+)(?=notPunctSpace)";
var kt = g(ze, "gu").replace(/notPunctSpace/g, Y).replace(/punctSpace/g, N).replace(/punct/g, L).getRegex();
var ft = g(ze, "gu").replace(/notPunctSpace/g, ut).replace(/punctSpace/g, lt).replace(/punct/g, Ae).getRegex();
var mt = "^[^_*]*?__[^_*]*?\\*[^_*]*?(?=__)|[^*]+(?=[^*])|(?!\\*)punct(\\*+)(?=[\\s]|$)|notPunctSpace(\\*+)(?!\\*)(?=punctSpace|$)|(?!\\*)[\\s](\\*+)(?=notPunctSpace)|[\\s](\\*+)(?!\\*)(?=punct)|(?!\\*)punct(\\*+)(?!\\*)(?=punct)|(?:(?!\\*)punct|notPunctSpace)(\\*+)(?!\\*)(?=notPunctSpace)";
var xt = g(mt, "gu").replace(/notPunctSpace/g, Y).replace(/punctSpace/g, N).replace(/punct/g, L).getRegex();
var bt = g("^[^_*]*?\\*\\*[^_*]*?_[^_*]*?(?=\\*\\*)|[^_]+(?=[^_])|(?!_)punct(_+)(?=[\\s]|$)|notPunctSpace(_+)(?!_)(?=punctSpace|$)|(?!_)punctSpace(_+)(?=notPunctSpace)|[\\s](_+)(?!_)(?=punct)|(?!_)punct(_+)(?!_)(?=punct)", "gu").replace(/notPunctSpace/g, Y).replace(/punctSpace/g, N).replace(/punct/g, L).getRegex();
var Rt = "^[^_*]*?\\*\\*[^_*]*?_[^_*]*?(?=\\*\\*)|[^_]+(?=[^_])|(?!_)punct(_+)(?=[\\s]|$)|notPunctSpace(_+)(?!_)(?=punctSpace|$)|(?!_)[\\s](_+)(?=notPunctSpace)|[\\s](_+)(?!_)(?=punct)|(?!_)punct(_+)(?!_)(?=punct)|(?:(?!_)punct|notPunctSpace)(_+)(?!_)(?=notPunctSpace)";
var Tt = g(Rt, "gu").replace(/notPunctSpace/g, Y).replace(/punctSpace/g, N).replace(/punct/g, L).getRegex();
var Ot = g(/^~~?(?:((?!~)punct)|[^\s~])/, "u").replace(/punct/g, L).getRegex();
var wt = "^[^~]+(?=[^~])|(?!~)punct(~~?)(?=[\\s]|$)|notPunctSpace(~~?)(?!~)(?=punctSpace|$)|(?!~)punctSpace(~~?)(?=notPunctSpace)|[\\s](~~?)(?!~)(?=punct)|(?!~)punct(~~?)(?!~)(?=punct)|notPunctSpace(~~?)(?=notPunctSpace)";
var Pt = g(wt, "gu").replace(/notPunctSpace/g, Y).replace(/punctSpace/g, N).replace(/punct/g, L).getRegex();
var yt = g(/\\(punct)/, "gu").replace(/punct/g, L).getRegex();
var St = g(/(`+)(?:[^`]|[^`][\s\S]*?[^`])\1(?!`)|`+|\\(punct)/, "gu").replace(/punct/g, L).getRegex();
var _t = g(/^<(scheme:[^\s\x00-\x1f<>]*|email)>/).replace("scheme", /[a-zA-Z][a-zA-Z0-9+.-]{1,31}/).replace("email", /[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+(@)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+(?![-_])/).getRegex();
var $t = g(ke).replace("(?:-->|$)", "-->").getRegex();
var Lt = g("^comment|^</[a-zA-Z][a-zA-Z0-9-]*\\s*>|^<[a-zA-Z][a-zA-Z0-9-]*(?:attribute)*?\\s*/?>|^<\\?[\\s\\S]*?\\?>|^<![a-zA-Z]+\\s[\\s\\S]*?>|^<!\\[CDATA\\[[\\s\\S]*?\\]\\]>").replace("comment", $t).replace("attribute", /\s+[a-zA-Z:_][\w.:-]*(?:\s*=\s*"[^"]*"|\s*=\s*'[^']*'|\s*=\s*[^\s"'=<>`]+)?/).getRegex();
var Me = /\[(?:\\[\s\S]|[^\[\]\\])*\]/;
var ie = g(/(?:\[(?:brackets|\\[\s\S]|[^\[\]\\])*\]|\\[\s\S]|`+(?!`)[^`]*?`+(?!`)|``+(?=\])|[^\[\]\\`])*?/).replace("brackets", Me).getRegex();
var Ct = g(/^!?\[(label)\]\([ \t\n]*(href)(?:(?:[ \t]+(?:\n[ \t]*)?|\n[ \t]*)(title))?[ \t\n]*\)/).replace("label", ie).replace("href", /<(?:\\.|[^\n<>\\])*>|(?!<)[^ \t\n\x00-\x1f]+|(?=\))/).replace("title", /"(?:\\[\s\S]|[^"\\])*"|'(?:\\[\s\S]|[^'\\])*'|\((?:\\[\s\S]|[^)\\])*\)/).getRegex();
var It = g(/^!?\[(label)\]\[(ref)\]/).replace("label", ie).replace("ref", ge).getRegex();
var At = g(/^!?\[(ref)\](?:\[\])?/).replace("ref", ge).getRegex();
var ye = /(?!\s*\])(?:\\[\s\S]|[^\[\]\\]){1,999}/;
var Et = g(/(?:[^\[\]\\`]*(?:\[(?:brackets|\\[\s\S]|[^\[\]\\])*\]|\\[\s\S]|`+(?!`)[^`]*?`+(?!`)|``+(?=\]))){0,999}?[^\[\]\\`]*?/).replace("brackets", Me).getRegex();
var zt = g("reflink|nolink(?!\\()", "g").replace("reflink", g(/^!?\[(label)\]\[(ref)\]/).replace("label", Et).replace("ref", ye).getRegex()).replace("nolink", g(/^!?\[(ref)\](?:\[\])?/).replace("ref", ye).getRegex()).getRegex();
var Se = /[hH][tT][tT][pP][sS]?|[fF][tT][pP]/;
var Mt = /[A-Za-z0-9._+-]+@[a-zA-Z0-9-_]+(?:\.[a-zA-Z0-9-_]*[a-zA-Z0-9])+(?![\w-])/;
var Bt = g(/(?:mailto:email|xmpp:email(?:\/[A-Za-z0-9@.]+)?)/).replace(/email/g, Mt).getRegex();
var me = { _backpedal: q, anyPunctuation: yt, anyPunctuationOutsideCode: St, autolink: _t, blockSkip: pt, br: Ie, code: st, del: q, delLDelim: q, delRDelim: q, emStrongLDelim: ct, emStrongRDelimAst: kt, emStrongRDelimUnd: bt, escape: rt, link: Ct, nolink: At, punctuation: ot, reflink: It, reflinkSearch: zt, tag: Lt, text: it, url: q };
var Dt = { ...me, emStrongLDelim: gt, emStrongRDelimAst: xt, emStrongRDelimUnd: Tt, link: g(/^!?\[(label)\]\((.*?)\)/).replace("label", ie).getRegex(), reflink: g(/^!?\[(label)\]\s*\[([^\]]*)\]/).replace("label", ie).getRegex() };
var pe = { ...me, emStrongRDelimAst: ft, emStrongLDelim: ht, delLDelim: Ot, delRDelim: Pt, url: g(/^emailProtocol|^((?:protocol):\/\/|www\.)(?:[a-zA-Z0-9\-]+\.?)+[^\s<]*|^email/).replace("emailProtocol", Bt).replace("protocol", Se).replace("email", /[A-Za-z0-9._+-]+(@)[a-zA-Z0-9-_]+(?:\.[a-zA-Z0-9-_]*[a-zA-Z0-9])+(?![\w-])/).getRegex(), _backpedal: /(?:[^?!.,:;*_'"~()&]+|\([^)]*\)|&(?![a-zA-Z0-9]+;$)|[?!.,:;*_'"~)]+(?!$))+/, del: /^(~~?)(?=[^\s~])((?:\\[\s\S]|[^\\])*?(?:\\[\s\S]|[^\s~\\]))\1(?=[^~]|$)/, text: g(/^(?:[^a-zA-Z0-9](?=emailProtocol)|(`+|~+|[^`~])(?:(?=[`~])|(?= {2,}\n)|(?=[a-zA-Z0-9.!#$%&'*+\/=?_`{\|}~-]+@)|[\s\S]*?(?:(?=[\\<!\[`*~_]|\b_|protocol:\/\/|wwwStart|$)|[^ ](?= {2,}\n)|[^a-zA-Z0-9](?=emailProtocol)|[^a-zA-Z0-9.!#$%&'*+\/=?_`{\|}~-](?=[a-zA-Z0-9.!#$%&'*+\/=?_`{\|}~-]+@))))/).replace("protocol", Se).replace(/emailProtocol/g, /(?:mailto|xmpp):/).replace("wwwStart", _e ? "(?<![^\\s*_~(])www\\." : "www\\.").getRegex() };
var qt = { ...pe, br: g(Ie).replace("{2,}", "*").getRegex(), text: g(pe.text).replace("\\b_", "\\b_| {2,}\\n").replace(/\{2,\}/g, "*").getRegex() };
var ee = { normal: fe, gfm: tt, pedantic: nt };
var F = { normal: me, gfm: pe, breaks: qt, pedantic: Dt };
var vt = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
var Be = (l4) => vt[l4];
function y(l4, e2) {
  if (e2) {
    if (O.escapeTest.test(l4)) return l4.replace(O.escapeReplace, Be);
  } else if (O.escapeTestNoEncode.test(l4)) return l4.replace(O.escapeReplaceNoEncode, Be);
  return l4;
}
function De(l4) {
  return O.numericCharacterReference.test(l4) ? l4.replace(O.numericCharacterReferenceOrAmpersand, (e2, t2, n3) => {
    if (t2 === void 0 && n3 === void 0) return "&amp;";
    let r2 = t2 === void 0 ? Number.parseInt(n3, 16) : Number.parseInt(t2, 10);
    return r2 === 0 || r2 > 1114111 || r2 >= 55296 && r2 <= 57343 ? "�" : r2 === 38 ? "&amp;" : String.fromCodePoint(r2);
  }) : l4;
}
function xe(l4) {
  try {
    l4 = encodeURI(l4).replace(O.percentDecode, "%");
  } catch {
    return null;
  }
  return l4;
}
function be(l4, e2) {
  let t2 = l4.replace(O.findPipe, (s2, o2, i2) => {
    let a2 = false, c2 = o2;
    for (; --c2 >= 0 && i2[c2] === "\\"; ) a2 = !a2;
    return a2 ? "|" : " |";
  }), n3 = t2.split(O.splitPipe), r2 = 0;
  if (n3[0].trim() || n3.shift(), n3.length > 0 && !n3.at(-1)?.trim() && n3.pop(), e2) if (n3.length > e2) n3.splice(e2);
  else for (; n3.length < e2; ) n3.push("");
  for (; r2 < n3.length; r2++) n3[r2] = n3[r2].trim().replace(O.slashPipe, "|");
  return n3;
}
function C(l4, e2, t2) {
  let n3 = l4.length;
  if (n3 === 0) return "";
  let r2 = 0;
  for (; r2 < n3; ) {
    let s2 = l4.charAt(n3 - r2 - 1);
    if (s2 === e2 && !t2) r2++;
    else if (s2 !== e2 && t2) r2++;
    else break;
  }
  return l4.slice(0, n3 - r2);
}
function Re(l4) {
  let e2 = l4.split(`
`), t2 = e2.length - 1;
  for (; t2 >= 0 && O.blankLine.test(e2[t2]); ) t2--;
  return e2.length - t2 <= 2 ? l4 : e2.slice(0, t2 + 1).join(`
`);
}
function W(l4) {
  return l4.trim().replace(O.multipleSpaceGlobal, " ").toLowerCase().toUpperCase().toLowerCase();
}
function Te(l4, e2) {
  if (l4.indexOf(e2[0]) === -1 && l4.indexOf(e2[1]) === -1) return -1;
  let t2 = 0;
  for (let n3 = 0; n3 < l4.length; n3++) if (l4[n3] === "\\") n3++;
  else if (l4[n3] === e2[0]) t2++;
  else if (l4[n3] === e2[1] && (t2--, t2 < 0)) return n3;
  return t2 > 0 ? -2 : -1;
}
var Q = /* @__PURE__ */ new WeakMap();
function Oe(l4) {
  let e2 = { "*": -1, _: -1 }, t2 = -1, n3 = l4.length;
  for (let r2 = 0; r2 < n3; r2++) {
    let s2 = l4[r2];
    if (s2 !== "*" && s2 !== "_" && s2 !== "~") continue;
    let o2 = r2 === 0 ? `
` : l4[r2 - 1], i2 = r2 + 1;
    for (; i2 < n3 && l4[i2] === s2; ) i2++;
    o2 !== " " && o2 !== "	" && o2 !== `
` && o2 !== "\r" && o2 !== "\f" && (s2 === "~" ? t2 = r2 : e2[s2] = r2), r2 = i2 - 1;
  }
  return { maskedSrc: l4, lastPossibleEmStrongCloserIndex: e2, lastPossibleDelCloserIndex: t2 };
}
function qe(l4, e2) {
  let t2 = Oe(e2), n3 = Q.get(l4);
  n3 ? n3.push(t2) : Q.set(l4, [t2]);
}
function ve(l4) {
  let e2 = Q.get(l4);
  e2 && (e2.pop(), e2.length === 0 && Q.delete(l4));
}
function oe(l4, e2, t2) {
  let n3 = Q.get(l4)?.at(-1);
  return n3 && n3.maskedSrc === e2 ? n3.lastPossibleEmStrongCloserIndex[t2] : Oe(e2).lastPossibleEmStrongCloserIndex[t2];
}
function ae(l4, e2) {
  let t2 = Q.get(l4)?.at(-1);
  return t2 && t2.maskedSrc === e2 ? t2.lastPossibleDelCloserIndex : Oe(e2).lastPossibleDelCloserIndex;
}
function te(l4, e2 = 0) {
  let t2 = e2, n3 = "";
  for (let r2 of l4) if (r2 === "	") {
    let s2 = 4 - t2 % 4;
    n3 += " ".repeat(s2), t2 += s2;
  } else n3 += r2, t2++;
  return n3;
}
function Ht(l4, e2) {
  let t2 = "";
  for (let n3 = 0; n3 < l4.length; n3++) {
    if (l4[n3] === "`") {
      let r2 = e2.inline.code.exec(l4.slice(n3));
      if (r2) {
        t2 += r2[0], n3 += r2[0].length - 1;
        continue;
      }
    }
    if (l4[n3] === "\\" && (l4[n3 + 1] === "[" || l4[n3 + 1] === "]")) {
      t2 += l4[n3 + 1], n3++;
      continue;
    }
    t2 += l4[n3];
  }
  return t2;
}
function He(l4, e2, t2, n3, r2) {
  let s2 = e2.href, o2 = e2.title || null, i2 = Ht(l4[1], r2), a2 = l4[0].charAt(0) === "!", c2 = n3.state.inLink, u2 = n3.state.linkEmitted, d2 = n3.state.inRawBlock;
  n3.state.inLink = true, n3.state.linkEmitted = false;
  let h2 = n3.inlineTokens(i2), p2 = n3.state.linkEmitted;
  if (n3.state.linkEmitted = u2, n3.state.inLink = c2, !a2) {
    if (p2) {
      n3.state.inRawBlock = d2;
      return;
    }
    n3.state.linkEmitted = true;
  }
  return { type: a2 ? "image" : "link", raw: t2, href: s2, title: o2, text: i2, tokens: h2 };
}
function Zt(l4, e2, t2) {
  let n3 = l4.match(t2.other.indentCodeCompensation);
  if (n3 === null) return e2;
  let r2 = n3[1];
  return e2.split(`
`).map((s2) => {
    let o2 = s2.match(t2.other.beginningSpace);
    if (o2 === null) return s2;
    let [i2] = o2;
    return s2.slice(Math.min(i2.length, r2.length));
  }).join(`
`);
}
function Ze(l4, e2, t2, n3) {
  if (!e2.includes("<")) return false;
  for (let r2 = 0; r2 < e2.length; r2++) {
    if (e2[r2] === "\\") {
      r2++;
      continue;
    }
    if (e2[r2] === "`") {
      let i2 = n3.inline.code.exec(e2.slice(r2));
      if (i2) {
        r2 += i2[0].length - 1;
        continue;
      }
    }
    if (e2[r2] !== "<") continue;
    let s2 = l4.slice(t2 + r2), o2 = n3.inline.tag.exec(s2) || n3.inline.autolink.exec(s2);
    if (o2) {
      if (o2[0].length > e2.length - r2) return true;
      r2 += o2[0].length - 1;
    }
  }
  return false;
}
var _ = class {
  options;
  rules;
  lexer;
  constructor(e2) {
    this.options = e2 || S;
  }
  space(e2) {
    let t2 = this.rules.block.newline.exec(e2);
    if (t2 && t2[0].length > 0) return { type: "space", raw: t2[0] };
  }
  code(e2) {
    let t2 = this.rules.block.code.exec(e2);
    if (t2) {
      let n3 = this.options.pedantic ? t2[0] : Re(t2[0]), r2 = n3.replace(this.rules.other.codeRemoveIndent, "");
      return { type: "code", raw: n3, codeBlockStyle: "indented", text: r2 };
    }
  }
  fences(e2) {
    let t2 = this.rules.block.fences.exec(e2);
    if (t2) {
      let n3 = t2[0], r2 = Zt(n3, t2[3] || "", this.rules);
      return t2[3] !== void 0 && (r2 === "" || r2.endsWith(`
`)) && (r2 += `
`), { type: "code", raw: n3, lang: t2[2] ? t2[2].trim().replace(this.rules.inline.anyPunctuation, "$1") : t2[2], text: r2 };
    }
  }
  heading(e2) {
    let t2 = this.rules.block.heading.exec(e2);
    if (t2) {
      let n3 = t2[2].trim();
      if (this.rules.other.endingHash.test(n3)) {
        let r2 = C(n3, "#");
        (this.options.pedantic || !r2 || this.rules.other.endingSpaceTabChar.test(r2)) && (n3 = r2.trim());
      }
      return { type: "heading", raw: C(t2[0], `
`), depth: t2[1].length, text: n3, tokens: this.lexer.inline(n3) };
    }
  }
  hr(e2) {
    let t2 = this.rules.block.hr.exec(e2);
    if (t2) return { type: "hr", raw: C(t2[0], `
`) };
  }
  blockquote(e2) {
    let t2 = this.rules.block.blockquote.exec(e2);
    if (t2) {
      let n3 = C(t2[0], `
`).split(`
`), r2 = "", s2 = "", o2 = [];
      for (; n3.length > 0; ) {
        let i2 = false, a2 = [], c2;
        for (c2 = 0; c2 < n3.length; c2++) if (this.rules.other.blockquoteStart.test(n3[c2])) a2.push(n3[c2]), i2 = true;
        else if (!i2) a2.push(n3[c2]);
        else break;
        n3 = n3.slice(c2);
        let u2 = a2.join(`
`), d2 = u2.replace(this.rules.other.blockquoteMarkerWhitespace, (k2, m2, b2) => b2.startsWith(" ") ? m2 + " " + b2.slice(1) : m2 + te(b2, m2.length)).replace(this.rules.other.blockquoteSetextReplace, `
    $1`).replace(this.rules.other.blockquoteSetextReplace2, "");
        r2 = r2 ? `${r2}
${u2}` : u2, s2 = s2 ? `${s2}
${d2}` : d2;
        let h2 = this.lexer.state.top;
        if (this.lexer.state.top = true, this.lexer.blockTokens(d2, o2, true), this.lexer.state.top = h2, n3.length === 0) break;
        let p2 = o2.at(-1);
        if (p2?.type === "code" || p2?.type === "heading" || p2?.type === "hr" || p2?.type === "html" || p2?.type === "table") break;
        if (p2?.type === "blockquote") {
          let k2 = p2, m2 = n3.join(`
`), b2 = k2.raw + `
` + m2.replace(this.rules.other.blockquoteSetextReplace2, ""), f2 = this.blockquote(b2);
          o2[o2.length - 1] = f2;
          let R2 = b2.substring(f2.raw.length).replace(/^\n/, ""), E2 = R2 ? R2.split(`
`).length : 0, T2 = E2 ? n3.slice(0, -E2) : n3;
          if (T2.length > 0 && (r2 = `${r2}
${T2.join(`
`)}`), s2 = s2.substring(0, s2.length - k2.text.length) + f2.text, n3 = n3.slice(T2.length), n3.length > 0 && this.rules.other.blockquoteStart.test(n3[0])) continue;
          break;
        } else if (p2?.type === "list") {
          let k2 = p2, m2 = k2.raw + `
` + n3.join(`
`), b2 = this.list(m2);
          o2[o2.length - 1] = b2;
          let f2 = b2.raw.length > k2.raw.length ? m2.slice(k2.raw.length + 1, b2.raw.length).split(`
`).length : 0;
          if (f2 > 0) {
            let R2 = n3.slice(0, f2).join(`
`);
            r2 = `${r2}
${R2}`, s2 = `${s2}
${R2}`;
          }
          if (n3 = n3.slice(f2), n3.length > 0 && !this.rules.other.blockquoteStart.test(n3[0])) break;
          continue;
        }
      }
      return { type: "blockquote", raw: r2, tokens: o2, text: s2 };
    }
  }
  list(e2) {
    let t2 = this.rules.block.list.exec(e2);
    if (t2) {
      if (!this.options.pedantic && this.lexer.state.lastToken?.type === "text" && !this.rules.other.listInterruptsParagraph.test(e2)) return;
      let n3 = e2, r2 = () => n3.length - e2.length, s2 = t2[1].trim(), o2 = s2.length > 1, i2 = { type: "list", raw: "", ordered: o2, start: o2 ? +s2.slice(0, -1) : "", loose: false, items: [] };
      s2 = o2 ? `\\d{1,9}\\${s2.slice(-1)}` : `\\${s2}`, this.options.pedantic && (s2 = o2 ? s2 : "[*+-]");
      let a2 = this.rules.other.listItemRegex(s2), c2 = false;
      for (; e2; ) {
        let h2 = false, p2 = "";
        if (!(t2 = a2.exec(e2)) || this.rules.block.hr.test(e2)) break;
        let k2 = r2();
        e2 = e2.substring(t2[0].length);
        let m2 = t2[2].split(`
`, 1)[0], b2 = t2[1].length, f2 = this.options.pedantic ? te(m2, b2) : m2.replace(this.rules.other.leadingSpaceTab, (H2) => te(H2, b2)), R2 = e2.split(`
`, 1)[0], E2 = !f2.trim(), T2 = 0;
        if (this.options.pedantic ? (T2 = 2, p2 = f2.trimStart()) : E2 ? T2 = b2 + 1 : (T2 = f2.search(this.rules.other.nonSpaceChar), T2 = T2 > 4 ? 1 : T2, p2 = f2.slice(T2), T2 += b2), E2 && this.rules.other.blankLine.test(R2) && (e2 = e2.substring(R2.length + 1), h2 = true), !h2) {
          let H2 = this.rules.other.nextBulletRegex(T2), K2 = this.rules.other.hrRegex(T2), re2 = this.rules.other.fencesBeginRegex(T2), B2 = this.options.pedantic ? this.rules.other.pedanticHeadingBeginRegex(T2) : this.rules.other.headingBeginRegex(T2), X2 = this.rules.other.htmlBeginRegex(T2), se2 = this.rules.other.blockquoteBeginRegex(T2), le2 = false;
          for (; e2; ) {
            let we2 = e2.split(`
`, 1)[0], Z2;
            if (R2 = we2, this.options.pedantic ? (R2 = R2.replace(this.rules.other.listReplaceNesting, "  "), Z2 = R2) : Z2 = R2.replace(this.rules.other.leadingSpaceTab, ($4) => te($4)), re2.test(R2) || B2.test(R2) || X2.test(R2) || se2.test(R2) || H2.test(R2) || K2.test(R2)) break;
            if (Z2.search(this.rules.other.nonSpaceChar) >= T2 || !R2.trim()) p2 += `
` + Z2.slice(T2), le2 = false;
            else {
              if (E2) break;
              let $4 = f2;
              if (!this.options.pedantic && !p2.includes(`
`) && !f2.includes("	")) {
                let j2;
                for (; !K2.test($4) && (j2 = this.rules.other.nestedBlockMarker.exec($4)); ) $4 = $4.slice(j2[0].length);
                if (!$4.trim()) break;
              }
              if ($4.replace(this.rules.other.tabCharGlobal, "    ").search(this.rules.other.nonSpaceChar) >= 4 || re2.test($4) || B2.test($4) || X2.test($4) || K2.test($4)) break;
              if (!this.options.pedantic && !le2) {
                let j2 = f2.replace(this.rules.other.nestedContainerMarkers, "");
                if (this.rules.block.fences.test(j2) || this.rules.block.heading.test(j2) || this.rules.block.hr.test(j2)) break;
              }
              let je2 = !this.options.pedantic && /^ {0,3}(?:=+|-+) *$/.test(R2) && this.rules.block.lheading.test(`${f2}
${R2}`) ? `    ${Z2.replace(/^ {0,3}/, "")}` : R2;
              p2 += `
` + je2, le2 = true;
            }
            E2 = !R2.trim(), e2 = e2.substring(we2.length + 1), f2 = Z2.slice(T2);
          }
        }
        let U2 = n3.slice(k2, r2());
        i2.loose || (c2 ? i2.loose = true : this.rules.other.doubleBlankLine.test(U2) && (c2 = true)), i2.items.push({ type: "list_item", raw: U2, task: !!this.options.gfm && this.rules.other.listIsTask.test(p2), loose: false, text: p2, tokens: [] });
      }
      let u2 = i2.items.at(-1);
      if (u2) u2.raw = u2.raw.trimEnd(), u2.text = u2.text.trimEnd();
      else return;
      i2.raw = n3.slice(0, r2()).trimEnd();
      let d2 = [];
      for (let h2 of i2.items) if (this.lexer.state.top = false, d2.push(this.lexer.inlineQueue.length), h2.tokens = this.lexer.blockTokens(h2.text, []), !i2.loose) {
        let p2 = h2.tokens.filter((m2) => m2.type === "space"), k2 = p2.length > 0 && p2.some((m2) => this.rules.other.anyLine.test(m2.raw));
        i2.loose = k2;
      }
      for (let h2 = 0; h2 < i2.items.length; h2++) {
        let p2 = i2.items[h2], k2 = p2.tokens[0];
        if (p2.task && (k2?.type === "text" || k2?.type === "paragraph")) {
          p2.text = p2.text.replace(this.rules.other.listReplaceTask, ""), k2.raw = k2.raw.replace(this.rules.other.listReplaceTask, ""), k2.text = k2.text.replace(this.rules.other.listReplaceTask, "");
          let m2 = this.lexer.inlineQueue;
          for (let f2 = d2[h2]; f2 < m2.length; f2++) if (m2[f2].tokens === k2.tokens) {
            m2[f2].src = m2[f2].src.replace(this.rules.other.listReplaceTask, "");
            break;
          }
          let b2 = this.rules.other.listTaskCheckbox.exec(p2.raw);
          if (b2) {
            let f2 = { type: "checkbox", raw: b2[0] + " ", checked: b2[0] !== "[ ]" };
            p2.checked = f2.checked, i2.loose ? p2.tokens[0] && ["paragraph", "text"].includes(p2.tokens[0].type) && "tokens" in p2.tokens[0] && p2.tokens[0].tokens ? (p2.tokens[0].raw = f2.raw + p2.tokens[0].raw, p2.tokens[0].text = f2.raw + p2.tokens[0].text, p2.tokens[0].tokens.unshift(f2)) : p2.tokens.unshift({ type: "paragraph", raw: f2.raw, text: f2.raw, tokens: [f2] }) : p2.tokens.unshift(f2);
          }
        } else p2.task && (p2.task = false);
      }
      if (i2.loose) for (let h2 of i2.items) {
        h2.loose = true;
        for (let p2 of h2.tokens) p2.type === "text" && (p2.type = "paragraph");
      }
      return i2;
    }
  }
  html(e2) {
    let t2 = this.rules.block.html.exec(e2);
    if (t2) {
      if (this.lexer.state.lastToken?.type === "paragraph" && !this.rules.other.htmlBeginRegex(4).test(e2)) return;
      let n3 = Re(t2[0]);
      return { type: "html", block: true, raw: n3, pre: t2[1] === "pre" || t2[1] === "script" || t2[1] === "style", text: n3 };
    }
  }
  def(e2) {
    let t2 = this.rules.block.def.exec(e2);
    if (t2) {
      if (!this.rules.other.startAngleBracket.test(t2[2]) && Te(t2[2], "()") !== -1) return;
      let n3 = W(t2[1]), r2 = t2[2] ? t2[2].replace(this.rules.other.hrefBrackets, "$1").replace(this.rules.inline.anyPunctuation, "$1") : "", s2 = t2[3] ? t2[3].substring(1, t2[3].length - 1).replace(this.rules.inline.anyPunctuation, "$1") : t2[3];
      return { type: "def", tag: n3, raw: C(t2[0], `
`), href: r2, title: s2 };
    }
  }
  table(e2) {
    let t2 = this.rules.block.table.exec(e2);
    if (!t2 || !this.rules.other.tableDelimiter.test(t2[2])) return;
    let n3 = be(t2[1]), r2 = t2[2].replace(this.rules.other.tableAlignChars, "").split("|"), s2 = t2[3]?.trim() ? t2[3].replace(this.rules.other.tableRowBlankLine, "").split(`
`) : [], o2 = { type: "table", raw: C(t2[0], `
`), header: [], align: [], rows: [] };
    if (n3.length === r2.length) {
      for (let i2 of r2) this.rules.other.tableAlignRight.test(i2) ? o2.align.push("right") : this.rules.other.tableAlignCenter.test(i2) ? o2.align.push("center") : this.rules.other.tableAlignLeft.test(i2) ? o2.align.push("left") : o2.align.push(null);
      for (let i2 = 0; i2 < n3.length; i2++) o2.header.push({ text: n3[i2], tokens: this.lexer.inline(n3[i2]), header: true, align: o2.align[i2] });
      for (let i2 of s2) o2.rows.push(be(i2, o2.header.length).map((a2, c2) => ({ text: a2, tokens: this.lexer.inline(a2), header: false, align: o2.align[c2] })));
      return o2;
    }
  }
  lheading(e2) {
    let t2 = this.rules.block.lheading.exec(e2);
    if (t2) {
      let n3 = t2[1].trim();
      return { type: "heading", raw: C(t2[0], `
`), depth: t2[2].charAt(0) === "=" ? 1 : 2, text: n3, tokens: this.lexer.inline(n3) };
    }
  }
  paragraph(e2) {
    let t2 = this.rules.block.paragraph.exec(e2);
    if (t2) {
      let n3 = t2[1].charAt(t2[1].length - 1) === `
` ? t2[1].slice(0, -1) : t2[1];
      return { type: "paragraph", raw: t2[0], text: n3, tokens: this.lexer.inline(n3) };
    }
  }
  text(e2) {
    let t2 = this.rules.block.text.exec(e2);
    if (t2) return { type: "text", raw: t2[0], text: t2[0], tokens: this.lexer.inline(t2[0]) };
  }
  escape(e2) {
    if (e2.charCodeAt(0) !== 92) return;
    let t2 = this.rules.inline.escape.exec(e2);
    if (t2) return { type: "escape", raw: t2[0], text: t2[1] };
  }
  tag(e2) {
    if (e2.charCodeAt(0) !== 60) return;
    let t2 = this.rules.inline.tag.exec(e2);
    if (t2) return !this.lexer.state.inLink && this.rules.other.startATag.test(t2[0]) ? this.lexer.state.inLink = true : this.lexer.state.inLink && this.rules.other.endATag.test(t2[0]) && (this.lexer.state.inLink = false), !this.lexer.state.inRawBlock && this.rules.other.startPreScriptTag.test(t2[0]) ? this.lexer.state.inRawBlock = true : this.lexer.state.inRawBlock && this.rules.other.endPreScriptTag.test(t2[0]) && (this.lexer.state.inRawBlock = false), { type: "html", raw: t2[0], inLink: this.lexer.state.inLink, inRawBlock: this.lexer.state.inRawBlock, block: false, text: t2[0] };
  }
  link(e2) {
    if (this.lexer.state.linkParenPossible === false) return;
    let t2 = e2.charCodeAt(0);
    if (t2 !== 91 && t2 !== 33) return;
    let n3 = this.rules.inline.link.exec(e2);
    if (n3) {
      let r2 = n3[0].charAt(0) === "!" ? 2 : 1;
      if (!this.options.pedantic && Ze(e2, n3[1], r2, this.rules)) return;
      let s2 = n3[2].trim();
      if (!this.options.pedantic && this.rules.other.startAngleBracket.test(s2)) {
        if (!this.rules.other.endAngleBracket.test(s2)) return;
        let c2 = C(s2.slice(0, -1), "\\");
        if ((s2.length - c2.length) % 2 === 0) return;
      } else {
        let c2 = Te(n3[2], "()");
        if (c2 === -2) return;
        if (c2 > -1) {
          let d2 = (n3[0].indexOf("!") === 0 ? 5 : 4) + n3[1].length + c2;
          n3[2] = n3[2].substring(0, c2), n3[0] = n3[0].substring(0, d2).trim(), n3[3] = "";
        }
      }
      let o2 = C(n3[0].slice(0, -1), "\\");
      if ((n3[0].length - o2.length) % 2 === 0) return;
      let i2 = n3[2], a2 = "";
      if (this.options.pedantic) {
        let c2 = this.rules.other.pedanticHrefTitle.exec(i2);
        c2 && (i2 = c2[1], a2 = c2[3]);
      } else a2 = n3[3] ? n3[3].slice(1, -1) : "";
      return i2 = i2.trim(), this.rules.other.startAngleBracket.test(i2) && (this.options.pedantic && !this.rules.other.endAngleBracket.test(s2) ? i2 = i2.slice(1) : i2 = i2.slice(1, -1)), He(n3, { href: i2 && i2.replace(this.rules.inline.anyPunctuation, "$1"), title: a2 && a2.replace(this.rules.inline.anyPunctuation, "$1") }, n3[0], this.lexer, this.rules);
    }
  }
  reflink(e2, t2) {
    let n3 = e2.charCodeAt(0);
    if (n3 !== 91 && n3 !== 33) return;
    let r2;
    if ((r2 = this.rules.inline.reflink.exec(e2)) || (r2 = this.rules.inline.nolink.exec(e2))) {
      let s2 = r2[0].charAt(0) === "!" ? 2 : 1;
      if (!this.options.pedantic && Ze(e2, r2[1], s2, this.rules)) return;
      let o2 = t2[W(r2[2] || r2[1])];
      if (!o2) {
        let i2 = r2[0].charAt(0);
        return { type: "text", raw: i2, text: i2 };
      }
      return He(r2, o2, r2[0], this.lexer, this.rules);
    }
  }
  emStrong(e2, t2, n3 = "") {
    let r2 = this.rules.inline.emStrongLDelim.exec(e2);
    if (!r2 || !r2[1] && !r2[2] && !r2[3] && !r2[4]) return;
    let s2 = r2[0][0], o2 = n3 === s2, i2 = t2.length - e2.length, a2 = i2;
    for (; !this.options.pedantic && a2 > 0 && t2[a2 - 1] === s2; ) a2--;
    let c2 = [...t2.slice(Math.max(0, a2 - 2), a2)].at(-1) ?? "", u2 = c2 === "*" || c2 === "_" || !!this.rules.inline.punctuation.exec(c2);
    a2 < i2 && (n3 = c2);
    let d2 = a2 < i2 ? u2 : n3 === "*" || n3 === "_" || !!this.rules.inline.punctuation.exec(n3);
    if (r2[4] && n3.match(this.rules.other.unicodeAlphaNumeric)) return;
    let h2 = r2[1] || r2[3] || "";
    if (!h2 || !n3 || d2) {
      let p2 = [...r2[0]].length - 1, k2, m2, b2 = p2, f2 = 0, R2 = i2 - a2 + p2, E2 = !this.options.pedantic && !!c2.trim() && (!!h2 || s2 === "*" && !u2);
      if (s2 !== "*" && s2 !== "_") return;
      let T2 = s2 === "*" ? this.rules.inline.emStrongRDelimAst : this.rules.inline.emStrongRDelimUnd, U2 = oe(this, t2, s2), H2 = t2.length - e2.length + p2;
      if (U2 < H2) return;
      t2 = t2.slice(-1 * e2.length + p2);
      let K2 = U2 - H2;
      for (T2.lastIndex = 0; (r2 = T2.exec(t2)) !== null && !(r2.index > K2); ) {
        if (k2 = r2[1] || r2[2] || r2[3] || r2[4] || r2[5] || r2[6], !k2) continue;
        if (m2 = [...k2].length, r2[3] || r2[4]) {
          b2 += m2;
          continue;
        } else if ((r2[5] || r2[6] || E2) && R2 % 3 && !((R2 + m2) % 3)) {
          if (o2 && (r2[5] || r2[6])) break;
          f2 += m2;
          continue;
        }
        if (b2 -= m2, b2 > 0) continue;
        m2 = Math.min(m2, m2 + b2 + f2);
        let re2 = [...r2[0]][0].length, B2 = e2.slice(0, p2 + r2.index + re2 + m2);
        if (Math.min(p2, m2) % 2) {
          let se2 = B2.slice(1, -1);
          return { type: "em", raw: B2, text: se2, tokens: this.lexer.inlineTokens(se2) };
        }
        let X2 = B2.slice(2, -2);
        return { type: "strong", raw: B2, text: X2, tokens: this.lexer.inlineTokens(X2) };
      }
    }
  }
  codespan(e2) {
    if (e2.charCodeAt(0) !== 96) return;
    let t2 = this.rules.inline.code.exec(e2);
    if (t2) {
      let n3 = t2[2].replace(this.rules.other.newLineCharGlobal, " "), r2 = this.rules.other.nonSpaceChar.test(n3), s2 = this.rules.other.startingSpaceChar.test(n3) && this.rules.other.endingSpaceChar.test(n3);
      return r2 && s2 && (n3 = n3.substring(1, n3.length - 1)), { type: "codespan", raw: t2[0], text: n3 };
    }
  }
  br(e2) {
    let t2 = e2.charCodeAt(0);
    if (t2 !== 32 && t2 !== 92 && t2 !== 10) return;
    let n3 = this.rules.inline.br.exec(e2);
    if (n3) return { type: "br", raw: n3[0] };
  }
  del(e2, t2, n3 = "") {
    if (e2.charCodeAt(0) !== 126) return;
    let r2 = this.rules.inline.delLDelim.exec(e2);
    if (!r2) return;
    if (!(r2[1] || "") || !n3 || this.rules.inline.punctuation.exec(n3)) {
      let o2 = [...r2[0]].length - 1, i2, a2, c2 = o2, u2 = this.rules.inline.delRDelim, d2 = ae(this, t2), h2 = t2.length - e2.length + o2;
      if (d2 < h2) return;
      t2 = t2.slice(-1 * e2.length + o2);
      let p2 = d2 - h2;
      for (u2.lastIndex = 0; (r2 = u2.exec(t2)) !== null && !(r2.index > p2); ) {
        if (i2 = r2[1] || r2[2] || r2[3] || r2[4] || r2[5] || r2[6], !i2 || (a2 = [...i2].length, a2 !== o2)) continue;
        if (r2[3] || r2[4]) {
          c2 += a2;
          continue;
        }
        if (c2 -= a2, c2 > 0) continue;
        a2 = Math.min(a2, a2 + c2);
        let k2 = [...r2[0]][0].length, m2 = e2.slice(0, o2 + r2.index + k2 + a2), b2 = m2.slice(o2, -o2);
        return { type: "del", raw: m2, text: b2, tokens: this.lexer.inlineTokens(b2) };
      }
    }
  }
  autolink(e2) {
    if (e2.charCodeAt(0) !== 60) return;
    let t2 = this.rules.inline.autolink.exec(e2);
    if (t2) {
      let n3, r2;
      return t2[2] === "@" ? (n3 = t2[1], r2 = "mailto:" + n3) : (n3 = t2[1], r2 = n3), { type: "link", raw: t2[0], text: n3, href: r2, autolink: true, tokens: [{ type: "text", raw: n3, text: n3 }] };
    }
  }
  url(e2) {
    let t2;
    if (t2 = this.rules.inline.url.exec(e2)) {
      let n3, r2;
      if (t2[2] === "@") n3 = t2[0], r2 = "mailto:" + n3;
      else {
        let s2;
        do
          s2 = t2[0], t2[0] = this.rules.inline._backpedal.exec(t2[0])?.[0] ?? "";
        while (s2 !== t2[0]);
        n3 = t2[0], t2[1] === "www." ? r2 = "http://" + t2[0] : r2 = t2[0];
      }
      return { type: "link", raw: t2[0], text: n3, href: r2, autolink: true, tokens: [{ type: "text", raw: n3, text: n3 }] };
    }
  }
  inlineText(e2) {
    let t2 = this.rules.inline.text.exec(e2);
    if (t2) {
      let n3 = this.lexer.state.inRawBlock;
      return { type: "text", raw: t2[0], text: n3 ? t2[0] : De(t2[0]), escaped: n3 };
    }
  }
};
var w = class l {
  tokens;
  options;
  state;
  inlineQueue;
  tokenizer;
  constructor(e2) {
    this.tokens = [], this.tokens.links = /* @__PURE__ */ Object.create(null), this.options = e2 || S, this.options.tokenizer = this.options.tokenizer || new _(), this.tokenizer = this.options.tokenizer, this.tokenizer.options = this.options, this.tokenizer.lexer = this, this.inlineQueue = [], this.state = { inLink: false, inRawBlock: false, linkEmitted: false, linkParenPossible: true, top: true };
    let t2 = { other: O, block: ee.normal, inline: F.normal };
    this.options.pedantic ? (t2.block = ee.pedantic, t2.inline = F.pedantic) : this.options.gfm && (t2.block = ee.gfm, this.options.breaks ? t2.inline = F.breaks : t2.inline = F.gfm), this.tokenizer.rules = t2;
  }
  static get rules() {
    return { block: ee, inline: F };
  }
  static lex(e2, t2) {
    return new l(t2).lex(e2);
  }
  static lexInline(e2, t2) {
    return new l(t2).inlineTokens(e2);
  }
  lex(e2) {
    e2 = e2.replace(O.carriageReturn, `
`), this.blockTokens(e2, this.tokens);
    for (let t2 = 0; t2 < this.inlineQueue.length; t2++) {
      let n3 = this.inlineQueue[t2];
      this.state.inRawBlock = false, this.inlineTokens(n3.src, n3.tokens);
    }
    return this.inlineQueue = [], this.tokens;
  }
  blockTokens(e2, t2 = [], n3 = false) {
    this.tokenizer.lexer = this;
    let r2 = this.state.lastToken;
    this.options.pedantic && (e2 = e2.replace(O.tabCharGlobal, "    ").replace(O.spaceLine, ""));
    let s2 = 1 / 0, o2, i2 = this.options.gfm && !this.options.pedantic && this.tokenizer.paragraph === _.prototype.paragraph;
    for (; e2; ) {
      if (e2.length < s2) s2 = e2.length;
      else {
        this.infiniteLoopError(e2.charCodeAt(0));
        break;
      }
      this.state.lastToken = t2.at(-1);
      let a2;
      if (this.options.extensions?.block?.some((u2) => (a2 = u2.call({ lexer: this }, e2, t2)) ? (e2 = e2.substring(a2.raw.length), t2.push(a2), true) : false)) continue;
      if (a2 = this.tokenizer.space(e2)) {
        e2 = e2.substring(a2.raw.length);
        let u2 = t2.at(-1);
        a2.raw.length === 1 && u2 !== void 0 ? u2.raw += `
` : t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.code(e2)) {
        e2 = e2.substring(a2.raw.length);
        let u2 = t2.at(-1);
        u2?.type === "paragraph" || u2?.type === "text" ? (u2.raw += (u2.raw.endsWith(`
`) ? "" : `
`) + a2.raw, u2.text += `
` + a2.text, this.inlineQueue.at(-1).src = u2.text) : t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.fences(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.heading(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.hr(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.blockquote(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.list(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.html(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.def(e2)) {
        e2 = e2.substring(a2.raw.length);
        let u2 = t2.at(-1);
        u2?.type === "paragraph" || u2?.type === "text" ? (u2.raw += (u2.raw.endsWith(`
`) ? "" : `
`) + a2.raw, u2.text += `
` + a2.raw, this.inlineQueue.at(-1).src = u2.text) : (this.tokens.links[a2.tag] || (this.tokens.links[a2.tag] = { href: a2.href, title: a2.title }), t2.push(a2));
        continue;
      }
      if (a2 = this.tokenizer.table(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      if (a2 = this.tokenizer.lheading(e2)) {
        e2 = e2.substring(a2.raw.length), t2.push(a2);
        continue;
      }
      let c2 = e2;
      if (this.options.extensions?.startBlock) {
        let u2 = 1 / 0, d2 = e2.slice(1), h2;
        this.options.extensions.startBlock.forEach((p2) => {
          h2 = p2.call({ lexer: this }, d2), typeof h2 == "number" && h2 >= 0 && (u2 = Math.min(u2, h2));
        }), u2 < 1 / 0 && u2 >= 0 && (c2 = e2.substring(0, u2 + 1));
      }
      if (this.state.top && (a2 = this.tokenizer.paragraph(c2))) {
        let u2 = t2.at(-1);
        (n3 || u2 === o2 && i2) && u2?.type === "paragraph" ? (u2.raw += (u2.raw.endsWith(`
`) ? "" : `
`) + a2.raw, u2.text += `
` + a2.text, this.inlineQueue.pop(), this.inlineQueue.at(-1).src = u2.text, o2 = u2) : (t2.push(a2), o2 = a2), n3 = c2.length !== e2.length, e2 = e2.substring(a2.raw.length);
        continue;
      }
      if (a2 = this.tokenizer.text(e2)) {
        e2 = e2.substring(a2.raw.length);
        let u2 = t2.at(-1);
        u2?.type === "text" ? (u2.raw += (u2.raw.endsWith(`
`) ? "" : `
`) + a2.raw, u2.text += `
` + a2.text, this.inlineQueue.pop(), this.inlineQueue.at(-1).src = u2.text) : t2.push(a2);
        continue;
      }
      if (e2) {
        this.infiniteLoopError(e2.charCodeAt(0));
        break;
      }
    }
    return this.state.top = true, this.state.lastToken = r2, t2;
  }
  inline(e2, t2 = []) {
    return this.inlineQueue.push({ src: e2, tokens: t2 }), t2;
  }
  linkInText(e2) {
    if (!e2.includes("[")) return false;
    let t2 = this.tokenizer.rules.inline.link;
    for (let n3 of e2.matchAll(this.tokenizer.rules.inline.blockSkip)) if (t2.test(n3[0]) && e2.charAt(n3.index - 1) !== "!") return true;
    for (let n3 of e2.matchAll(this.tokenizer.rules.inline.reflinkSearch)) {
      let r2 = n3[0], s2 = r2.lastIndexOf("[");
      if (!(r2.charAt(0) === "!" || !Object.hasOwn(this.tokens.links, W(r2.slice(s2 + 1, -1)))) && !(s2 > 1 && this.linkInText(r2.slice(1, s2 - 1)))) return true;
    }
    return false;
  }
  inlineTokens(e2, t2 = []) {
    this.tokenizer.lexer = this;
    let n3 = this.state.linkParenPossible;
    this.state.linkParenPossible = e2.includes(")");
    try {
      return this.#t(e2, t2);
    } finally {
      this.state.linkParenPossible = n3;
    }
  }
  #t(e2, t2) {
    let n3 = e2.includes("*") || e2.includes("_") || e2.includes("~"), r2 = n3 || this.options.hooks?.emStrongMask || this.tokenizer.emStrong !== _.prototype.emStrong || this.tokenizer.del !== _.prototype.del ? this.#r(e2) : e2;
    if (!n3) return this.#e(e2, r2, t2);
    qe(this.tokenizer, r2);
    try {
      return this.#e(e2, r2, t2);
    } finally {
      ve(this.tokenizer);
    }
  }
  #e(e2, t2, n3) {
    let r2 = false, s2 = "", o2 = 1 / 0;
    for (; e2; ) {
      if (e2.length < o2) o2 = e2.length;
      else {
        this.infiniteLoopError(e2.charCodeAt(0));
        break;
      }
      r2 || (s2 = ""), r2 = false;
      let i2;
      if (this.options.extensions?.inline?.some((u2) => (i2 = u2.call({ lexer: this }, e2, n3)) ? (e2 = e2.substring(i2.raw.length), n3.push(i2), true) : false)) continue;
      if (i2 = this.tokenizer.escape(e2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.tag(e2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.link(e2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.reflink(e2, this.tokens.links)) {
        e2 = e2.substring(i2.raw.length);
        let u2 = n3.at(-1);
        i2.type === "text" && u2?.type === "text" ? (u2.raw += i2.raw, u2.text += i2.text) : n3.push(i2);
        continue;
      }
      let a2 = e2[0];
      if (a2 === "*" || a2 === "_") {
        let u2 = t2.length - e2.length;
        if (oe(this.tokenizer, t2, a2) <= u2) {
          let h2 = 1;
          for (; h2 < e2.length && e2.charCodeAt(h2) === a2.charCodeAt(0); ) h2++;
          let p2 = e2.substring(0, h2), k2 = n3.at(-1);
          k2?.type === "text" && !k2.escaped ? (k2.raw += p2, k2.text += p2) : n3.push({ type: "text", raw: p2, text: p2, escaped: false }), e2 = e2.substring(h2), s2 = a2, r2 = true;
          continue;
        }
      } else if (a2 === "~") {
        let u2 = t2.length - e2.length;
        if (ae(this.tokenizer, t2) <= u2) {
          let h2 = 1;
          for (; h2 < e2.length && e2.charCodeAt(h2) === 126; ) h2++;
          let p2 = e2.substring(0, h2), k2 = n3.at(-1);
          k2?.type === "text" && !k2.escaped ? (k2.raw += p2, k2.text += p2) : n3.push({ type: "text", raw: p2, text: p2, escaped: false }), e2 = e2.substring(h2), s2 = a2, r2 = true;
          continue;
        }
      }
      if (i2 = this.tokenizer.emStrong(e2, t2, s2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.codespan(e2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.br(e2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.del(e2, t2, s2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (i2 = this.tokenizer.autolink(e2)) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      if (!this.state.inLink && (i2 = this.tokenizer.url(e2))) {
        e2 = e2.substring(i2.raw.length), n3.push(i2);
        continue;
      }
      let c2 = e2;
      if (this.options.extensions?.startInline) {
        let u2 = 1 / 0, d2 = e2.slice(1), h2;
        this.options.extensions.startInline.forEach((p2) => {
          h2 = p2.call({ lexer: this }, d2), typeof h2 == "number" && h2 >= 0 && (u2 = Math.min(u2, h2));
        }), u2 < 1 / 0 && u2 >= 0 && (c2 = e2.substring(0, u2 + 1));
      }
      if (i2 = this.tokenizer.inlineText(c2)) {
        e2 = e2.substring(i2.raw.length), i2.raw.slice(-1) !== "_" && (s2 = i2.raw.slice(-1)), r2 = true;
        let u2 = n3.at(-1);
        u2?.type === "text" ? (u2.raw += i2.raw, u2.text += i2.text) : n3.push(i2);
        continue;
      }
      if (e2) {
        this.infiniteLoopError(e2.charCodeAt(0));
        break;
      }
    }
    return n3;
  }
  #n(e2) {
    let { blockSkip: t2, tag: n3, autolink: r2 } = this.tokenizer.rules.inline, s2 = "", o2 = 0, i2;
    for (t2.lastIndex = 0; i2 = t2.exec(e2); ) {
      let a2 = i2.index + (i2[2] ? i2[2].length : 0), c2 = i2.index + i2[0].length;
      if (e2.charAt(a2) === "<") {
        let u2 = e2.slice(a2), d2 = n3.exec(u2) || r2.exec(u2);
        if (!d2) {
          t2.lastIndex = a2 + 1;
          continue;
        }
        c2 = a2 + d2[0].length, t2.lastIndex = c2;
      }
      s2 += e2.slice(o2, a2) + "[" + "a".repeat(c2 - a2 - 2) + "]", o2 = c2;
    }
    return s2 + e2.slice(o2);
  }
  #r(e2) {
    let t2 = e2;
    if (this.tokens.links && e2.includes("[")) {
      let n3 = this.tokenizer.rules.inline.reflinkSearch, r2 = (s2) => {
        let o2 = s2.lastIndexOf("[");
        if (!Object.hasOwn(this.tokens.links, W(s2.slice(o2 + 1, -1)))) return s2;
        if (o2 > 1 && s2.charAt(0) !== "!") {
          let i2 = s2.slice(1, o2 - 1);
          if (this.linkInText(i2)) return "[" + i2.replace(n3, r2) + "][" + "a".repeat(s2.length - o2 - 2) + "]";
        }
        return "[" + "a".repeat(s2.length - 2) + "]";
      };
      t2 = t2.replace(n3, r2);
    }
    return t2 = t2.replace(this.tokenizer.rules.inline.anyPunctuationOutsideCode, (n3, r2, s2) => s2 ? "+".repeat(n3.length) : r2 ? r2 + n3.slice(r2.length, -r2.length).replace(/`/g, "+") + r2 : n3), t2 = this.#n(t2), t2 = this.options.hooks?.emStrongMask?.call({ lexer: this }, t2) ?? t2, t2;
  }
  infiniteLoopError(e2) {
    let t2 = "Infinite loop on byte: " + e2;
    if (this.options.silent) console.error(t2);
    else throw new Error(t2);
  }
};
var I = class {
  options;
  parser;
  constructor(e2) {
    this.options = e2 || S;
  }
  space(e2) {
    return "";
  }
  code({ text: e2, lang: t2, escaped: n3 }) {
    let r2 = (t2 || "").match(O.notSpaceStart)?.[0], s2 = e2 ? e2.replace(O.endingNewline, "") + `
` : "";
    return r2 ? '<pre><code class="language-' + y(r2) + '">' + (n3 ? s2 : y(s2, true)) + `</code></pre>
` : "<pre><code>" + (n3 ? s2 : y(s2, true)) + `</code></pre>
`;
  }
  blockquote({ tokens: e2 }) {
    return `<blockquote>
${this.parser.parse(e2)}</blockquote>
`;
  }
  html({ text: e2 }) {
    return e2;
  }
  def(e2) {
    return "";
  }
  heading({ tokens: e2, depth: t2 }) {
    return `<h${t2}>${this.parser.parseInline(e2)}</h${t2}>
`;
  }
  hr(e2) {
    return `<hr>
`;
  }
  list(e2) {
    let t2 = e2.ordered, n3 = e2.start, r2 = "";
    for (let i2 = 0; i2 < e2.items.length; i2++) {
      let a2 = e2.items[i2];
      r2 += this.listitem(a2);
    }
    let s2 = t2 ? "ol" : "ul", o2 = t2 && n3 !== 1 ? ' start="' + n3 + '"' : "";
    return "<" + s2 + o2 + `>
` + r2 + "</" + s2 + `>
`;
  }
  listitem(e2) {
    return `<li>${this.parser.parse(e2.tokens)}</li>
`;
  }
  checkbox({ checked: e2 }) {
    return "<input " + (e2 ? 'checked="" ' : "") + 'disabled="" type="checkbox"> ';
  }
  paragraph({ tokens: e2 }) {
    return `<p>${this.parser.parseInline(e2)}</p>
`;
  }
  table(e2) {
    let t2 = "", n3 = "";
    for (let s2 = 0; s2 < e2.header.length; s2++) n3 += this.tablecell(e2.header[s2]);
    t2 += this.tablerow({ text: n3 });
    let r2 = "";
    for (let s2 = 0; s2 < e2.rows.length; s2++) {
      let o2 = e2.rows[s2];
      n3 = "";
      for (let i2 = 0; i2 < o2.length; i2++) n3 += this.tablecell(o2[i2]);
      r2 += this.tablerow({ text: n3 });
    }
    return r2 && (r2 = `<tbody>${r2}</tbody>`), `<table>
<thead>
` + t2 + `</thead>
` + r2 + `</table>
`;
  }
  tablerow({ text: e2 }) {
    return `<tr>
${e2}</tr>
`;
  }
  tablecell(e2) {
    let t2 = this.parser.parseInline(e2.tokens), n3 = e2.header ? "th" : "td";
    return (e2.align ? `<${n3} align="${e2.align}">` : `<${n3}>`) + t2 + `</${n3}>
`;
  }
  strong({ tokens: e2 }) {
    return `<strong>${this.parser.parseInline(e2)}</strong>`;
  }
  em({ tokens: e2 }) {
    return `<em>${this.parser.parseInline(e2)}</em>`;
  }
  codespan({ text: e2 }) {
    return `<code>${y(e2, true)}</code>`;
  }
  br(e2) {
    return "<br>";
  }
  del({ tokens: e2 }) {
    return `<del>${this.parser.parseInline(e2)}</del>`;
  }
  link({ href: e2, title: t2, text: n3, tokens: r2, autolink: s2 }) {
    let o2 = s2 ? y(n3, true) : this.parser.parseInline(r2), i2 = xe(e2);
    if (i2 === null) return o2;
    e2 = y(i2, s2);
    let a2 = '<a href="' + e2 + '"';
    return t2 && (a2 += ' title="' + y(t2) + '"'), a2 += ">" + o2 + "</a>", a2;
  }
  image({ href: e2, title: t2, text: n3, tokens: r2 }) {
    r2 && (n3 = this.parser.parseInline(r2, this.parser.textRenderer));
    let s2 = xe(e2);
    if (s2 === null) return y(n3);
    e2 = s2;
    let o2 = `<img src="${y(e2)}" alt="${y(n3)}"`;
    return t2 && (o2 += ` title="${y(t2)}"`), o2 += ">", o2;
  }
  text(e2) {
    return "tokens" in e2 && e2.tokens ? this.parser.parseInline(e2.tokens) : "escaped" in e2 && e2.escaped ? e2.text : y(e2.text);
  }
};
var z = class {
  parser;
  strong({ text: e2, tokens: t2 }) {
    return t2 ? this.parser.parseInline(t2, this) : e2;
  }
  em({ text: e2, tokens: t2 }) {
    return t2 ? this.parser.parseInline(t2, this) : e2;
  }
  codespan({ text: e2 }) {
    return e2;
  }
  del({ text: e2, tokens: t2 }) {
    return t2 ? this.parser.parseInline(t2, this) : e2;
  }
  html({ text: e2 }) {
    return e2;
  }
  text({ text: e2 }) {
    return e2;
  }
  link({ text: e2, tokens: t2 }) {
    return t2 ? this.parser.parseInline(t2, this) : e2;
  }
  image({ text: e2, tokens: t2 }) {
    return t2 ? this.parser.parseInline(t2, this) : e2;
  }
  br() {
    return `
`;
  }
  checkbox({ raw: e2 }) {
    return e2;
  }
};
var P = class l2 {
  options;
  renderer;
  textRenderer;
  constructor(e2) {
    this.options = e2 || S, this.options.renderer = this.options.renderer || new I(), this.renderer = this.options.renderer, this.renderer.options = this.options, this.renderer.parser = this, this.textRenderer = new z(), this.textRenderer.parser = this;
  }
  static parse(e2, t2) {
    return new l2(t2).parse(e2);
  }
  static parseInline(e2, t2) {
    return new l2(t2).parseInline(e2);
  }
  parse(e2) {
    this.renderer.parser = this;
    let t2 = "";
    for (let n3 = 0; n3 < e2.length; n3++) {
      let r2 = e2[n3];
      if (this.options.extensions?.renderers?.[r2.type]) {
        let o2 = r2, i2 = this.options.extensions.renderers[o2.type].call({ parser: this }, o2);
        if (i2 !== false || !["space", "hr", "heading", "code", "table", "blockquote", "list", "checkbox", "html", "def", "paragraph", "text"].includes(o2.type)) {
          t2 += i2 === false ? "" : i2 ?? "";
          continue;
        }
      }
      let s2 = r2;
      switch (s2.type) {
        case "space": {
          t2 += this.renderer.space(s2);
          break;
        }
        case "hr": {
          t2 += this.renderer.hr(s2);
          break;
        }
        case "heading": {
          t2 += this.renderer.heading(s2);
          break;
        }
        case "code": {
          t2 += this.renderer.code(s2);
          break;
        }
        case "table": {
          t2 += this.renderer.table(s2);
          break;
        }
        case "blockquote": {
          t2 += this.renderer.blockquote(s2);
          break;
        }
        case "list": {
          t2 += this.renderer.list(s2);
          break;
        }
        case "checkbox": {
          t2 += this.renderer.checkbox(s2);
          break;
        }
        case "html": {
          t2 += this.renderer.html(s2);
          break;
        }
        case "def": {
          t2 += this.renderer.def(s2);
          break;
        }
        case "paragraph": {
          t2 += this.renderer.paragraph(s2);
          break;
        }
        case "text": {
          t2 += this.renderer.text(s2);
          break;
        }
        default: {
          let o2 = 'Token with "' + s2.type + '" type was not found.';
          if (this.options.silent) return console.error(o2), "";
          throw new Error(o2);
        }
      }
    }
    return t2;
  }
  parseInline(e2, t2 = this.renderer) {
    this.renderer.parser = this;
    let n3 = "";
    for (let r2 = 0; r2 < e2.length; r2++) {
      let s2 = e2[r2];
      if (this.options.extensions?.renderers?.[s2.type]) {
        let i2 = this.options.extensions.renderers[s2.type].call({ parser: this }, s2);
        if (i2 !== false || !["escape", "html", "link", "image", "checkbox", "strong", "em", "codespan", "br", "del", "text"].includes(s2.type)) {
          n3 += i2 === false ? "" : i2 ?? "";
          continue;
        }
      }
      let o2 = s2;
      switch (o2.type) {
        case "escape": {
          n3 += t2.text(o2);
          break;
        }
        case "html": {
          n3 += t2.html(o2);
          break;
        }
        case "link": {
          n3 += t2.link(o2);
          break;
        }
        case "image": {
          n3 += t2.image(o2);
          break;
        }
        case "checkbox": {
          n3 += t2.checkbox(o2);
          break;
        }
        case "strong": {
          n3 += t2.strong(o2);
          break;
        }
        case "em": {
          n3 += t2.em(o2);
          break;
        }
        case "codespan": {
          n3 += t2.codespan(o2);
          break;
        }
        case "br": {
          n3 += t2.br(o2);
          break;
        }
        case "del": {
          n3 += t2.del(o2);
          break;
        }
        case "text": {
          n3 += t2.text(o2);
          break;
        }
        default: {
          let i2 = 'Token with "' + o2.type + '" type was not found.';
          if (this.options.silent) return console.error(i2), "";
          throw new Error(i2);
        }
      }
    }
    return n3;
  }
};
var A = class {
  options;
  block;
  constructor(e2) {
    this.options = e2 || S;
  }
  static passThroughHooks = /* @__PURE__ */ new Set(["preprocess", "postprocess", "processAllTokens", "emStrongMask"]);
  static passThroughHooksRespectAsync = /* @__PURE__ */ new Set(["preprocess", "postprocess", "processAllTokens"]);
  preprocess(e2) {
    return e2;
  }
  postprocess(e2) {
    return e2;
  }
  processAllTokens(e2) {
    return e2;
  }
  emStrongMask(e2) {
    return e2;
  }
  provideLexer(e2 = this.block) {
    return e2 ? w.lex : w.lexInline;
  }
  provideParser(e2 = this.block) {
    return e2 ? P.parse : P.parseInline;
  }
};
function M(l4, e2) {
  if (Array.isArray(e2)) for (let t2 = 0; t2 < e2.length; t2++) l4.push(e2[t2]);
  else l4.push(e2);
}
var ne = class {
  defaults = G();
  options = this.setOptions;
  parse = this.parseMarkdown(true);
  parseInline = this.parseMarkdown(false);
  Parser = P;
  Renderer = I;
  TextRenderer = z;
  Lexer = w;
  Tokenizer = _;
  Hooks = A;
  constructor(...e2) {
    this.use(...e2);
  }
  walkTokens(e2, t2) {
    let n3 = [];
    for (let r2 of e2) switch (M(n3, t2.call(this, r2)), r2.type) {
      case "table": {
        let s2 = r2;
        for (let o2 of s2.header) M(n3, this.walkTokens(o2.tokens, t2));
        for (let o2 of s2.rows) for (let i2 of o2) M(n3, this.walkTokens(i2.tokens, t2));
        break;
      }
      case "list": {
        let s2 = r2;
        M(n3, this.walkTokens(s2.items, t2));
        break;
      }
      default: {
        let s2 = r2;
        this.defaults.extensions?.childTokens?.[s2.type] ? this.defaults.extensions.childTokens[s2.type].forEach((o2) => {
          let i2 = s2[o2].flat(1 / 0);
          M(n3, this.walkTokens(i2, t2));
        }) : s2.tokens && M(n3, this.walkTokens(s2.tokens, t2));
      }
    }
    return n3;
  }
  use(...e2) {
    let t2 = this.defaults.extensions || { renderers: /* @__PURE__ */ Object.create(null), childTokens: /* @__PURE__ */ Object.create(null) };
    return e2.forEach((n3) => {
      let r2 = { ...n3 };
      if (r2.async = this.defaults.async || r2.async || false, n3.extensions && (n3.extensions.forEach((s2) => {
        if (!s2.name) throw new Error("extension name required");
        if ("renderer" in s2) {
          let o2 = t2.renderers[s2.name];
          o2 ? t2.renderers[s2.name] = function(...i2) {
            let a2 = s2.renderer.apply(this, i2);
            return a2 === false && (a2 = o2.apply(this, i2)), a2;
          } : t2.renderers[s2.name] = s2.renderer;
        }
        if ("tokenizer" in s2) {
          if (!s2.level || s2.level !== "block" && s2.level !== "inline") throw new Error("extension level must be 'block' or 'inline'");
          let o2 = t2[s2.level];
          o2 ? o2.unshift(s2.tokenizer) : t2[s2.level] = [s2.tokenizer], s2.start && (s2.level === "block" ? t2.startBlock ? t2.startBlock.push(s2.start) : t2.startBlock = [s2.start] : s2.level === "inline" && (t2.startInline ? t2.startInline.push(s2.start) : t2.startInline = [s2.start]));
        }
        "childTokens" in s2 && s2.childTokens && (t2.childTokens[s2.name] = s2.childTokens);
      }), r2.extensions = t2), n3.renderer) {
        let s2 = this.defaults.renderer || new I(this.defaults);
        for (let o2 in n3.renderer) {
          if (!(o2 in s2)) throw new Error(`renderer '${o2}' does not exist`);
          if (["options", "parser"].includes(o2)) continue;
          let i2 = o2, a2 = n3.renderer[i2], c2 = s2[i2];
          s2[i2] = (...u2) => {
            let d2 = a2.apply(s2, u2);
            return d2 === false && (d2 = c2.apply(s2, u2)), d2 === false ? "" : d2 ?? "";
          };
        }
        r2.renderer = s2;
      }
      if (n3.tokenizer) {
        let s2 = this.defaults.tokenizer || new _(this.defaults);
        for (let o2 in n3.tokenizer) {
          if (!(o2 in s2)) throw new Error(`tokenizer '${o2}' does not exist`);
          if (["options", "rules", "lexer"].includes(o2)) continue;
          let i2 = o2, a2 = n3.tokenizer[i2], c2 = s2[i2];
          s2[i2] = (...u2) => {
            let d2 = a2.apply(s2, u2);
            return d2 === false && (d2 = c2.apply(s2, u2)), d2;
          };
        }
        r2.tokenizer = s2;
      }
      if (n3.hooks) {
        let s2 = this.defaults.hooks || new A();
        for (let o2 in n3.hooks) {
          if (!(o2 in s2)) throw new Error(`hook '${o2}' does not exist`);
          if (["options", "block"].includes(o2)) continue;
          let i2 = o2, a2 = n3.hooks[i2], c2 = s2[i2];
          A.passThroughHooks.has(o2) ? s2[i2] = (u2) => {
            if (s2.options.async && A.passThroughHooksRespectAsync.has(o2)) return (async () => {
              let h2 = await a2.call(s2, u2);
              return c2.call(s2, h2);
            })();
            let d2 = a2.call(s2, u2);
            return c2.call(s2, d2);
          } : s2[i2] = (...u2) => {
            if (s2.options.async) return (async () => {
              let h2 = await a2.apply(s2, u2);
              return h2 === false && (h2 = await c2.apply(s2, u2)), h2;
            })();
            let d2 = a2.apply(s2, u2);
            return d2 === false && (d2 = c2.apply(s2, u2)), d2;
          };
        }
        r2.hooks = s2;
      }
      if (n3.walkTokens) {
        let s2 = this.defaults.walkTokens, o2 = n3.walkTokens;
        r2.walkTokens = function(i2) {
          let a2 = [];
          return M(a2, o2.call(this, i2)), s2 && M(a2, s2.call(this, i2)), a2;
        };
      }
      this.defaults = { ...this.defaults, ...r2 };
    }), this;
  }
  setOptions(e2) {
    return this.defaults = { ...this.defaults, ...e2 }, this;
  }
  lexer(e2, t2) {
    return w.lex(e2, t2 ?? this.defaults);
  }
  parser(e2, t2) {
    return P.parse(e2, t2 ?? this.defaults);
  }
  parseMarkdown(e2) {
    return (n3, r2) => {
      let s2 = { ...r2 }, o2 = { ...this.defaults, ...s2 }, i2 = this.onError(!!o2.silent, !!o2.async);
      if (this.defaults.async === true && s2.async === false) return i2(new Error("marked(): The async option was set to true by an extension. Remove async: false from the parse options object to return a Promise."));
      if (typeof n3 > "u" || n3 === null) return i2(new Error("marked(): input parameter is undefined or null"));
      if (typeof n3 != "string") return i2(new Error("marked(): input parameter is of type " + Object.prototype.toString.call(n3) + ", string expected"));
      if (o2.hooks && (o2.hooks.options = o2, o2.hooks.block = e2), o2.async) return (async () => {
        let a2 = o2.hooks ? await o2.hooks.preprocess(n3) : n3, u2 = await (o2.hooks ? await o2.hooks.provideLexer(e2) : e2 ? w.lex : w.lexInline)(a2, o2), d2 = o2.hooks ? await o2.hooks.processAllTokens(u2) : u2;
        o2.walkTokens && await Promise.all(this.walkTokens(d2, o2.walkTokens));
        let p2 = await (o2.hooks ? await o2.hooks.provideParser(e2) : e2 ? P.parse : P.parseInline)(d2, o2);
        return o2.hooks ? await o2.hooks.postprocess(p2) : p2;
      })().catch(i2);
      try {
        o2.hooks && (n3 = o2.hooks.preprocess(n3));
        let c2 = (o2.hooks ? o2.hooks.provideLexer(e2) : e2 ? w.lex : w.lexInline)(n3, o2);
        o2.hooks && (c2 = o2.hooks.processAllTokens(c2)), o2.walkTokens && this.walkTokens(c2, o2.walkTokens);
        let d2 = (o2.hooks ? o2.hooks.provideParser(e2) : e2 ? P.parse : P.parseInline)(c2, o2);
        return o2.hooks && (d2 = o2.hooks.postprocess(d2)), d2;
      } catch (a2) {
        return i2(a2);
      }
    };
  }
  onError(e2, t2) {
    return (n3) => {
      if (n3.message += `
Please report this to https://github.com/markedjs/marked.`, e2) {
        let r2 = "<p>An error occurred:</p><pre>" + y(n3.message + "", true) + "</pre>";
        return t2 ? Promise.resolve(r2) : r2;
      }
      if (t2) return Promise.reject(n3);
      throw n3;
    };
  }
};
var v = new ne();
function x(l4, e2) {
  return v.parse(l4, e2);
}
x.options = x.setOptions = function(l4) {
  return v.setOptions(l4), x.defaults = v.defaults, ue(x.defaults), x;
};
x.getDefaults = G;
x.defaults = S;
function jt(...l4) {
  return v.use(...l4), x.defaults = v.defaults, ue(x.defaults), x;
}
x.use = jt;
x.walkTokens = function(l4, e2) {
  return v.walkTokens(l4, e2);
};
x.parseInline = v.parseInline;
x.Parser = P;
x.parser = P.parse;
x.Renderer = I;
x.TextRenderer = z;
x.Lexer = w;
x.lexer = w.lex;
x.Tokenizer = _;
x.Hooks = A;
x.parse = x;
var En = x.options;
var zn = x.setOptions;
var Mn = x.walkTokens;
var Bn = x.parseInline;
var qn = P.parse;
var vn = w.lex;

// navi/web/static/vendor/purify.es.mjs
/*! @license DOMPurify 3.4.18 | (c) Cure53 and other contributors | Released under the Apache license 2.0 and Mozilla Public License 2.0 | github.com/cure53/DOMPurify/blob/3.4.18/LICENSE */
function _OverloadYield(e2, d2) {
  this.v = e2, this.k = d2;
}
function _arrayLikeToArray(r2, a2) {
  (null == a2 || a2 > r2.length) && (a2 = r2.length);
  for (var e2 = 0, n3 = Array(a2); e2 < a2; e2++) n3[e2] = r2[e2];
  return n3;
}
function _arrayWithHoles(r2) {
  if (Array.isArray(r2)) return r2;
}
function _iterableToArrayLimit(r2, l4) {
  var t2 = null == r2 ? null : "undefined" != typeof Symbol && r2[Symbol.iterator] || r2["@@iterator"];
  if (null != t2) {
    var e2, n3, i2, u2, a2 = [], f2 = true, o2 = false;
    try {
      if (i2 = (t2 = t2.call(r2)).next, 0 === l4) {
        if (Object(t2) !== t2) return;
        f2 = false;
      } else for (; !(f2 = (e2 = i2.call(t2)).done) && (a2.push(e2.value), a2.length !== l4); f2 = true) ;
    } catch (r3) {
      o2 = true, n3 = r3;
    } finally {
      try {
        if (!f2 && null != t2.return && (u2 = t2.return(), Object(u2) !== u2)) return;
      } finally {
        if (o2) throw n3;
      }
    }
    return a2;
  }
}
function _nonIterableRest() {
  throw new TypeError("Invalid attempt to destructure non-iterable instance.\nIn order to be iterable, non-array objects must have a [Symbol.iterator]() method.");
}
/*! regenerator-runtime -- Copyright (c) 2014-present, Facebook, Inc. -- license (MIT): https://github.com/babel/babel/blob/main/packages/babel-helpers/LICENSE */
function _slicedToArray(r2, e2) {
  return _arrayWithHoles(r2) || _iterableToArrayLimit(r2, e2) || _unsupportedIterableToArray(r2, e2) || _nonIterableRest();
}
function _unsupportedIterableToArray(r2, a2) {
  if (r2) {
    if ("string" == typeof r2) return _arrayLikeToArray(r2, a2);
    var t2 = {}.toString.call(r2).slice(8, -1);
    return "Object" === t2 && r2.constructor && (t2 = r2.constructor.name), "Map" === t2 || "Set" === t2 ? Array.from(r2) : "Arguments" === t2 || /^(?:Ui|I)nt(?:8|16|32)(?:Clamped)?Array$/.test(t2) ? _arrayLikeToArray(r2, a2) : void 0;
  }
}
function AsyncGenerator(e2) {
  var t2, n3;
  function resume(t3, n4) {
    try {
      var r2 = e2[t3](n4), o2 = r2.value, u2 = o2 instanceof _OverloadYield;
      Promise.resolve(u2 ? o2.v : o2).then(function(n5) {
        if (u2) {
          var i2 = "return" === t3 && o2.k ? t3 : "next";
          if (!o2.k || n5.done) return resume(i2, n5);
          n5 = e2[i2](n5).value;
        }
        settle(!!r2.done, n5);
      }, function(e3) {
        resume("throw", e3);
      });
    } catch (e3) {
      settle(2, e3);
    }
  }
  function settle(e3, r2) {
    2 === e3 ? t2.reject(r2) : t2.resolve({
      value: r2,
      done: e3
    }), (t2 = t2.next) ? resume(t2.key, t2.arg) : n3 = null;
  }
  this._invoke = function(e3, r2) {
    return new Promise(function(o2, u2) {
      var i2 = {
        key: e3,
        arg: r2,
        resolve: o2,
        reject: u2,
        next: null
      };
      n3 ? n3 = n3.next = i2 : (t2 = n3 = i2, resume(e3, r2));
    });
  }, "function" != typeof e2.return && (this.return = void 0);
}
AsyncGenerator.prototype["function" == typeof Symbol && Symbol.asyncIterator || "@@asyncIterator"] = function() {
  return this;
}, AsyncGenerator.prototype.next = function(e2) {
  return this._invoke("next", e2);
}, AsyncGenerator.prototype.throw = function(e2) {
  return this._invoke("throw", e2);
}, AsyncGenerator.prototype.return = function(e2) {
  return this._invoke("return", e2);
};
var entries = Object.entries;
var objectKeys = Object.keys;
var setPrototypeOf = Object.setPrototypeOf;
var isFrozen = Object.isFrozen;
var getPrototypeOf = Object.getPrototypeOf;
var getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
var freeze = Object.freeze;
var seal = Object.seal;
var create = Object.create;
var _ref = typeof Reflect !== "undefined" && Reflect;
var apply = _ref.apply;
var construct = _ref.construct;
if (!freeze) freeze = function freeze2(x3) {
  return x3;
};
if (!seal) seal = function seal2(x3) {
  return x3;
};
if (!apply) apply = function apply2(func, thisArg) {
  for (var _len = arguments.length, args = new Array(_len > 2 ? _len - 2 : 0), _key = 2; _key < _len; _key++) args[_key - 2] = arguments[_key];
  return func.apply(thisArg, args);
};
if (!construct) construct = function construct2(Func) {
  for (var _len2 = arguments.length, args = new Array(_len2 > 1 ? _len2 - 1 : 0), _key2 = 1; _key2 < _len2; _key2++) args[_key2 - 1] = arguments[_key2];
  return new Func(...args);
};
var arrayForEach = unapply(Array.prototype.forEach);
var arrayLastIndexOf = unapply(Array.prototype.lastIndexOf);
var arrayPop = unapply(Array.prototype.pop);
var arrayPush = unapply(Array.prototype.push);
var arraySlice = unapply(Array.prototype.slice);
var arraySplice = unapply(Array.prototype.splice);
var arrayIsArray = Array.isArray;
var setCreate = unconstruct(Set);
var setAdd = unapply(Set.prototype.add);
var setHas = unapply(Set.prototype.has);
var stringToLowerCase = unapply(String.prototype.toLowerCase);
var stringToString = unapply(String.prototype.toString);
var stringMatch = unapply(String.prototype.match);
var stringReplace = unapply(String.prototype.replace);
var stringIndexOf = unapply(String.prototype.indexOf);
var stringTrim = unapply(String.prototype.trim);
var numberToString = unapply(Number.prototype.toString);
var booleanToString = unapply(Boolean.prototype.toString);
var bigintToString = typeof BigInt === "undefined" ? null : unapply(BigInt.prototype.toString);
var symbolToString = typeof Symbol === "undefined" ? null : unapply(Symbol.prototype.toString);
var objectHasOwnProperty = unapply(Object.prototype.hasOwnProperty);
var objectToString = unapply(Object.prototype.toString);
var regExpTestRaw = RegExp.prototype.test;
var regExpTest = function regExpTest2(regExp, value) {
  if (regExp instanceof RegExp) regExp.lastIndex = 0;
  return apply(regExpTestRaw, regExp, [value]);
};
var typeErrorCreate = unconstruct(TypeError);
function unapply(func) {
  return function(thisArg) {
    for (var _len3 = arguments.length, args = new Array(_len3 > 1 ? _len3 - 1 : 0), _key3 = 1; _key3 < _len3; _key3++) args[_key3 - 1] = arguments[_key3];
    return apply(func, thisArg, args);
  };
}
function unconstruct(Func) {
  return function() {
    for (var _len4 = arguments.length, args = new Array(_len4), _key4 = 0; _key4 < _len4; _key4++) args[_key4] = arguments[_key4];
    return construct(Func, args);
  };
}
function addToSet(set, array) {
  let transformCaseFunc = arguments.length > 2 && arguments[2] !== void 0 ? arguments[2] : stringToLowerCase;
  if (setPrototypeOf) setPrototypeOf(set, null);
  if (!arrayIsArray(array)) return set;
  let l4 = array.length;
  while (l4--) {
    let element = array[l4];
    if (typeof element === "string") {
      const lcElement = transformCaseFunc(element);
      if (lcElement !== element) {
        if (!isFrozen(array)) array[l4] = lcElement;
        element = lcElement;
      }
    }
    set[element] = true;
  }
  return set;
}
function cleanArray(array) {
  for (let index = 0; index < array.length; index++) if (!objectHasOwnProperty(array, index)) array[index] = null;
  return array;
}
function clone(object) {
  const newObject = create(null);
  for (const _ref2 of entries(object)) {
    var _ref3 = _slicedToArray(_ref2, 2);
    const property = _ref3[0];
    const value = _ref3[1];
    if (objectHasOwnProperty(object, property)) {
      if (arrayIsArray(value)) newObject[property] = cleanArray(value);
      else if (value && typeof value === "object" && value.constructor === Object) newObject[property] = clone(value);
      else newObject[property] = value;
    }
  }
  return newObject;
}
function cloneSet(set) {
  const newSet = create(null);
  const keys = objectKeys(set);
  let l4 = keys.length;
  while (l4--) newSet[keys[l4]] = set[keys[l4]];
  return newSet;
}
function stringifyValue(value) {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
      return numberToString(value);
    case "boolean":
      return booleanToString(value);
    case "bigint":
      return bigintToString ? bigintToString(value) : "0";
    case "symbol":
      return symbolToString ? symbolToString(value) : "Symbol()";
    case "undefined":
      return objectToString(value);
    case "function":
    case "object": {
      if (value === null) return objectToString(value);
      const valueAsRecord = value;
      const valueToString = lookupGetter(valueAsRecord, "toString");
      if (typeof valueToString === "function") {
        const stringified = valueToString(valueAsRecord);
        return typeof stringified === "string" ? stringified : objectToString(stringified);
      }
      return objectToString(value);
    }
    default:
      return objectToString(value);
  }
}
function lookupGetter(object, prop) {
  while (object !== null) {
    const desc = getOwnPropertyDescriptor(object, prop);
    if (desc) {
      if (desc.get) return unapply(desc.get);
      if (typeof desc.value === "function") return unapply(desc.value);
    }
    object = getPrototypeOf(object);
  }
  function fallbackValue() {
    return null;
  }
  return fallbackValue;
}
function lookupAccessor(object, prop) {
  while (object !== null) {
    const desc = getOwnPropertyDescriptor(object, prop);
    if (desc) return desc.get ? unapply(desc.get) : null;
    object = getPrototypeOf(object);
  }
  return null;
}
function isRegex(value) {
  if (!value) return false;
  try {
    regExpTest(value, "");
    return true;
  } catch (_unused) {
    return false;
  }
}
var html$1 = freeze([
  "a",
  "abbr",
  "acronym",
  "address",
  "area",
  "article",
  "aside",
  "audio",
  "b",
  "bdi",
  "bdo",
  "big",
  "blink",
  "blockquote",
  "body",
  "br",
  "button",
  "canvas",
  "caption",
  "center",
  "cite",
  "code",
  "col",
  "colgroup",
  "content",
  "data",
  "datalist",
  "dd",
  "decorator",
  "del",
  "details",
  "dfn",
  "dialog",
  "dir",
  "div",
  "dl",
  "dt",
  "element",
  "em",
  "fieldset",
  "figcaption",
  "figure",
  "font",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "head",
  "header",
  "hgroup",
  "hr",
  "html",
  "i",
  "img",
  "input",
  "ins",
  "kbd",
  "label",
  "legend",
  "li",
  "main",
  "map",
  "mark",
  "marquee",
  "menu",
  "menuitem",
  "meter",
  "nav",
  "nobr",
  "ol",
  "optgroup",
  "option",
  "output",
  "p",
  "picture",
  "pre",
  "progress",
  "q",
  "rp",
  "rt",
  "ruby",
  "s",
  "samp",
  "search",
  "section",
  "select",
  "shadow",
  "slot",
  "small",
  "source",
  "spacer",
  "span",
  "strike",
  "strong",
  "style",
  "sub",
  "summary",
  "sup",
  "table",
  "tbody",
  "td",
  "template",
  "textarea",
  "tfoot",
  "th",
  "thead",
  "time",
  "tr",
  "track",
  "tt",
  "u",
  "ul",
  "var",
  "video",
  "wbr"
]);
var svg$1 = freeze([
  "svg",
  "a",
  "altglyph",
  "altglyphdef",
  "altglyphitem",
  "animatecolor",
  "animatemotion",
  "animatetransform",
  "circle",
  "clippath",
  "defs",
  "desc",
  "ellipse",
  "filter",
  "font",
  "g",
  "glyph",
  "glyphref",
  "hkern",
  "image",
  "line",
  "lineargradient",
  "marker",
  "mask",
  "metadata",
  "mpath",
  "path",
  "pattern",
  "polygon",
  "polyline",
  "radialgradient",
  "rect",
  "stop",
  "style",
  "switch",
  "symbol",
  "text",
  "textpath",
  "title",
  "tref",
  "tspan",
  "view",
  "vkern"
]);
var svgFilters = freeze([
  "feBlend",
  "feColorMatrix",
  "feComponentTransfer",
  "feComposite",
  "feConvolveMatrix",
  "feDiffuseLighting",
  "feDisplacementMap",
  "feDistantLight",
  "feDropShadow",
  "feFlood",
  "feFuncA",
  "feFuncB",
  "feFuncG",
  "feFuncR",
  "feGaussianBlur",
  "feImage",
  "feMerge",
  "feMergeNode",
  "feMorphology",
  "feOffset",
  "fePointLight",
  "feSpecularLighting",
  "feSpotLight",
  "feTile",
  "feTurbulence"
]);
var svgDisallowed = freeze([
  "animate",
  "color-profile",
  "cursor",
  "discard",
  "font-face",
  "font-face-format",
  "font-face-name",
  "font-face-src",
  "font-face-uri",
  "foreignobject",
  "hatch",
  "hatchpath",
  "mesh",
  "meshgradient",
  "meshpatch",
  "meshrow",
  "missing-glyph",
  "script",
  "set",
  "solidcolor",
  "unknown",
  "use"
]);
var mathMl$1 = freeze([
  "math",
  "menclose",
  "merror",
  "mfenced",
  "mfrac",
  "mglyph",
  "mi",
  "mlabeledtr",
  "mmultiscripts",
  "mn",
  "mo",
  "mover",
  "mpadded",
  "mphantom",
  "mroot",
  "mrow",
  "ms",
  "mspace",
  "msqrt",
  "mstyle",
  "msub",
  "msup",
  "msubsup",
  "mtable",
  "mtd",
  "mtext",
  "mtr",
  "munder",
  "munderover",
  "mprescripts"
]);
var mathMlDisallowed = freeze([
  "maction",
  "maligngroup",
  "malignmark",
  "mlongdiv",
  "mscarries",
  "mscarry",
  "msgroup",
  "mstack",
  "msline",
  "msrow",
  "semantics",
  "annotation",
  "annotation-xml",
  "mprescripts",
  "none"
]);
var text = freeze(["#text"]);
var html = freeze([
  "accept",
  "action",
  "align",
  "alt",
  "autocapitalize",
  "autocomplete",
  "autopictureinpicture",
  "autoplay",
  "background",
  "bgcolor",
  "border",
  "capture",
  "cellpadding",
  "cellspacing",
  "checked",
  "cite",
  "class",
  "clear",
  "color",
  "cols",
  "colspan",
  "command",
  "commandfor",
  "controls",
  "controlslist",
  "coords",
  "crossorigin",
  "datetime",
  "decoding",
  "default",
  "dir",
  "disabled",
  "disablepictureinpicture",
  "disableremoteplayback",
  "download",
  "draggable",
  "enctype",
  "enterkeyhint",
  "exportparts",
  "face",
  "for",
  "headers",
  "height",
  "hidden",
  "high",
  "href",
  "hreflang",
  "id",
  "inert",
  "inputmode",
  "integrity",
  "ismap",
  "kind",
  "label",
  "lang",
  "list",
  "loading",
  "loop",
  "low",
  "max",
  "maxlength",
  "media",
  "method",
  "min",
  "minlength",
  "multiple",
  "muted",
  "name",
  "nonce",
  "noshade",
  "novalidate",
  "nowrap",
  "open",
  "optimum",
  "part",
  "pattern",
  "placeholder",
  "playsinline",
  "popover",
  "popovertarget",
  "popovertargetaction",
  "poster",
  "preload",
  "pubdate",
  "radiogroup",
  "readonly",
  "rel",
  "required",
  "rev",
  "reversed",
  "role",
  "rows",
  "rowspan",
  "spellcheck",
  "scope",
  "selected",
  "shape",
  "size",
  "sizes",
  "slot",
  "span",
  "srclang",
  "start",
  "src",
  "srcset",
  "step",
  "style",
  "summary",
  "tabindex",
  "title",
  "translate",
  "type",
  "usemap",
  "valign",
  "value",
  "width",
  "wrap",
  "xmlns"
]);
var svg = freeze([
  "accent-height",
  "accumulate",
  "additive",
  "alignment-baseline",
  "amplitude",
  "ascent",
  "attributename",
  "attributetype",
  "azimuth",
  "basefrequency",
  "baseline-shift",
  "begin",
  "bias",
  "by",
  "class",
  "clip",
  "clippathunits",
  "clip-path",
  "clip-rule",
  "color",
  "color-interpolation",
  "color-interpolation-filters",
  "color-profile",
  "color-rendering",
  "cx",
  "cy",
  "d",
  "dx",
  "dy",
  "diffuseconstant",
  "direction",
  "display",
  "divisor",
  "dominant-baseline",
  "dur",
  "edgemode",
  "elevation",
  "end",
  "exponent",
  "fill",
  "fill-opacity",
  "fill-rule",
  "filter",
  "filterunits",
  "flood-color",
  "flood-opacity",
  "font-family",
  "font-size",
  "font-size-adjust",
  "font-stretch",
  "font-style",
  "font-variant",
  "font-weight",
  "fx",
  "fy",
  "g1",
  "g2",
  "glyph-name",
  "glyphref",
  "gradientunits",
  "gradienttransform",
  "height",
  "href",
  "id",
  "image-rendering",
  "in",
  "in2",
  "intercept",
  "k",
  "k1",
  "k2",
  "k3",
  "k4",
  "kerning",
  "keypoints",
  "keysplines",
  "keytimes",
  "lang",
  "lengthadjust",
  "letter-spacing",
  "kernelmatrix",
  "kernelunitlength",
  "lighting-color",
  "local",
  "marker-end",
  "marker-mid",
  "marker-start",
  "markerheight",
  "markerunits",
  "markerwidth",
  "maskcontentunits",
  "maskunits",
  "max",
  "mask",
  "mask-type",
  "media",
  "method",
  "mode",
  "min",
  "name",
  "numoctaves",
  "offset",
  "operator",
  "opacity",
  "order",
  "orient",
  "orientation",
  "origin",
  "overflow",
  "paint-order",
  "path",
  "pathlength",
  "patterncontentunits",
  "patterntransform",
  "patternunits",
  "pointer-events",
  "points",
  "preservealpha",
  "preserveaspectratio",
  "primitiveunits",
  "r",
  "rx",
  "ry",
  "radius",
  "refx",
  "refy",
  "repeatcount",
  "repeatdur",
  "restart",
  "result",
  "rotate",
  "scale",
  "seed",
  "shape-rendering",
  "slope",
  "specularconstant",
  "specularexponent",
  "spreadmethod",
  "startoffset",
  "stddeviation",
  "stitchtiles",
  "stop-color",
  "stop-opacity",
  "stroke-dasharray",
  "stroke-dashoffset",
  "stroke-linecap",
  "stroke-linejoin",
  "stroke-miterlimit",
  "stroke-opacity",
  "stroke",
  "stroke-width",
  "style",
  "surfacescale",
  "systemlanguage",
  "tabindex",
  "tablevalues",
  "targetx",
  "targety",
  "transform",
  "transform-origin",
  "text-anchor",
  "text-decoration",
  "text-orientation",
  "text-rendering",
  "textlength",
  "type",
  "u1",
  "u2",
  "unicode",
  "values",
  "vector-effect",
  "viewbox",
  "visibility",
  "version",
  "vert-adv-y",
  "vert-origin-x",
  "vert-origin-y",
  "width",
  "word-spacing",
  "wrap",
  "writing-mode",
  "xchannelselector",
  "ychannelselector",
  "x",
  "x1",
  "x2",
  "xmlns",
  "y",
  "y1",
  "y2",
  "z",
  "zoomandpan"
]);
var mathMl = freeze([
  "accent",
  "accentunder",
  "align",
  "bevelled",
  "close",
  "columnalign",
  "columnlines",
  "columnspacing",
  "columnspan",
  "denomalign",
  "depth",
  "dir",
  "display",
  "displaystyle",
  "encoding",
  "fence",
  "frame",
  "height",
  "href",
  "id",
  "largeop",
  "length",
  "linethickness",
  "lquote",
  "lspace",
  "mathbackground",
  "mathcolor",
  "mathsize",
  "mathvariant",
  "maxsize",
  "minsize",
  "movablelimits",
  "notation",
  "numalign",
  "open",
  "rowalign",
  "rowlines",
  "rowspacing",
  "rowspan",
  "rspace",
  "rquote",
  "scriptlevel",
  "scriptminsize",
  "scriptsizemultiplier",
  "selection",
  "separator",
  "separators",
  "stretchy",
  "subscriptshift",
  "supscriptshift",
  "symmetric",
  "voffset",
  "width",
  "xmlns"
]);
var xml = freeze([
  "xlink:href",
  "xml:id",
  "xlink:title",
  "xml:space",
  "xmlns:xlink"
]);
var MUSTACHE_EXPR = seal(/{{[\w\W]*|^[\w\W]*}}/g);
var ERB_EXPR = seal(/<%[\w\W]*|^[\w\W]*%>/g);
var TMPLIT_EXPR = seal(/\${[\w\W]*/g);
var TMPL_MARKER_SERIALIZED = seal(/{{|}}|\${|<%|%>|&lt;%|%&gt;/);
var DATA_ATTR = seal(/^data-[\-\w.\u00B7-\uFFFF]+$/);
var ARIA_ATTR = seal(/^aria-[\-\w]+$/);
var IS_ALLOWED_URI = seal(/^(?:(?:(?:f|ht)tps?|mailto|tel|callto|sms|cid|xmpp|matrix):|[^a-z]|[a-z+.\-]+(?:[^a-z+.\-:]|$))/i);
var IS_SCRIPT_OR_DATA = seal(/^(?:\w+script|data):/i);
var ATTR_WHITESPACE = seal(/[\u0000-\u0020\u00A0\u1680\u180E\u2000-\u2029\u205F\u3000]/g);
var DOCTYPE_NAME = seal(/^html$/i);
var CUSTOM_ELEMENT = seal(/^[a-z][.\w]*(-[.\w]+)+$/i);
var ELEMENT_MARKUP_PROBE = seal(/<[/\w!]/g);
var COMMENT_MARKUP_PROBE = seal(/<[/\w]/g);
var FALLBACK_TAG_CLOSE = seal(/<\/no(script|embed|frames)/i);
var SELF_CLOSING_TAG = seal(/\/>/i);
var ATTR_VALUE_BREAKOUT = seal(/((--!?|])>)|<\/(style|script|title|xmp|textarea|noscript|iframe|noembed|noframes)/i);
var LEADING_WHITESPACE = seal(/^[\r\n\t ]+/);
var NODE_TYPE = {
  element: 1,
  text: 3,
  processingInstruction: 7,
  comment: 8,
  document: 9,
  documentFragment: 11
};
var LITERAL_TEXT_ELEMENTS = freeze(addToSet({}, [
  "style",
  "script",
  "xmp",
  "iframe",
  "noembed",
  "noframes",
  "plaintext",
  "noscript"
]));
var getGlobal = function getGlobal2() {
  return typeof window === "undefined" ? null : window;
};
var _createTrustedTypesPolicy = function _createTrustedTypesPolicy2(trustedTypes, purifyHostElement) {
  if (typeof trustedTypes !== "object" || typeof trustedTypes.createPolicy !== "function") return null;
  let suffix = null;
  const ATTR_NAME = "data-tt-policy-suffix";
  if (purifyHostElement && purifyHostElement.hasAttribute(ATTR_NAME)) suffix = purifyHostElement.getAttribute(ATTR_NAME);
  const policyName = "dompurify" + (suffix ? "#" + suffix : "");
  try {
    return trustedTypes.createPolicy(policyName, {
      createHTML(html2) {
        return html2;
      },
      createScriptURL(scriptUrl) {
        return scriptUrl;
      }
    });
  } catch (_3) {
    console.warn("TrustedTypes policy " + policyName + " could not be created.");
    return null;
  }
};
var _createHooksMap = function _createHooksMap2() {
  return {
    afterSanitizeAttributes: [],
    afterSanitizeElements: [],
    afterSanitizeShadowDOM: [],
    beforeSanitizeAttributes: [],
    beforeSanitizeElements: [],
    beforeSanitizeShadowDOM: [],
    uponSanitizeAttribute: [],
    uponSanitizeElement: [],
    uponSanitizeShadowNode: []
  };
};
var _resolveSetOption = function _resolveSetOption2(cfg, key, fallback, options) {
  return objectHasOwnProperty(cfg, key) && arrayIsArray(cfg[key]) ? addToSet(options.base ? cloneSet(options.base) : {}, cfg[key], options.transform) : fallback;
};
var _resolveObjectOption = function _resolveObjectOption2(cfg, key, fallback) {
  const value = objectHasOwnProperty(cfg, key) ? cfg[key] : void 0;
  return value && typeof value === "object" ? clone(value) : fallback;
};
function createDOMPurify() {
  let window2 = arguments.length > 0 && arguments[0] !== void 0 ? arguments[0] : getGlobal();
  const DOMPurify = (root) => createDOMPurify(root);
  DOMPurify.version = "3.4.18";
  DOMPurify.removed = [];
  if (!window2 || !window2.document || window2.document.nodeType !== NODE_TYPE.document || !window2.Element) {
    DOMPurify.isSupported = false;
    return DOMPurify;
  }
  let document2 = window2.document;
  const originalDocument = document2;
  const currentScript = originalDocument.currentScript;
  const HTMLTemplateElement = window2.HTMLTemplateElement, Node2 = window2.Node, Element = window2.Element, NodeFilter2 = window2.NodeFilter, DOMParser = window2.DOMParser, trustedTypes = window2.trustedTypes;
  const ElementPrototype = Element.prototype;
  const cloneNode = lookupGetter(ElementPrototype, "cloneNode");
  const remove = lookupGetter(ElementPrototype, "remove");
  const removeAttributeNode = lookupGetter(ElementPrototype, "removeAttributeNode");
  const getNextSibling = lookupGetter(ElementPrototype, "nextSibling");
  const getChildNodes = lookupGetter(ElementPrototype, "childNodes");
  const getParentNode = lookupGetter(ElementPrototype, "parentNode");
  const getShadowRoot = lookupGetter(ElementPrototype, "shadowRoot");
  const getAttributes = lookupGetter(ElementPrototype, "attributes");
  const getNodeType = Node2 && Node2.prototype ? lookupGetter(Node2.prototype, "nodeType") : null;
  const getNodeName = Node2 && Node2.prototype ? lookupGetter(Node2.prototype, "nodeName") : null;
  const getOwnerDocument = Node2 && Node2.prototype ? lookupGetter(Node2.prototype, "ownerDocument") : null;
  const _readNodeType = function _readNodeType2(node) {
    return getNodeType ? getNodeType(node) : node.nodeType;
  };
  const _readNodeName = function _readNodeName2(node) {
    return getNodeName ? getNodeName(node) : node.nodeName;
  };
  const getNamespaceURI = lookupAccessor(ElementPrototype, "namespaceURI");
  const _readNamespaceURI = function _readNamespaceURI2(element) {
    return getNamespaceURI ? getNamespaceURI(element) : element.namespaceURI;
  };
  if (typeof HTMLTemplateElement === "function") {
    const template = document2.createElement("template");
    if (template.content && template.content.ownerDocument) document2 = template.content.ownerDocument;
  }
  let trustedTypesPolicy;
  let emptyHTML = "";
  let defaultTrustedTypesPolicy;
  let defaultTrustedTypesPolicyResolved = false;
  let IN_TRUSTED_TYPES_POLICY = 0;
  const _assertNotInTrustedTypesPolicy = function _assertNotInTrustedTypesPolicy2() {
    if (IN_TRUSTED_TYPES_POLICY > 0) throw typeErrorCreate('A configured TRUSTED_TYPES_POLICY callback (createHTML or createScriptURL) must not call DOMPurify.sanitize, as that causes infinite recursion. Do not pass a policy whose callbacks wrap DOMPurify as TRUSTED_TYPES_POLICY; see the "DOMPurify and Trusted Types" section of the README.');
  };
  const _createTrustedHTML = function _createTrustedHTML2(html2) {
    _assertNotInTrustedTypesPolicy();
    IN_TRUSTED_TYPES_POLICY++;
    try {
      return trustedTypesPolicy.createHTML(html2);
    } finally {
      IN_TRUSTED_TYPES_POLICY--;
    }
  };
  const _signOutput = function _signOutput2(html2) {
    return trustedTypesPolicy && RETURN_TRUSTED_TYPE ? _createTrustedHTML(html2) : html2;
  };
  const _createTrustedScriptURL = function _createTrustedScriptURL2(scriptUrl) {
    _assertNotInTrustedTypesPolicy();
    IN_TRUSTED_TYPES_POLICY++;
    try {
      return trustedTypesPolicy.createScriptURL(scriptUrl);
    } finally {
      IN_TRUSTED_TYPES_POLICY--;
    }
  };
  const _getDefaultTrustedTypesPolicy = function _getDefaultTrustedTypesPolicy2() {
    if (!defaultTrustedTypesPolicyResolved) {
      defaultTrustedTypesPolicy = _createTrustedTypesPolicy(trustedTypes, currentScript);
      defaultTrustedTypesPolicyResolved = true;
    }
    return defaultTrustedTypesPolicy;
  };
  const _document = document2, implementation = _document.implementation, createNodeIterator = _document.createNodeIterator, createDocumentFragment = _document.createDocumentFragment, getElementsByTagName = _document.getElementsByTagName;
  const importNode = originalDocument.importNode;
  let hooks = _createHooksMap();
  DOMPurify.isSupported = typeof entries === "function" && typeof getParentNode === "function" && implementation && implementation.createHTMLDocument !== void 0;
  const MUSTACHE_EXPR$1 = MUSTACHE_EXPR, ERB_EXPR$1 = ERB_EXPR, TMPLIT_EXPR$1 = TMPLIT_EXPR, DATA_ATTR$1 = DATA_ATTR, ARIA_ATTR$1 = ARIA_ATTR, IS_SCRIPT_OR_DATA$1 = IS_SCRIPT_OR_DATA, ATTR_WHITESPACE$1 = ATTR_WHITESPACE, CUSTOM_ELEMENT$1 = CUSTOM_ELEMENT;
  let IS_ALLOWED_URI$1 = IS_ALLOWED_URI;
  let ALLOWED_TAGS = null;
  const DEFAULT_ALLOWED_TAGS = addToSet({}, [
    ...html$1,
    ...svg$1,
    ...svgFilters,
    ...mathMl$1,
    ...text
  ]);
  let ALLOWED_ATTR = null;
  const DEFAULT_ALLOWED_ATTR = addToSet({}, [
    ...html,
    ...svg,
    ...mathMl,
    ...xml
  ]);
  let CUSTOM_ELEMENT_HANDLING = null;
  let FORBID_TAGS = null;
  let FORBID_ATTR = null;
  const EXTRA_ELEMENT_HANDLING = Object.seal(create(null, {
    tagCheck: {
      writable: true,
      configurable: false,
      enumerable: true,
      value: null
    },
    attributeCheck: {
      writable: true,
      configurable: false,
      enumerable: true,
      value: null
    }
  }));
  let ALLOW_ARIA_ATTR = true;
  let ALLOW_DATA_ATTR = true;
  let ALLOW_UNKNOWN_PROTOCOLS = false;
  let ALLOW_SELF_CLOSE_IN_ATTR = true;
  let SAFE_FOR_TEMPLATES = false;
  let SAFE_FOR_XML = true;
  let WHOLE_DOCUMENT = false;
  let SET_CONFIG = false;
  let SET_CONFIG_ALLOWED_TAGS = null;
  let SET_CONFIG_ALLOWED_ATTR = null;
  let FORCE_BODY = false;
  let RETURN_DOM = false;
  let RETURN_DOM_FRAGMENT = false;
  let RETURN_TRUSTED_TYPE = false;
  let SANITIZE_DOM = true;
  let SANITIZE_NAMED_PROPS = false;
  const SANITIZE_NAMED_PROPS_PREFIX = "user-content-";
  let KEEP_CONTENT = true;
  let IN_PLACE = false;
  let IN_PLACE_VISITED = null;
  let USE_PROFILES = false;
  let FORBID_CONTENTS = null;
  const DEFAULT_FORBID_CONTENTS = addToSet({}, [
    "annotation-xml",
    "audio",
    "colgroup",
    "desc",
    "foreignobject",
    "head",
    "iframe",
    "math",
    "mi",
    "mn",
    "mo",
    "ms",
    "mtext",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
    "script",
    "selectedcontent",
    "style",
    "svg",
    "template",
    "thead",
    "title",
    "video",
    "xmp"
  ]);
  let DATA_URI_TAGS = null;
  const DEFAULT_DATA_URI_TAGS = addToSet({}, [
    "audio",
    "video",
    "img",
    "source",
    "image",
    "track"
  ]);
  let URI_SAFE_ATTRIBUTES = null;
  const DEFAULT_URI_SAFE_ATTRIBUTES = addToSet({}, [
    "alt",
    "class",
    "for",
    "id",
    "label",
    "name",
    "pattern",
    "placeholder",
    "role",
    "summary",
    "title",
    "value",
    "style",
    "xmlns"
  ]);
  const MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML";
  const SVG_NAMESPACE = "http://www.w3.org/2000/svg";
  const HTML_NAMESPACE = "http://www.w3.org/1999/xhtml";
  let NAMESPACE = HTML_NAMESPACE;
  let IS_EMPTY_INPUT = false;
  let ALLOWED_NAMESPACES = null;
  const DEFAULT_ALLOWED_NAMESPACES = addToSet({}, [
    MATHML_NAMESPACE,
    SVG_NAMESPACE,
    HTML_NAMESPACE
  ], stringToString);
  const DEFAULT_MATHML_TEXT_INTEGRATION_POINTS = freeze(addToSet({}, [
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext"
  ]));
  let MATHML_TEXT_INTEGRATION_POINTS = null;
  const DEFAULT_HTML_INTEGRATION_POINTS = freeze(addToSet({}, ["annotation-xml"]));
  let HTML_INTEGRATION_POINTS = null;
  const DEFAULT_CUSTOM_ELEMENT_HANDLING = freeze(create(null));
  const COMMON_SVG_AND_HTML_ELEMENTS = addToSet({}, [
    "title",
    "style",
    "font",
    "a",
    "script"
  ]);
  let PARSER_MEDIA_TYPE = null;
  const SUPPORTED_PARSER_MEDIA_TYPES = ["application/xhtml+xml", "text/html"];
  const DEFAULT_PARSER_MEDIA_TYPE = "text/html";
  let transformCaseFunc = null;
  let CONFIG = null;
  const formElement = document2.createElement("form");
  const isRegexOrFunction = function isRegexOrFunction2(testValue) {
    return testValue instanceof RegExp || testValue instanceof Function;
  };
  const _parseConfig = function _parseConfig2() {
    let cfg = arguments.length > 0 && arguments[0] !== void 0 ? arguments[0] : {};
    if (!cfg || typeof cfg !== "object") cfg = {};
    cfg = clone(cfg);
    PARSER_MEDIA_TYPE = SUPPORTED_PARSER_MEDIA_TYPES.indexOf(cfg.PARSER_MEDIA_TYPE) === -1 ? DEFAULT_PARSER_MEDIA_TYPE : cfg.PARSER_MEDIA_TYPE;
    transformCaseFunc = PARSER_MEDIA_TYPE === "application/xhtml+xml" ? stringToString : stringToLowerCase;
    ALLOWED_TAGS = _resolveSetOption(cfg, "ALLOWED_TAGS", DEFAULT_ALLOWED_TAGS, { transform: transformCaseFunc });
    ALLOWED_ATTR = _resolveSetOption(cfg, "ALLOWED_ATTR", DEFAULT_ALLOWED_ATTR, { transform: transformCaseFunc });
    ALLOWED_NAMESPACES = _resolveSetOption(cfg, "ALLOWED_NAMESPACES", DEFAULT_ALLOWED_NAMESPACES, { transform: stringToString });
    URI_SAFE_ATTRIBUTES = _resolveSetOption(cfg, "ADD_URI_SAFE_ATTR", DEFAULT_URI_SAFE_ATTRIBUTES, {
      transform: transformCaseFunc,
      base: DEFAULT_URI_SAFE_ATTRIBUTES
    });
    DATA_URI_TAGS = _resolveSetOption(cfg, "ADD_DATA_URI_TAGS", DEFAULT_DATA_URI_TAGS, {
      transform: transformCaseFunc,
      base: DEFAULT_DATA_URI_TAGS
    });
    FORBID_CONTENTS = _resolveSetOption(cfg, "FORBID_CONTENTS", DEFAULT_FORBID_CONTENTS, { transform: transformCaseFunc });
    FORBID_TAGS = _resolveSetOption(cfg, "FORBID_TAGS", create(null), { transform: transformCaseFunc });
    FORBID_ATTR = _resolveSetOption(cfg, "FORBID_ATTR", create(null), { transform: transformCaseFunc });
    USE_PROFILES = objectHasOwnProperty(cfg, "USE_PROFILES") ? cfg.USE_PROFILES && typeof cfg.USE_PROFILES === "object" ? clone(cfg.USE_PROFILES) : cfg.USE_PROFILES : false;
    ALLOW_ARIA_ATTR = cfg.ALLOW_ARIA_ATTR !== false;
    ALLOW_DATA_ATTR = cfg.ALLOW_DATA_ATTR !== false;
    ALLOW_UNKNOWN_PROTOCOLS = cfg.ALLOW_UNKNOWN_PROTOCOLS || false;
    ALLOW_SELF_CLOSE_IN_ATTR = cfg.ALLOW_SELF_CLOSE_IN_ATTR !== false;
    SAFE_FOR_TEMPLATES = cfg.SAFE_FOR_TEMPLATES || false;
    SAFE_FOR_XML = cfg.SAFE_FOR_XML !== false;
    WHOLE_DOCUMENT = cfg.WHOLE_DOCUMENT || false;
    RETURN_DOM = cfg.RETURN_DOM || false;
    RETURN_DOM_FRAGMENT = cfg.RETURN_DOM_FRAGMENT || false;
    RETURN_TRUSTED_TYPE = cfg.RETURN_TRUSTED_TYPE || false;
    FORCE_BODY = cfg.FORCE_BODY || false;
    SANITIZE_DOM = cfg.SANITIZE_DOM !== false;
    SANITIZE_NAMED_PROPS = cfg.SANITIZE_NAMED_PROPS || false;
    KEEP_CONTENT = cfg.KEEP_CONTENT !== false;
    IN_PLACE = cfg.IN_PLACE || false;
    IS_ALLOWED_URI$1 = isRegex(cfg.ALLOWED_URI_REGEXP) ? cfg.ALLOWED_URI_REGEXP : IS_ALLOWED_URI;
    NAMESPACE = typeof cfg.NAMESPACE === "string" ? cfg.NAMESPACE : HTML_NAMESPACE;
    MATHML_TEXT_INTEGRATION_POINTS = _resolveObjectOption(cfg, "MATHML_TEXT_INTEGRATION_POINTS", DEFAULT_MATHML_TEXT_INTEGRATION_POINTS);
    HTML_INTEGRATION_POINTS = _resolveObjectOption(cfg, "HTML_INTEGRATION_POINTS", DEFAULT_HTML_INTEGRATION_POINTS);
    const customElementHandling = _resolveObjectOption(cfg, "CUSTOM_ELEMENT_HANDLING", DEFAULT_CUSTOM_ELEMENT_HANDLING);
    CUSTOM_ELEMENT_HANDLING = create(null);
    if (objectHasOwnProperty(customElementHandling, "tagNameCheck") && isRegexOrFunction(customElementHandling.tagNameCheck)) CUSTOM_ELEMENT_HANDLING.tagNameCheck = customElementHandling.tagNameCheck;
    if (objectHasOwnProperty(customElementHandling, "attributeNameCheck") && isRegexOrFunction(customElementHandling.attributeNameCheck)) CUSTOM_ELEMENT_HANDLING.attributeNameCheck = customElementHandling.attributeNameCheck;
    if (objectHasOwnProperty(customElementHandling, "allowCustomizedBuiltInElements") && typeof customElementHandling.allowCustomizedBuiltInElements === "boolean") CUSTOM_ELEMENT_HANDLING.allowCustomizedBuiltInElements = customElementHandling.allowCustomizedBuiltInElements;
    seal(CUSTOM_ELEMENT_HANDLING);
    if (SAFE_FOR_TEMPLATES) ALLOW_DATA_ATTR = false;
    if (RETURN_DOM_FRAGMENT) RETURN_DOM = true;
    if (USE_PROFILES) {
      if ((objectHasOwnProperty(cfg, "ALLOWED_TAGS") || objectHasOwnProperty(cfg, "ALLOWED_ATTR")) && typeof console !== "undefined" && typeof console.warn === "function") console.warn("DOMPurify: USE_PROFILES overrides ALLOWED_TAGS and ALLOWED_ATTR. Do not use these options together.");
      ALLOWED_TAGS = addToSet({}, text);
      ALLOWED_ATTR = create(null);
      if (USE_PROFILES.html === true) {
        addToSet(ALLOWED_TAGS, html$1);
        addToSet(ALLOWED_ATTR, html);
      }
      if (USE_PROFILES.svg === true) {
        addToSet(ALLOWED_TAGS, svg$1);
        addToSet(ALLOWED_ATTR, svg);
        addToSet(ALLOWED_ATTR, xml);
      }
      if (USE_PROFILES.svgFilters === true) {
        addToSet(ALLOWED_TAGS, svgFilters);
        addToSet(ALLOWED_ATTR, svg);
        addToSet(ALLOWED_ATTR, xml);
      }
      if (USE_PROFILES.mathMl === true) {
        addToSet(ALLOWED_TAGS, mathMl$1);
        addToSet(ALLOWED_ATTR, mathMl);
        addToSet(ALLOWED_ATTR, xml);
      }
    }
    EXTRA_ELEMENT_HANDLING.tagCheck = null;
    EXTRA_ELEMENT_HANDLING.attributeCheck = null;
    if (objectHasOwnProperty(cfg, "ADD_TAGS")) {
      if (typeof cfg.ADD_TAGS === "function") EXTRA_ELEMENT_HANDLING.tagCheck = cfg.ADD_TAGS;
      else if (arrayIsArray(cfg.ADD_TAGS)) {
        if (ALLOWED_TAGS === DEFAULT_ALLOWED_TAGS) ALLOWED_TAGS = cloneSet(ALLOWED_TAGS);
        addToSet(ALLOWED_TAGS, cfg.ADD_TAGS, transformCaseFunc);
      }
    }
    if (objectHasOwnProperty(cfg, "ADD_ATTR")) {
      if (typeof cfg.ADD_ATTR === "function") EXTRA_ELEMENT_HANDLING.attributeCheck = cfg.ADD_ATTR;
      else if (arrayIsArray(cfg.ADD_ATTR)) {
        if (ALLOWED_ATTR === DEFAULT_ALLOWED_ATTR) ALLOWED_ATTR = cloneSet(ALLOWED_ATTR);
        addToSet(ALLOWED_ATTR, cfg.ADD_ATTR, transformCaseFunc);
      }
    }
    if (objectHasOwnProperty(cfg, "ADD_FORBID_CONTENTS") && arrayIsArray(cfg.ADD_FORBID_CONTENTS)) {
      if (FORBID_CONTENTS === DEFAULT_FORBID_CONTENTS) FORBID_CONTENTS = cloneSet(FORBID_CONTENTS);
      addToSet(FORBID_CONTENTS, cfg.ADD_FORBID_CONTENTS, transformCaseFunc);
    }
    if (KEEP_CONTENT) ALLOWED_TAGS["#text"] = true;
    if (WHOLE_DOCUMENT) addToSet(ALLOWED_TAGS, [
      "html",
      "head",
      "body"
    ]);
    if (ALLOWED_TAGS.table) {
      ALLOWED_TAGS.tbody = true;
      delete FORBID_TAGS.tbody;
    }
    if (cfg.TRUSTED_TYPES_POLICY) {
      if (typeof cfg.TRUSTED_TYPES_POLICY.createHTML !== "function") throw typeErrorCreate('TRUSTED_TYPES_POLICY configuration option must provide a "createHTML" hook.');
      if (typeof cfg.TRUSTED_TYPES_POLICY.createScriptURL !== "function") throw typeErrorCreate('TRUSTED_TYPES_POLICY configuration option must provide a "createScriptURL" hook.');
      const previousTrustedTypesPolicy = trustedTypesPolicy;
      trustedTypesPolicy = cfg.TRUSTED_TYPES_POLICY;
      try {
        emptyHTML = _createTrustedHTML("");
      } catch (error) {
        trustedTypesPolicy = previousTrustedTypesPolicy;
        throw error;
      }
    } else if (cfg.TRUSTED_TYPES_POLICY === null) {
      trustedTypesPolicy = void 0;
      emptyHTML = "";
    } else {
      if (trustedTypesPolicy === void 0) trustedTypesPolicy = _getDefaultTrustedTypesPolicy();
      if (trustedTypesPolicy && typeof emptyHTML === "string") emptyHTML = _createTrustedHTML("");
    }
    CONFIG = freeze(cfg);
  };
  const ALL_SVG_TAGS = addToSet({}, [
    ...svg$1,
    ...svgFilters,
    ...svgDisallowed
  ]);
  const ALL_MATHML_TAGS = addToSet({}, [...mathMl$1, ...mathMlDisallowed]);
  const _checkSvgNamespace = function _checkSvgNamespace2(tagName, parentNamespace, parentTagName) {
    if (parentNamespace === HTML_NAMESPACE) return tagName === "svg";
    if (parentNamespace === MATHML_NAMESPACE) return tagName === "svg" && (parentTagName === "annotation-xml" || MATHML_TEXT_INTEGRATION_POINTS[parentTagName]);
    return Boolean(ALL_SVG_TAGS[tagName]);
  };
  const _checkMathMlNamespace = function _checkMathMlNamespace2(tagName, parentNamespace, parentTagName) {
    if (parentNamespace === HTML_NAMESPACE) return tagName === "math";
    if (parentNamespace === SVG_NAMESPACE) return tagName === "math" && HTML_INTEGRATION_POINTS[parentTagName];
    return Boolean(ALL_MATHML_TAGS[tagName]);
  };
  const _checkHtmlNamespace = function _checkHtmlNamespace2(tagName, parentNamespace, parentTagName) {
    if (parentNamespace === SVG_NAMESPACE && !HTML_INTEGRATION_POINTS[parentTagName]) return false;
    if (parentNamespace === MATHML_NAMESPACE && !MATHML_TEXT_INTEGRATION_POINTS[parentTagName]) return false;
    return !ALL_MATHML_TAGS[tagName] && (COMMON_SVG_AND_HTML_ELEMENTS[tagName] || !ALL_SVG_TAGS[tagName]);
  };
  const _checkValidNamespace = function _checkValidNamespace2(element) {
    const elementNamespace = _readNamespaceURI(element);
    const tagName = stringToLowerCase(_readNodeName(element));
    const parentNode = getParentNode(element);
    let parentNamespace = NAMESPACE;
    let parentTagName = "template";
    if (parentNode && _readNodeType(parentNode) === NODE_TYPE.element) {
      parentNamespace = _readNamespaceURI(parentNode);
      parentTagName = stringToLowerCase(_readNodeName(parentNode));
    }
    if (!ALLOWED_NAMESPACES[elementNamespace]) return false;
    if (elementNamespace === SVG_NAMESPACE) return _checkSvgNamespace(tagName, parentNamespace, parentTagName);
    if (elementNamespace === MATHML_NAMESPACE) return _checkMathMlNamespace(tagName, parentNamespace, parentTagName);
    if (elementNamespace === HTML_NAMESPACE) return _checkHtmlNamespace(tagName, parentNamespace, parentTagName);
    return PARSER_MEDIA_TYPE === "application/xhtml+xml";
  };
  const _forceRemove = function _forceRemove2(node) {
    arrayPush(DOMPurify.removed, { element: node });
    try {
      getParentNode(node).removeChild(node);
    } catch (_3) {
      remove(node);
      if (!getParentNode(node)) throw typeErrorCreate("a node selected for removal could not be detached from its tree and cannot be safely returned; refusing to sanitize in place");
    }
  };
  const _stripAttributeNode = function _stripAttributeNode2(element, attribute, name) {
    try {
      removeAttributeNode(element, attribute);
    } catch (_3) {
      try {
        element.removeAttribute(name);
      } catch (_4) {
      }
    }
  };
  const _neutralizeRoot = function _neutralizeRoot2(root) {
    _neutralizeSubtree(root);
    const childNodes = getChildNodes(root);
    if (childNodes) arrayForEach(arraySlice(childNodes), (child) => {
      try {
        remove(child);
      } catch (_3) {
      }
    });
    if (_readNodeType(root) === NODE_TYPE.element) _stripAttributes(root, false);
  };
  const _removeAttribute = function _removeAttribute2(name, element, attr) {
    if (!attr) try {
      attr = element.getAttributeNode(name);
    } catch (_3) {
      attr = null;
    }
    arrayPush(DOMPurify.removed, {
      attribute: attr || null,
      from: element
    });
    if (attr) _stripAttributeNode(element, attr, name);
    else try {
      element.removeAttribute(name);
    } catch (_3) {
    }
    if (name === "is") {
      if (RETURN_DOM || RETURN_DOM_FRAGMENT) try {
        _forceRemove(element);
      } catch (_3) {
      }
      else try {
        element.setAttribute(name, "");
      } catch (_3) {
      }
    }
  };
  const _stripAttributes = function _stripAttributes2(element, keepAllowed) {
    const attributes = getAttributes(element);
    if (!attributes) return;
    for (let i2 = attributes.length - 1; i2 >= 0; --i2) {
      const attribute = attributes[i2];
      const name = attribute && attribute.name;
      if (typeof name === "string" && !(keepAllowed && ALLOWED_ATTR[transformCaseFunc(name)])) _stripAttributeNode(element, attribute, name);
    }
  };
  const _walkTree = function _walkTree2(root, visit) {
    let intoShadow = arguments.length > 2 && arguments[2] !== void 0 ? arguments[2] : false;
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop();
      if (visit(node) === false) continue;
      if (intoShadow && _readNodeType(node) === NODE_TYPE.element) {
        const shadowRoot = getShadowRoot(node);
        if (_isDocumentFragment(shadowRoot)) stack.push(shadowRoot);
      }
      const childNodes = getChildNodes(node);
      if (childNodes) for (let i2 = childNodes.length - 1; i2 >= 0; --i2) stack.push(childNodes[i2]);
    }
  };
  const _neutralizeSubtree = function _neutralizeSubtree2(root) {
    _walkTree(root, (node) => {
      if (_readNodeType(node) === NODE_TYPE.element) _stripAttributes(node, true);
    });
  };
  const _collectLiveNodes = function _collectLiveNodes2(root) {
    const nodes = [];
    _walkTree(root, (node) => {
      nodes.push(node);
    }, true);
    return nodes;
  };
  const _neutralizeEscapedElements = function _neutralizeEscapedElements2(root, before) {
    const reachable = setCreate();
    arrayForEach(_collectLiveNodes(root), (node) => {
      if (_readNodeType(node) === NODE_TYPE.element) setAdd(reachable, node);
    });
    arrayForEach(before, (node) => {
      if (_readNodeType(node) === NODE_TYPE.element && !setHas(reachable, node)) _stripAttributes(node, true);
    });
  };
  const _neutralizeDiscarded = function _neutralizeDiscarded2(root, before) {
    let rootRemoved = false;
    arrayForEach(DOMPurify.removed, (entry) => {
      if (entry.element) {
        rootRemoved = rootRemoved || entry.element === root;
        _neutralizeSubtree(entry.element);
      }
    });
    _neutralizeEscapedElements(root, before);
    return rootRemoved;
  };
  const MAX_UNVISITED_ROUNDS = 8;
  const _sanitizeUnvisitedNodes = function _sanitizeUnvisitedNodes2(root, before) {
    const visited = IN_PLACE_VISITED;
    let original = null;
    const getOriginal = () => {
      if (!original) {
        original = setCreate();
        arrayForEach(before, (beforeNode) => {
          setAdd(original, beforeNode);
        });
      }
      return original;
    };
    for (let round = 0; ; round++) {
      const live = _collectLiveNodes(root);
      const containers = [root];
      let pending = false;
      arrayForEach(live, (node) => {
        if (_readNodeType(node) === NODE_TYPE.documentFragment) arrayPush(containers, node);
        else if (!pending && !setHas(visited, node)) pending = setHas(getOriginal(), node);
      });
      if (!pending) return;
      if (round >= MAX_UNVISITED_ROUNDS) throw typeErrorCreate("the tree kept changing during in-place sanitization; refusing to return it");
      arrayForEach(containers, (container, index) => {
        _sanitizeUnvisitedIn(container, index > 0, root, getOriginal());
      });
    }
  };
  const _sanitizeUnvisitedIn = function _sanitizeUnvisitedIn2(container, inShadow, root, original) {
    const iterator = _createNodeIterator(container);
    let node;
    while (node = iterator.nextNode()) {
      if (!setHas(original, node) || setHas(IN_PLACE_VISITED, node)) continue;
      if (inShadow) _executeHooks(hooks.uponSanitizeShadowNode, node, null);
      _sanitizeNode(node, root);
    }
  };
  const _markVisited = function _markVisited2(node) {
    if (IN_PLACE_VISITED) setAdd(IN_PLACE_VISITED, node);
  };
  const _isPatchLinkageAttribute = function _isPatchLinkageAttribute2(lcName, lcTag) {
    if (!SAFE_FOR_XML) return false;
    if (lcName === "patchsrc") return true;
    return lcName === "for" && lcTag !== "label" && lcTag !== "output";
  };
  const _neutralizePatchLinkage = function _neutralizePatchLinkage2(root) {
    if (!SAFE_FOR_XML) return;
    _walkTree(root, (node) => {
      const nodeType = _readNodeType(node);
      if (nodeType === NODE_TYPE.processingInstruction || nodeType === NODE_TYPE.comment && regExpTest(COMMENT_MARKUP_PROBE, node.data)) {
        try {
          remove(node);
        } catch (_3) {
        }
        return false;
      }
      if (nodeType === NODE_TYPE.element) {
        const element = node;
        const lcTag = transformCaseFunc(_readNodeName(node));
        try {
          if (element.hasAttribute && element.hasAttribute("patchsrc")) element.removeAttribute("patchsrc");
          if (element.hasAttribute && element.hasAttribute("for") && _isPatchLinkageAttribute("for", lcTag)) element.removeAttribute("for");
        } catch (_3) {
        }
      }
      return true;
    });
  };
  const _initDocument = function _initDocument2(dirty) {
    let doc = null;
    let leadingWhitespace = null;
    if (FORCE_BODY) dirty = "<remove></remove>" + dirty;
    else {
      const matches2 = stringMatch(dirty, LEADING_WHITESPACE);
      leadingWhitespace = matches2 && matches2[0];
    }
    if (PARSER_MEDIA_TYPE === "application/xhtml+xml" && NAMESPACE === HTML_NAMESPACE) dirty = '<html xmlns="http://www.w3.org/1999/xhtml"><head></head><body>' + dirty + "</body></html>";
    const dirtyPayload = trustedTypesPolicy ? _createTrustedHTML(dirty) : dirty;
    if (NAMESPACE === HTML_NAMESPACE) try {
      doc = new DOMParser().parseFromString(dirtyPayload, PARSER_MEDIA_TYPE);
    } catch (_3) {
    }
    if (!doc || !doc.documentElement) {
      doc = implementation.createDocument(NAMESPACE, "template", null);
      try {
        doc.documentElement.innerHTML = IS_EMPTY_INPUT ? emptyHTML : dirtyPayload;
      } catch (_3) {
      }
    }
    const body = doc.body || doc.documentElement;
    if (dirty && leadingWhitespace) body.insertBefore(document2.createTextNode(leadingWhitespace), body.childNodes[0] || null);
    if (NAMESPACE === HTML_NAMESPACE) return getElementsByTagName.call(doc, WHOLE_DOCUMENT ? "html" : "body")[0];
    return WHOLE_DOCUMENT ? doc.documentElement : body;
  };
  const _createNodeIterator = function _createNodeIterator2(root) {
    let characterDataOnly = arguments.length > 1 && arguments[1] !== void 0 ? arguments[1] : false;
    const doc = getOwnerDocument ? getOwnerDocument(root) : root.ownerDocument;
    return createNodeIterator.call(doc || root, root, (characterDataOnly ? 0 : NodeFilter2.SHOW_ELEMENT) | NodeFilter2.SHOW_COMMENT | NodeFilter2.SHOW_TEXT | NodeFilter2.SHOW_PROCESSING_INSTRUCTION | NodeFilter2.SHOW_CDATA_SECTION, null);
  };
  const _stripTemplateExpressions = function _stripTemplateExpressions2(value) {
    value = stringReplace(value, MUSTACHE_EXPR$1, " ");
    value = stringReplace(value, ERB_EXPR$1, " ");
    value = stringReplace(value, TMPLIT_EXPR$1, " ");
    return value;
  };
  const _scrubTemplateExpressions2 = function _scrubTemplateExpressions(node) {
    var _node$querySelectorAl;
    _scrubOwnCharacterData(node);
    const templates = (_node$querySelectorAl = node.querySelectorAll) === null || _node$querySelectorAl === void 0 ? void 0 : _node$querySelectorAl.call(node, "template");
    if (templates) arrayForEach(templates, (tmpl) => {
      if (_isDocumentFragment(tmpl.content)) _scrubTemplateExpressions2(tmpl.content);
    });
  };
  const _scrubOwnCharacterData = function _scrubOwnCharacterData2(node) {
    node.normalize();
    const walker = _createNodeIterator(node, true);
    let currentNode = walker.nextNode();
    while (currentNode) {
      currentNode.data = _stripTemplateExpressions(currentNode.data);
      currentNode = walker.nextNode();
    }
  };
  const _isClobbered = function _isClobbered2(element) {
    const realTagName = getNodeName ? getNodeName(element) : null;
    if (typeof realTagName !== "string") return false;
    if (transformCaseFunc(realTagName) !== "form") return false;
    return typeof element.nodeName !== "string" || typeof element.textContent !== "string" || typeof element.removeChild !== "function" || element.attributes !== getAttributes(element) || typeof element.removeAttribute !== "function" || typeof element.removeAttributeNode !== "function" || typeof element.getAttributeNode !== "function" || typeof element.setAttribute !== "function" || typeof element.namespaceURI !== "string" || typeof element.insertBefore !== "function" || typeof element.hasChildNodes !== "function" || element.nodeType !== getNodeType(element) || element.childNodes !== getChildNodes(element);
  };
  const _nodeTypeOf = function _nodeTypeOf2(value) {
    if (!getNodeType || typeof value !== "object" || value === null) return null;
    try {
      const nodeType = getNodeType(value);
      return typeof nodeType === "number" ? nodeType : null;
    } catch (_3) {
      return null;
    }
  };
  const _isDocumentFragment = function _isDocumentFragment2(value) {
    return _nodeTypeOf(value) === NODE_TYPE.documentFragment;
  };
  const _isNode = function _isNode2(value) {
    return _nodeTypeOf(value) !== null;
  };
  function _executeHooks(hooks2, currentNode, data) {
    if (hooks2.length === 0) return;
    arrayForEach(hooks2, (hook) => {
      hook.call(DOMPurify, currentNode, data, CONFIG);
    });
  }
  const _isUnsafeNode = function _isUnsafeNode2(currentNode, tagName, nodeType) {
    if (SAFE_FOR_XML && nodeType === NODE_TYPE.element && currentNode.hasChildNodes() && !_isNode(currentNode.firstElementChild) && regExpTest(ELEMENT_MARKUP_PROBE, currentNode.textContent) && regExpTest(ELEMENT_MARKUP_PROBE, currentNode.innerHTML)) return true;
    if (SAFE_FOR_XML && LITERAL_TEXT_ELEMENTS[tagName] && nodeType === NODE_TYPE.element && _readNamespaceURI(currentNode) === HTML_NAMESPACE && (_isNode(currentNode.firstElementChild) || typeof currentNode.textContent === "string" && regExpTest(ELEMENT_MARKUP_PROBE, currentNode.textContent))) return true;
    if (nodeType === NODE_TYPE.processingInstruction) return true;
    if (SAFE_FOR_XML && nodeType === NODE_TYPE.comment && regExpTest(COMMENT_MARKUP_PROBE, currentNode.data)) return true;
    return false;
  };
  const _matchesNameCheck = function _matchesNameCheck2(check, name) {
    if (check instanceof RegExp) return regExpTest(check, name);
    if (check instanceof Function) {
      for (var _len = arguments.length, args = new Array(_len > 2 ? _len - 2 : 0), _key = 2; _key < _len; _key++) args[_key - 2] = arguments[_key];
      return Boolean(check(name, ...args));
    }
    return false;
  };
  const _sanitizeDisallowedNode = function _sanitizeDisallowedNode2(currentNode, tagName, root) {
    if (!FORBID_TAGS[tagName] && _isBasicCustomElement(tagName) && _matchesNameCheck(CUSTOM_ELEMENT_HANDLING.tagNameCheck, tagName)) return false;
    if (KEEP_CONTENT && !FORBID_CONTENTS[tagName] && !FORBID_CONTENTS[stringToLowerCase(tagName)]) {
      const parentNode = getParentNode(currentNode);
      const childNodes = getChildNodes(currentNode);
      if (childNodes && parentNode) {
        const childCount = childNodes.length;
        for (let i2 = childCount - 1; i2 >= 0; --i2) {
          const hoisted = currentNode === root ? cloneNode(childNodes[i2], true) : childNodes[i2];
          parentNode.insertBefore(hoisted, getNextSibling(currentNode));
        }
      }
    }
    _forceRemove(currentNode);
    return true;
  };
  const _forkSharedAllowlist = function _forkSharedAllowlist2(hookList, set, defaultSet, setConfigSet) {
    if (hookList.length === 0) return set;
    return set === defaultSet || set === setConfigSet ? cloneSet(set) : set;
  };
  const _handleHookDetachedNode = function _handleHookDetachedNode2(currentNode, root) {
    if (currentNode === root || getParentNode(currentNode) !== null) return false;
    if (IN_PLACE) _neutralizeSubtree(currentNode);
    return true;
  };
  const _sanitizeElements = function _sanitizeElements2(currentNode, root) {
    _markVisited(currentNode);
    _executeHooks(hooks.beforeSanitizeElements, currentNode, null);
    if (_handleHookDetachedNode(currentNode, root)) return true;
    if (_isClobbered(currentNode)) {
      _forceRemove(currentNode);
      return true;
    }
    const tagName = transformCaseFunc(_readNodeName(currentNode));
    const nodeType = _readNodeType(currentNode);
    ALLOWED_TAGS = _forkSharedAllowlist(hooks.uponSanitizeElement, ALLOWED_TAGS, DEFAULT_ALLOWED_TAGS, SET_CONFIG_ALLOWED_TAGS);
    _executeHooks(hooks.uponSanitizeElement, currentNode, {
      tagName,
      allowedTags: ALLOWED_TAGS
    });
    if (_handleHookDetachedNode(currentNode, root)) return true;
    if (_isUnsafeNode(currentNode, tagName, nodeType)) {
      _forceRemove(currentNode);
      return true;
    }
    if (FORBID_TAGS[tagName] || !(EXTRA_ELEMENT_HANDLING.tagCheck instanceof Function && EXTRA_ELEMENT_HANDLING.tagCheck(tagName)) && !ALLOWED_TAGS[tagName]) {
      const removed = _sanitizeDisallowedNode(currentNode, tagName, root);
      if (removed === false) {
        _executeHooks(hooks.afterSanitizeElements, currentNode, null);
        if (_handleHookDetachedNode(currentNode, root)) return true;
      }
      return removed;
    }
    if (nodeType === NODE_TYPE.element && !_checkValidNamespace(currentNode)) {
      _forceRemove(currentNode);
      return true;
    }
    if ((tagName === "noscript" || tagName === "noembed" || tagName === "noframes") && regExpTest(FALLBACK_TAG_CLOSE, currentNode.innerHTML)) {
      _forceRemove(currentNode);
      return true;
    }
    if (SAFE_FOR_TEMPLATES && nodeType === NODE_TYPE.text) {
      const text2 = currentNode.textContent;
      const content = _stripTemplateExpressions(text2);
      if (text2 !== content) {
        arrayPush(DOMPurify.removed, { element: currentNode.cloneNode() });
        currentNode.textContent = content;
      }
    }
    _executeHooks(hooks.afterSanitizeElements, currentNode, null);
    return _handleHookDetachedNode(currentNode, root);
  };
  const _isValidAttribute = function _isValidAttribute2(lcTag, lcName, value) {
    if (FORBID_ATTR[lcName]) return false;
    if (_isPatchLinkageAttribute(lcName, lcTag)) return false;
    if (SANITIZE_DOM && (lcName === "id" || lcName === "name") && (value in document2 || value in formElement)) return false;
    const nameIsPermitted = ALLOWED_ATTR[lcName] || EXTRA_ELEMENT_HANDLING.attributeCheck instanceof Function && EXTRA_ELEMENT_HANDLING.attributeCheck(lcName, lcTag);
    if (ALLOW_DATA_ATTR && regExpTest(DATA_ATTR$1, lcName)) return true;
    if (ALLOW_ARIA_ATTR && regExpTest(ARIA_ATTR$1, lcName)) return true;
    if (!nameIsPermitted) return _isBasicCustomElement(lcTag) && _matchesNameCheck(CUSTOM_ELEMENT_HANDLING.tagNameCheck, lcTag) && _matchesNameCheck(CUSTOM_ELEMENT_HANDLING.attributeNameCheck, lcName, lcTag) || lcName === "is" && CUSTOM_ELEMENT_HANDLING.allowCustomizedBuiltInElements && _matchesNameCheck(CUSTOM_ELEMENT_HANDLING.tagNameCheck, value);
    if (URI_SAFE_ATTRIBUTES[lcName]) return true;
    const compactValue = stringReplace(value, ATTR_WHITESPACE$1, "");
    if (regExpTest(IS_ALLOWED_URI$1, compactValue)) return true;
    if ((lcName === "src" || lcName === "xlink:href" || lcName === "href") && lcTag !== "script" && stringIndexOf(value, "data:") === 0 && DATA_URI_TAGS[lcTag]) return true;
    if (ALLOW_UNKNOWN_PROTOCOLS && !regExpTest(IS_SCRIPT_OR_DATA$1, compactValue)) return true;
    return !value;
  };
  const RESERVED_CUSTOM_ELEMENT_NAMES = addToSet({}, [
    "annotation-xml",
    "color-profile",
    "font-face",
    "font-face-format",
    "font-face-name",
    "font-face-src",
    "font-face-uri",
    "missing-glyph"
  ]);
  const _isBasicCustomElement = function _isBasicCustomElement2(tagName) {
    return !RESERVED_CUSTOM_ELEMENT_NAMES[stringToLowerCase(tagName)] && regExpTest(CUSTOM_ELEMENT$1, tagName);
  };
  const _applyTrustedTypesToAttribute = function _applyTrustedTypesToAttribute2(lcTag, lcName, namespaceURI, value) {
    if (trustedTypesPolicy && typeof trustedTypes === "object" && typeof trustedTypes.getAttributeType === "function" && !namespaceURI) switch (trustedTypes.getAttributeType(lcTag, lcName)) {
      case "TrustedHTML":
        return _createTrustedHTML(value);
      case "TrustedScriptURL":
        return _createTrustedScriptURL(value);
    }
    return value;
  };
  const _setAttributeValue = function _setAttributeValue2(currentNode, name, namespaceURI, value) {
    try {
      if (namespaceURI) currentNode.setAttributeNS(namespaceURI, name, value);
      else currentNode.setAttribute(name, value);
      if (_isClobbered(currentNode)) {
        _forceRemove(currentNode);
        return false;
      }
      return true;
    } catch (_3) {
      _removeAttribute(name, currentNode);
      return false;
    }
  };
  const _isUnsafeAttributeValue = function _isUnsafeAttributeValue2(name, value) {
    if (SAFE_FOR_XML && regExpTest(ATTR_VALUE_BREAKOUT, value)) return true;
    return stringToLowerCase(name) === "attributename" && stringIndexOf(value, "href") !== -1;
  };
  const _sanitizeAttributes = function _sanitizeAttributes2(currentNode, root) {
    _executeHooks(hooks.beforeSanitizeAttributes, currentNode, null);
    if (_handleHookDetachedNode(currentNode, root)) return;
    const attributes = currentNode.attributes;
    if (!attributes || _isClobbered(currentNode)) return;
    ALLOWED_ATTR = _forkSharedAllowlist(hooks.uponSanitizeAttribute, ALLOWED_ATTR, DEFAULT_ALLOWED_ATTR, SET_CONFIG_ALLOWED_ATTR);
    const hookEvent = {
      attrName: "",
      attrValue: "",
      keepAttr: true,
      allowedAttributes: ALLOWED_ATTR,
      forceKeepAttr: void 0
    };
    let l4 = attributes.length;
    const lcTag = transformCaseFunc(_readNodeName(currentNode));
    while (l4--) {
      const attr = attributes[l4];
      const name = attr.name, namespaceURI = attr.namespaceURI, attrValue = attr.value;
      const lcName = transformCaseFunc(name);
      const initValue = attrValue;
      let value = name === "value" ? initValue : stringTrim(initValue);
      let recreatedNamedProp = false;
      hookEvent.attrName = lcName;
      hookEvent.attrValue = value;
      hookEvent.keepAttr = true;
      hookEvent.forceKeepAttr = void 0;
      _executeHooks(hooks.uponSanitizeAttribute, currentNode, hookEvent);
      value = hookEvent.attrValue;
      if (SANITIZE_NAMED_PROPS && (lcName === "id" || lcName === "name") && stringIndexOf(value, SANITIZE_NAMED_PROPS_PREFIX) !== 0) {
        _removeAttribute(name, currentNode, attr);
        value = SANITIZE_NAMED_PROPS_PREFIX + value;
        recreatedNamedProp = true;
      }
      if (_isUnsafeAttributeValue(name, value)) {
        _removeAttribute(name, currentNode, attr);
        continue;
      }
      if (hookEvent.forceKeepAttr) continue;
      if (!hookEvent.keepAttr) {
        _removeAttribute(name, currentNode, attr);
        continue;
      }
      if (!ALLOW_SELF_CLOSE_IN_ATTR && regExpTest(SELF_CLOSING_TAG, value)) {
        _removeAttribute(name, currentNode, attr);
        continue;
      }
      if (SAFE_FOR_TEMPLATES) value = _stripTemplateExpressions(value);
      if (!_isValidAttribute(lcTag, lcName, value)) {
        _removeAttribute(name, currentNode, attr);
        continue;
      }
      value = _applyTrustedTypesToAttribute(lcTag, lcName, namespaceURI, value);
      if (value !== initValue) {
        if (_setAttributeValue(currentNode, name, namespaceURI, value) && recreatedNamedProp) arrayPop(DOMPurify.removed);
      }
    }
    _executeHooks(hooks.afterSanitizeAttributes, currentNode, null);
    _handleHookDetachedNode(currentNode, root);
  };
  const _sanitizeNode = function _sanitizeNode2(node, root) {
    _sanitizeElements(node, root);
    _sanitizeAttributes(node, root);
    if (_isDocumentFragment(node.content)) _sanitizeShadowDOM2(node.content);
  };
  const _sanitizeShadowDOM2 = function _sanitizeShadowDOM(fragment) {
    let shadowNode = null;
    const shadowIterator = _createNodeIterator(fragment);
    _executeHooks(hooks.beforeSanitizeShadowDOM, fragment, null);
    while (shadowNode = shadowIterator.nextNode()) {
      _executeHooks(hooks.uponSanitizeShadowNode, shadowNode, null);
      _sanitizeNode(shadowNode, fragment);
      if (_readNodeType(shadowNode) === NODE_TYPE.element) {
        const innerSr = getShadowRoot(shadowNode);
        if (_isDocumentFragment(innerSr)) {
          _sanitizeAttachedShadowRoots(innerSr);
          _sanitizeShadowDOM2(innerSr);
        }
      }
    }
    if (SAFE_FOR_TEMPLATES) _scrubOwnCharacterData(fragment);
    _executeHooks(hooks.afterSanitizeShadowDOM, fragment, null);
  };
  const _sanitizeAttachedShadowRoots = function _sanitizeAttachedShadowRoots2(root) {
    const stack = [{
      node: root,
      shadow: null
    }];
    while (stack.length > 0) {
      const item = stack.pop();
      if (item.shadow) {
        _sanitizeShadowDOM2(item.shadow);
        continue;
      }
      const node = item.node;
      const isElement = _readNodeType(node) === NODE_TYPE.element;
      const childNodes = getChildNodes(node);
      if (childNodes) for (let i2 = childNodes.length - 1; i2 >= 0; --i2) stack.push({
        node: childNodes[i2],
        shadow: null
      });
      if (isElement) {
        const rootName = getNodeName ? getNodeName(node) : null;
        if (typeof rootName === "string" && transformCaseFunc(rootName) === "template") {
          const content = node.content;
          if (_isDocumentFragment(content)) stack.push({
            node: content,
            shadow: null
          });
        }
      }
      if (isElement) {
        const sr = getShadowRoot(node);
        if (_isDocumentFragment(sr)) stack.push({
          node: null,
          shadow: sr
        }, {
          node: sr,
          shadow: null
        });
      }
    }
  };
  DOMPurify.sanitize = function(dirty) {
    let cfg = arguments.length > 1 && arguments[1] !== void 0 ? arguments[1] : {};
    let body = null;
    let importedNode = null;
    let currentNode = null;
    let returnNode = null;
    IS_EMPTY_INPUT = !dirty;
    if (IS_EMPTY_INPUT) dirty = "<!-->";
    if (typeof dirty !== "string" && !_isNode(dirty)) {
      dirty = stringifyValue(dirty);
      if (typeof dirty !== "string") throw typeErrorCreate("dirty is not a string, aborting");
    }
    if (!DOMPurify.isSupported) return dirty;
    if (SET_CONFIG) {
      ALLOWED_TAGS = SET_CONFIG_ALLOWED_TAGS;
      ALLOWED_ATTR = SET_CONFIG_ALLOWED_ATTR;
    } else _parseConfig(cfg);
    DOMPurify.removed = [];
    const inPlace = IN_PLACE && typeof dirty !== "string" && _isNode(dirty);
    let inPlaceNodes = [];
    const outerVisited = IN_PLACE_VISITED;
    if (inPlace) {
      _neutralizePatchLinkage(dirty);
      const nn = _readNodeName(dirty);
      if (typeof nn === "string") {
        const tagName = transformCaseFunc(nn);
        if (!ALLOWED_TAGS[tagName] || FORBID_TAGS[tagName]) {
          _neutralizeRoot(dirty);
          throw typeErrorCreate("root node is forbidden and cannot be sanitized in-place");
        }
      }
      if (_isClobbered(dirty)) {
        _neutralizeRoot(dirty);
        throw typeErrorCreate("root node is clobbered and cannot be sanitized in-place");
      }
      inPlaceNodes = _collectLiveNodes(dirty);
      IN_PLACE_VISITED = setCreate();
    } else if (_isNode(dirty)) {
      body = _initDocument("<!---->");
      importedNode = body.ownerDocument.importNode(dirty, true);
      if (importedNode.nodeType === NODE_TYPE.element && importedNode.nodeName === "BODY") body = importedNode;
      else if (importedNode.nodeName === "HTML") body = importedNode;
      else body.appendChild(importedNode);
      _sanitizeAttachedShadowRoots(body);
    } else {
      if (!RETURN_DOM && !SAFE_FOR_TEMPLATES && !WHOLE_DOCUMENT && dirty.indexOf("<") === -1) return _signOutput(dirty);
      body = _initDocument(dirty);
      if (!body) return RETURN_DOM ? null : RETURN_TRUSTED_TYPE ? emptyHTML : "";
    }
    if (body && FORCE_BODY) _forceRemove(body.firstChild);
    const walkRoot = inPlace ? dirty : body;
    try {
      if (inPlace) _sanitizeAttachedShadowRoots(dirty);
      const nodeIterator = _createNodeIterator(walkRoot);
      while (currentNode = nodeIterator.nextNode()) _sanitizeNode(currentNode, walkRoot);
      if (inPlace) _sanitizeUnvisitedNodes(dirty, inPlaceNodes);
    } catch (error) {
      if (inPlace) {
        _neutralizeRoot(dirty);
        _neutralizeDiscarded(dirty, inPlaceNodes);
      }
      throw error;
    } finally {
      IN_PLACE_VISITED = outerVisited;
    }
    if (inPlace) {
      if (_neutralizeDiscarded(dirty, inPlaceNodes)) throw typeErrorCreate("a node selected for removal could not be safely returned; refusing to sanitize in place");
      if (SAFE_FOR_TEMPLATES) _scrubTemplateExpressions2(dirty);
      return dirty;
    }
    if (RETURN_DOM) {
      if (SAFE_FOR_TEMPLATES) _scrubTemplateExpressions2(body);
      if (RETURN_DOM_FRAGMENT) {
        returnNode = createDocumentFragment.call(body.ownerDocument);
        while (body.firstChild) returnNode.appendChild(body.firstChild);
      } else returnNode = body;
      if (ALLOWED_ATTR.shadowroot || ALLOWED_ATTR.shadowrootmode) returnNode = importNode.call(originalDocument, returnNode, true);
      return returnNode;
    }
    const serialize = () => WHOLE_DOCUMENT ? body.outerHTML : body.innerHTML;
    let serializedHTML = serialize();
    if (SAFE_FOR_TEMPLATES && regExpTest(TMPL_MARKER_SERIALIZED, serializedHTML)) {
      _scrubOwnCharacterData(body);
      serializedHTML = serialize();
    }
    if (WHOLE_DOCUMENT && ALLOWED_TAGS["!doctype"] && body.ownerDocument && body.ownerDocument.doctype && body.ownerDocument.doctype.name && regExpTest(DOCTYPE_NAME, body.ownerDocument.doctype.name)) serializedHTML = "<!DOCTYPE " + body.ownerDocument.doctype.name + ">\n" + serializedHTML;
    return _signOutput(serializedHTML);
  };
  DOMPurify.setConfig = function() {
    let cfg = arguments.length > 0 && arguments[0] !== void 0 ? arguments[0] : {};
    _parseConfig(cfg);
    SET_CONFIG = true;
    SET_CONFIG_ALLOWED_TAGS = ALLOWED_TAGS;
    SET_CONFIG_ALLOWED_ATTR = ALLOWED_ATTR;
  };
  DOMPurify.clearConfig = function() {
    CONFIG = null;
    SET_CONFIG = false;
    SET_CONFIG_ALLOWED_TAGS = null;
    SET_CONFIG_ALLOWED_ATTR = null;
    trustedTypesPolicy = defaultTrustedTypesPolicy;
    emptyHTML = "";
  };
  DOMPurify.isValidAttribute = function(tag, attr, value) {
    if (!CONFIG) _parseConfig({});
    const lcTag = transformCaseFunc(tag);
    const lcName = transformCaseFunc(attr);
    if (typeof value === "string" && (_isUnsafeAttributeValue(attr, value) || !ALLOW_SELF_CLOSE_IN_ATTR && regExpTest(SELF_CLOSING_TAG, value))) return false;
    return _isValidAttribute(lcTag, lcName, value);
  };
  DOMPurify.addHook = function(entryPoint, hookFunction) {
    if (typeof hookFunction !== "function") return;
    if (!objectHasOwnProperty(hooks, entryPoint)) return;
    arrayPush(hooks[entryPoint], hookFunction);
  };
  DOMPurify.removeHook = function(entryPoint, hookFunction) {
    if (!objectHasOwnProperty(hooks, entryPoint)) return;
    if (hookFunction !== void 0) {
      const index = arrayLastIndexOf(hooks[entryPoint], hookFunction);
      return index === -1 ? void 0 : arraySplice(hooks[entryPoint], index, 1)[0];
    }
    return arrayPop(hooks[entryPoint]);
  };
  DOMPurify.removeHooks = function(entryPoint) {
    if (!objectHasOwnProperty(hooks, entryPoint)) return;
    hooks[entryPoint] = [];
  };
  DOMPurify.removeAllHooks = function() {
    hooks = _createHooksMap();
  };
  return DOMPurify;
}
var purify_default = createDOMPurify();

// navi/web/static/vendor/highlight.min.js
/*!
  Highlight.js v11.12.0 (git: f7f7d3803b)
  (c) 2006-2026 Josh Goebel <hello@joshgoebel.com> and other contributors
  License: BSD-3-Clause
 */
function e(n3) {
  return n3 instanceof Map ? n3.clear = n3.delete = n3.set = () => {
    throw Error("map is read-only");
  } : n3 instanceof Set && (n3.add = n3.clear = n3.delete = () => {
    throw Error("set is read-only");
  }), Object.freeze(n3), Object.getOwnPropertyNames(n3).forEach((t2) => {
    const a2 = n3[t2], i2 = typeof a2;
    "object" !== i2 && "function" !== i2 || Object.isFrozen(a2) || e(a2);
  }), n3;
}
var n = class {
  constructor(e2) {
    void 0 === e2.data && (e2.data = {}), this.data = e2.data, this.isMatchIgnored = false;
  }
  ignoreMatch() {
    this.isMatchIgnored = true;
  }
};
function t(e2) {
  return e2.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}
function a(e2, ...n3) {
  const t2 = /* @__PURE__ */ Object.create(null);
  for (const n4 in e2) t2[n4] = e2[n4];
  return n3.forEach((e3) => {
    for (const n4 in e3) t2[n4] = e3[n4];
  }), t2;
}
var i = (e2) => !!e2.scope;
var r = class {
  constructor(e2, n3) {
    this.buffer = "", this.classPrefix = n3.classPrefix, e2.walk(this);
  }
  addText(e2) {
    this.buffer += t(e2);
  }
  openNode(e2) {
    if (!i(e2)) return;
    const n3 = ((e3, { prefix: n4 }) => {
      if (e3.startsWith("language:")) return e3.replace("language:", "language-");
      if (e3.includes(".")) {
        const t2 = e3.split(".");
        return [`${n4}${t2.shift()}`, ...t2.map((e4, n5) => `${e4}${"_".repeat(n5 + 1)}`)].join(" ");
      }
      return `${n4}${e3}`;
    })(e2.scope, { prefix: this.classPrefix });
    this.span(n3);
  }
  closeNode(e2) {
    i(e2) && (this.buffer += "</span>");
  }
  value() {
    return this.buffer;
  }
  span(e2) {
    this.buffer += `<span class="${e2}">`;
  }
};
var s = (e2 = {}) => {
  const n3 = { children: [] };
  return Object.assign(n3, e2), n3;
};
var o = class _o {
  constructor() {
    this.rootNode = s(), this.stack = [this.rootNode];
  }
  get top() {
    return this.stack[this.stack.length - 1];
  }
  get root() {
    return this.rootNode;
  }
  add(e2) {
    this.top.children.push(e2);
  }
  openNode(e2) {
    const n3 = s({ scope: e2 });
    this.add(n3), this.stack.push(n3);
  }
  closeNode() {
    if (this.stack.length > 1) return this.stack.pop();
  }
  closeAllNodes() {
    for (; this.closeNode(); ) ;
  }
  toJSON() {
    return JSON.stringify(this.rootNode, null, 4);
  }
  walk(e2) {
    return this.constructor._walk(e2, this.rootNode);
  }
  static _walk(e2, n3) {
    return "string" == typeof n3 ? e2.addText(n3) : n3.children && (e2.openNode(n3), n3.children.forEach((n4) => this._walk(e2, n4)), e2.closeNode(n3)), e2;
  }
  static _collapse(e2) {
    "string" != typeof e2 && e2.children && (e2.children.every((e3) => "string" == typeof e3) ? e2.children = [e2.children.join("")] : e2.children.forEach((e3) => {
      _o._collapse(e3);
    }));
  }
};
var c = class extends o {
  constructor(e2) {
    super(), this.options = e2;
  }
  addText(e2) {
    "" !== e2 && this.add(e2);
  }
  startScope(e2) {
    this.openNode(e2);
  }
  endScope() {
    this.closeNode();
  }
  __addSublanguage(e2, n3) {
    const t2 = e2.root;
    n3 && (t2.scope = "language:" + n3), this.add(t2);
  }
  toHTML() {
    return new r(this, this.options).value();
  }
  finalize() {
    return this.closeAllNodes(), true;
  }
};
function l3(e2) {
  return e2 ? "string" == typeof e2 ? e2 : e2.source : null;
}
function d(e2) {
  return b("(?=", e2, ")");
}
function g2(e2) {
  return b("(?:", e2, ")*");
}
function u(e2) {
  return b("(?:", e2, ")?");
}
function b(...e2) {
  return e2.map((e3) => l3(e3)).join("");
}
function m(...e2) {
  const n3 = ((e3) => {
    const n4 = e3[e3.length - 1];
    return "object" == typeof n4 && n4.constructor === Object ? (e3.splice(e3.length - 1, 1), n4) : {};
  })(e2);
  return "(" + (n3.capture ? "" : "?:") + e2.map((e3) => l3(e3)).join("|") + ")";
}
function p(e2) {
  return RegExp(e2.toString() + "|").exec("").length - 1;
}
var _2 = RegExp(m(/\[(?:[^\\\]]|\\.)*\]/, /\(\?<(?![=!])[^>]+>/, /\(\?'[^']+'/, /\(\??/, /\\([1-9][0-9]*)/, /\\./));
function h(e2, { joinWith: n3 }) {
  let t2 = 0;
  return e2.map((e3) => {
    t2 += 1;
    const n4 = t2;
    let a2 = l3(e3), i2 = "";
    for (; a2.length > 0; ) {
      const e4 = _2.exec(a2);
      if (!e4) {
        i2 += a2;
        break;
      }
      i2 += a2.substring(0, e4.index), a2 = a2.substring(e4.index + e4[0].length), "\\" === e4[0][0] && e4[1] ? i2 += "\\" + (Number(e4[1]) + n4) : (i2 += e4[0], ("(" === e4[0] || /^\(\?[<']/.test(e4[0])) && t2++);
    }
    return i2;
  }).map((e3) => `(${e3})`).join(n3);
}
var f = "[a-zA-Z]\\w*";
var E = "[a-zA-Z_]\\w*";
var y2 = "\\b\\d+(\\.\\d+)?";
var w2 = "(-?)(\\b0[xX][a-fA-F0-9]+|(\\b\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?)";
var v2 = "\\b(0b[01]+)";
var N2 = {
  begin: "\\\\[\\s\\S]",
  relevance: 0
};
var k = {
  scope: "string",
  begin: "'",
  end: "'",
  illegal: "\\n",
  contains: [N2]
};
var x2 = {
  scope: "string",
  begin: '"',
  end: '"',
  illegal: "\\n",
  contains: [N2]
};
var O2 = (e2, n3, t2 = {}) => {
  const i2 = a({
    scope: "comment",
    begin: e2,
    end: n3,
    contains: []
  }, t2);
  i2.contains.push({
    scope: "doctag",
    begin: "[ ]*(?=(TODO|FIXME|NOTE|BUG|OPTIMIZE|HACK|XXX):)",
    end: /(TODO|FIXME|NOTE|BUG|OPTIMIZE|HACK|XXX):/,
    excludeBegin: true,
    relevance: 0
  });
  const r2 = m("I", "a", "is", "so", "us", "to", "at", "if", "in", "it", "on", /[A-Za-z]+['](d|ve|re|ll|t|s|n)/, /[A-Za-z]+[-][a-z]+/, /[A-Za-z][a-z]{2,}/);
  return i2.contains.push({ begin: b(/[ ]+/, "(", r2, /[.]?[:]?([.][ ]|[ ])/, "){3}") }), i2;
};
var M2 = O2("//", "$");
var A2 = O2("/\\*", "\\*/");
var S2 = O2("#", "$");
var C2 = Object.freeze({
  __proto__: null,
  APOS_STRING_MODE: k,
  BACKSLASH_ESCAPE: N2,
  BINARY_NUMBER_MODE: {
    scope: "number",
    begin: v2,
    relevance: 0
  },
  BINARY_NUMBER_RE: v2,
  COMMENT: O2,
  C_BLOCK_COMMENT_MODE: A2,
  C_LINE_COMMENT_MODE: M2,
  C_NUMBER_MODE: {
    scope: "number",
    begin: w2,
    relevance: 0
  },
  C_NUMBER_RE: w2,
  END_SAME_AS_BEGIN: (e2) => Object.assign(e2, {
    "on:begin": (e3, n3) => {
      n3.data._beginMatch = e3[1];
    },
    "on:end": (e3, n3) => {
      n3.data._beginMatch !== e3[1] && n3.ignoreMatch();
    }
  }),
  HASH_COMMENT_MODE: S2,
  IDENT_RE: f,
  MATCH_NOTHING_RE: /\b\B/,
  METHOD_GUARD: { begin: "\\.\\s*" + E, relevance: 0 },
  NUMBER_MODE: { scope: "number", begin: y2, relevance: 0 },
  NUMBER_RE: y2,
  PHRASAL_WORDS_MODE: {
    begin: /\b(a|an|the|are|I'm|isn't|don't|doesn't|won't|but|just|should|pretty|simply|enough|gonna|going|wtf|so|such|will|you|your|they|like|more)\b/
  },
  QUOTE_STRING_MODE: x2,
  REGEXP_MODE: {
    scope: "regexp",
    begin: /\/(?=[^/\n]*\/)/,
    end: /\/[gimuy]*/,
    contains: [N2, { begin: /\[/, end: /\]/, relevance: 0, contains: [N2] }]
  },
  RE_STARTERS_RE: "!|!=|!==|%|%=|&|&&|&=|\\*|\\*=|\\+|\\+=|,|-|-=|/=|/|:|;|<<|<<=|<=|<|===|==|=|>>>=|>>=|>=|>>>|>>|>|\\?|\\[|\\{|\\(|\\^|\\^=|\\||\\|=|\\|\\||~",
  SHEBANG: (e2 = {}) => {
    const n3 = /^#![ ]*\//;
    return e2.binary && (e2.begin = b(n3, /.*\b/, e2.binary, /\b.*/)), a({
      scope: "meta",
      begin: n3,
      end: /$/,
      relevance: 0,
      "on:begin": (e3, n4) => {
        0 !== e3.index && n4.ignoreMatch();
      }
    }, e2);
  },
  TITLE_MODE: { scope: "title", begin: f, relevance: 0 },
  UNDERSCORE_IDENT_RE: E,
  UNDERSCORE_TITLE_MODE: { scope: "title", begin: E, relevance: 0 }
});
function T(e2, n3) {
  "." === e2.input[e2.index - 1] && n3.ignoreMatch();
}
function R(e2, n3) {
  void 0 !== e2.className && (e2.scope = e2.className, delete e2.className);
}
function D2(e2, n3) {
  n3 && e2.beginKeywords && (e2.begin = "\\b(" + e2.beginKeywords.split(" ").join("|") + ")(?!\\.)(?=\\b|\\s)", e2.__beforeBegin = T, e2.keywords = e2.keywords || e2.beginKeywords, delete e2.beginKeywords, void 0 === e2.relevance && (e2.relevance = 0));
}
function I2(e2, n3) {
  Array.isArray(e2.illegal) && (e2.illegal = m(...e2.illegal));
}
function L2(e2, n3) {
  if (e2.match) {
    if (e2.begin || e2.end) throw Error("begin & end are not supported with match");
    e2.begin = e2.match, delete e2.match;
  }
}
function B(e2, n3) {
  void 0 === e2.relevance && (e2.relevance = 1);
}
var F2 = (e2, n3) => {
  if (!e2.beforeMatch) return;
  if (e2.starts) throw Error("beforeMatch cannot be used with starts");
  const t2 = Object.assign({}, e2);
  Object.keys(e2).forEach((n4) => {
    delete e2[n4];
  }), e2.keywords = t2.keywords, e2.begin = b(t2.beforeMatch, d(t2.begin)), e2.starts = {
    relevance: 0,
    contains: [Object.assign(t2, { endsParent: true })]
  }, e2.relevance = 0, delete t2.beforeMatch;
};
var $ = ["of", "and", "for", "in", "not", "or", "if", "then", "parent", "list", "value"];
function z2(e2, n3, t2 = "keyword") {
  const a2 = /* @__PURE__ */ Object.create(null);
  return "string" == typeof e2 ? i2(t2, e2.split(" ")) : Array.isArray(e2) ? i2(t2, e2) : Object.keys(e2).forEach((t3) => {
    Object.assign(a2, z2(e2[t3], n3, t3));
  }), a2;
  function i2(e3, t3) {
    n3 && (t3 = t3.map((e4) => e4.toLowerCase())), t3.forEach((n4) => {
      const t4 = n4.split("|");
      a2[t4[0]] = [e3, U(t4[0], t4[1])];
    });
  }
}
function U(e2, n3) {
  return n3 ? Number(n3) : ((e3) => $.includes(e3.toLowerCase()))(e2) ? 0 : 1;
}
var j = {};
var P2 = (e2) => {
  console.error(e2);
};
var K = (e2, ...n3) => {
  console.log("WARN: " + e2, ...n3);
};
var H = (e2, n3) => {
  j[`${e2}/${n3}`] || (console.log(`Deprecated as of ${e2}. ${n3}`), j[`${e2}/${n3}`] = true);
};
var q2 = Error();
function G2(e2, n3, { key: t2 }) {
  let a2 = 0;
  const i2 = e2[t2], r2 = {}, s2 = {};
  for (let e3 = 1; e3 <= n3.length; e3++) s2[e3 + a2] = i2[e3], r2[e3 + a2] = true, a2 += p(n3[e3 - 1]);
  e2[t2] = s2, e2[t2]._emit = r2, e2[t2]._multi = true;
}
function Z(e2) {
  ((e3) => {
    e3.scope && "object" == typeof e3.scope && null !== e3.scope && (e3.beginScope = e3.scope, delete e3.scope);
  })(e2), "string" == typeof e2.beginScope && (e2.beginScope = {
    _wrap: e2.beginScope
  }), "string" == typeof e2.endScope && (e2.endScope = {
    _wrap: e2.endScope
  }), ((e3) => {
    if (Array.isArray(e3.begin)) {
      if (e3.skip || e3.excludeBegin || e3.returnBegin) throw P2("skip, excludeBegin, returnBegin not compatible with beginScope: {}"), q2;
      if ("object" != typeof e3.beginScope || null === e3.beginScope) throw P2("beginScope must be object"), q2;
      G2(e3, e3.begin, { key: "beginScope" }), e3.begin = h(e3.begin, { joinWith: "" });
    }
  })(e2), ((e3) => {
    if (Array.isArray(e3.end)) {
      if (e3.skip || e3.excludeEnd || e3.returnEnd) throw P2("skip, excludeEnd, returnEnd not compatible with endScope: {}"), q2;
      if ("object" != typeof e3.endScope || null === e3.endScope) throw P2("endScope must be object"), q2;
      G2(e3, e3.end, { key: "endScope" }), e3.end = h(e3.end, { joinWith: "" });
    }
  })(e2);
}
function W2(e2) {
  function n3(n4, t3) {
    return RegExp(l3(n4), "m" + (e2.case_insensitive ? "i" : "") + (e2.unicodeRegex ? "u" : "") + (t3 ? "g" : ""));
  }
  class t2 {
    constructor() {
      this.matchIndexes = {}, this.regexes = [], this.matchAt = 1, this.position = 0;
    }
    addRule(e3, n4) {
      n4.position = this.position++, this.matchIndexes[this.matchAt] = n4, this.regexes.push([n4, e3]), this.matchAt += p(e3) + 1;
    }
    compile() {
      0 === this.regexes.length && (this.exec = () => null);
      const e3 = this.regexes.map((e4) => e4[1]);
      this.matcherRe = n3(h(e3, {
        joinWith: "|"
      }), true), this.lastIndex = 0;
    }
    exec(e3) {
      this.matcherRe.lastIndex = this.lastIndex;
      const n4 = this.matcherRe.exec(e3);
      if (!n4) return null;
      const t3 = n4.findIndex((e4, n5) => n5 > 0 && void 0 !== e4), a2 = this.matchIndexes[t3];
      return n4.splice(0, t3), Object.assign(n4, a2);
    }
  }
  class i2 {
    constructor() {
      this.rules = [], this.multiRegexes = [], this.count = 0, this.lastIndex = 0, this.regexIndex = 0;
    }
    getMatcher(e3) {
      if (this.multiRegexes[e3]) return this.multiRegexes[e3];
      const n4 = new t2();
      return this.rules.slice(e3).forEach(([e4, t3]) => n4.addRule(e4, t3)), n4.compile(), this.multiRegexes[e3] = n4, n4;
    }
    resumingScanAtSamePosition() {
      return 0 !== this.regexIndex;
    }
    considerAll() {
      this.regexIndex = 0;
    }
    addRule(e3, n4) {
      this.rules.push([e3, n4]), "begin" === n4.type && this.count++;
    }
    exec(e3) {
      const n4 = this.getMatcher(this.regexIndex);
      n4.lastIndex = this.lastIndex;
      let t3 = n4.exec(e3);
      if (this.resumingScanAtSamePosition()) if (t3 && t3.index === this.lastIndex) ;
      else {
        const n5 = this.getMatcher(0);
        n5.lastIndex = this.lastIndex + 1, t3 = n5.exec(e3);
      }
      return t3 && (this.regexIndex += t3.position + 1, this.regexIndex === this.count && this.considerAll()), t3;
    }
  }
  if (e2.compilerExtensions || (e2.compilerExtensions = []), e2.contains && e2.contains.includes("self")) throw Error("ERR: contains `self` is not supported at the top-level of a language.  See documentation.");
  return e2.classNameAliases = a(e2.classNameAliases || {}), (function t3(r2, s2) {
    const o2 = r2;
    if (r2.isCompiled) return o2;
    [R, L2, Z, F2].forEach((e3) => e3(r2, s2)), e2.compilerExtensions.forEach((e3) => e3(r2, s2)), r2.__beforeBegin = null, [D2, I2, B].forEach((e3) => e3(r2, s2)), r2.isCompiled = true;
    let c2 = null;
    return "object" == typeof r2.keywords && r2.keywords.$pattern && (r2.keywords = Object.assign({}, r2.keywords), c2 = r2.keywords.$pattern, delete r2.keywords.$pattern), c2 = c2 || /\w+/, r2.keywords && (r2.keywords = z2(r2.keywords, e2.case_insensitive)), o2.keywordPatternRe = n3(c2, true), s2 && (r2.begin || (r2.begin = /\B|\b/), o2.beginRe = n3(o2.begin), r2.end || r2.endsWithParent || (r2.end = /\B|\b/), r2.end && (o2.endRe = n3(o2.end)), o2.terminatorEnd = l3(o2.end) || "", r2.endsWithParent && s2.terminatorEnd && (o2.terminatorEnd += (r2.end ? "|" : "") + s2.terminatorEnd)), r2.illegal && (o2.illegalRe = n3(r2.illegal)), r2.contains || (r2.contains = []), r2.contains = [].concat(...r2.contains.map((e3) => ((e4) => (e4.variants && !e4.cachedVariants && (e4.cachedVariants = e4.variants.map((n4) => a(e4, {
      variants: null
    }, n4))), e4.cachedVariants ? e4.cachedVariants : Q2(e4) ? a(e4, {
      starts: e4.starts ? a(e4.starts) : null
    }) : Object.isFrozen(e4) ? a(e4) : e4))("self" === e3 ? r2 : e3))), r2.contains.forEach((e3) => {
      t3(e3, o2);
    }), r2.starts && t3(r2.starts, s2), o2.matcher = ((e3) => {
      const n4 = new i2();
      return e3.contains.forEach((e4) => n4.addRule(e4.begin, {
        rule: e4,
        type: "begin"
      })), e3.terminatorEnd && n4.addRule(e3.terminatorEnd, {
        type: "end"
      }), e3.illegal && n4.addRule(e3.illegal, { type: "illegal" }), n4;
    })(o2), o2;
  })(e2);
}
function Q2(e2) {
  return !!e2 && (e2.endsWithParent || Q2(e2.starts));
}
var X = class extends Error {
  constructor(e2, n3) {
    super(e2), this.name = "HTMLInjectionError", this.html = n3;
  }
};
var V2 = t;
var J2 = a;
var Y2 = /* @__PURE__ */ Symbol("nomatch");
var ee2 = (t2) => {
  const a2 = /* @__PURE__ */ Object.create(null), i2 = /* @__PURE__ */ Object.create(null), r2 = [];
  let s2 = true;
  const o2 = "Could not find the language '{}', did you forget to load/include a language module?", l4 = {
    disableAutodetect: true,
    name: "Plain text",
    contains: []
  };
  let p2 = {
    ignoreUnescapedHTML: false,
    throwUnescapedHTML: false,
    noHighlightRe: /^(no-?highlight)$/i,
    languageDetectRe: /\blang(?:uage)?-([\w-]+)\b/i,
    classPrefix: "hljs-",
    cssSelector: "pre code",
    languages: null,
    __emitter: c
  };
  function _3(e2) {
    return p2.noHighlightRe.test(e2);
  }
  function h2(e2, n3, t3) {
    let a3 = "", i3 = "";
    "object" == typeof n3 ? (a3 = e2, t3 = n3.ignoreIllegals, i3 = n3.language) : (H("10.7.0", "highlight(lang, code, ...args) has been deprecated."), H("10.7.0", "Please use highlight(code, options) instead.\nhttps://github.com/highlightjs/highlight.js/issues/2277"), i3 = e2, a3 = n3), void 0 === t3 && (t3 = true);
    const r3 = { code: a3, language: i3 };
    O3("before:highlight", r3);
    const s3 = r3.result ? r3.result : f2(r3.language, r3.code, t3);
    return s3.code = r3.code, O3("after:highlight", s3), s3;
  }
  function f2(e2, t3, i3, r3) {
    const c2 = /* @__PURE__ */ Object.create(null);
    function l5(e3, n3) {
      return e3.keywords[n3];
    }
    function d2() {
      if (!M3.keywords) return void S3.addText(C3);
      let e3 = 0;
      M3.keywordPatternRe.lastIndex = 0;
      let n3 = M3.keywordPatternRe.exec(C3), t4 = "";
      for (; n3; ) {
        t4 += C3.substring(e3, n3.index);
        const a3 = k3.case_insensitive ? n3[0].toLowerCase() : n3[0], i4 = l5(M3, a3);
        if (i4) {
          const [e4, r4] = i4;
          if (S3.addText(t4), t4 = "", c2[a3] = (c2[a3] || 0) + 1, c2[a3] <= 7 && (T2 += r4), e4.startsWith("_")) t4 += n3[0];
          else {
            const t5 = k3.classNameAliases[e4] || e4;
            u2(n3[0], t5);
          }
        } else t4 += n3[0];
        e3 = M3.keywordPatternRe.lastIndex, n3 = M3.keywordPatternRe.exec(C3);
      }
      t4 += C3.substring(e3), S3.addText(t4);
    }
    function g3() {
      null != M3.subLanguage ? (() => {
        if ("" === C3) return;
        let e3 = null;
        if ("string" == typeof M3.subLanguage) {
          if (!a2[M3.subLanguage]) return void S3.addText(C3);
          e3 = f2(M3.subLanguage, C3, true, A3[M3.subLanguage]), A3[M3.subLanguage] = e3._top;
        } else e3 = E2(C3, M3.subLanguage.length ? M3.subLanguage : null);
        M3.relevance > 0 && (T2 += e3.relevance), S3.__addSublanguage(e3._emitter, e3.language);
      })() : d2(), C3 = "";
    }
    function u2(e3, n3) {
      "" !== e3 && (S3.startScope(n3), S3.addText(e3), S3.endScope());
    }
    function b2(e3, n3) {
      let t4 = 1;
      const a3 = n3.length - 1;
      for (; t4 <= a3; ) {
        if (!e3._emit[t4]) {
          t4++;
          continue;
        }
        const a4 = k3.classNameAliases[e3[t4]] || e3[t4], i4 = n3[t4];
        a4 ? u2(i4, a4) : (C3 = i4, d2(), C3 = ""), t4++;
      }
    }
    function m2(e3, n3) {
      return e3.scope && "string" == typeof e3.scope && S3.openNode(k3.classNameAliases[e3.scope] || e3.scope), e3.beginScope && (e3.beginScope._wrap ? (u2(C3, k3.classNameAliases[e3.beginScope._wrap] || e3.beginScope._wrap), C3 = "") : e3.beginScope._multi && (b2(e3.beginScope, n3), C3 = "")), M3 = Object.create(e3, { parent: {
        value: M3
      } }), M3;
    }
    function _4(e3, t4, a3) {
      let i4 = ((e4, n3) => {
        const t5 = e4 && e4.exec(n3);
        return t5 && 0 === t5.index;
      })(e3.endRe, a3);
      if (i4) {
        if (e3["on:end"]) {
          const a4 = new n(e3);
          e3["on:end"](t4, a4), a4.isMatchIgnored && (i4 = false);
        }
        if (i4) {
          for (; e3.endsParent && e3.parent; ) e3 = e3.parent;
          return e3;
        }
      }
      if (e3.endsWithParent) return _4(e3.parent, t4, a3);
    }
    function h3(e3) {
      return 0 === M3.matcher.regexIndex ? (C3 += e3[0], 1) : (I3 = true, 0);
    }
    function y4(e3) {
      const n3 = e3[0], a3 = t3.substring(e3.index), i4 = _4(M3, e3, a3);
      if (!i4) return Y2;
      const r4 = M3;
      M3.endScope && M3.endScope._wrap ? (g3(), u2(n3, M3.endScope._wrap)) : M3.endScope && M3.endScope._multi ? (g3(), b2(M3.endScope, e3)) : r4.skip ? C3 += n3 : (r4.returnEnd || r4.excludeEnd || (C3 += n3), g3(), r4.excludeEnd && (C3 = n3));
      do {
        M3.scope && S3.closeNode(), M3.skip || M3.subLanguage || (T2 += M3.relevance), M3 = M3.parent;
      } while (M3 !== i4.parent);
      return i4.starts && m2(i4.starts, e3), r4.returnEnd ? 0 : n3.length;
    }
    let w4 = {};
    function v4(a3, r4) {
      const o3 = r4 && r4[0];
      if (C3 += a3, null == o3) return g3(), 0;
      if ("begin" === w4.type && "end" === r4.type && w4.index === r4.index && "" === o3) {
        if (C3 += t3.slice(r4.index, r4.index + 1), !s2) {
          const n3 = Error(`0 width match regex (${e2})`);
          throw n3.languageName = e2, n3.badRule = w4.rule, n3;
        }
        return 1;
      }
      if (w4 = r4, "begin" === r4.type) return ((e3) => {
        const t4 = e3[0], a4 = e3.rule, i4 = new n(a4), r5 = [a4.__beforeBegin, a4["on:begin"]];
        for (const n3 of r5) if (n3 && (n3(e3, i4), i4.isMatchIgnored)) return h3(t4);
        return a4.skip ? C3 += t4 : (a4.excludeBegin && (C3 += t4), g3(), a4.returnBegin || a4.excludeBegin || (C3 = t4)), m2(a4, e3), a4.returnBegin ? 0 : t4.length;
      })(r4);
      if ("illegal" === r4.type && !i3) {
        const e3 = Error('Illegal lexeme "' + o3 + '" for mode "' + (M3.scope || "<unnamed>") + '"');
        throw e3.mode = M3, e3;
      }
      if ("end" === r4.type) {
        const e3 = y4(r4);
        if (e3 !== Y2) return e3;
      }
      if ("illegal" === r4.type && "" === o3) return r4.index === t3.length || (C3 += "\n"), 1;
      if (D3 > 1e5 && D3 > 3 * r4.index) throw Error("potential infinite loop, way more iterations than matches");
      return C3 += o3, o3.length;
    }
    const k3 = N3(e2);
    if (!k3) throw P2(o2.replace("{}", e2)), Error('Unknown language: "' + e2 + '"');
    const x4 = W2(k3);
    let O4 = "", M3 = r3 || x4;
    const A3 = {}, S3 = new p2.__emitter(p2);
    (() => {
      const e3 = [];
      for (let n3 = M3; n3 !== k3; n3 = n3.parent) n3.scope && e3.unshift(n3.scope);
      e3.forEach((e4) => S3.openNode(e4));
    })();
    let C3 = "", T2 = 0, R2 = 0, D3 = 0, I3 = false;
    try {
      if (k3.__emitTokens) k3.__emitTokens(t3, S3);
      else {
        for (M3.matcher.considerAll(); ; ) {
          D3++, I3 ? I3 = false : M3.matcher.considerAll(), M3.matcher.lastIndex = R2;
          const e3 = M3.matcher.exec(t3);
          if (!e3) break;
          const n3 = v4(t3.substring(R2, e3.index), e3);
          R2 = e3.index + n3;
        }
        v4(t3.substring(R2));
      }
      return S3.finalize(), O4 = S3.toHTML(), {
        language: e2,
        value: O4,
        relevance: T2,
        illegal: false,
        _emitter: S3,
        _top: M3
      };
    } catch (n3) {
      if (n3.message && n3.message.includes("Illegal")) return {
        language: e2,
        value: V2(t3),
        illegal: true,
        relevance: 0,
        _illegalBy: {
          message: n3.message,
          index: R2,
          context: t3.slice(R2 - 100, R2 + 100),
          mode: n3.mode,
          resultSoFar: O4
        },
        _emitter: S3
      };
      if (s2) return {
        language: e2,
        value: V2(t3),
        illegal: false,
        relevance: 0,
        errorRaised: n3,
        _emitter: S3,
        _top: M3
      };
      throw n3;
    }
  }
  function E2(e2, n3) {
    n3 = n3 || p2.languages || Object.keys(a2);
    const t3 = ((e3) => {
      const n4 = { value: V2(e3), illegal: false, relevance: 0, _top: l4, _emitter: new p2.__emitter(p2) };
      return n4._emitter.addText(e3), n4;
    })(e2), i3 = n3.filter(N3).filter(x3).map((n4) => f2(n4, e2, false));
    i3.unshift(t3);
    const r3 = i3.sort((e3, n4) => {
      if (e3.relevance !== n4.relevance) return n4.relevance - e3.relevance;
      if (e3.language && n4.language) {
        if (N3(e3.language).supersetOf === n4.language) return 1;
        if (N3(n4.language).supersetOf === e3.language) return -1;
      }
      return 0;
    }), [s3, o3] = r3, c2 = s3;
    return c2.secondBest = o3, c2;
  }
  function y3(e2) {
    let n3 = null;
    const t3 = ((e3) => {
      let n4 = e3.className + " ";
      n4 += e3.parentNode ? e3.parentNode.className : "";
      const t4 = p2.languageDetectRe.exec(n4);
      if (t4) {
        const n5 = N3(t4[1]);
        return n5 || (K(o2.replace("{}", t4[1])), K("Falling back to no-highlight mode for this block.", e3)), n5 ? t4[1] : "no-highlight";
      }
      return n4.split(/\s+/).find((e4) => _3(e4) || N3(e4));
    })(e2);
    if (_3(t3)) return;
    if (O3("before:highlightElement", {
      el: e2,
      language: t3
    }), e2.dataset.highlighted) return void console.log("Element previously highlighted. To highlight again, first unset `dataset.highlighted`.", e2);
    if (e2.children.length > 0 && (p2.ignoreUnescapedHTML || (console.warn("One of your code blocks includes unescaped HTML. This is a potentially serious security risk."), console.warn("https://github.com/highlightjs/highlight.js/wiki/security"), console.warn("The element with unescaped HTML:"), console.warn(e2)), p2.throwUnescapedHTML)) throw new X("One of your code blocks includes unescaped HTML.", e2.innerHTML);
    n3 = e2;
    const a3 = n3.textContent, r3 = t3 ? h2(a3, { language: t3, ignoreIllegals: true }) : E2(a3);
    e2.innerHTML = r3.value, e2.dataset.highlighted = "yes", ((e3, n4, t4) => {
      const a4 = n4 && i2[n4] || t4;
      e3.classList.add("hljs"), e3.classList.add("language-" + a4);
    })(e2, t3, r3.language), e2.result = {
      language: r3.language,
      re: r3.relevance,
      relevance: r3.relevance
    }, r3.secondBest && (e2.secondBest = {
      language: r3.secondBest.language,
      relevance: r3.secondBest.relevance
    }), O3("after:highlightElement", { el: e2, result: r3, text: a3 });
  }
  let w3 = false;
  function v3() {
    if ("loading" === document.readyState) return w3 || window.addEventListener("DOMContentLoaded", () => {
      v3();
    }, false), void (w3 = true);
    document.querySelectorAll(p2.cssSelector).forEach(y3);
  }
  function N3(e2) {
    return e2 = (e2 || "").toLowerCase(), a2[e2] || a2[i2[e2]];
  }
  function k2(e2, { languageName: n3 }) {
    "string" == typeof e2 && (e2 = [e2]), e2.forEach((e3) => {
      i2[e3.toLowerCase()] = n3;
    });
  }
  function x3(e2) {
    const n3 = N3(e2);
    return n3 && !n3.disableAutodetect;
  }
  function O3(e2, n3) {
    const t3 = e2;
    r2.forEach((e3) => {
      e3[t3] && e3[t3](n3);
    });
  }
  Object.assign(t2, {
    highlight: h2,
    highlightAuto: E2,
    highlightAll: v3,
    highlightElement: y3,
    highlightBlock: (e2) => (H("10.7.0", "highlightBlock will be removed entirely in v12.0"), H("10.7.0", "Please use highlightElement now."), y3(e2)),
    configure: (e2) => {
      p2 = J2(p2, e2);
    },
    initHighlighting: () => {
      v3(), H("10.6.0", "initHighlighting() deprecated.  Use highlightAll() now.");
    },
    initHighlightingOnLoad: () => {
      v3(), H("10.6.0", "initHighlightingOnLoad() deprecated.  Use highlightAll() now.");
    },
    registerLanguage: (e2, n3) => {
      let i3 = null;
      try {
        i3 = n3(t2);
      } catch (n4) {
        if (P2("Language definition for '{}' could not be registered.".replace("{}", e2)), !s2) throw n4;
        P2(n4), i3 = l4;
      }
      i3.name || (i3.name = e2), a2[e2] = i3, i3.rawDefinition = n3.bind(null, t2), i3.aliases && k2(i3.aliases, {
        languageName: e2
      });
    },
    unregisterLanguage: (e2) => {
      delete a2[e2];
      for (const n3 of Object.keys(i2)) i2[n3] === e2 && delete i2[n3];
    },
    listLanguages: () => Object.keys(a2),
    getLanguage: N3,
    registerAliases: k2,
    autoDetection: x3,
    inherit: J2,
    addPlugin: (e2) => {
      ((e3) => {
        e3["before:highlightBlock"] && !e3["before:highlightElement"] && (e3["before:highlightElement"] = (n3) => {
          e3["before:highlightBlock"](Object.assign({ block: n3.el }, n3));
        }), e3["after:highlightBlock"] && !e3["after:highlightElement"] && (e3["after:highlightElement"] = (n3) => {
          e3["after:highlightBlock"](Object.assign({ block: n3.el }, n3));
        });
      })(e2), r2.push(e2);
    },
    removePlugin: (e2) => {
      const n3 = r2.indexOf(e2);
      -1 !== n3 && r2.splice(n3, 1);
    }
  }), t2.debugMode = () => {
    s2 = false;
  }, t2.safeMode = () => {
    s2 = true;
  }, t2.versionString = "11.12.0", t2.regex = {
    concat: b,
    lookahead: d,
    either: m,
    optional: u,
    anyNumberOfTimes: g2
  };
  for (const n3 in C2) "object" == typeof C2[n3] && e(C2[n3]);
  return Object.assign(t2, C2), t2;
};
var ne2 = ee2({});
ne2.newInstance = () => ee2({});
var te2 = "[A-Za-z$_][0-9A-Za-z$_]*";
var ae2 = {
  scope: "number",
  match: "([-+]?)(\\b0[xX][a-fA-F0-9]+|(\\b\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?)|NaN|[-+]?Infinity",
  relevance: 0
};
var ie2 = ["as", "in", "of", "if", "for", "while", "finally", "var", "new", "function", "do", "return", "void", "else", "break", "catch", "instanceof", "with", "throw", "case", "default", "try", "switch", "continue", "typeof", "delete", "let", "yield", "const", "class", "debugger", "async", "await", "static", "import", "from", "export", "extends", "using"];
var re = ["true", "false", "null", "undefined", "NaN", "Infinity"];
var se = ["Object", "Function", "Boolean", "Symbol", "Math", "Date", "Number", "BigInt", "String", "RegExp", "Array", "Float32Array", "Float64Array", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Int32Array", "Uint16Array", "Uint32Array", "BigInt64Array", "BigUint64Array", "Set", "Map", "WeakSet", "WeakMap", "ArrayBuffer", "SharedArrayBuffer", "Atomics", "DataView", "JSON", "Promise", "Generator", "GeneratorFunction", "AsyncFunction", "Reflect", "Proxy", "Intl", "WebAssembly"];
var oe2 = ["Error", "EvalError", "InternalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError"];
var ce2 = ["setInterval", "setTimeout", "clearInterval", "clearTimeout", "require", "exports", "eval", "isFinite", "isNaN", "parseFloat", "parseInt", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape"];
var le = ["arguments", "this", "super", "console", "window", "document", "localStorage", "sessionStorage", "module", "self", "global"];
var de2 = [].concat(ce2, se, oe2);
function ge2(e2) {
  const n3 = e2.regex, t2 = te2, a2 = {
    begin: /<[A-Za-z0-9\\._:-]+/,
    end: /\/[A-Za-z0-9\\._:-]+>|\/>/,
    isTrulyOpeningTag: (e3, n4) => {
      const t3 = e3[0].length + e3.index, a3 = e3.input[t3];
      if ("<" === a3 || "," === a3) return void n4.ignoreMatch();
      let i3;
      ">" === a3 && (((e4, { after: n5 }) => {
        const t4 = "</" + e4[0].slice(1);
        return -1 !== e4.input.indexOf(t4, n5);
      })(e3, { after: t3 }) || n4.ignoreMatch());
      const r3 = e3.input.substring(t3);
      ((i3 = r3.match(/^\s*=/)) || (i3 = r3.match(/^\s+extends\s+/)) && 0 === i3.index) && n4.ignoreMatch();
    }
  }, i2 = {
    $pattern: te2,
    keyword: ie2,
    literal: re,
    built_in: de2,
    "variable.language": le
  }, r2 = "[0-9](_?[0-9])*", s2 = `\\.(${r2})`, o2 = "0|[1-9](_?[0-9])*|0[0-7]*[89][0-9]*", c2 = {
    className: "number",
    variants: [{
      begin: `(\\b(${o2})((${s2})|\\.)?|(${s2}))[eE][+-]?(${r2})\\b`
    }, {
      begin: `\\b(${o2})\\b((${s2})\\b|\\.)?|(${s2})\\b`
    }, {
      begin: "\\b(0|[1-9](_?[0-9])*)n\\b"
    }, {
      begin: "\\b0[xX][0-9a-fA-F](_?[0-9a-fA-F])*n?\\b"
    }, {
      begin: "\\b0[bB][0-1](_?[0-1])*n?\\b"
    }, { begin: "\\b0[oO][0-7](_?[0-7])*n?\\b" }, {
      begin: "\\b0[0-7]+n?\\b"
    }],
    relevance: 0
  }, l4 = {
    className: "subst",
    begin: "\\$\\{",
    end: "\\}",
    keywords: i2,
    contains: []
  }, d2 = { begin: ".?html`", end: "", starts: {
    end: "`",
    returnEnd: false,
    contains: [e2.BACKSLASH_ESCAPE, l4],
    subLanguage: "xml"
  } }, g3 = {
    begin: ".?css`",
    end: "",
    starts: {
      end: "`",
      returnEnd: false,
      contains: [e2.BACKSLASH_ESCAPE, l4],
      subLanguage: "css"
    }
  }, u2 = {
    begin: ".?gql`",
    end: "",
    starts: {
      end: "`",
      returnEnd: false,
      contains: [e2.BACKSLASH_ESCAPE, l4],
      subLanguage: "graphql"
    }
  }, b2 = {
    className: "string",
    begin: "`",
    end: "`",
    contains: [e2.BACKSLASH_ESCAPE, l4]
  }, m2 = {
    className: "comment",
    variants: [e2.COMMENT(/\/\*\*(?!\/)/, "\\*/", {
      relevance: 0,
      contains: [{
        begin: "(?=@[A-Za-z]+)",
        relevance: 0,
        contains: [{
          className: "doctag",
          begin: "@[A-Za-z]+"
        }, {
          className: "type",
          begin: "\\{",
          end: "\\}",
          excludeEnd: true,
          excludeBegin: true,
          relevance: 0
        }, {
          className: "variable",
          begin: t2 + "(?=\\s*(-)|$)",
          endsParent: true,
          relevance: 0
        }, { begin: /(?=[^\n])\s/, relevance: 0 }]
      }]
    }), e2.C_BLOCK_COMMENT_MODE, e2.C_LINE_COMMENT_MODE]
  }, p2 = [e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, d2, g3, u2, b2, { match: /\$\d+/ }, c2];
  l4.contains = p2.concat({
    begin: /\{/,
    end: /\}/,
    keywords: i2,
    contains: ["self"].concat(p2)
  });
  const _3 = [].concat(m2, l4.contains), h2 = _3.concat([{
    begin: /(\s*)\(/,
    end: /\)/,
    keywords: i2,
    contains: ["self"].concat(_3)
  }]), f2 = {
    className: "params",
    begin: /(\s*)\(/,
    end: /\)/,
    excludeBegin: true,
    excludeEnd: true,
    keywords: i2,
    contains: h2
  }, E2 = { variants: [{
    match: [/class/, /\s+/, t2, /\s+/, /extends/, /\s+/, n3.concat(t2, "(", n3.concat(/\./, t2), ")*")],
    scope: { 1: "keyword", 3: "title.class", 5: "keyword", 7: "title.class.inherited" }
  }, {
    match: [/class/, /\s+/, t2],
    scope: { 1: "keyword", 3: "title.class" }
  }] }, y3 = {
    relevance: 0,
    match: n3.either(/\bJSON/, /\b[A-Z][a-z]+([A-Z][a-z]*|\d)*/, /\b[A-Z]{2,}([A-Z][a-z]+|\d)+([A-Z][a-z]*)*/, /\b[A-Z]{2,}[a-z]+([A-Z][a-z]+|\d)*([A-Z][a-z]*)*/),
    className: "title.class",
    keywords: { _: [...se, ...oe2] }
  }, w3 = {
    variants: [{
      match: [/function/, /\s+/, t2, /(?=\s*\()/]
    }, { match: [/function/, /\s*(?=\()/] }],
    className: { 1: "keyword", 3: "title.function" },
    label: "func.def",
    contains: [f2],
    illegal: /%/
  }, v3 = {
    match: n3.concat(/\b/, (N3 = [...ce2, "super", "import", "await"].map((e3) => e3 + "\\s*\\("), n3.concat("(?!", N3.join("|"), ")")), t2, n3.lookahead(/\s*\(/)),
    className: "title.function",
    relevance: 0
  };
  var N3;
  const k2 = {
    begin: n3.concat(/\./, n3.lookahead(n3.concat(t2, /(?![0-9A-Za-z$_(])/))),
    end: t2,
    excludeBegin: true,
    keywords: "prototype",
    className: "property",
    relevance: 0
  }, x3 = {
    match: [/get|set/, /\s+/, t2, /(?=\()/],
    className: { 1: "keyword", 3: "title.function" },
    contains: [{ begin: /\(\)/ }, f2]
  }, O3 = "(\\([^()]*(\\([^()]*(\\([^()]*\\)[^()]*)*\\)[^()]*)*\\)|" + e2.UNDERSCORE_IDENT_RE + ")\\s*=>", M3 = {
    match: [/const|var|let/, /\s+/, t2, /\s*/, /=\s*/, /(async\s*)?/, n3.lookahead(O3)],
    keywords: "async",
    className: { 1: "keyword", 3: "title.function" },
    contains: [f2]
  };
  return {
    name: "JavaScript",
    aliases: ["js", "jsx", "mjs", "cjs"],
    keywords: i2,
    exports: {
      PARAMS_CONTAINS: h2,
      CLASS_REFERENCE: y3
    },
    illegal: /#(?![$_A-Za-z])/,
    contains: [e2.SHEBANG({ label: "shebang", binary: "node", relevance: 5 }), {
      label: "use_strict",
      className: "meta",
      relevance: 10,
      begin: /^\s*['"]use (strict|asm)['"]/
    }, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, d2, g3, u2, b2, m2, { match: /\$\d+/ }, c2, y3, {
      scope: "attr",
      match: t2 + n3.lookahead(":"),
      relevance: 0
    }, M3, {
      begin: "(" + e2.RE_STARTERS_RE + "|\\b(case|return|throw)\\b)\\s*",
      keywords: "return throw case",
      relevance: 0,
      contains: [m2, e2.REGEXP_MODE, {
        className: "function",
        begin: O3,
        returnBegin: true,
        end: "\\s*=>",
        contains: [{
          className: "params",
          variants: [{ begin: e2.UNDERSCORE_IDENT_RE, relevance: 0 }, {
            className: null,
            begin: /\(\s*\)/,
            skip: true
          }, {
            begin: /(\s*)\(/,
            end: /\)/,
            excludeBegin: true,
            excludeEnd: true,
            keywords: i2,
            contains: h2
          }]
        }]
      }, {
        begin: /,/,
        relevance: 0
      }, { match: /\s+/, relevance: 0 }, { variants: [{ begin: "<>", end: "</>" }, {
        match: /<[A-Za-z0-9\\._:-]+\s*\/>/
      }, {
        begin: a2.begin,
        "on:begin": a2.isTrulyOpeningTag,
        end: a2.end
      }], subLanguage: "xml", contains: [{
        begin: a2.begin,
        end: a2.end,
        skip: true,
        contains: ["self"]
      }] }]
    }, w3, {
      beginKeywords: "while if switch catch for"
    }, {
      begin: "\\b(?!function)" + e2.UNDERSCORE_IDENT_RE + "\\([^()]*(\\([^()]*(\\([^()]*\\)[^()]*)*\\)[^()]*)*\\)\\s*\\{",
      returnBegin: true,
      label: "func.def",
      contains: [f2, e2.inherit(e2.TITLE_MODE, {
        begin: t2,
        className: "title.function"
      })]
    }, { match: /\.\.\./, relevance: 0 }, k2, {
      match: "\\$" + t2,
      relevance: 0
    }, {
      match: [/\bconstructor(?=\s*\()/],
      className: { 1: "title.function" },
      contains: [f2]
    }, v3, {
      relevance: 0,
      match: /\b[A-Z][A-Z_0-9]+\b/,
      className: "variable.constant"
    }, E2, x3, { match: /\$[(.]/ }]
  };
}
var ue2 = (e2) => b(/\b/, e2, /\w$/.test(e2) ? /\b/ : /\B/);
var be2 = ["Protocol", "Type"].map(ue2);
var me2 = ["init", "self"].map(ue2);
var pe2 = ["Any", "Self"];
var _e2 = ["actor", "any", "associatedtype", "async", "await", /as\?/, /as!/, "as", "borrowing", "break", "case", "catch", "class", "consume", "consuming", "continue", "convenience", "copy", "default", "defer", "deinit", "didSet", "distributed", "do", "dynamic", "each", "else", "enum", "extension", "fallthrough", /fileprivate\(set\)/, "fileprivate", "final", "for", "func", "get", "guard", "if", "import", "indirect", "infix", /init\?/, /init!/, "inout", /internal\(set\)/, "internal", "in", "is", "isolated", "nonisolated", "lazy", "let", "macro", "mutating", "nonmutating", /open\(set\)/, "open", "operator", "optional", "override", "package", "postfix", "precedencegroup", "prefix", /private\(set\)/, "private", "protocol", /public\(set\)/, "public", "repeat", "required", "rethrows", "return", "set", "some", "static", "struct", "subscript", "super", "switch", "throws", "throw", /try\?/, /try!/, "try", "typealias", /unowned\(safe\)/, /unowned\(unsafe\)/, "unowned", "var", "weak", "where", "while", "willSet"];
var he2 = ["false", "nil", "true"];
var fe2 = ["assignment", "associativity", "higherThan", "left", "lowerThan", "none", "right"];
var Ee2 = ["#colorLiteral", "#column", "#dsohandle", "#else", "#elseif", "#endif", "#error", "#file", "#fileID", "#fileLiteral", "#filePath", "#function", "#if", "#imageLiteral", "#keyPath", "#line", "#selector", "#sourceLocation", "#warning"];
var ye2 = ["abs", "all", "any", "assert", "assertionFailure", "debugPrint", "dump", "fatalError", "getVaList", "isKnownUniquelyReferenced", "max", "min", "numericCast", "pointwiseMax", "pointwiseMin", "precondition", "preconditionFailure", "print", "readLine", "repeatElement", "sequence", "stride", "swap", "swift_unboxFromSwiftValueWithType", "transcode", "type", "unsafeBitCast", "unsafeDowncast", "withExtendedLifetime", "withUnsafeMutablePointer", "withUnsafePointer", "withVaList", "withoutActuallyEscaping", "zip"];
var we = m(/[/=\-+!*%<>&|^~?]/, /[\u00A1-\u00A7]/, /[\u00A9\u00AB]/, /[\u00AC\u00AE]/, /[\u00B0\u00B1]/, /[\u00B6\u00BB\u00BF\u00D7\u00F7]/, /[\u2016-\u2017]/, /[\u2020-\u2027]/, /[\u2030-\u203E]/, /[\u2041-\u2053]/, /[\u2055-\u205E]/, /[\u2190-\u23FF]/, /[\u2500-\u2775]/, /[\u2794-\u2BFF]/, /[\u2E00-\u2E7F]/, /[\u3001-\u3003]/, /[\u3008-\u3020]/, /[\u3030]/);
var ve2 = m(we, /[\u0300-\u036F]/, /[\u1DC0-\u1DFF]/, /[\u20D0-\u20FF]/, /[\uFE00-\uFE0F]/, /[\uFE20-\uFE2F]/);
var Ne2 = b(we, ve2, "*");
var ke2 = m(/[a-zA-Z_]/, /[\u00A8\u00AA\u00AD\u00AF\u00B2-\u00B5\u00B7-\u00BA]/, /[\u00BC-\u00BE\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u00FF]/, /[\u0100-\u02FF\u0370-\u167F\u1681-\u180D\u180F-\u1DBF]/, /[\u1E00-\u1FFF]/, /[\u200B-\u200D\u202A-\u202E\u203F-\u2040\u2054\u2060-\u206F]/, /[\u2070-\u20CF\u2100-\u218F\u2460-\u24FF\u2776-\u2793]/, /[\u2C00-\u2DFF\u2E80-\u2FFF]/, /[\u3004-\u3007\u3021-\u302F\u3031-\u303F\u3040-\uD7FF]/, /[\uF900-\uFD3D\uFD40-\uFDCF\uFDF0-\uFE1F\uFE30-\uFE44]/, /[\uFE47-\uFEFE\uFF00-\uFFFD]/);
var xe2 = m(ke2, /\d/, /[\u0300-\u036F\u1DC0-\u1DFF\u20D0-\u20FF\uFE20-\uFE2F]/);
var Oe2 = b(ke2, xe2, "*");
var Me2 = b(/[A-Z]/, xe2, "*");
var Ae2 = ["attached", "autoclosure", b(/convention\(/, m("swift", "block", "c"), /\)/), "discardableResult", "dynamicCallable", "dynamicMemberLookup", "escaping", "freestanding", "frozen", "GKInspectable", "IBAction", "IBDesignable", "IBInspectable", "IBOutlet", "IBSegueAction", "inlinable", "main", "nonobjc", "NSApplicationMain", "NSCopying", "NSManaged", b(/objc\(/, Oe2, /\)/), "objc", "objcMembers", "propertyWrapper", "requires_stored_property_inits", "resultBuilder", "Sendable", "testable", "UIApplicationMain", "unchecked", "unknown", "usableFromInline", "warn_unqualified_access"];
var Se2 = ["iOS", "iOSApplicationExtension", "macOS", "macOSApplicationExtension", "macCatalyst", "macCatalystApplicationExtension", "watchOS", "watchOSApplicationExtension", "tvOS", "tvOSApplicationExtension", "swift"];
var Ce2 = (e2) => ({
  IMPORTANT: { scope: "meta", begin: "!important" },
  BLOCK_COMMENT: e2.C_BLOCK_COMMENT_MODE,
  HEXCOLOR: {
    scope: "number",
    begin: /#(([0-9a-fA-F]{3,4})|(([0-9a-fA-F]{2}){3,4}))\b/
  },
  UNICODE_RANGE: {
    scope: "number",
    begin: /\b[Uu]\+[0-9A-Fa-f][0-9A-Fa-f?]{0,5}(-[0-9A-Fa-f][0-9A-Fa-f]{0,5})?/
  },
  FUNCTION_DISPATCH: { className: "built_in", begin: /[\w-]+(?=\()/ },
  ATTRIBUTE_SELECTOR_MODE: {
    scope: "selector-attr",
    begin: /\[/,
    end: /\]/,
    illegal: "$",
    contains: [e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE]
  },
  CSS_NUMBER_MODE: {
    scope: "number",
    begin: e2.NUMBER_RE + "(%|em|ex|ch|rem|vw|vh|vmin|vmax|cm|mm|in|pt|pc|px|deg|grad|rad|turn|s|ms|Hz|kHz|dpi|dpcm|dppx)?",
    relevance: 0
  },
  CSS_VARIABLE: { className: "attr", begin: /--[A-Za-z_][A-Za-z0-9_-]*/ }
});
var Te2 = ["a", "abbr", "address", "article", "aside", "audio", "b", "blockquote", "body", "button", "canvas", "caption", "cite", "code", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "html", "i", "iframe", "img", "input", "ins", "kbd", "label", "legend", "li", "main", "mark", "menu", "nav", "object", "ol", "optgroup", "option", "p", "picture", "q", "quote", "samp", "section", "select", "source", "span", "strong", "summary", "sup", "table", "tbody", "td", "textarea", "tfoot", "th", "thead", "time", "tr", "ul", "var", "video", "defs", "g", "marker", "mask", "pattern", "svg", "switch", "symbol", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix", "feDiffuseLighting", "feDisplacementMap", "feFlood", "feGaussianBlur", "feImage", "feMerge", "feMorphology", "feOffset", "feSpecularLighting", "feTile", "feTurbulence", "linearGradient", "radialGradient", "stop", "circle", "ellipse", "image", "line", "path", "polygon", "polyline", "rect", "text", "use", "textPath", "tspan", "foreignObject", "clipPath"];
var Re2 = ["any-hover", "any-pointer", "aspect-ratio", "color", "color-gamut", "color-index", "device-aspect-ratio", "device-height", "device-width", "display-mode", "forced-colors", "grid", "height", "hover", "inverted-colors", "monochrome", "orientation", "overflow-block", "overflow-inline", "pointer", "prefers-color-scheme", "prefers-contrast", "prefers-reduced-motion", "prefers-reduced-transparency", "resolution", "scan", "scripting", "update", "width", "min-width", "max-width", "min-height", "max-height"].sort().reverse();
var De2 = ["active", "any-link", "blank", "checked", "current", "default", "defined", "dir", "disabled", "drop", "empty", "enabled", "first", "first-child", "first-of-type", "fullscreen", "future", "focus", "focus-visible", "focus-within", "has", "host", "host-context", "hover", "indeterminate", "in-range", "invalid", "is", "lang", "last-child", "last-of-type", "left", "link", "local-link", "not", "nth-child", "nth-col", "nth-last-child", "nth-last-col", "nth-last-of-type", "nth-of-type", "only-child", "only-of-type", "optional", "out-of-range", "past", "placeholder-shown", "read-only", "read-write", "required", "right", "root", "scope", "target", "target-within", "user-invalid", "valid", "visited", "where"].sort().reverse();
var Ie2 = ["after", "backdrop", "before", "cue", "cue-region", "first-letter", "first-line", "grammar-error", "marker", "part", "placeholder", "selection", "slotted", "spelling-error"].sort().reverse();
var Le2 = ["accent-color", "align-content", "align-items", "align-self", "alignment-baseline", "all", "anchor-name", "animation", "animation-composition", "animation-delay", "animation-direction", "animation-duration", "animation-fill-mode", "animation-iteration-count", "animation-name", "animation-play-state", "animation-range", "animation-range-end", "animation-range-start", "animation-timeline", "animation-timing-function", "appearance", "aspect-ratio", "backdrop-filter", "backface-visibility", "background", "background-attachment", "background-blend-mode", "background-clip", "background-color", "background-image", "background-origin", "background-position", "background-position-x", "background-position-y", "background-repeat", "background-size", "baseline-shift", "block-size", "border", "border-block", "border-block-color", "border-block-end", "border-block-end-color", "border-block-end-style", "border-block-end-width", "border-block-start", "border-block-start-color", "border-block-start-style", "border-block-start-width", "border-block-style", "border-block-width", "border-bottom", "border-bottom-color", "border-bottom-left-radius", "border-bottom-right-radius", "border-bottom-style", "border-bottom-width", "border-collapse", "border-color", "border-end-end-radius", "border-end-start-radius", "border-image", "border-image-outset", "border-image-repeat", "border-image-slice", "border-image-source", "border-image-width", "border-inline", "border-inline-color", "border-inline-end", "border-inline-end-color", "border-inline-end-style", "border-inline-end-width", "border-inline-start", "border-inline-start-color", "border-inline-start-style", "border-inline-start-width", "border-inline-style", "border-inline-width", "border-left", "border-left-color", "border-left-style", "border-left-width", "border-radius", "border-right", "border-right-color", "border-right-style", "border-right-width", "border-spacing", "border-start-end-radius", "border-start-start-radius", "border-style", "border-top", "border-top-color", "border-top-left-radius", "border-top-right-radius", "border-top-style", "border-top-width", "border-width", "bottom", "box-align", "box-decoration-break", "box-direction", "box-flex", "box-flex-group", "box-lines", "box-ordinal-group", "box-orient", "box-pack", "box-shadow", "box-sizing", "break-after", "break-before", "break-inside", "caption-side", "caret-color", "clear", "clip", "clip-path", "clip-rule", "color", "color-interpolation", "color-interpolation-filters", "color-profile", "color-rendering", "color-scheme", "column-count", "column-fill", "column-gap", "column-rule", "column-rule-color", "column-rule-style", "column-rule-width", "column-span", "column-width", "columns", "contain", "contain-intrinsic-block-size", "contain-intrinsic-height", "contain-intrinsic-inline-size", "contain-intrinsic-size", "contain-intrinsic-width", "container", "container-name", "container-type", "content", "content-visibility", "corner-bottom-left-shape", "corner-bottom-right-shape", "corner-shape", "corner-top-left-shape", "corner-top-right-shape", "counter-increment", "counter-reset", "counter-set", "cue", "cue-after", "cue-before", "cursor", "cx", "cy", "direction", "display", "dominant-baseline", "empty-cells", "enable-background", "field-sizing", "fill", "fill-opacity", "fill-rule", "filter", "flex", "flex-basis", "flex-direction", "flex-flow", "flex-grow", "flex-shrink", "flex-wrap", "float", "flood-color", "flood-opacity", "flow", "font", "font-display", "font-family", "font-feature-settings", "font-kerning", "font-language-override", "font-optical-sizing", "font-palette", "font-size", "font-size-adjust", "font-smooth", "font-smoothing", "font-stretch", "font-style", "font-synthesis", "font-synthesis-position", "font-synthesis-small-caps", "font-synthesis-style", "font-synthesis-weight", "font-variant", "font-variant-alternates", "font-variant-caps", "font-variant-east-asian", "font-variant-emoji", "font-variant-ligatures", "font-variant-numeric", "font-variant-position", "font-variation-settings", "font-weight", "forced-color-adjust", "gap", "glyph-orientation-horizontal", "glyph-orientation-vertical", "grid", "grid-area", "grid-auto-columns", "grid-auto-flow", "grid-auto-rows", "grid-column", "grid-column-end", "grid-column-start", "grid-gap", "grid-row", "grid-row-end", "grid-row-start", "grid-template", "grid-template-areas", "grid-template-columns", "grid-template-rows", "hanging-punctuation", "height", "hyphenate-character", "hyphenate-limit-chars", "hyphens", "icon", "image-orientation", "image-rendering", "image-resolution", "ime-mode", "initial-letter", "initial-letter-align", "inline-size", "inset", "inset-area", "inset-block", "inset-block-end", "inset-block-start", "inset-inline", "inset-inline-end", "inset-inline-start", "isolation", "justify-content", "justify-items", "justify-self", "kerning", "left", "letter-spacing", "lighting-color", "line-break", "line-height", "line-height-step", "list-style", "list-style-image", "list-style-position", "list-style-type", "margin", "margin-block", "margin-block-end", "margin-block-start", "margin-bottom", "margin-inline", "margin-inline-end", "margin-inline-start", "margin-left", "margin-right", "margin-top", "margin-trim", "marker", "marker-end", "marker-mid", "marker-start", "marks", "mask", "mask-border", "mask-border-mode", "mask-border-outset", "mask-border-repeat", "mask-border-slice", "mask-border-source", "mask-border-width", "mask-clip", "mask-composite", "mask-image", "mask-mode", "mask-origin", "mask-position", "mask-repeat", "mask-size", "mask-type", "masonry-auto-flow", "math-depth", "math-shift", "math-style", "max-block-size", "max-height", "max-inline-size", "max-width", "min-block-size", "min-height", "min-inline-size", "min-width", "mix-blend-mode", "nav-down", "nav-index", "nav-left", "nav-right", "nav-up", "none", "normal", "object-fit", "object-position", "offset", "offset-anchor", "offset-distance", "offset-path", "offset-position", "offset-rotate", "opacity", "order", "orphans", "outline", "outline-color", "outline-offset", "outline-style", "outline-width", "overflow", "overflow-anchor", "overflow-block", "overflow-clip-margin", "overflow-inline", "overflow-wrap", "overflow-x", "overflow-y", "overlay", "overscroll-behavior", "overscroll-behavior-block", "overscroll-behavior-inline", "overscroll-behavior-x", "overscroll-behavior-y", "padding", "padding-block", "padding-block-end", "padding-block-start", "padding-bottom", "padding-inline", "padding-inline-end", "padding-inline-start", "padding-left", "padding-right", "padding-top", "page", "page-break-after", "page-break-before", "page-break-inside", "paint-order", "pause", "pause-after", "pause-before", "perspective", "perspective-origin", "place-content", "place-items", "place-self", "pointer-events", "position", "position-anchor", "position-visibility", "print-color-adjust", "quotes", "r", "resize", "rest", "rest-after", "rest-before", "right", "rotate", "row-gap", "ruby-align", "ruby-position", "scale", "scroll-behavior", "scroll-margin", "scroll-margin-block", "scroll-margin-block-end", "scroll-margin-block-start", "scroll-margin-bottom", "scroll-margin-inline", "scroll-margin-inline-end", "scroll-margin-inline-start", "scroll-margin-left", "scroll-margin-right", "scroll-margin-top", "scroll-padding", "scroll-padding-block", "scroll-padding-block-end", "scroll-padding-block-start", "scroll-padding-bottom", "scroll-padding-inline", "scroll-padding-inline-end", "scroll-padding-inline-start", "scroll-padding-left", "scroll-padding-right", "scroll-padding-top", "scroll-snap-align", "scroll-snap-stop", "scroll-snap-type", "scroll-timeline", "scroll-timeline-axis", "scroll-timeline-name", "scrollbar-color", "scrollbar-gutter", "scrollbar-width", "shape-image-threshold", "shape-margin", "shape-outside", "shape-rendering", "speak", "speak-as", "src", "stop-color", "stop-opacity", "stroke", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-opacity", "stroke-width", "tab-size", "table-layout", "text-align", "text-align-all", "text-align-last", "text-anchor", "text-combine-upright", "text-decoration", "text-decoration-color", "text-decoration-line", "text-decoration-skip", "text-decoration-skip-ink", "text-decoration-style", "text-decoration-thickness", "text-emphasis", "text-emphasis-color", "text-emphasis-position", "text-emphasis-style", "text-indent", "text-justify", "text-orientation", "text-overflow", "text-rendering", "text-shadow", "text-size-adjust", "text-transform", "text-underline-offset", "text-underline-position", "text-wrap", "text-wrap-mode", "text-wrap-style", "timeline-scope", "top", "touch-action", "transform", "transform-box", "transform-origin", "transform-style", "transition", "transition-behavior", "transition-delay", "transition-duration", "transition-property", "transition-timing-function", "translate", "unicode-bidi", "unicode-range", "user-modify", "user-select", "vector-effect", "vertical-align", "view-timeline", "view-timeline-axis", "view-timeline-inset", "view-timeline-name", "view-transition-name", "visibility", "voice-balance", "voice-duration", "voice-family", "voice-pitch", "voice-range", "voice-rate", "voice-stress", "voice-volume", "white-space", "white-space-collapse", "widows", "width", "will-change", "word-break", "word-spacing", "word-wrap", "writing-mode", "x", "y", "z-index", "zoom"].sort().reverse();
var Be2 = De2.concat(Ie2).sort().reverse();
var Fe2 = "[0-9](_*[0-9])*";
var $e2 = `\\.(${Fe2})`;
var ze2 = "[0-9a-fA-F](_*[0-9a-fA-F])*";
var Ue2 = {
  className: "number",
  variants: [{
    begin: `(\\b(${Fe2})((${$e2})|\\.)?|(${$e2}))[eE][+-]?(${Fe2})[fFdD]?\\b`
  }, {
    begin: `\\b(${Fe2})((${$e2})[fFdD]?\\b|\\.([fFdD]\\b)?)`
  }, {
    begin: `(${$e2})[fFdD]?\\b`
  }, { begin: `\\b(${Fe2})[fFdD]\\b` }, {
    begin: `\\b0[xX]((${ze2})\\.?|(${ze2})?\\.(${ze2}))[pP][+-]?(${Fe2})[fFdD]?\\b`
  }, {
    begin: "\\b(0|[1-9](_*[0-9])*)[lL]?\\b"
  }, { begin: `\\b0[xX](${ze2})[lL]?\\b` }, {
    begin: "\\b0(_*[0-7])*[lL]?\\b"
  }, { begin: "\\b0[bB][01](_*[01])*[lL]?\\b" }],
  relevance: 0
};
function je(e2, n3, t2) {
  return -1 === t2 ? "" : e2.replace(n3, (a2) => je(e2, n3, t2 - 1));
}
var Pe2 = Object.freeze({
  __proto__: null,
  grmr_bash: (e2) => {
    const n3 = e2.regex, t2 = {}, a2 = {
      begin: /\$\{/,
      end: /\}/,
      contains: ["self", { begin: /:-/, contains: [t2] }]
    };
    Object.assign(t2, { className: "variable", variants: [{
      begin: n3.concat(/\$[\w\d#@][\w\d_]*/, "(?![\\w\\d])(?![$])")
    }, a2] });
    const i2 = {
      className: "subst",
      begin: /\$\(/,
      end: /\)/,
      contains: [e2.BACKSLASH_ESCAPE]
    }, r2 = e2.inherit(e2.COMMENT(), { match: [/(^|\s)/, /#.*$/], scope: { 2: "comment" } }), s2 = {
      begin: /<<-?\s*(?=\w+)/,
      starts: { contains: [e2.END_SAME_AS_BEGIN({
        begin: /(\w+)/,
        end: /(\w+)/,
        className: "string"
      })] }
    }, o2 = {
      className: "string",
      begin: /"/,
      end: /"/,
      contains: [e2.BACKSLASH_ESCAPE, t2, i2]
    };
    i2.contains.push(o2);
    const c2 = {
      begin: /\$?\(\(/,
      end: /\)\)/,
      contains: [{ begin: /\d+#[0-9a-f]+/, className: "number" }, e2.NUMBER_MODE, t2]
    }, l4 = e2.SHEBANG({
      binary: "(fish|bash|zsh|sh|csh|ksh|tcsh|dash|scsh)",
      relevance: 10
    }), d2 = {
      className: "function",
      begin: /\w[\w\d_]*\s*\(\s*\)\s*\{/,
      returnBegin: true,
      contains: [e2.inherit(e2.TITLE_MODE, { begin: /\w[\w\d_]*/ })],
      relevance: 0
    };
    return {
      name: "Bash",
      aliases: ["sh", "zsh"],
      keywords: {
        $pattern: /\b[a-z][a-z0-9._-]+\b/,
        keyword: ["if", "then", "else", "elif", "fi", "time", "for", "while", "until", "in", "do", "done", "case", "esac", "coproc", "function", "select"],
        literal: ["true", "false"],
        built_in: ["break", "cd", "continue", "eval", "exec", "exit", "export", "getopts", "hash", "pwd", "readonly", "return", "shift", "test", "times", "trap", "umask", "unset", "alias", "bind", "builtin", "caller", "command", "declare", "echo", "enable", "help", "let", "local", "logout", "mapfile", "printf", "read", "readarray", "source", "sudo", "type", "typeset", "ulimit", "unalias", "set", "shopt", "autoload", "bg", "bindkey", "bye", "cap", "chdir", "clone", "comparguments", "compcall", "compctl", "compdescribe", "compfiles", "compgroups", "compquote", "comptags", "comptry", "compvalues", "dirs", "disable", "disown", "echotc", "echoti", "emulate", "fc", "fg", "float", "functions", "getcap", "getln", "history", "integer", "jobs", "kill", "limit", "log", "noglob", "popd", "print", "pushd", "pushln", "rehash", "sched", "setcap", "setopt", "stat", "suspend", "ttyctl", "unfunction", "unhash", "unlimit", "unsetopt", "vared", "wait", "whence", "where", "which", "zcompile", "zformat", "zftp", "zle", "zmodload", "zparseopts", "zprof", "zpty", "zregexparse", "zsocket", "zstyle", "ztcp", "chcon", "chgrp", "chown", "chmod", "cp", "dd", "df", "dir", "dircolors", "ln", "ls", "mkdir", "mkfifo", "mknod", "mktemp", "mv", "realpath", "rm", "rmdir", "shred", "sync", "touch", "truncate", "vdir", "b2sum", "base32", "base64", "cat", "cksum", "comm", "csplit", "cut", "expand", "fmt", "fold", "head", "join", "md5sum", "nl", "numfmt", "od", "paste", "ptx", "pr", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "shuf", "sort", "split", "sum", "tac", "tail", "tr", "tsort", "unexpand", "uniq", "wc", "arch", "basename", "chroot", "date", "dirname", "du", "echo", "env", "expr", "factor", "groups", "hostid", "id", "link", "logname", "nice", "nohup", "nproc", "pathchk", "pinky", "printenv", "printf", "pwd", "readlink", "runcon", "seq", "sleep", "stat", "stdbuf", "stty", "tee", "test", "timeout", "tty", "uname", "unlink", "uptime", "users", "who", "whoami", "yes"]
      },
      contains: [l4, e2.SHEBANG(), d2, c2, r2, s2, { match: /(\/[a-z._-]+)+/ }, o2, { match: /\\"/ }, {
        className: "string",
        begin: /'/,
        end: /'/
      }, { match: /\\'/ }, t2]
    };
  },
  grmr_c: (e2) => {
    const n3 = e2.regex, t2 = e2.COMMENT("//", "$", {
      contains: [{ begin: /\\\n/ }]
    }), a2 = "decltype\\(auto\\)", i2 = "[a-zA-Z_]\\w*::", r2 = "(" + a2 + "|" + n3.optional(i2) + "[a-zA-Z_]\\w*" + n3.optional("<[^<>]+>") + ")", s2 = {
      className: "type",
      variants: [{ begin: "\\b[a-z\\d_]*_t\\b" }, {
        match: n3.concat(/\batomic_/, n3.either("bool", "char", "schar", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "llong", "ullong", "char16_t", "char32_t", "wchar_t", "int_least8_t", "uint_least8_t", "int_least16_t", "uint_least16_t", "int_least32_t", "uint_least32_t", "int_least64_t", "uint_least64_t", "int_fast8_t", "uint_fast8_t", "int_fast16_t", "uint_fast16_t", "int_fast32_t", "uint_fast32_t", "int_fast64_t", "uint_fast64_t", "intptr_t", "uintptr_t", "size_t", "ptrdiff_t", "intmax_t", "uintmax_t"), /\b/)
      }]
    }, o2 = { className: "string", variants: [{
      begin: '(u8?|U|L)?"',
      end: '"',
      illegal: "\\n",
      contains: [e2.BACKSLASH_ESCAPE]
    }, {
      begin: "(u8?|U|L)?'(\\\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4,8}|[0-7]{3}|\\S)|.)",
      end: "'",
      illegal: "."
    }, e2.END_SAME_AS_BEGIN({
      begin: /(?:u8?|U|L)?R"([^()\\\s"]{0,16})\(/,
      end: /\)([^()\\\s"]{0,16})"/
    })] }, c2 = {
      className: "number",
      variants: [{ match: /\b(0b[01']+)/ }, {
        match: /(-?)\b([\d']+(\.[\d']*)?|\.[\d']+)((ll|LL|l|L)(u|U)?|(u|U)(ll|LL|l|L)?|f|F|b|B)/
      }, {
        match: /(-?)\b(0[xX][a-fA-F0-9]+(?:'[a-fA-F0-9]+)*(?:\.[a-fA-F0-9]*(?:'[a-fA-F0-9]*)*)?(?:[pP][-+]?[0-9]+)?(l|L)?(u|U)?)/
      }, { match: /(-?)\b\d+(?:'\d+)*(?:\.\d*(?:'\d*)*)?(?:[eE][-+]?\d+)?/ }],
      relevance: 0
    }, l4 = {
      scope: "meta",
      begin: /#\s*include\b/,
      end: /$/,
      keywords: { keyword: "include" },
      contains: [{ begin: /\\\n/ }, o2, {
        scope: "string",
        begin: /<.*?>/
      }, t2, e2.C_BLOCK_COMMENT_MODE]
    }, d2 = {
      className: "meta",
      begin: /#\s*[a-z]+\b/,
      end: /$/,
      keywords: {
        keyword: "if else elif endif define undef warning error line pragma _Pragma ifdef ifndef elifdef elifndef include"
      },
      contains: [{ begin: /\\\n/, relevance: 0 }, e2.inherit(o2, {
        className: "string"
      }), t2, e2.C_BLOCK_COMMENT_MODE]
    }, g3 = [l4, d2], u2 = {
      className: "title",
      begin: n3.optional(i2) + e2.IDENT_RE,
      relevance: 0
    }, b2 = n3.optional(i2) + e2.IDENT_RE + "\\s*\\(", m2 = {
      keyword: ["asm", "auto", "break", "case", "continue", "default", "do", "else", "enum", "extern", "for", "fortran", "goto", "if", "inline", "register", "restrict", "return", "sizeof", "typeof", "typeof_unqual", "struct", "switch", "typedef", "union", "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert", "_Thread_local", "alignas", "alignof", "noreturn", "static_assert", "thread_local", "_Pragma"],
      type: ["float", "double", "signed", "unsigned", "int", "short", "long", "char", "void", "_Bool", "_BitInt", "_Complex", "_Imaginary", "_Decimal32", "_Decimal64", "_Decimal96", "_Decimal128", "_Decimal64x", "_Decimal128x", "_Float16", "_Float32", "_Float64", "_Float128", "_Float32x", "_Float64x", "_Float128x", "const", "static", "constexpr", "complex", "bool", "imaginary"],
      literal: "true false NULL",
      built_in: "std string wstring cin cout cerr clog stdin stdout stderr stringstream istringstream ostringstream auto_ptr deque list queue stack vector map set pair bitset multiset multimap unordered_set unordered_map unordered_multiset unordered_multimap priority_queue make_pair array shared_ptr abort terminate abs acos asin atan2 atan calloc ceil cosh cos exit exp fabs floor fmod fprintf fputs free frexp fscanf future isalnum isalpha iscntrl isdigit isgraph islower isprint ispunct isspace isupper isxdigit tolower toupper labs ldexp log10 log malloc realloc memchr memcmp memcpy memset modf pow printf putchar puts scanf sinh sin snprintf sprintf sqrt sscanf strcat strchr strcmp strcpy strcspn strlen strncat strncmp strncpy strpbrk strrchr strspn strstr tanh tan vfprintf vprintf vsprintf endl initializer_list unique_ptr"
    }, p2 = [...g3, s2, t2, e2.C_BLOCK_COMMENT_MODE, c2, o2], _3 = {
      variants: [{ begin: /=/, end: /;/ }, {
        begin: /\(/,
        end: /\)/
      }, { beginKeywords: "new throw return else", end: /;/ }],
      keywords: m2,
      contains: p2.concat([{
        begin: /\(/,
        end: /\)/,
        keywords: m2,
        contains: p2.concat(["self"]),
        relevance: 0
      }]),
      relevance: 0
    }, h2 = {
      begin: "(" + r2 + "[\\*&\\s]+){1,12}" + b2,
      returnBegin: true,
      end: /[{;=]/,
      excludeEnd: true,
      keywords: m2,
      illegal: /[^\w\s\*&:<>.]/,
      contains: [{ begin: a2, keywords: m2, relevance: 0 }, {
        begin: b2,
        returnBegin: true,
        contains: [e2.inherit(u2, { className: "title.function" })],
        relevance: 0
      }, { relevance: 0, match: /,/ }, {
        className: "params",
        begin: /\(/,
        end: /\)/,
        keywords: m2,
        relevance: 0,
        contains: [t2, e2.C_BLOCK_COMMENT_MODE, o2, c2, s2, {
          begin: /\(/,
          end: /\)/,
          keywords: m2,
          relevance: 0,
          contains: ["self", t2, e2.C_BLOCK_COMMENT_MODE, o2, c2, s2]
        }]
      }, s2, t2, e2.C_BLOCK_COMMENT_MODE, ...g3]
    };
    return {
      name: "C",
      aliases: ["h"],
      keywords: m2,
      disableAutodetect: true,
      illegal: "</",
      contains: [].concat(_3, h2, p2, [...g3, {
        begin: e2.IDENT_RE + "::",
        keywords: m2
      }, {
        className: "class",
        beginKeywords: "enum class struct union",
        end: /[{;:<>=]/,
        contains: [{
          beginKeywords: "final class struct"
        }, e2.TITLE_MODE]
      }]),
      exports: {
        preprocessor: d2,
        strings: o2,
        keywords: m2
      }
    };
  },
  grmr_cpp: (e2) => {
    const n3 = e2.regex, t2 = e2.COMMENT("//", "$", {
      contains: [{ begin: /\\\n/ }]
    }), a2 = "decltype\\(auto\\)", i2 = "[a-zA-Z_]\\w*::", r2 = "(?!struct)(" + a2 + "|" + n3.optional(i2) + "[a-zA-Z_]\\w*" + n3.optional("<[^<>]+>") + ")", s2 = {
      className: "type",
      begin: "\\b[a-z\\d_]*_t\\b"
    }, o2 = { className: "string", variants: [{
      begin: '(u8?|U|L)?"',
      end: '"',
      illegal: "\\n",
      contains: [e2.BACKSLASH_ESCAPE]
    }, {
      begin: "(u8?|U|L)?'(\\\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4,8}|[0-7]{3}|\\S)|.)",
      end: "'",
      illegal: "."
    }, e2.END_SAME_AS_BEGIN({
      begin: /(?:u8?|U|L)?R"([^()\\\s"]{0,16})\(/,
      end: /\)([^()\\\s"]{0,16})"/
    })] }, c2 = {
      className: "number",
      variants: [{
        begin: "[+-]?(?:(?:\\b[0-9](?:'?[0-9])*\\.(?:[0-9](?:'?[0-9])*)?|\\.[0-9](?:'?[0-9])*)(?:[Ee][+-]?[0-9](?:'?[0-9])*)?|\\b[0-9](?:'?[0-9])*[Ee][+-]?[0-9](?:'?[0-9])*|\\b0[Xx](?:[0-9A-Fa-f](?:'?[0-9A-Fa-f])*(?:\\.(?:[0-9A-Fa-f](?:'?[0-9A-Fa-f])*)?)?|\\.[0-9A-Fa-f](?:'?[0-9A-Fa-f])*)[Pp][+-]?[0-9](?:'?[0-9])*)(?:[Ff](?:16|32|64|128)?|(BF|bf)16|[Ll]|)"
      }, {
        begin: "[+-]?\\b(?:0[Bb][01](?:'?[01])*|0[Xx][0-9A-Fa-f](?:'?[0-9A-Fa-f])*|0(?:'?[0-7])*|[1-9](?:'?[0-9])*)(?:[Uu](?:LL?|ll?)|[Uu][Zz]?|(?:LL?|ll?)[Uu]?|[Zz][Uu]|)"
      }],
      relevance: 0
    }, l4 = [{ scope: "meta", begin: /#\s*include\b/, end: /$/, keywords: {
      keyword: "include"
    }, contains: [{ begin: /\\\n/ }, o2, {
      scope: "string",
      begin: /<.*?>/
    }, t2, e2.C_BLOCK_COMMENT_MODE] }, {
      className: "meta",
      begin: /#\s*[a-z]+\b/,
      end: /$/,
      keywords: {
        keyword: "if else elif endif define undef warning error line pragma _Pragma ifdef ifndef include"
      },
      contains: [{ begin: /\\\n/, relevance: 0 }, e2.inherit(o2, {
        className: "string"
      }), t2, e2.C_BLOCK_COMMENT_MODE]
    }], d2 = {
      className: "title",
      begin: n3.optional(i2) + e2.IDENT_RE,
      relevance: 0
    }, g3 = n3.optional(i2) + e2.IDENT_RE + "\\s*\\(", u2 = ["alignas", "alignof", "and", "and_eq", "asm", "atomic_cancel", "atomic_commit", "atomic_noexcept", "auto", "bitand", "bitor", "break", "case", "catch", "class", "co_await", "co_return", "co_yield", "compl", "concept", "const_cast|10", "consteval", "constexpr", "constinit", "continue", "decltype", "default", "delete", "do", "dynamic_cast|10", "else", "enum", "explicit", "export", "extern", "false", "final", "for", "friend", "goto", "if", "import", "inline", "module", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "override", "private", "protected", "public", "reflexpr", "register", "reinterpret_cast|10", "requires", "return", "sizeof", "static_assert", "static_cast|10", "struct", "switch", "synchronized", "template", "this", "thread_local", "throw", "transaction_safe", "transaction_safe_dynamic", "true", "try", "typedef", "typeid", "typename", "union", "using", "virtual", "volatile", "while", "xor", "xor_eq"], b2 = {
      type: ["bool", "char", "char16_t", "char32_t", "char8_t", "double", "float", "int", "long", "short", "void", "wchar_t", "unsigned", "signed", "const", "static"],
      keyword: u2,
      literal: ["NULL", "false", "nullopt", "nullptr", "true"],
      built_in: ["_Pragma"],
      _type_hints: ["any", "auto_ptr", "barrier", "binary_semaphore", "bitset", "complex", "condition_variable", "condition_variable_any", "counting_semaphore", "deque", "false_type", "flat_map", "flat_set", "future", "imaginary", "initializer_list", "istringstream", "jthread", "latch", "lock_guard", "multimap", "multiset", "mutex", "optional", "ostringstream", "packaged_task", "pair", "promise", "priority_queue", "queue", "recursive_mutex", "recursive_timed_mutex", "scoped_lock", "set", "shared_future", "shared_lock", "shared_mutex", "shared_timed_mutex", "shared_ptr", "stack", "string_view", "stringstream", "timed_mutex", "thread", "true_type", "tuple", "unique_lock", "unique_ptr", "unordered_map", "unordered_multimap", "unordered_multiset", "unordered_set", "variant", "vector", "weak_ptr", "wstring", "wstring_view"]
    }, m2 = {
      className: "function.dispatch",
      relevance: 0,
      keywords: {
        _hint: ["abort", "abs", "acos", "apply", "as_const", "asin", "atan", "atan2", "calloc", "ceil", "cerr", "cin", "clog", "cos", "cosh", "cout", "declval", "endl", "exchange", "exit", "exp", "fabs", "floor", "fmod", "forward", "fprintf", "fputs", "free", "frexp", "fscanf", "future", "invoke", "isalnum", "isalpha", "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct", "isspace", "isupper", "isxdigit", "labs", "launder", "ldexp", "log", "log10", "make_pair", "make_shared", "make_shared_for_overwrite", "make_tuple", "make_unique", "malloc", "memchr", "memcmp", "memcpy", "memset", "modf", "move", "pow", "printf", "putchar", "puts", "realloc", "scanf", "sin", "sinh", "snprintf", "sprintf", "sqrt", "sscanf", "std", "stderr", "stdin", "stdout", "strcat", "strchr", "strcmp", "strcpy", "strcspn", "strlen", "strncat", "strncmp", "strncpy", "strpbrk", "strrchr", "strspn", "strstr", "swap", "tan", "tanh", "terminate", "to_underlying", "tolower", "toupper", "vfprintf", "visit", "vprintf", "vsprintf"]
      },
      begin: n3.concat(/\b/, `(?!${u2.join("|")})`, e2.IDENT_RE, n3.lookahead(/(<[^<>]+>|)\s*\(/))
    }, p2 = [m2, ...l4, s2, t2, e2.C_BLOCK_COMMENT_MODE, c2, o2], _3 = {
      variants: [{ begin: /=/, end: /;/ }, {
        begin: /\(/,
        end: /\)/
      }, { beginKeywords: "new throw return else", end: /;/ }],
      keywords: b2,
      contains: p2.concat([{
        begin: /\(/,
        end: /\)/,
        keywords: b2,
        contains: p2.concat(["self"]),
        relevance: 0
      }]),
      relevance: 0
    }, h2 = {
      className: "function",
      begin: "(" + r2 + "[\\*&\\s]+){1,12}" + g3,
      returnBegin: true,
      end: /[{;=]/,
      excludeEnd: true,
      keywords: b2,
      illegal: /[^\w\s\*&:<>.]/,
      contains: [{ begin: a2, keywords: b2, relevance: 0 }, {
        begin: g3,
        returnBegin: true,
        contains: [d2],
        relevance: 0
      }, { begin: /::/, relevance: 0 }, {
        begin: /:/,
        endsWithParent: true,
        contains: [o2, c2]
      }, { relevance: 0, match: /,/ }, {
        className: "params",
        begin: /\(/,
        end: /\)/,
        keywords: b2,
        relevance: 0,
        contains: [t2, e2.C_BLOCK_COMMENT_MODE, o2, c2, s2, {
          begin: /\(/,
          end: /\)/,
          keywords: b2,
          relevance: 0,
          contains: ["self", t2, e2.C_BLOCK_COMMENT_MODE, o2, c2, s2]
        }]
      }, s2, t2, e2.C_BLOCK_COMMENT_MODE, ...l4]
    };
    return {
      name: "C++",
      aliases: ["cc", "c++", "h++", "hpp", "hh", "hxx", "cxx"],
      keywords: b2,
      illegal: "</",
      classNameAliases: { "function.dispatch": "built_in" },
      contains: [].concat(_3, h2, m2, p2, [...l4, {
        begin: "\\b(deque|list|queue|priority_queue|pair|stack|vector|map|set|bitset|multiset|multimap|unordered_map|unordered_set|unordered_multiset|unordered_multimap|array|tuple|optional|variant|function|flat_map|flat_set)\\s*<(?!<)",
        end: ">",
        keywords: b2,
        contains: ["self", s2]
      }, { begin: e2.IDENT_RE + "::", keywords: b2 }, {
        match: [/\b(?:enum(?:\s+(?:class|struct))?|class|struct|union)/, /\s+/, /\w+/],
        className: { 1: "keyword", 3: "title.class" }
      }])
    };
  },
  grmr_csharp: (e2) => {
    const n3 = {
      keyword: ["abstract", "as", "base", "break", "case", "catch", "class", "const", "continue", "do", "else", "event", "explicit", "extern", "finally", "fixed", "for", "foreach", "goto", "if", "implicit", "in", "interface", "internal", "is", "lock", "namespace", "new", "operator", "out", "override", "params", "private", "protected", "public", "readonly", "record", "ref", "return", "scoped", "sealed", "sizeof", "stackalloc", "static", "struct", "switch", "this", "throw", "try", "typeof", "unchecked", "unsafe", "using", "virtual", "void", "volatile", "while"].concat(["add", "alias", "and", "ascending", "args", "async", "await", "by", "descending", "dynamic", "equals", "file", "from", "get", "global", "group", "init", "into", "join", "let", "nameof", "not", "notnull", "on", "or", "orderby", "partial", "record", "remove", "required", "scoped", "select", "set", "unmanaged", "value|0", "var", "when", "where", "with", "yield"]),
      built_in: ["bool", "byte", "char", "decimal", "delegate", "double", "dynamic", "enum", "float", "int", "long", "nint", "nuint", "object", "sbyte", "short", "string", "ulong", "uint", "ushort"],
      literal: ["default", "false", "null", "true"]
    }, t2 = e2.inherit(e2.TITLE_MODE, {
      begin: "[a-zA-Z](\\.?\\w)*"
    }), a2 = "\\d(_*\\d)*", i2 = "([uU][lL]?|[lL][uU]?)?", r2 = {
      className: "number",
      variants: [{ begin: "\\b0[bB]_*[01](_*[01])*" + i2 }, {
        begin: "(-?)\\b0[xX]_*[a-fA-F0-9](_*[a-fA-F0-9])*" + i2
      }, {
        begin: "(-?)(\\b" + a2 + "(\\.(" + a2 + ")?)?|\\." + a2 + ")([eE][-+]?" + a2 + ")?([fFdDmM]|[uU][lL]?|[lL][uU]?)?"
      }],
      relevance: 0
    }, s2 = {
      className: "string",
      begin: '@"',
      end: '"',
      contains: [{ begin: '""' }]
    }, o2 = e2.inherit(s2, { illegal: /\n/ }), c2 = {
      className: "subst",
      begin: /\{/,
      end: /\}/,
      keywords: n3
    }, l4 = e2.inherit(c2, { illegal: /\n/ }), d2 = {
      className: "string",
      begin: /\$"/,
      end: '"',
      illegal: /\n/,
      contains: [{ begin: /\{\{/ }, {
        begin: /\}\}/
      }, e2.BACKSLASH_ESCAPE, l4]
    }, g3 = { className: "string", begin: /\$@"/, end: '"', contains: [{
      begin: /\{\{/
    }, { begin: /\}\}/ }, { begin: '""' }, c2] }, u2 = e2.inherit(g3, {
      illegal: /\n/,
      contains: [{ begin: /\{\{/ }, { begin: /\}\}/ }, { begin: '""' }, l4]
    });
    c2.contains = [g3, d2, s2, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, r2, e2.C_BLOCK_COMMENT_MODE], l4.contains = [u2, d2, o2, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, r2, e2.inherit(e2.C_BLOCK_COMMENT_MODE, {
      illegal: /\n/
    })];
    const b2 = { variants: [{
      className: "string",
      begin: /"""("*)(?!")(.|\n)*?"""\1/,
      relevance: 1
    }, g3, d2, s2, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE] }, m2 = {
      begin: "<",
      end: ">",
      contains: [{ beginKeywords: "in out" }, t2]
    }, p2 = e2.IDENT_RE + "(<" + e2.IDENT_RE + "(\\s*,\\s*" + e2.IDENT_RE + ")*>)?(\\[\\])?", _3 = {
      begin: "@" + e2.IDENT_RE,
      relevance: 0
    };
    return {
      name: "C#",
      aliases: ["cs", "c#"],
      keywords: n3,
      illegal: /::/,
      contains: [e2.COMMENT("///", "$", {
        returnBegin: true,
        contains: [{ className: "doctag", variants: [{ begin: "///", relevance: 0 }, {
          begin: "<!--|-->"
        }, { begin: "</?", end: ">" }] }]
      }), e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, {
        className: "meta",
        begin: "#",
        end: "$",
        keywords: {
          keyword: "if else elif endif define undef warning error line region endregion pragma checksum"
        }
      }, b2, r2, {
        beginKeywords: "class interface",
        relevance: 0,
        end: /[{;=]/,
        illegal: /[^\s:,]/,
        contains: [{
          beginKeywords: "where class"
        }, t2, m2, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE]
      }, {
        beginKeywords: "namespace",
        relevance: 0,
        end: /[{;=]/,
        illegal: /[^\s:]/,
        contains: [t2, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE]
      }, {
        beginKeywords: "record",
        relevance: 0,
        end: /[{;=]/,
        illegal: /[^\s:]/,
        contains: [t2, m2, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE]
      }, {
        className: "meta",
        begin: "^\\s*\\[(?=[\\w])",
        excludeBegin: true,
        end: "\\]",
        excludeEnd: true,
        contains: [{
          className: "string",
          begin: /"/,
          end: /"/
        }]
      }, {
        beginKeywords: "new return throw await else",
        relevance: 0
      }, {
        className: "function",
        begin: "(" + p2 + "\\s+)+" + e2.IDENT_RE + "\\s*(<[^=]+>\\s*)?\\(",
        returnBegin: true,
        end: /\s*[{;=]/,
        excludeEnd: true,
        keywords: n3,
        contains: [{
          beginKeywords: "public private protected static internal protected abstract async extern override unsafe virtual new sealed partial",
          relevance: 0
        }, {
          begin: e2.IDENT_RE + "\\s*(<[^=]+>\\s*)?\\(",
          returnBegin: true,
          contains: [e2.TITLE_MODE, m2],
          relevance: 0
        }, { match: /\(\)/ }, {
          className: "params",
          begin: /\(/,
          end: /\)/,
          excludeBegin: true,
          excludeEnd: true,
          keywords: n3,
          relevance: 0,
          contains: [b2, r2, e2.C_BLOCK_COMMENT_MODE]
        }, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE]
      }, _3]
    };
  },
  grmr_css: (e2) => {
    const n3 = e2.regex, t2 = Ce2(e2), a2 = [e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE];
    return {
      name: "CSS",
      case_insensitive: true,
      illegal: /[=|'\$]/,
      keywords: {
        keyframePosition: "from to"
      },
      classNameAliases: { keyframePosition: "selector-tag" },
      contains: [t2.BLOCK_COMMENT, {
        begin: /-(webkit|moz|ms|o)-(?=[a-z])/
      }, t2.CSS_NUMBER_MODE, {
        className: "selector-id",
        begin: /#[A-Za-z0-9_-]+/,
        relevance: 0
      }, {
        className: "selector-class",
        begin: "\\.[a-zA-Z-][a-zA-Z0-9_-]*",
        relevance: 0
      }, t2.ATTRIBUTE_SELECTOR_MODE, {
        className: "selector-pseudo",
        variants: [{
          begin: ":(" + De2.join("|") + ")"
        }, { begin: ":(:)?(" + Ie2.join("|") + ")" }]
      }, t2.CSS_VARIABLE, { className: "attribute", begin: "\\b(" + Le2.join("|") + ")\\b" }, {
        begin: /:/,
        end: /[;}{]/,
        contains: [t2.BLOCK_COMMENT, t2.HEXCOLOR, t2.IMPORTANT, t2.CSS_NUMBER_MODE, t2.UNICODE_RANGE, ...a2, {
          begin: /(url|data-uri)\(/,
          end: /\)/,
          relevance: 0,
          keywords: {
            built_in: "url data-uri"
          },
          contains: [...a2, {
            className: "string",
            begin: /[^)]/,
            endsWithParent: true,
            excludeEnd: true
          }]
        }, t2.FUNCTION_DISPATCH]
      }, {
        begin: n3.lookahead(/@/),
        end: "[{;]",
        relevance: 0,
        illegal: /:/,
        contains: [{
          className: "keyword",
          begin: /@-?\w[\w]*(-\w+)*/
        }, { begin: /\s/, endsWithParent: true, excludeEnd: true, relevance: 0, keywords: {
          $pattern: /[a-z-]+/,
          keyword: "and or not only",
          attribute: Re2.join(" ")
        }, contains: [{
          begin: /[a-z-]+(?=:)/,
          className: "attribute"
        }, ...a2, t2.CSS_NUMBER_MODE] }]
      }, {
        className: "selector-tag",
        begin: "\\b(" + Te2.join("|") + ")\\b"
      }]
    };
  },
  grmr_diff: (e2) => {
    const n3 = e2.regex;
    return { name: "Diff", aliases: ["patch"], contains: [{
      className: "meta",
      relevance: 10,
      match: n3.either(/^@@ +-\d+,\d+ +\+\d+,\d+ +@@/, /^@@ +-\d+ +\+\d+,\d+ +@@/, /^@@ +-\d+,\d+ +\+\d+ +@@/, /^@@ +-\d+ +\+\d+ +@@/, /^\*\*\* +\d+,\d+ +\*\*\*\*$/, /^--- +\d+,\d+ +----$/)
    }, { className: "comment", variants: [{
      begin: n3.either(/Index: /, /^index/, /={3,}/, /^-{3}/, /^\*{3} /, /^\+{3}/, /^diff --git/),
      end: /$/
    }, { match: /^\*{15}$/ }] }, { className: "addition", begin: /^\+/, end: /$/ }, {
      className: "deletion",
      begin: /^-/,
      end: /$/
    }, {
      className: "addition",
      begin: /^!/,
      end: /$/
    }] };
  },
  grmr_go: (e2) => {
    const n3 = {
      keyword: ["break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch", "type", "var"],
      type: ["bool", "byte", "complex64", "complex128", "error", "float32", "float64", "int8", "int16", "int32", "int64", "string", "uint8", "uint16", "uint32", "uint64", "int", "uint", "uintptr", "rune"],
      literal: ["true", "false", "iota", "nil"],
      built_in: ["append", "cap", "close", "complex", "copy", "imag", "len", "make", "new", "panic", "print", "println", "real", "recover", "delete"]
    };
    return {
      name: "Go",
      aliases: ["golang"],
      keywords: n3,
      illegal: "</",
      contains: [e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, {
        className: "string",
        variants: [e2.QUOTE_STRING_MODE, e2.APOS_STRING_MODE, { begin: "`", end: "`" }]
      }, {
        className: "number",
        variants: [{
          match: /-?\b0[xX]\.[a-fA-F0-9](_?[a-fA-F0-9])*[pP][+-]?\d(_?\d)*i?/,
          relevance: 0
        }, {
          match: /-?\b0[xX](_?[a-fA-F0-9])+((\.([a-fA-F0-9](_?[a-fA-F0-9])*)?)?[pP][+-]?\d(_?\d)*)?i?/,
          relevance: 0
        }, { match: /-?\b0[oO](_?[0-7])*i?/, relevance: 0 }, {
          match: /-?\b0[bB](_?[01])*i?/,
          relevance: 0
        }, {
          match: /-?\.\d(_?\d)*([eE][+-]?\d(_?\d)*)?i?/,
          relevance: 0
        }, {
          match: /-?\b\d(_?\d)*(\.(\d(_?\d)*)?)?([eE][+-]?\d(_?\d)*)?i?/,
          relevance: 0
        }]
      }, {
        begin: /:=/
      }, {
        className: "function",
        beginKeywords: "func",
        end: "\\s*(\\{|$)",
        excludeEnd: true,
        contains: [e2.TITLE_MODE, {
          className: "params",
          begin: /\(/,
          end: /\)/,
          endsParent: true,
          keywords: n3,
          illegal: /["']/
        }]
      }]
    };
  },
  grmr_graphql: (e2) => {
    const n3 = e2.regex;
    return {
      name: "GraphQL",
      aliases: ["gql"],
      case_insensitive: true,
      disableAutodetect: false,
      keywords: {
        keyword: ["query", "mutation", "subscription", "type", "input", "schema", "directive", "interface", "union", "scalar", "fragment", "enum", "on"],
        literal: ["true", "false", "null"]
      },
      contains: [e2.HASH_COMMENT_MODE, e2.QUOTE_STRING_MODE, e2.NUMBER_MODE, {
        scope: "punctuation",
        match: /[.]{3}/,
        relevance: 0
      }, {
        scope: "punctuation",
        begin: /[\!\(\)\:\=\[\]\{\|\}]{1}/,
        relevance: 0
      }, {
        scope: "variable",
        begin: /\$/,
        end: /\W/,
        excludeEnd: true,
        relevance: 0
      }, { scope: "meta", match: /@\w+/, excludeEnd: true }, {
        scope: "symbol",
        begin: n3.concat(/[_A-Za-z][_0-9A-Za-z]*/, n3.lookahead(/\s*:/)),
        relevance: 0
      }],
      illegal: [/[;<']/, /BEGIN/]
    };
  },
  grmr_ini: (e2) => {
    const n3 = e2.regex, t2 = {
      className: "number",
      relevance: 0,
      variants: [{ begin: /([+-]+)?[\d]+_[\d_]+/ }, {
        begin: e2.NUMBER_RE
      }]
    }, a2 = e2.COMMENT();
    a2.variants = [{ begin: /;/, end: /$/ }, {
      begin: /#/,
      end: /$/
    }];
    const i2 = { className: "variable", variants: [{ begin: /\$[\w\d"][\w\d_]*/ }, {
      begin: /\$\{(.*?)\}/
    }] }, r2 = {
      className: "literal",
      begin: /\bon|off|true|false|yes|no\b/
    }, s2 = {
      className: "string",
      contains: [e2.BACKSLASH_ESCAPE],
      variants: [{ begin: "'''", end: "'''", relevance: 10 }, {
        begin: '"""',
        end: '"""',
        relevance: 10
      }, { begin: '"', end: '"' }, { begin: "'", end: "'" }]
    }, o2 = {
      begin: /\[/,
      end: /\]/,
      contains: [a2, r2, i2, s2, t2, "self"],
      relevance: 0
    }, c2 = n3.either(/[A-Za-z0-9_-]+/, /"(\\"|[^"])*"/, /'[^']*'/);
    return {
      name: "TOML, also INI",
      aliases: ["toml"],
      case_insensitive: true,
      illegal: /\S/,
      contains: [a2, { className: "section", begin: /\[+/, end: /\]+/ }, {
        begin: n3.concat(c2, "(\\s*\\.\\s*", c2, ")*", n3.lookahead(/\s*=\s*[^#\s]/)),
        className: "attr",
        starts: { end: /$/, contains: [a2, o2, r2, i2, s2, t2] }
      }]
    };
  },
  grmr_java: (e2) => {
    const n3 = e2.regex, t2 = "[À-ʸa-zA-Z_$][À-ʸa-zA-Z_$0-9]*", a2 = "(?:(?:\\s*\\[\\s*])+)?", i2 = t2 + "<@@@>" + a2, r2 = "(?:\\?(?:\\s+(?:extends|super)\\s+" + i2 + ")?|" + i2 + ")", s2 = je("(?:\\s*<\\s*" + r2 + "(?:\\s*,\\s*" + r2 + ")*\\s*>)?", /<@@@>/g, 2), o2 = {
      keyword: ["synchronized", "abstract", "private", "var", "static", "if", "const ", "for", "while", "strictfp", "finally", "protected", "import", "native", "final", "void", "enum", "else", "break", "transient", "catch", "instanceof", "volatile", "case", "assert", "package", "default", "public", "try", "switch", "continue", "throws", "protected", "public", "private", "module", "requires", "exports", "do", "sealed", "yield", "permits", "goto", "when"],
      literal: ["false", "true", "null"],
      type: ["char", "boolean", "long", "float", "int", "byte", "short", "double"],
      built_in: ["super", "this"]
    }, c2 = { className: "meta", begin: "@" + t2, contains: [{
      begin: /\(/,
      end: /\)/,
      contains: ["self"]
    }] }, l4 = {
      className: "params",
      begin: /\(/,
      end: /\)/,
      keywords: o2,
      relevance: 0,
      contains: [e2.C_BLOCK_COMMENT_MODE],
      endsParent: true
    };
    return {
      name: "Java",
      aliases: ["jsp"],
      keywords: o2,
      illegal: /<\/|#/,
      contains: [e2.COMMENT("/\\*\\*", "\\*/", { relevance: 0, contains: [{
        begin: /\w+@/,
        relevance: 0
      }, { className: "doctag", begin: "@[A-Za-z]+" }] }), {
        begin: /import java\.[a-z]+\./,
        keywords: "import",
        relevance: 2
      }, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, {
        begin: /"""/,
        end: /"""/,
        className: "string",
        contains: [e2.BACKSLASH_ESCAPE]
      }, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, {
        match: [/\b(?:class|interface|enum|extends|implements|new)/, /\s+/, t2],
        className: {
          1: "keyword",
          3: "title.class"
        }
      }, { match: /non-sealed/, scope: "keyword" }, {
        beginKeywords: "new throw return else yield assert",
        relevance: 0
      }, {
        begin: [t2, n3.concat(s2, a2, /\s+/), t2, a2, /\s*/, /=(?!=)/],
        className: {
          1: "type",
          3: "variable",
          6: "operator"
        }
      }, { begin: [/record/, /\s+/, t2], className: {
        1: "keyword",
        3: "title.class"
      }, contains: [l4, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE] }, {
        begin: [t2, n3.concat(s2, a2, /\s+/), t2, /\s*(?=\()/],
        className: {
          1: "type",
          3: "title.function"
        },
        keywords: o2,
        contains: [{
          className: "params",
          begin: /\(/,
          end: /\)/,
          keywords: o2,
          relevance: 0,
          contains: [c2, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, Ue2, e2.C_BLOCK_COMMENT_MODE]
        }, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE]
      }, Ue2, c2]
    };
  },
  grmr_javascript: ge2,
  grmr_json: (e2) => {
    const n3 = ["true", "false", "null"], t2 = {
      scope: "literal",
      beginKeywords: n3.join(" ")
    };
    return {
      name: "JSON",
      aliases: ["jsonc", "json5"],
      keywords: { literal: n3 },
      contains: [{
        className: "attr",
        begin: /(("(\\.|[^\\"\r\n])*")|('(\\.|[^\\'\r\n])*'))(?=\s*:)/,
        relevance: 1.01
      }, {
        match: /[{}[\],:]/,
        className: "punctuation",
        relevance: 0
      }, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, t2, ae2, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE],
      illegal: "\\S"
    };
  },
  grmr_kotlin: (e2) => {
    const n3 = {
      keyword: "abstract as val var vararg get set class object open private protected public noinline crossinline dynamic final enum if else do while for when throw try catch finally import package is in fun override companion reified inline lateinit init interface annotation data sealed internal infix operator out by constructor super tailrec where const inner suspend typealias external expect actual",
      built_in: "Byte Short Char Int Long Boolean Float Double Void Unit Nothing",
      literal: "true false null"
    }, t2 = {
      className: "symbol",
      begin: e2.UNDERSCORE_IDENT_RE + "@"
    }, a2 = { className: "subst", begin: /\$\{/, end: /\}/, contains: [e2.C_NUMBER_MODE] }, i2 = {
      className: "variable",
      begin: "\\$" + e2.UNDERSCORE_IDENT_RE
    }, r2 = {
      className: "string",
      variants: [{ begin: '"""', end: '"""(?=[^"])', contains: [i2, a2] }, {
        begin: "'",
        end: "'",
        illegal: /\n/,
        contains: [e2.BACKSLASH_ESCAPE]
      }, {
        begin: '"',
        end: '"',
        illegal: /\n/,
        contains: [e2.BACKSLASH_ESCAPE, i2, a2]
      }]
    };
    a2.contains.push(r2);
    const s2 = {
      className: "meta",
      begin: "@(?:file|property|field|get|set|receiver|param|setparam|delegate)\\s*:(?:\\s*" + e2.UNDERSCORE_IDENT_RE + ")?"
    }, o2 = {
      className: "meta",
      begin: "@" + e2.UNDERSCORE_IDENT_RE,
      contains: [{
        begin: /\(/,
        end: /\)/,
        contains: [e2.inherit(r2, { className: "string" }), "self"]
      }]
    }, c2 = Ue2, l4 = e2.COMMENT("/\\*", "\\*/", { contains: [e2.C_BLOCK_COMMENT_MODE] }), d2 = {
      variants: [{ className: "type", begin: e2.UNDERSCORE_IDENT_RE }, {
        begin: /\(/,
        end: /\)/,
        contains: []
      }]
    }, g3 = d2;
    return g3.variants[1].contains = [d2], d2.variants[1].contains = [g3], {
      name: "Kotlin",
      aliases: ["kt", "kts", "ktm", "ktx"],
      keywords: n3,
      contains: [e2.COMMENT("/\\*\\*", "\\*/", { relevance: 0, contains: [{
        className: "doctag",
        begin: "@[A-Za-z]+"
      }] }), e2.C_LINE_COMMENT_MODE, l4, {
        className: "keyword",
        begin: /\b(break|continue|return|this)\b/,
        starts: { contains: [{
          className: "symbol",
          begin: /@\w+/
        }] }
      }, t2, s2, o2, {
        className: "function",
        beginKeywords: "fun",
        end: "[(]|$",
        returnBegin: true,
        excludeEnd: true,
        keywords: n3,
        relevance: 5,
        contains: [{
          begin: e2.UNDERSCORE_IDENT_RE + "\\s*\\(",
          returnBegin: true,
          relevance: 0,
          contains: [e2.UNDERSCORE_TITLE_MODE]
        }, {
          className: "type",
          begin: /</,
          end: />/,
          keywords: "reified",
          relevance: 0
        }, {
          className: "params",
          begin: /\(/,
          end: /\)/,
          endsParent: true,
          keywords: n3,
          relevance: 0,
          contains: [{
            begin: /:/,
            end: /[=,\/]/,
            endsWithParent: true,
            contains: [d2, e2.C_LINE_COMMENT_MODE, l4],
            relevance: 0
          }, e2.C_LINE_COMMENT_MODE, l4, s2, o2, r2, e2.C_NUMBER_MODE]
        }, l4]
      }, {
        begin: [/class|interface|trait/, /\s+/, e2.UNDERSCORE_IDENT_RE],
        beginScope: {
          3: "title.class"
        },
        keywords: "class interface trait",
        end: /[:\{(]|$/,
        excludeEnd: true,
        illegal: "extends implements",
        contains: [{
          beginKeywords: "public protected internal private constructor"
        }, e2.UNDERSCORE_TITLE_MODE, {
          className: "type",
          begin: /</,
          end: />/,
          excludeBegin: true,
          excludeEnd: true,
          relevance: 0
        }, {
          className: "type",
          begin: /[,:]\s*/,
          end: /[<\(,){\s]|$/,
          excludeBegin: true,
          returnEnd: true
        }, s2, o2]
      }, r2, {
        className: "meta",
        begin: "^#!/usr/bin/env",
        end: "$",
        illegal: "\n"
      }, c2]
    };
  },
  grmr_less: (e2) => {
    const n3 = Ce2(e2), t2 = Be2, a2 = "[\\w-]+", i2 = "(" + a2 + "|@\\{" + a2 + "\\})", r2 = [], s2 = [], o2 = (e3) => ({
      className: "string",
      begin: "~?" + e3 + ".*?" + e3
    }), c2 = (e3, n4, t3) => ({
      className: e3,
      begin: n4,
      relevance: t3
    }), l4 = {
      $pattern: /[a-z-]+/,
      keyword: "and or not only",
      attribute: Re2.join(" ")
    }, d2 = {
      begin: "\\(",
      end: "\\)",
      contains: s2,
      keywords: l4,
      relevance: 0
    };
    s2.push(e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, o2("'"), o2('"'), n3.CSS_NUMBER_MODE, {
      begin: "(url|data-uri)\\(",
      starts: {
        className: "string",
        end: "[\\)\\n]",
        excludeEnd: true
      }
    }, n3.UNICODE_RANGE, n3.HEXCOLOR, d2, c2("variable", "@@?" + a2, 10), c2("variable", "@\\{" + a2 + "\\}"), c2("built_in", "~?`[^`]*?`"), {
      className: "attribute",
      begin: a2 + "\\s*:",
      end: ":",
      returnBegin: true,
      excludeEnd: true
    }, n3.IMPORTANT, { beginKeywords: "and not" }, n3.FUNCTION_DISPATCH);
    const g3 = s2.concat({
      begin: /\{/,
      end: /\}/,
      contains: r2
    }), u2 = {
      beginKeywords: "when",
      endsWithParent: true,
      contains: [{ beginKeywords: "and not" }].concat(s2)
    }, b2 = {
      begin: i2 + "\\s*:",
      returnBegin: true,
      end: /[;}]/,
      relevance: 0,
      contains: [{
        begin: /-(webkit|moz|ms|o)-/
      }, n3.CSS_VARIABLE, {
        className: "attribute",
        begin: "\\b(" + Le2.join("|") + ")\\b",
        end: /(?=:)/,
        starts: { endsWithParent: true, illegal: "[<=$]", relevance: 0, contains: s2 }
      }]
    }, m2 = {
      className: "keyword",
      begin: "@(import|media|charset|font-face|(-[a-z]+-)?keyframes|supports|document|namespace|page|viewport|host)\\b",
      starts: { end: "[;{}]", keywords: l4, returnEnd: true, contains: s2, relevance: 0 }
    }, p2 = {
      className: "variable",
      variants: [{ begin: "@" + a2 + "\\s*:", relevance: 15 }, {
        begin: "@" + a2
      }],
      starts: { end: "[;}]", returnEnd: true, contains: g3 }
    }, _3 = {
      variants: [{
        begin: "[\\.#:&\\[>]",
        end: "[;{}]"
      }, { begin: i2, end: /\{/ }],
      returnBegin: true,
      returnEnd: true,
      illegal: `[<='$"]`,
      relevance: 0,
      contains: [e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, u2, c2("keyword", "all\\b"), c2("variable", "@\\{" + a2 + "\\}"), {
        begin: "\\b(" + Te2.join("|") + ")\\b",
        className: "selector-tag"
      }, n3.CSS_NUMBER_MODE, c2("selector-tag", i2, 0), c2("selector-id", "#" + i2), c2("selector-class", "\\." + i2, 0), c2("selector-tag", "&", 0), n3.ATTRIBUTE_SELECTOR_MODE, {
        className: "selector-pseudo",
        begin: ":(" + De2.join("|") + ")"
      }, {
        className: "selector-pseudo",
        begin: ":(:)?(" + Ie2.join("|") + ")"
      }, {
        begin: /\(/,
        end: /\)/,
        relevance: 0,
        contains: g3
      }, { begin: "!important" }, n3.FUNCTION_DISPATCH]
    }, h2 = {
      begin: a2 + `:(:)?(${t2.join("|")})`,
      returnBegin: true,
      contains: [_3]
    };
    return r2.push(e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, m2, p2, h2, b2, _3, u2, n3.FUNCTION_DISPATCH), { name: "Less", case_insensitive: true, illegal: `[=>'/<($"]`, contains: r2 };
  },
  grmr_lua: (e2) => {
    const n3 = "\\[=*\\[", t2 = "\\]=*\\]", a2 = {
      begin: n3,
      end: t2,
      contains: ["self"]
    }, i2 = [e2.COMMENT("--(?!" + n3 + ")", "$"), e2.COMMENT("--" + n3, t2, {
      contains: [a2],
      relevance: 10
    })];
    return { name: "Lua", aliases: ["pluto"], keywords: {
      $pattern: e2.UNDERSCORE_IDENT_RE,
      literal: "true false nil",
      keyword: "and break do else elseif end for goto if in local global not or repeat return then until while",
      built_in: "_G _ENV _VERSION __index __newindex __mode __call __metatable __tostring __len __gc __add __sub __mul __div __mod __pow __concat __unm __eq __lt __le assert collectgarbage dofile error getfenv getmetatable ipairs load loadfile loadstring module next pairs pcall print rawequal rawget rawset require select setfenv setmetatable tonumber tostring type unpack xpcall arg self coroutine resume yield status wrap create running debug getupvalue debug sethook getmetatable gethook setmetatable setlocal traceback setfenv getinfo setupvalue getlocal getregistry getfenv io lines write close flush open output type read stderr stdin input stdout popen tmpfile math log max acos huge ldexp pi cos tanh pow deg tan cosh sinh random randomseed frexp ceil floor rad abs sqrt modf asin min mod fmod log10 atan2 exp sin atan os exit setlocale date getenv difftime remove time clock tmpname rename execute package preload loadlib loaded loaders cpath config path seeall string sub upper len gfind rep find match char dump gmatch reverse byte format gsub lower table setn insert getn foreachi maxn foreach concat sort remove"
    }, contains: i2.concat([{
      className: "function",
      beginKeywords: "function",
      end: "\\)",
      contains: [e2.inherit(e2.TITLE_MODE, {
        begin: "([_a-zA-Z]\\w*\\.)*([_a-zA-Z]\\w*:)?[_a-zA-Z]\\w*"
      }), {
        className: "params",
        begin: "\\(",
        endsWithParent: true,
        contains: i2
      }].concat(i2)
    }, e2.C_NUMBER_MODE, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE, {
      className: "string",
      begin: n3,
      end: t2,
      contains: [a2],
      relevance: 5
    }]) };
  },
  grmr_makefile: (e2) => {
    const n3 = {
      className: "variable",
      variants: [{
        begin: "\\$\\(" + e2.UNDERSCORE_IDENT_RE + "\\)",
        contains: [e2.BACKSLASH_ESCAPE]
      }, { begin: /\$[@%<?\^\+\*]/ }]
    }, t2 = {
      className: "string",
      begin: /"/,
      end: /"/,
      contains: [e2.BACKSLASH_ESCAPE, n3]
    }, a2 = {
      className: "variable",
      begin: /\$\([\w-]+\s/,
      end: /\)/,
      keywords: {
        built_in: "subst patsubst strip findstring filter filter-out sort word wordlist firstword lastword dir notdir suffix basename addsuffix addprefix join wildcard realpath abspath error warning shell origin flavor foreach if or and call eval file value"
      },
      contains: [n3, t2]
    }, i2 = { begin: "^" + e2.UNDERSCORE_IDENT_RE + "\\s*(?=[:+?]?=)" }, r2 = {
      className: "section",
      begin: /^[^\s]+:/,
      end: /$/,
      contains: [n3]
    };
    return {
      name: "Makefile",
      aliases: ["mk", "mak", "make"],
      keywords: {
        $pattern: /[\w-]+/,
        keyword: "define endef undefine ifdef ifndef ifeq ifneq else endif include -include sinclude override export unexport private vpath"
      },
      contains: [e2.HASH_COMMENT_MODE, n3, t2, a2, i2, {
        className: "meta",
        begin: /^\.PHONY:/,
        end: /$/,
        keywords: { $pattern: /[\.\w]+/, keyword: ".PHONY" }
      }, r2]
    };
  },
  grmr_markdown: (e2) => {
    const n3 = { begin: /<\/?[A-Za-z_]/, end: ">", subLanguage: "xml", relevance: 0 }, t2 = {
      variants: [{ begin: /\[.+?\]\[.*?\]/, relevance: 0 }, {
        begin: /\[.+?\]\(((data|javascript|mailto):|(?:http|ftp)s?:\/\/).*?\)/,
        relevance: 2
      }, {
        begin: e2.regex.concat(/\[.+?\]\(/, /[A-Za-z][A-Za-z0-9+.-]*/, /:\/\/.*?\)/),
        relevance: 2
      }, { begin: /\[.+?\]\([./?&#].*?\)/, relevance: 1 }, {
        begin: /\[.*?\]\(.*?\)/,
        relevance: 0
      }],
      returnBegin: true,
      contains: [{
        match: /\[(?=\])/
      }, {
        className: "string",
        relevance: 0,
        begin: "\\[",
        end: "\\]",
        excludeBegin: true,
        returnEnd: true
      }, {
        className: "link",
        relevance: 0,
        begin: "\\]\\(",
        end: "\\)",
        excludeBegin: true,
        excludeEnd: true
      }, {
        className: "symbol",
        relevance: 0,
        begin: "\\]\\[",
        end: "\\]",
        excludeBegin: true,
        excludeEnd: true
      }]
    }, a2 = {
      className: "strong",
      contains: [],
      variants: [{ begin: /_{2}(?!\s)/, end: /_{2}/ }, { begin: /\*{2}(?!\s)/, end: /\*{2}/ }]
    }, i2 = { className: "emphasis", contains: [], variants: [{ begin: /\*(?![*\s])/, end: /\*/ }, {
      begin: /_(?![_\s])/,
      end: /_/,
      relevance: 0
    }] }, r2 = e2.inherit(a2, {
      contains: []
    }), s2 = e2.inherit(i2, { contains: [] });
    a2.contains.push(s2), i2.contains.push(r2);
    let o2 = [n3, t2];
    return [a2, i2, r2, s2].forEach((e3) => {
      e3.contains = e3.contains.concat(o2);
    }), o2 = o2.concat(a2, i2), { name: "Markdown", aliases: ["md", "mkdown", "mkd"], contains: [{
      className: "section",
      variants: [{ begin: "^#{1,6}", end: "$", contains: o2 }, {
        begin: "(?=^.+?\\n[=-]{2,}$)",
        contains: [{ begin: "^[=-]*$" }, {
          begin: "^",
          end: "\\n",
          contains: o2
        }]
      }]
    }, n3, {
      className: "bullet",
      begin: "^[ 	]*([*+-]|(\\d+\\.))(?=\\s+)",
      end: "\\s+",
      excludeEnd: true
    }, { match: /^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$/ }, a2, i2, {
      className: "quote",
      begin: "^>\\s+",
      contains: o2,
      end: "$"
    }, {
      className: "code",
      variants: [{ begin: "(`{3,})[^`](.|\\n)*?\\1`*[ ]*" }, {
        begin: "(~{3,})[^~](.|\\n)*?\\1~*[ ]*"
      }, { begin: "```", end: "```+[ ]*$" }, {
        begin: "~~~",
        end: "~~~+[ ]*$"
      }, { begin: "`.+?`" }, {
        begin: "(?=^( {4}|\\t))",
        contains: [{ begin: "^( {4}|\\t)", end: "(\\n)$" }],
        relevance: 0
      }]
    }, t2, {
      begin: /^\[[^\n]+\]:/,
      returnBegin: true,
      contains: [{
        className: "symbol",
        begin: /\[/,
        end: /\]/,
        excludeBegin: true,
        excludeEnd: true
      }, {
        className: "link",
        begin: /:\s*/,
        end: /$/,
        excludeBegin: true
      }]
    }, {
      scope: "literal",
      match: /&([a-zA-Z0-9]+|#[0-9]{1,7}|#[Xx][0-9a-fA-F]{1,6});/
    }] };
  },
  grmr_objectivec: (e2) => {
    const n3 = /[a-zA-Z@][a-zA-Z0-9_]*/, t2 = {
      $pattern: n3,
      keyword: ["@interface", "@class", "@protocol", "@implementation"]
    };
    return {
      name: "Objective-C",
      aliases: ["mm", "objc", "obj-c", "obj-c++", "objective-c++"],
      keywords: {
        "variable.language": ["this", "super"],
        $pattern: n3,
        keyword: ["while", "export", "sizeof", "typedef", "const", "struct", "for", "union", "volatile", "static", "mutable", "if", "do", "return", "goto", "enum", "else", "break", "extern", "asm", "case", "default", "register", "explicit", "typename", "switch", "continue", "inline", "readonly", "assign", "readwrite", "self", "@synchronized", "id", "typeof", "nonatomic", "IBOutlet", "IBAction", "strong", "weak", "copy", "in", "out", "inout", "bycopy", "byref", "oneway", "__strong", "__weak", "__block", "__autoreleasing", "@private", "@protected", "@public", "@try", "@property", "@end", "@throw", "@catch", "@finally", "@autoreleasepool", "@synthesize", "@dynamic", "@selector", "@optional", "@required", "@encode", "@package", "@import", "@defs", "@compatibility_alias", "__bridge", "__bridge_transfer", "__bridge_retained", "__bridge_retain", "__covariant", "__contravariant", "__kindof", "_Nonnull", "_Nullable", "_Null_unspecified", "__FUNCTION__", "__PRETTY_FUNCTION__", "__attribute__", "getter", "setter", "retain", "unsafe_unretained", "nonnull", "nullable", "null_unspecified", "null_resettable", "class", "instancetype", "NS_DESIGNATED_INITIALIZER", "NS_UNAVAILABLE", "NS_REQUIRES_SUPER", "NS_RETURNS_INNER_POINTER", "NS_INLINE", "NS_AVAILABLE", "NS_DEPRECATED", "NS_ENUM", "NS_OPTIONS", "NS_SWIFT_UNAVAILABLE", "NS_ASSUME_NONNULL_BEGIN", "NS_ASSUME_NONNULL_END", "NS_REFINED_FOR_SWIFT", "NS_SWIFT_NAME", "NS_SWIFT_NOTHROW", "NS_DURING", "NS_HANDLER", "NS_ENDHANDLER", "NS_VALUERETURN", "NS_VOIDRETURN"],
        literal: ["false", "true", "FALSE", "TRUE", "nil", "YES", "NO", "NULL"],
        built_in: ["dispatch_once_t", "dispatch_queue_t", "dispatch_sync", "dispatch_async", "dispatch_once"],
        type: ["int", "float", "char", "unsigned", "signed", "short", "long", "double", "wchar_t", "unichar", "void", "bool", "BOOL", "id|0", "_Bool"]
      },
      illegal: "</",
      contains: [{
        className: "built_in",
        begin: "\\b(AV|CA|CF|CG|CI|CL|CM|CN|CT|MK|MP|MTK|MTL|NS|SCN|SK|UI|WK|XC)\\w+"
      }, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, e2.C_NUMBER_MODE, e2.QUOTE_STRING_MODE, e2.APOS_STRING_MODE, {
        className: "string",
        variants: [{
          begin: '@"',
          end: '"',
          illegal: "\\n",
          contains: [e2.BACKSLASH_ESCAPE]
        }]
      }, {
        className: "meta",
        begin: /#\s*[a-z]+\b/,
        end: /$/,
        keywords: {
          keyword: "if else elif endif define undef warning error line pragma ifdef ifndef include"
        },
        contains: [{ begin: /\\\n/, relevance: 0 }, e2.inherit(e2.QUOTE_STRING_MODE, {
          className: "string"
        }), {
          className: "string",
          begin: /<.*?>/,
          end: /$/,
          illegal: "\\n"
        }, e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE]
      }, {
        className: "class",
        begin: "(" + t2.keyword.join("|") + ")\\b",
        end: /(\{|$)/,
        excludeEnd: true,
        keywords: t2,
        contains: [e2.UNDERSCORE_TITLE_MODE]
      }, {
        begin: "\\." + e2.UNDERSCORE_IDENT_RE,
        relevance: 0
      }]
    };
  },
  grmr_perl: (e2) => {
    const n3 = e2.regex, t2 = /[dualxmsipngr]{0,12}/, a2 = {
      $pattern: /[\w.]+/,
      keyword: "abs accept alarm and atan2 bind binmode bless break caller chdir chmod chomp chop chown chr chroot class close closedir connect continue cos crypt dbmclose dbmopen defined delete die do dump each else elsif endgrent endhostent endnetent endprotoent endpwent endservent eof eval exec exists exit exp fcntl field fileno flock for foreach fork format formline getc getgrent getgrgid getgrnam gethostbyaddr gethostbyname gethostent getlogin getnetbyaddr getnetbyname getnetent getpeername getpgrp getpriority getprotobyname getprotobynumber getprotoent getpwent getpwnam getpwuid getservbyname getservbyport getservent getsockname getsockopt given glob gmtime goto grep gt hex if index int ioctl join keys kill last lc lcfirst length link listen local localtime log lstat lt ma map method mkdir msgctl msgget msgrcv msgsnd my ne next no not oct open opendir or ord our pack package pipe pop pos print printf prototype push q|0 qq quotemeta qw qx rand read readdir readline readlink readpipe recv redo ref rename require reset return reverse rewinddir rindex rmdir say scalar seek seekdir select semctl semget semop send setgrent sethostent setnetent setpgrp setpriority setprotoent setpwent setservent setsockopt shift shmctl shmget shmread shmwrite shutdown sin sleep socket socketpair sort splice split sprintf sqrt srand stat state study sub substr symlink syscall sysopen sysread sysseek system syswrite tell telldir tie tied time times tr truncate uc ucfirst umask undef unless unlink unpack unshift untie until use utime values vec wait waitpid wantarray warn when while write x|0 xor y|0"
    }, i2 = { className: "subst", begin: "[$@]\\{", end: "\\}", keywords: a2 }, r2 = {
      begin: /->\{/,
      end: /\}/
    }, s2 = { scope: "attr", match: /\s+:\s*\w+(\s*\(.*?\))?/ }, o2 = {
      scope: "variable",
      variants: [{ begin: /\$\d/ }, {
        begin: n3.concat(/[$%@](?!")(\^\w\b|#\w+(::\w+)*|\{\w+\}|\w+(::\w*)*)/, "(?![A-Za-z])(?![@$%])")
      }, { begin: /[$%@](?!")[^\s\w{=]|\$=/, relevance: 0 }],
      contains: [s2]
    }, c2 = {
      className: "number",
      variants: [{ match: /0?\.[0-9][0-9_]+\b/ }, {
        match: /\bv?(0|[1-9][0-9_]*(\.[0-9_]+)?|[1-9][0-9_]*)\b/
      }, {
        match: /\b0[0-7][0-7_]*\b/
      }, { match: /\b0x[0-9a-fA-F][0-9a-fA-F_]*\b/ }, {
        match: /\b0b[0-1][0-1_]*\b/
      }],
      relevance: 0
    }, l4 = [e2.BACKSLASH_ESCAPE, i2, o2], d2 = [/!/, /\//, /\|/, /\?/, /'/, /"/, /#/], g3 = (e3, a3, i3 = "\\1") => {
      const r3 = "\\1" === i3 ? i3 : n3.concat(i3, a3);
      return n3.concat(n3.concat("(?:", e3, ")"), a3, /(?:\\.|[^\\\/])*?/, r3, /(?:\\.|[^\\\/])*?/, i3, t2);
    }, u2 = (e3, a3, i3) => n3.concat(n3.concat("(?:", e3, ")"), a3, /(?:\\.|[^\\\/])*?/, i3, t2), b2 = [o2, e2.HASH_COMMENT_MODE, e2.COMMENT(/^=\w/, /=cut/, {
      endsWithParent: true
    }), r2, { className: "string", contains: l4, variants: [{
      begin: "q[qwxr]?\\s*\\(",
      end: "\\)",
      relevance: 5
    }, {
      begin: "q[qwxr]?\\s*\\[",
      end: "\\]",
      relevance: 5
    }, { begin: "q[qwxr]?\\s*\\{", end: "\\}", relevance: 5 }, {
      begin: "q[qwxr]?\\s*\\|",
      end: "\\|",
      relevance: 5
    }, {
      begin: "q[qwxr]?\\s*<",
      end: ">",
      relevance: 5
    }, { begin: "qw\\s+q", end: "q", relevance: 5 }, {
      begin: "'",
      end: "'",
      contains: [e2.BACKSLASH_ESCAPE]
    }, { begin: '"', end: '"' }, {
      begin: "`",
      end: "`",
      contains: [e2.BACKSLASH_ESCAPE]
    }, { begin: /\{\w+\}/, relevance: 0 }, {
      begin: "-?\\w+\\s*=>",
      relevance: 0
    }] }, c2, {
      begin: "(\\/\\/|" + e2.RE_STARTERS_RE + "|\\b(split|return|print|reverse|grep)\\b)\\s*",
      keywords: "split return print reverse grep",
      relevance: 0,
      contains: [e2.HASH_COMMENT_MODE, { className: "regexp", variants: [{
        begin: g3("s|tr|y", n3.either(...d2, { capture: true }))
      }, { begin: g3("s|tr|y", "\\(", "\\)") }, {
        begin: g3("s|tr|y", "\\[", "\\]")
      }, { begin: g3("s|tr|y", "\\{", "\\}") }], relevance: 2 }, {
        className: "regexp",
        variants: [{ begin: /(m|qr)\/\//, relevance: 0 }, {
          begin: u2("(?:m|qr)?", /\//, /\//)
        }, { begin: u2("m|qr", n3.either(...d2, {
          capture: true
        }), /\1/) }, { begin: u2("m|qr", /\(/, /\)/) }, { begin: u2("m|qr", /\[/, /\]/) }, {
          begin: u2("m|qr", /\{/, /\}/)
        }]
      }]
    }, {
      className: "function",
      beginKeywords: "sub method",
      end: "(\\s*\\(.*?\\))?[;{]",
      excludeEnd: true,
      relevance: 5,
      contains: [e2.TITLE_MODE, s2]
    }, {
      className: "class",
      beginKeywords: "class",
      end: "[;{]",
      excludeEnd: true,
      relevance: 5,
      contains: [e2.TITLE_MODE, s2, c2]
    }, { begin: "-\\w\\b", relevance: 0 }, {
      begin: "^__DATA__$",
      end: "^__END__$",
      subLanguage: "mojolicious",
      contains: [{
        begin: "^@@.*",
        end: "$",
        className: "comment"
      }]
    }];
    return i2.contains = b2, r2.contains = b2, {
      name: "Perl",
      aliases: ["pl", "pm"],
      keywords: a2,
      contains: b2
    };
  },
  grmr_php: (e2) => {
    const n3 = e2.regex, t2 = /(?![A-Za-z0-9])(?![$])/, a2 = n3.concat(/[a-zA-Z_\x7f-\xff][a-zA-Z0-9_\x7f-\xff]*/, t2), i2 = n3.concat(/(\\?[A-Z][a-z0-9_\x7f-\xff]+|\\?[A-Z]+(?=[A-Z][a-z0-9_\x7f-\xff])){1,}/, t2), r2 = n3.concat(/[A-Z]+/, t2), s2 = {
      scope: "variable",
      match: "\\$+" + a2
    }, o2 = { scope: "subst", variants: [{ begin: /\$\w+/ }, {
      begin: /\{\$/,
      end: /\}/
    }] }, c2 = e2.inherit(e2.APOS_STRING_MODE, {
      illegal: null
    }), l4 = "[ 	\n]", d2 = { scope: "string", variants: [e2.inherit(e2.QUOTE_STRING_MODE, {
      illegal: null,
      contains: e2.QUOTE_STRING_MODE.contains.concat(o2)
    }), c2, {
      begin: /<<<[ \t]*(?:(\w+)|"(\w+)")\n/,
      end: /[ \t]*(\w+)\b/,
      contains: e2.QUOTE_STRING_MODE.contains.concat(o2),
      "on:begin": (e3, n4) => {
        n4.data._beginMatch = e3[1] || e3[2];
      },
      "on:end": (e3, n4) => {
        n4.data._beginMatch !== e3[1] && n4.ignoreMatch();
      }
    }, e2.END_SAME_AS_BEGIN({
      begin: /<<<[ \t]*'(\w+)'\n/,
      end: /[ \t]*(\w+)\b/
    })] }, g3 = {
      scope: "number",
      variants: [{
        begin: "\\b0[bB][01]+(?:_[01]+)*\\b"
      }, { begin: "\\b0[oO][0-7]+(?:_[0-7]+)*\\b" }, {
        begin: "\\b0[xX][\\da-fA-F]+(?:_[\\da-fA-F]+)*\\b"
      }, {
        begin: "(?:\\b\\d+(?:_\\d+)*(\\.(?:\\d+(?:_\\d+)*))?|\\B\\.\\d+)(?:[eE][+-]?\\d+)?"
      }],
      relevance: 0
    }, u2 = ["false", "null", "true"], b2 = ["__CLASS__", "__DIR__", "__FILE__", "__FUNCTION__", "__COMPILER_HALT_OFFSET__", "__LINE__", "__METHOD__", "__NAMESPACE__", "__TRAIT__", "die", "echo", "exit", "include", "include_once", "print", "require", "require_once", "array", "abstract", "and", "as", "binary", "bool", "boolean", "break", "callable", "case", "catch", "class", "clone", "const", "continue", "declare", "default", "do", "double", "else", "elseif", "empty", "enddeclare", "endfor", "endforeach", "endif", "endswitch", "endwhile", "enum", "eval", "extends", "final", "finally", "float", "for", "foreach", "from", "global", "goto", "if", "implements", "instanceof", "insteadof", "int", "integer", "interface", "isset", "iterable", "list", "match|0", "mixed", "new", "never", "object", "or", "private", "protected", "public", "readonly", "real", "return", "string", "switch", "throw", "trait", "try", "unset", "use", "var", "void", "while", "xor", "yield"], m2 = ["Error|0", "AppendIterator", "ArgumentCountError", "ArithmeticError", "ArrayIterator", "ArrayObject", "AssertionError", "BadFunctionCallException", "BadMethodCallException", "CachingIterator", "CallbackFilterIterator", "CompileError", "Countable", "DirectoryIterator", "DivisionByZeroError", "DomainException", "EmptyIterator", "ErrorException", "Exception", "FilesystemIterator", "FilterIterator", "GlobIterator", "InfiniteIterator", "InvalidArgumentException", "IteratorIterator", "LengthException", "LimitIterator", "LogicException", "MultipleIterator", "NoRewindIterator", "OutOfBoundsException", "OutOfRangeException", "OuterIterator", "OverflowException", "ParentIterator", "ParseError", "RangeException", "RecursiveArrayIterator", "RecursiveCachingIterator", "RecursiveCallbackFilterIterator", "RecursiveDirectoryIterator", "RecursiveFilterIterator", "RecursiveIterator", "RecursiveIteratorIterator", "RecursiveRegexIterator", "RecursiveTreeIterator", "RegexIterator", "RuntimeException", "SeekableIterator", "SplDoublyLinkedList", "SplFileInfo", "SplFileObject", "SplFixedArray", "SplHeap", "SplMaxHeap", "SplMinHeap", "SplObjectStorage", "SplObserver", "SplPriorityQueue", "SplQueue", "SplStack", "SplSubject", "SplTempFileObject", "TypeError", "UnderflowException", "UnexpectedValueException", "UnhandledMatchError", "ArrayAccess", "BackedEnum", "Closure", "Fiber", "Generator", "Iterator", "IteratorAggregate", "Serializable", "Stringable", "Throwable", "Traversable", "UnitEnum", "WeakReference", "WeakMap", "Directory", "__PHP_Incomplete_Class", "parent", "php_user_filter", "self", "static", "stdClass"], p2 = {
      keyword: b2,
      literal: ((e3) => {
        const n4 = [];
        return e3.forEach((e4) => {
          n4.push(e4), e4.toLowerCase() === e4 ? n4.push(e4.toUpperCase()) : n4.push(e4.toLowerCase());
        }), n4;
      })(u2),
      built_in: m2
    }, _3 = (e3) => e3.map((e4) => e4.replace(/\|\d+$/, "")), h2 = { variants: [{
      match: [/new/, n3.concat(l4, "+"), n3.concat("(?!", _3(m2).join("\\b|"), "\\b)"), i2],
      scope: {
        1: "keyword",
        4: "title.class"
      }
    }] }, f2 = n3.concat(a2, "\\b(?!\\()"), E2 = { variants: [{
      match: [n3.concat(/::/, n3.lookahead(/(?!class\b)/)), f2],
      scope: {
        2: "variable.constant"
      }
    }, { match: [/::/, /class/], scope: { 2: "variable.language" } }, {
      match: [i2, n3.concat(/::/, n3.lookahead(/(?!class\b)/)), f2],
      scope: {
        1: "title.class",
        3: "variable.constant"
      }
    }, {
      match: [i2, n3.concat("::", n3.lookahead(/(?!class\b)/))],
      scope: { 1: "title.class" }
    }, { match: [i2, /::/, /class/], scope: {
      1: "title.class",
      3: "variable.language"
    } }] }, y3 = {
      scope: "attr",
      match: n3.concat(a2, n3.lookahead(":"), n3.lookahead(/(?!::)/))
    }, w3 = {
      relevance: 0,
      begin: /\(/,
      end: /\)/,
      keywords: p2,
      contains: [y3, s2, E2, e2.C_BLOCK_COMMENT_MODE, e2.C_LINE_COMMENT_MODE, e2.HASH_COMMENT_MODE, d2, g3, h2]
    }, v3 = {
      relevance: 0,
      match: [/\b/, n3.concat("(?!fn\\b|function\\b|", _3(b2).join("\\b|"), "|", _3(m2).join("\\b|"), "\\b)"), a2, n3.concat(l4, "*"), n3.lookahead(/(?=\()/)],
      scope: { 3: "title.function.invoke" },
      contains: [w3]
    };
    w3.contains.push(v3);
    const N3 = [y3, E2, e2.C_BLOCK_COMMENT_MODE, e2.C_LINE_COMMENT_MODE, e2.HASH_COMMENT_MODE, d2, g3, h2], k2 = {
      begin: n3.concat(/#\[\s*\\?/, n3.either(i2, r2)),
      beginScope: "meta",
      end: /]/,
      endScope: "meta",
      keywords: { literal: u2, keyword: ["new", "array"] },
      contains: [{
        begin: /\[/,
        end: /]/,
        keywords: { literal: u2, keyword: ["new", "array"] },
        contains: ["self", ...N3]
      }, ...N3, { scope: "meta", variants: [{ match: i2 }, { match: r2 }] }]
    };
    return {
      case_insensitive: false,
      keywords: p2,
      contains: [k2, e2.HASH_COMMENT_MODE, e2.COMMENT("//", "$"), e2.COMMENT("/\\*", "\\*/", {
        contains: [{ scope: "doctag", match: "@[A-Za-z]+" }]
      }), {
        match: /__halt_compiler\(\);/,
        keywords: "__halt_compiler",
        starts: {
          scope: "comment",
          end: e2.MATCH_NOTHING_RE,
          contains: [{ match: /\?>/, scope: "meta", endsParent: true }]
        }
      }, { scope: "meta", variants: [{
        begin: /<\?php/,
        relevance: 10
      }, { begin: /<\?=/ }, { begin: /<\?/, relevance: 0.1 }, {
        begin: /\?>/
      }] }, { scope: "variable.language", match: /\$this\b/ }, s2, v3, E2, {
        match: [/const/, /\s/, a2],
        scope: { 1: "keyword", 3: "variable.constant" }
      }, h2, {
        scope: "function",
        relevance: 0,
        beginKeywords: "fn function",
        end: /[;{]/,
        excludeEnd: true,
        illegal: "[$%\\[]",
        contains: [{
          beginKeywords: "use"
        }, e2.UNDERSCORE_TITLE_MODE, { begin: "=>", endsParent: true }, {
          scope: "params",
          begin: "\\(",
          end: "\\)",
          excludeBegin: true,
          excludeEnd: true,
          keywords: p2,
          contains: ["self", k2, s2, E2, e2.C_BLOCK_COMMENT_MODE, e2.C_LINE_COMMENT_MODE, e2.HASH_COMMENT_MODE, d2, g3]
        }]
      }, {
        scope: "class",
        variants: [{ beginKeywords: "enum", illegal: /[($"]/ }, {
          beginKeywords: "class interface trait",
          illegal: /[:($"]/
        }],
        relevance: 0,
        end: /\{/,
        excludeEnd: true,
        contains: [{
          beginKeywords: "extends implements"
        }, e2.UNDERSCORE_TITLE_MODE]
      }, {
        beginKeywords: "namespace",
        relevance: 0,
        end: ";",
        illegal: /[.']/,
        contains: [e2.inherit(e2.UNDERSCORE_TITLE_MODE, {
          scope: "title.class"
        })]
      }, { beginKeywords: "use", relevance: 0, end: ";", contains: [{
        match: /\b(as|const|function)\b/,
        scope: "keyword"
      }, e2.UNDERSCORE_TITLE_MODE] }, d2, g3]
    };
  },
  grmr_php_template: (e2) => ({ name: "PHP template", subLanguage: "xml", contains: [{
    begin: /<\?(php|=)?/,
    end: /\?>/,
    subLanguage: "php",
    contains: [{
      begin: "/\\*",
      end: "\\*/",
      skip: true
    }, { begin: 'b"', end: '"', skip: true }, {
      begin: "b'",
      end: "'",
      skip: true
    }, e2.inherit(e2.APOS_STRING_MODE, {
      illegal: null,
      className: null,
      contains: null,
      skip: true
    }), e2.inherit(e2.QUOTE_STRING_MODE, {
      illegal: null,
      className: null,
      contains: null,
      skip: true
    })]
  }] }),
  grmr_plaintext: (e2) => ({
    name: "Plain text",
    aliases: ["text", "txt"],
    disableAutodetect: true
  }),
  grmr_python: (e2) => {
    const n3 = e2.regex, t2 = /[\p{XID_Start}_]\p{XID_Continue}*/u, a2 = ["and", "as", "assert", "async", "await", "break", "case", "class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "lazy", "match", "nonlocal|10", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"], i2 = {
      $pattern: /[A-Za-z]\w+|__\w+__/,
      keyword: a2,
      built_in: ["__import__", "abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile", "complex", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec", "filter", "float", "format", "frozendict", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "sentinel", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip"],
      literal: ["__debug__", "Ellipsis", "False", "None", "NotImplemented", "True"],
      type: ["Any", "Callable", "Coroutine", "Dict", "List", "Literal", "Generic", "Optional", "Sequence", "Set", "Tuple", "Type", "Union"]
    }, r2 = { className: "meta", begin: /^(>>>|\.\.\.) / }, s2 = {
      className: "subst",
      begin: /\{/,
      end: /\}/,
      keywords: i2,
      illegal: /#/
    }, o2 = { begin: /\{\{/, relevance: 0 }, c2 = {
      className: "string",
      contains: [e2.BACKSLASH_ESCAPE],
      variants: [{
        begin: /([uU]|[bB]|[rR]|[bB][rR]|[rR][bB])?'''/,
        end: /'''/,
        contains: [e2.BACKSLASH_ESCAPE, r2],
        relevance: 10
      }, {
        begin: /([uU]|[bB]|[rR]|[bB][rR]|[rR][bB])?"""/,
        end: /"""/,
        contains: [e2.BACKSLASH_ESCAPE, r2],
        relevance: 10
      }, {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])'''/,
        end: /'''/,
        contains: [e2.BACKSLASH_ESCAPE, r2, o2, s2]
      }, {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])"""/,
        end: /"""/,
        contains: [e2.BACKSLASH_ESCAPE, r2, o2, s2]
      }, {
        begin: /([uU]|[rR])'/,
        end: /'/,
        relevance: 10
      }, { begin: /([uU]|[rR])"/, end: /"/, relevance: 10 }, {
        begin: /([bB]|[bB][rR]|[rR][bB])'/,
        end: /'/
      }, {
        begin: /([bB]|[bB][rR]|[rR][bB])"/,
        end: /"/
      }, {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])'/,
        end: /'/,
        contains: [e2.BACKSLASH_ESCAPE, o2, s2]
      }, {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])"/,
        end: /"/,
        contains: [e2.BACKSLASH_ESCAPE, o2, s2]
      }, e2.APOS_STRING_MODE, e2.QUOTE_STRING_MODE]
    }, l4 = "[0-9](_?[0-9])*", d2 = `(\\b(${l4}))?\\.(${l4})|\\b(${l4})\\.`, g3 = "\\b|" + a2.join("|"), u2 = {
      className: "number",
      relevance: 0,
      variants: [{
        begin: `(\\b(${l4})|(${d2}))[eE][+-]?(${l4})[jJ]?(?=${g3})`
      }, { begin: `(${d2})[jJ]?` }, {
        begin: `\\b([1-9](_?[0-9])*|0+(_?0)*)[lLjJ]?(?=${g3})`
      }, {
        begin: `\\b0[bB](_?[01])+[lL]?(?=${g3})`
      }, {
        begin: `\\b0[oO](_?[0-7])+[lL]?(?=${g3})`
      }, { begin: `\\b0[xX](_?[0-9a-fA-F])+[lL]?(?=${g3})` }, {
        begin: `\\b(${l4})[jJ](?=${g3})`
      }]
    }, b2 = {
      className: "comment",
      begin: n3.lookahead(/# type:/),
      end: /$/,
      keywords: i2,
      contains: [{ begin: /# type:/ }, { begin: /#/, end: /\b\B/, endsWithParent: true }]
    }, m2 = {
      className: "params",
      variants: [{ className: "", begin: /\(\s*\)/, skip: true }, {
        begin: /\(/,
        end: /\)/,
        excludeBegin: true,
        excludeEnd: true,
        keywords: i2,
        contains: ["self", r2, u2, c2, e2.HASH_COMMENT_MODE]
      }]
    };
    return s2.contains = [c2, u2, r2], {
      name: "Python",
      aliases: ["py", "gyp", "ipython"],
      unicodeRegex: true,
      keywords: i2,
      illegal: /(<\/|\?)|=>/,
      contains: [r2, u2, {
        scope: "variable.language",
        match: /\bself\b/
      }, { beginKeywords: "if", relevance: 0 }, {
        match: /\bor\b/,
        scope: "keyword"
      }, c2, b2, e2.HASH_COMMENT_MODE, { match: [/\bdef/, /\s+/, t2], scope: {
        1: "keyword",
        3: "title.function"
      }, contains: [m2] }, {
        variants: [{
          match: [/\bclass/, /\s+/, t2, /\s*/, /\(\s*/, t2, /\s*\)/]
        }, { match: [/\bclass/, /\s+/, t2] }],
        scope: { 1: "keyword", 3: "title.class", 6: "title.class.inherited" }
      }, {
        className: "meta",
        begin: /^[\t ]*@/,
        end: /(?=#)|$/,
        contains: [u2, m2, c2]
      }]
    };
  },
  grmr_python_repl: (e2) => ({ aliases: ["pycon"], contains: [{
    className: "meta.prompt",
    starts: { end: / |$/, starts: { end: "$", subLanguage: "python" } },
    variants: [{
      begin: /^>>>(?=[ ]|$)/
    }, { begin: /^\.\.\.(?=[ ]|$)/ }]
  }] }),
  grmr_r: (e2) => {
    const n3 = e2.regex, t2 = /(?:(?:[a-zA-Z]|\.[._a-zA-Z])[._a-zA-Z0-9]*)|\.(?!\d)/, a2 = n3.either(/0[xX][0-9a-fA-F]+\.[0-9a-fA-F]*[pP][+-]?\d+i?/, /0[xX][0-9a-fA-F]+(?:[pP][+-]?\d+)?[Li]?/, /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[Li]?/), i2 = /[=!<>:]=|\|\||&&|:::?|<-|<<-|->>|->|\|>|[-+*\/?!$&|:<=>@^~]|\*\*/, r2 = n3.either(/[()]/, /[{}]/, /\[\[/, /[[\]]/, /\\/, /,/);
    return { name: "R", keywords: {
      $pattern: t2,
      keyword: "function if in break next repeat else for while",
      literal: "NULL NA TRUE FALSE Inf NaN NA_integer_|10 NA_real_|10 NA_character_|10 NA_complex_|10",
      built_in: "LETTERS letters month.abb month.name pi T F abs acos acosh all any anyNA Arg as.call as.character as.complex as.double as.environment as.integer as.logical as.null.default as.numeric as.raw asin asinh atan atanh attr attributes baseenv browser c call ceiling class Conj cos cosh cospi cummax cummin cumprod cumsum digamma dim dimnames emptyenv exp expression floor forceAndCall gamma gc.time globalenv Im interactive invisible is.array is.atomic is.call is.character is.complex is.double is.environment is.expression is.finite is.function is.infinite is.integer is.language is.list is.logical is.matrix is.na is.name is.nan is.null is.numeric is.object is.pairlist is.raw is.recursive is.single is.symbol lazyLoadDBfetch length lgamma list log max min missing Mod names nargs nzchar oldClass on.exit pos.to.env proc.time prod quote range Re rep retracemem return round seq_along seq_len seq.int sign signif sin sinh sinpi sqrt standardGeneric substitute sum switch tan tanh tanpi tracemem trigamma trunc unclass untracemem UseMethod xtfrm"
    }, contains: [e2.COMMENT(/#'/, /$/, {
      contains: [{
        scope: "doctag",
        match: /@examples/,
        starts: {
          end: n3.lookahead(n3.either(/\n^#'\s*(?=@[a-zA-Z]+)/, /\n^(?!#')/)),
          endsParent: true
        }
      }, { scope: "doctag", begin: "@param", end: /$/, contains: [{
        scope: "variable",
        variants: [{ match: t2 }, { match: /`(?:\\.|[^`\\])+`/ }],
        endsParent: true
      }] }, { scope: "doctag", match: /@[a-zA-Z]+/ }, { scope: "keyword", match: /\\[a-zA-Z]+/ }]
    }), e2.HASH_COMMENT_MODE, {
      scope: "string",
      contains: [e2.BACKSLASH_ESCAPE],
      variants: [e2.END_SAME_AS_BEGIN({
        begin: /[rR]"(-*)\(/,
        end: /\)(-*)"/
      }), e2.END_SAME_AS_BEGIN({
        begin: /[rR]"(-*)\{/,
        end: /\}(-*)"/
      }), e2.END_SAME_AS_BEGIN({
        begin: /[rR]"(-*)\[/,
        end: /\](-*)"/
      }), e2.END_SAME_AS_BEGIN({
        begin: /[rR]'(-*)\(/,
        end: /\)(-*)'/
      }), e2.END_SAME_AS_BEGIN({
        begin: /[rR]'(-*)\{/,
        end: /\}(-*)'/
      }), e2.END_SAME_AS_BEGIN({ begin: /[rR]'(-*)\[/, end: /\](-*)'/ }), {
        begin: '"',
        end: '"',
        relevance: 0
      }, { begin: "'", end: "'", relevance: 0 }]
    }, { relevance: 0, variants: [{ scope: {
      1: "operator",
      2: "number"
    }, match: [i2, a2] }, {
      scope: { 1: "operator", 2: "number" },
      match: [/%[^%]*%/, a2]
    }, { scope: { 1: "punctuation", 2: "number" }, match: [r2, a2] }, { scope: {
      2: "number"
    }, match: [/[^a-zA-Z0-9._]|^/, a2] }] }, {
      scope: { 3: "operator" },
      match: [t2, /\s+/, /<-/, /\s+/]
    }, { scope: "operator", relevance: 0, variants: [{ match: i2 }, {
      match: /%[^%]*%/
    }] }, { scope: "punctuation", relevance: 0, match: r2 }, {
      begin: "`",
      end: "`",
      contains: [{ begin: /\\./ }]
    }] };
  },
  grmr_ruby: (e2) => {
    const n3 = e2.regex, t2 = "([a-zA-Z_]\\w*[!?=]?|[-+~]@|<<|>>|=~|===?|<=>|[<>]=?|\\*\\*|[-/+%^&*~`|]|\\[\\]=?)", a2 = n3.either(/\b([A-Z]+[a-z0-9]+)+/, /\b([A-Z]+[a-z0-9]+)+[A-Z]+/), i2 = n3.concat(a2, /(::\w+)*/), r2 = {
      "variable.constant": ["__FILE__", "__LINE__", "__ENCODING__"],
      "variable.language": ["self", "super"],
      keyword: ["alias", "and", "begin", "BEGIN", "break", "case", "class", "defined", "do", "else", "elsif", "end", "END", "ensure", "for", "if", "in", "module", "next", "not", "or", "redo", "require", "rescue", "retry", "return", "then", "undef", "unless", "until", "when", "while", "yield", "include", "extend", "prepend", "public", "private", "protected", "raise", "throw"],
      built_in: ["proc", "lambda", "attr_accessor", "attr_reader", "attr_writer", "define_method", "private_constant", "module_function"],
      literal: ["true", "false", "nil"]
    }, s2 = { className: "doctag", begin: "@[A-Za-z]+" }, o2 = {
      begin: "#<",
      end: ">"
    }, c2 = [e2.COMMENT("#", "$", {
      contains: [s2]
    }), e2.COMMENT("^=begin", "^=end", {
      contains: [s2],
      relevance: 10
    }), e2.COMMENT("^__END__", e2.MATCH_NOTHING_RE)], l4 = {
      className: "subst",
      begin: /#\{/,
      end: /\}/,
      keywords: r2
    }, d2 = {
      className: "string",
      contains: [e2.BACKSLASH_ESCAPE, l4],
      variants: [{ begin: /'/, end: /'/ }, { begin: /"/, end: /"/ }, { begin: /`/, end: /`/ }, {
        begin: /%[qQwWx]?\(/,
        end: /\)/
      }, { begin: /%[qQwWx]?\[/, end: /\]/ }, {
        begin: /%[qQwWx]?\{/,
        end: /\}/
      }, { begin: /%[qQwWx]?</, end: />/ }, {
        begin: /%[qQwWx]?\//,
        end: /\//
      }, { begin: /%[qQwWx]?%/, end: /%/ }, { begin: /%[qQwWx]?-/, end: /-/ }, {
        begin: /%[qQwWx]?\|/,
        end: /\|/
      }, { begin: /\B\?(\\\d{1,3})/ }, {
        begin: /\B\?(\\x[A-Fa-f0-9]{1,2})/
      }, { begin: /\B\?(\\u\{?[A-Fa-f0-9]{1,6}\}?)/ }, {
        begin: /\B\?(\\M-\\C-|\\M-\\c|\\c\\M-|\\M-|\\C-\\M-)[\x20-\x7e]/
      }, {
        begin: /\B\?\\(c|C-)[\x20-\x7e]/
      }, { begin: /\B\?\\?\S/ }, {
        begin: n3.concat(/<<[-~]?'?/, n3.lookahead(/(\w+)(?=\W)[^\n]*\n(?:[^\n]*\n)*?\s*\1\b/)),
        contains: [e2.END_SAME_AS_BEGIN({
          begin: /(\w+)/,
          end: /(\w+)/,
          contains: [e2.BACKSLASH_ESCAPE, l4]
        })]
      }]
    }, g3 = "[0-9](_?[0-9])*", u2 = {
      className: "number",
      relevance: 0,
      variants: [{
        begin: `\\b([1-9](_?[0-9])*|0)(\\.(${g3}))?([eE][+-]?(${g3})|r)?i?\\b`
      }, {
        begin: "\\b0[dD][0-9](_?[0-9])*r?i?\\b"
      }, {
        begin: "\\b0[bB][0-1](_?[0-1])*r?i?\\b"
      }, { begin: "\\b0[oO][0-7](_?[0-7])*r?i?\\b" }, {
        begin: "\\b0[xX][0-9a-fA-F](_?[0-9a-fA-F])*r?i?\\b"
      }, {
        begin: "\\b0(_?[0-7])+r?i?\\b"
      }]
    }, b2 = { variants: [{ match: /\(\)/ }, {
      className: "params",
      begin: /\(/,
      end: /(?=\))/,
      excludeBegin: true,
      endsParent: true,
      keywords: r2
    }] }, m2 = [d2, { variants: [{ match: [/class\s+/, i2, /\s+<\s+/, i2] }, {
      match: [/\b(class|module)\s+/, i2]
    }], scope: {
      2: "title.class",
      4: "title.class.inherited"
    }, keywords: r2 }, { match: [/(include|extend)\s+/, i2], scope: {
      2: "title.class"
    }, keywords: r2 }, { relevance: 0, match: [i2, /\.new[. (]/], scope: {
      1: "title.class"
    } }, {
      relevance: 0,
      match: /\b[A-Z][A-Z_0-9]+\b/,
      className: "variable.constant"
    }, { relevance: 0, match: a2, scope: "title.class" }, {
      match: [/def/, /\s+/, t2],
      scope: { 1: "keyword", 3: "title.function" },
      contains: [b2]
    }, {
      begin: "::"
    }, {
      className: "symbol",
      begin: e2.UNDERSCORE_IDENT_RE + "(!|\\?)?:",
      relevance: 0
    }, {
      className: "symbol",
      begin: ":(?!\\s)",
      contains: [d2, { begin: t2 }],
      relevance: 0
    }, u2, {
      className: "variable",
      begin: "(\\$\\W)|((\\$|@@?)(\\w+))(?=[^@$?])(?![A-Za-z])(?![@$?'])"
    }, {
      className: "params",
      begin: /\|(?!=)/,
      end: /\|/,
      excludeBegin: true,
      excludeEnd: true,
      relevance: 0,
      keywords: r2
    }, {
      begin: "(" + e2.RE_STARTERS_RE + "|unless)\\s*",
      keywords: "unless",
      contains: [{
        className: "regexp",
        contains: [e2.BACKSLASH_ESCAPE, l4],
        illegal: /\n/,
        variants: [{ begin: "/", end: "/[a-z]*" }, { begin: /%r\{/, end: /\}[a-z]*/ }, {
          begin: "%r\\(",
          end: "\\)[a-z]*"
        }, { begin: "%r!", end: "![a-z]*" }, {
          begin: "%r\\[",
          end: "\\][a-z]*"
        }]
      }].concat(o2, c2),
      relevance: 0
    }].concat(o2, c2);
    l4.contains = m2, b2.contains = m2;
    const p2 = [{
      begin: /^\s*=>/,
      starts: { end: "$", contains: m2 }
    }, {
      className: "meta.prompt",
      begin: "^([>?]>|[\\w#]+\\(\\w+\\):\\d+:\\d+[>*]|(\\w+-)?\\d+\\.\\d+\\.\\d+(p\\d+)?[^\\d][^>]+>)(?=[ ])",
      starts: { end: "$", keywords: r2, contains: m2 }
    }];
    return c2.unshift(o2), {
      name: "Ruby",
      aliases: ["rb", "gemspec", "podspec", "thor", "irb"],
      keywords: r2,
      illegal: /\/\*/,
      contains: [e2.SHEBANG({ binary: "ruby" })].concat(p2).concat(c2).concat(m2)
    };
  },
  grmr_rust: (e2) => {
    const n3 = e2.regex, t2 = /(r#)?/, a2 = n3.concat(t2, e2.UNDERSCORE_IDENT_RE), i2 = n3.concat(t2, e2.IDENT_RE), r2 = {
      scope: "title.function.invoke",
      relevance: 0,
      begin: n3.concat(/\b/, /(?!(?:let|for|while|if|else|match)\b)/, i2, n3.lookahead(/\s*\(/))
    }, s2 = "([ui](8|16|32|64|128|size)|f(16|32|64|128))?", o2 = ["drop ", "Copy", "Send", "Sized", "Sync", "Drop", "Fn", "FnMut", "FnOnce", "ToOwned", "Clone", "Debug", "PartialEq", "PartialOrd", "Eq", "Ord", "AsRef", "AsMut", "Into", "From", "Default", "Iterator", "Extend", "IntoIterator", "DoubleEndedIterator", "ExactSizeIterator", "SliceConcatExt", "ToString", "assert!", "assert_eq!", "bitflags!", "bytes!", "cfg!", "col!", "concat!", "concat_idents!", "debug_assert!", "debug_assert_eq!", "env!", "eprintln!", "panic!", "file!", "format!", "format_args!", "include_bytes!", "include_str!", "line!", "local_data_key!", "module_path!", "option_env!", "print!", "println!", "select!", "stringify!", "try!", "unimplemented!", "unreachable!", "vec!", "write!", "writeln!", "macro_rules!", "assert_ne!", "debug_assert_ne!"], c2 = ["i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f16", "f32", "f64", "f128", "str", "char", "bool", "Box", "Option", "Result", "String", "Vec"];
    return {
      name: "Rust",
      aliases: ["rs"],
      keywords: {
        $pattern: e2.IDENT_RE + "!?",
        type: c2,
        keyword: ["abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "raw", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type", "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield"],
        literal: ["true", "false", "Some", "None", "Ok", "Err"],
        built_in: o2
      },
      illegal: "</",
      contains: [e2.C_LINE_COMMENT_MODE, e2.COMMENT("/\\*", "\\*/", {
        contains: ["self"]
      }), e2.inherit(e2.QUOTE_STRING_MODE, { begin: /b?"/, illegal: null }), {
        scope: "symbol",
        begin: /'[a-zA-Z_][a-zA-Z0-9_]*(?!')/
      }, { scope: "string", variants: [{
        begin: /b?r(#*)"(.|\n)*?"\1(?!#)/
      }, { begin: /b?'/, end: /'/, contains: [{
        scope: "char.escape",
        match: /\\('|"|\\|\w|x\w{2}|u\w{4}|U\w{8})/
      }] }] }, {
        scope: "number",
        variants: [{ begin: "\\b0b([01_]+)" + s2 }, { begin: "\\b0o([0-7_]+)" + s2 }, {
          begin: "\\b0x([A-Fa-f0-9_]+)" + s2
        }, {
          begin: "\\b(\\d[\\d_]*(\\.[0-9_]+)?([eE][+-]?[0-9_]+)?)" + s2
        }],
        relevance: 0
      }, {
        begin: [/\bsafe/, /\s+/, /extern/],
        scope: { 1: "keyword", 3: "keyword" }
      }, {
        begin: [/fn/, /\s+/, a2],
        scope: { 1: "keyword", 3: "title.function" }
      }, {
        scope: "meta",
        begin: "#!?\\[",
        end: "\\]",
        contains: [{
          scope: "string",
          begin: /"/,
          end: /"/,
          contains: [e2.BACKSLASH_ESCAPE]
        }]
      }, { begin: [/let/, /\s+/, /(?:mut\s+)?/, a2], scope: {
        1: "keyword",
        3: "keyword",
        4: "variable"
      } }, { begin: [/for/, /\s+/, a2, /\s+/, /in/], scope: {
        1: "keyword",
        3: "variable",
        5: "keyword"
      } }, { begin: [/type/, /\s+/, a2], scope: {
        1: "keyword",
        3: "title.class"
      } }, {
        begin: [/(?:trait|enum|struct|union|impl|for)/, /\s+/, a2],
        scope: {
          1: "keyword",
          3: "title.class"
        }
      }, { begin: e2.IDENT_RE + "::", keywords: {
        keyword: "Self",
        built_in: o2,
        type: c2
      } }, { scope: "punctuation", begin: "->" }, r2]
    };
  },
  grmr_scss: (e2) => {
    const n3 = Ce2(e2), t2 = Ie2, a2 = De2, i2 = "@[a-z-]+", r2 = {
      className: "variable",
      begin: "(\\$[a-zA-Z-][a-zA-Z0-9_-]*)\\b",
      relevance: 0
    };
    return {
      name: "SCSS",
      case_insensitive: true,
      illegal: "[=/|']",
      contains: [e2.C_LINE_COMMENT_MODE, e2.C_BLOCK_COMMENT_MODE, n3.CSS_NUMBER_MODE, {
        className: "selector-id",
        begin: "#[A-Za-z0-9_-]+",
        relevance: 0
      }, {
        className: "selector-class",
        begin: "\\.[A-Za-z0-9_-]+",
        relevance: 0
      }, n3.ATTRIBUTE_SELECTOR_MODE, {
        className: "selector-tag",
        begin: "\\b(" + Te2.join("|") + ")\\b",
        relevance: 0
      }, {
        className: "selector-pseudo",
        begin: ":(" + a2.join("|") + ")"
      }, {
        className: "selector-pseudo",
        begin: ":(:)?(" + t2.join("|") + ")"
      }, r2, {
        begin: /\(/,
        end: /\)/,
        contains: [n3.CSS_NUMBER_MODE]
      }, n3.CSS_VARIABLE, {
        className: "attribute",
        begin: "\\b(" + Le2.join("|") + ")\\b"
      }, {
        begin: "\\b(whitespace|wait|w-resize|visible|vertical-text|vertical-ideographic|uppercase|upper-roman|upper-alpha|underline|transparent|top|thin|thick|text|text-top|text-bottom|tb-rl|table-header-group|table-footer-group|sw-resize|super|strict|static|square|solid|small-caps|separate|se-resize|scroll|s-resize|rtl|row-resize|ridge|right|repeat|repeat-y|repeat-x|relative|progress|pointer|overline|outside|outset|oblique|nowrap|not-allowed|normal|none|nw-resize|no-repeat|no-drop|newspaper|ne-resize|n-resize|move|middle|medium|ltr|lr-tb|lowercase|lower-roman|lower-alpha|loose|list-item|line|line-through|line-edge|lighter|left|keep-all|justify|italic|inter-word|inter-ideograph|inside|inset|inline|inline-block|inherit|inactive|ideograph-space|ideograph-parenthesis|ideograph-numeric|ideograph-alpha|horizontal|hidden|help|hand|groove|fixed|ellipsis|e-resize|double|dotted|distribute|distribute-space|distribute-letter|distribute-all-lines|disc|disabled|default|decimal|dashed|crosshair|collapse|col-resize|circle|char|center|capitalize|break-word|break-all|bottom|both|bolder|bold|block|bidi-override|below|baseline|auto|always|all-scroll|absolute|table|table-cell)\\b"
      }, {
        begin: /:/,
        end: /[;}{]/,
        relevance: 0,
        contains: [n3.BLOCK_COMMENT, r2, n3.HEXCOLOR, n3.CSS_NUMBER_MODE, n3.UNICODE_RANGE, e2.QUOTE_STRING_MODE, e2.APOS_STRING_MODE, n3.IMPORTANT, n3.FUNCTION_DISPATCH]
      }, { begin: "@(page|font-face)", keywords: { $pattern: i2, keyword: "@page @font-face" } }, {
        begin: "@",
        end: "[{;]",
        returnBegin: true,
        keywords: {
          $pattern: /[a-z-]+/,
          keyword: "and or not only",
          attribute: Re2.join(" ")
        },
        contains: [{
          begin: i2,
          className: "keyword"
        }, {
          begin: /[a-z-]+(?=:)/,
          className: "attribute"
        }, r2, e2.QUOTE_STRING_MODE, e2.APOS_STRING_MODE, n3.HEXCOLOR, n3.CSS_NUMBER_MODE]
      }, n3.FUNCTION_DISPATCH]
    };
  },
  grmr_shell: (e2) => ({
    name: "Shell Session",
    aliases: ["console", "shellsession"],
    contains: [{
      className: "meta.prompt",
      begin: /^\s{0,3}[./~\w\d[\]()@-]*[>%$#][ ]?/,
      starts: {
        end: /[^\\](?=\s*$)/,
        subLanguage: "bash"
      }
    }]
  }),
  grmr_sql: (e2) => {
    const n3 = e2.regex, t2 = e2.COMMENT("--", "$"), a2 = ["abs", "acos", "array_agg", "asin", "atan", "avg", "cast", "ceil", "ceiling", "coalesce", "corr", "cos", "cosh", "count", "covar_pop", "covar_samp", "cume_dist", "dense_rank", "deref", "element", "exp", "extract", "first_value", "floor", "json_array", "json_arrayagg", "json_exists", "json_object", "json_objectagg", "json_query", "json_table", "json_table_primitive", "json_value", "lag", "last_value", "lead", "listagg", "ln", "log", "log10", "lower", "max", "min", "mod", "nth_value", "ntile", "nullif", "percent_rank", "percentile_cont", "percentile_disc", "position", "position_regex", "power", "rank", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "row_number", "sin", "sinh", "sqrt", "stddev_pop", "stddev_samp", "substring", "substring_regex", "sum", "tan", "tanh", "translate", "translate_regex", "treat", "trim", "trim_array", "unnest", "upper", "value_of", "var_pop", "var_samp", "width_bucket"], i2 = a2, r2 = ["abs", "acos", "all", "allocate", "alter", "and", "any", "are", "array", "array_agg", "array_max_cardinality", "as", "asensitive", "asin", "asymmetric", "at", "atan", "atomic", "authorization", "avg", "begin", "begin_frame", "begin_partition", "between", "bigint", "binary", "blob", "boolean", "both", "by", "call", "called", "cardinality", "cascaded", "case", "cast", "ceil", "ceiling", "char", "char_length", "character", "character_length", "check", "classifier", "clob", "close", "coalesce", "collate", "collect", "column", "commit", "condition", "connect", "constraint", "contains", "convert", "copy", "corr", "corresponding", "cos", "cosh", "count", "covar_pop", "covar_samp", "create", "cross", "cube", "cume_dist", "current", "current_catalog", "current_date", "current_default_transform_group", "current_path", "current_role", "current_row", "current_schema", "current_time", "current_timestamp", "current_path", "current_role", "current_transform_group_for_type", "current_user", "cursor", "cycle", "date", "day", "deallocate", "dec", "decimal", "decfloat", "declare", "default", "define", "delete", "dense_rank", "deref", "describe", "deterministic", "disconnect", "distinct", "double", "drop", "dynamic", "each", "element", "else", "empty", "end", "end_frame", "end_partition", "end-exec", "equals", "escape", "every", "except", "exec", "execute", "exists", "exp", "external", "extract", "false", "fetch", "filter", "first_value", "float", "floor", "for", "foreign", "frame_row", "free", "from", "full", "function", "fusion", "get", "global", "grant", "group", "grouping", "groups", "having", "hold", "hour", "identity", "in", "indicator", "initial", "inner", "inout", "insensitive", "insert", "int", "integer", "intersect", "intersection", "interval", "into", "is", "join", "json_array", "json_arrayagg", "json_exists", "json_object", "json_objectagg", "json_query", "json_table", "json_table_primitive", "json_value", "lag", "language", "large", "last_value", "lateral", "lead", "leading", "left", "like", "like_regex", "listagg", "ln", "local", "localtime", "localtimestamp", "log", "log10", "lower", "match", "match_number", "match_recognize", "matches", "max", "member", "merge", "method", "min", "minute", "mod", "modifies", "module", "month", "multiset", "national", "natural", "nchar", "nclob", "new", "no", "none", "normalize", "not", "nth_value", "ntile", "null", "nullif", "numeric", "octet_length", "occurrences_regex", "of", "offset", "old", "omit", "on", "one", "only", "open", "or", "order", "out", "outer", "over", "overlaps", "overlay", "parameter", "partition", "pattern", "per", "percent", "percent_rank", "percentile_cont", "percentile_disc", "period", "portion", "position", "position_regex", "power", "precedes", "precision", "prepare", "primary", "procedure", "ptf", "range", "rank", "reads", "real", "recursive", "ref", "references", "referencing", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "release", "result", "return", "returns", "revoke", "right", "rollback", "rollup", "row", "row_number", "rows", "running", "savepoint", "scope", "scroll", "search", "second", "seek", "select", "sensitive", "session_user", "set", "show", "similar", "sin", "sinh", "skip", "smallint", "some", "specific", "specifictype", "sql", "sqlexception", "sqlstate", "sqlwarning", "sqrt", "start", "static", "stddev_pop", "stddev_samp", "submultiset", "subset", "substring", "substring_regex", "succeeds", "sum", "symmetric", "system", "system_time", "system_user", "table", "tablesample", "tan", "tanh", "then", "time", "timestamp", "timezone_hour", "timezone_minute", "to", "trailing", "translate", "translate_regex", "translation", "treat", "trigger", "trim", "trim_array", "true", "truncate", "uescape", "union", "unique", "unknown", "unnest", "update", "upper", "user", "using", "value", "values", "value_of", "var_pop", "var_samp", "varbinary", "varchar", "varying", "versioning", "when", "whenever", "where", "width_bucket", "window", "with", "within", "without", "year", "add", "asc", "collation", "desc", "final", "first", "last", "view"].filter((e3) => !a2.includes(e3)), s2 = {
      match: n3.concat(/\b/, n3.either(...i2), /\s*\(/),
      relevance: 0,
      keywords: { built_in: i2 }
    };
    function o2(e3) {
      return n3.concat(/\b/, n3.either(...e3.map((e4) => e4.replace(/\s+/, "\\s+"))), /\b/);
    }
    const c2 = {
      scope: "keyword",
      match: o2(["create table", "insert into", "primary key", "foreign key", "not null", "alter table", "add constraint", "grouping sets", "on overflow", "character set", "respect nulls", "ignore nulls", "nulls first", "nulls last", "depth first", "breadth first"]),
      relevance: 0
    };
    return { name: "SQL", case_insensitive: true, illegal: /[{}]|<\//, keywords: {
      $pattern: /\b[\w\.]+/,
      keyword: ((e3, { exceptions: n4, when: t3 } = {}) => {
        const a3 = t3;
        return n4 = n4 || [], e3.map((e4) => e4.match(/\|\d+$/) || n4.includes(e4) ? e4 : a3(e4) ? e4 + "|0" : e4);
      })(r2, {
        when: (e3) => e3.length < 3
      }),
      literal: ["true", "false", "unknown"],
      type: ["bigint", "binary", "blob", "boolean", "char", "character", "clob", "date", "dec", "decfloat", "decimal", "float", "int", "integer", "interval", "nchar", "nclob", "national", "numeric", "real", "row", "smallint", "time", "timestamp", "varchar", "varying", "varbinary"],
      built_in: ["current_catalog", "current_date", "current_default_transform_group", "current_path", "current_role", "current_schema", "current_transform_group_for_type", "current_user", "session_user", "system_time", "system_user", "current_time", "localtime", "current_timestamp", "localtimestamp"]
    }, contains: [{
      scope: "type",
      match: o2(["double precision", "large object", "with timezone", "without timezone"])
    }, c2, s2, { scope: "variable", match: /@[a-z0-9][a-z0-9_]*/ }, { scope: "string", variants: [{
      begin: /'/,
      end: /'/,
      contains: [{ match: /''/ }]
    }] }, { begin: /"/, end: /"/, contains: [{
      match: /""/
    }] }, e2.C_NUMBER_MODE, e2.C_BLOCK_COMMENT_MODE, t2, {
      scope: "operator",
      match: /[-+*/=%^~]|&&?|\|\|?|!=?|<(?:=>?|<|>)?|>[>=]?/,
      relevance: 0
    }] };
  },
  grmr_swift: (e2) => {
    const n3 = { match: /\s+/, relevance: 0 }, t2 = e2.COMMENT("/\\*", "\\*/", {
      contains: ["self"]
    }), a2 = [e2.C_LINE_COMMENT_MODE, t2], i2 = {
      match: [/\./, m(...be2, ...me2)],
      className: { 2: "keyword" }
    }, r2 = {
      match: b(/\./, m(..._e2)),
      relevance: 0
    }, s2 = _e2.filter((e3) => "string" == typeof e3).concat(["_|0"]), o2 = { variants: [{
      className: "keyword",
      match: m(..._e2.filter((e3) => "string" != typeof e3).concat(pe2).map(ue2), ...me2)
    }] }, c2 = {
      $pattern: m(/\b\w+/, /#\w+/),
      keyword: s2.concat(Ee2),
      literal: he2
    }, l4 = [i2, r2, o2], g3 = [{
      match: b(/\./, m(...ye2)),
      relevance: 0
    }, {
      className: "built_in",
      match: b(/\b/, m(...ye2), /(?=\()/)
    }], u2 = { match: /->/, relevance: 0 }, p2 = [u2, {
      className: "operator",
      relevance: 0,
      variants: [{ match: Ne2 }, { match: `\\.(\\.|${ve2})+` }]
    }], _3 = "([0-9]_*)+", h2 = "([0-9a-fA-F]_*)+", f2 = {
      className: "number",
      relevance: 0,
      variants: [{ match: `\\b(${_3})(\\.(${_3}))?([eE][+-]?(${_3}))?\\b` }, {
        match: `\\b0x(${h2})(\\.(${h2}))?([pP][+-]?(${_3}))?\\b`
      }, {
        match: /\b0o([0-7]_*)+\b/
      }, { match: /\b0b([01]_*)+\b/ }]
    }, E2 = (e3 = "") => ({
      className: "subst",
      variants: [{
        match: b(/\\/, e3, /[0\\tnr"']/)
      }, { match: b(/\\/, e3, /u\{[0-9a-fA-F]{1,8}\}/) }]
    }), y3 = (e3 = "") => ({
      className: "subst",
      match: b(/\\/, e3, /[\t ]*(?:[\r\n]|\r\n)/)
    }), w3 = (e3 = "") => ({
      className: "subst",
      label: "interpol",
      begin: b(/\\/, e3, /\(/),
      end: /\)/
    }), v3 = (e3 = "") => ({
      begin: b(e3, /"""/),
      end: b(/"""/, e3),
      contains: [E2(e3), y3(e3), w3(e3)]
    }), N3 = (e3 = "") => ({ begin: b(e3, /"/), end: b(/"/, e3), contains: [E2(e3), w3(e3)] }), k2 = {
      className: "string",
      variants: [v3(), v3("#"), v3("##"), v3("###"), N3(), N3("#"), N3("##"), N3("###")]
    }, x3 = [e2.BACKSLASH_ESCAPE, {
      begin: /\[/,
      end: /\]/,
      relevance: 0,
      contains: [e2.BACKSLASH_ESCAPE]
    }], O3 = {
      begin: /\/[^\s](?=[^/\n]*\/)/,
      end: /\//,
      contains: x3
    }, M3 = (e3) => {
      const n4 = b(e3, /\//), t3 = b(/\//, e3);
      return {
        begin: n4,
        end: t3,
        contains: [...x3, { scope: "comment", begin: `#(?!.*${t3})`, end: /$/ }]
      };
    }, A3 = {
      scope: "regexp",
      variants: [M3("###"), M3("##"), M3("#"), O3]
    }, S3 = {
      match: b(/`/, Oe2, /`/)
    }, C3 = [S3, { className: "variable", match: /\$\d+/ }, {
      className: "variable",
      match: `\\$${xe2}+`
    }], T2 = [{ match: /(@|#(un)?)available/, scope: "keyword", starts: {
      contains: [{ begin: /\(/, end: /\)/, keywords: Se2, contains: [...p2, f2, k2] }]
    } }, {
      scope: "keyword",
      match: b(/@/, m(...Ae2), d(m(/\(/, /\s+/)))
    }, {
      scope: "meta",
      match: b(/@/, Oe2)
    }], R2 = { match: d(/\b[A-Z]/), relevance: 0, contains: [{
      className: "type",
      match: b(/(AV|CA|CF|CG|CI|CL|CM|CN|CT|MK|MP|MTK|MTL|NS|SCN|SK|UI|WK|XC)/, xe2, "+")
    }, { className: "type", match: Me2, relevance: 0 }, { match: /[?!]+/, relevance: 0 }, {
      match: /\.\.\./,
      relevance: 0
    }, { match: b(/\s+&\s+/, d(Me2)), relevance: 0 }] }, D3 = {
      begin: /</,
      end: />/,
      keywords: c2,
      contains: [...a2, ...l4, ...T2, u2, R2]
    };
    R2.contains.push(D3);
    const I3 = { begin: /\(/, end: /\)/, relevance: 0, keywords: c2, contains: ["self", {
      match: b(Oe2, /\s*:/),
      keywords: "_|0",
      relevance: 0
    }, ...a2, A3, ...l4, ...g3, ...p2, f2, k2, ...C3, ...T2, R2] }, L3 = {
      begin: /</,
      end: />/,
      keywords: "repeat each",
      contains: [...a2, R2]
    }, B2 = {
      begin: /\(/,
      end: /\)/,
      keywords: c2,
      contains: [{
        begin: m(d(b(Oe2, /\s*:/)), d(b(Oe2, /\s+/, Oe2, /\s*:/))),
        end: /:/,
        relevance: 0,
        contains: [{ className: "keyword", match: /\b_\b/ }, {
          className: "params",
          match: Oe2
        }]
      }, ...a2, ...l4, ...p2, f2, k2, ...T2, R2, I3],
      endsParent: true,
      illegal: /["']/
    }, F3 = {
      match: [/(func|macro)/, /\s+/, m(S3.match, Oe2, Ne2)],
      className: {
        1: "keyword",
        3: "title.function"
      },
      contains: [L3, B2, n3],
      illegal: [/\[/, /%/]
    }, $4 = {
      match: [/\b(?:subscript|init[?!]?)/, /\s*(?=[<(])/],
      className: { 1: "keyword" },
      contains: [L3, B2, n3],
      illegal: /\[|%/
    }, z3 = { match: [/operator/, /\s+/, Ne2], className: {
      1: "keyword",
      3: "title"
    } }, U2 = { begin: [/precedencegroup/, /\s+/, Me2], className: {
      1: "keyword",
      3: "title"
    }, contains: [R2], keywords: [...fe2, ...he2], end: /}/ }, j2 = {
      begin: [/(struct|protocol|class|extension|enum|actor)/, /\s+/, Oe2, /\s*/],
      beginScope: { 1: "keyword", 3: "title.class" },
      keywords: c2,
      contains: [L3, ...l4, {
        begin: /:/,
        end: /\{/,
        keywords: c2,
        contains: [{ scope: "title.class.inherited", match: Me2 }, ...l4],
        relevance: 0
      }]
    };
    for (const e3 of k2.variants) {
      const n4 = e3.contains.find((e4) => "interpol" === e4.label);
      n4.keywords = c2;
      const t3 = [...l4, ...g3, ...p2, f2, k2, ...C3];
      n4.contains = [...t3, {
        begin: /\(/,
        end: /\)/,
        contains: ["self", ...t3]
      }];
    }
    return { name: "Swift", keywords: c2, contains: [...a2, F3, $4, {
      match: [/class\b/, /\s+/, /func\b/, /\s+/, /\b[A-Za-z_][A-Za-z0-9_]*\b/],
      scope: {
        1: "keyword",
        3: "keyword",
        5: "title.function"
      }
    }, {
      match: [/class\b/, /\s+/, /var\b/],
      scope: { 1: "keyword", 3: "keyword" }
    }, j2, z3, U2, {
      beginKeywords: "import",
      end: /$/,
      contains: [...a2],
      relevance: 0
    }, A3, ...l4, ...g3, ...p2, f2, k2, ...C3, ...T2, R2, I3] };
  },
  grmr_typescript: (e2) => {
    const n3 = e2.regex, t2 = ge2(e2), a2 = te2, i2 = ["any", "void", "number", "boolean", "string", "object", "never", "symbol", "bigint", "unknown"], r2 = {
      begin: [/namespace/, /\s+/, e2.IDENT_RE],
      beginScope: { 1: "keyword", 3: "title.class" }
    }, s2 = {
      beginKeywords: "interface",
      end: /\{/,
      excludeEnd: true,
      keywords: {
        keyword: "interface extends",
        built_in: i2
      },
      contains: [t2.exports.CLASS_REFERENCE]
    }, o2 = {
      $pattern: te2,
      keyword: ie2.concat(["type", "interface", "public", "private", "protected", "implements", "declare", "abstract", "readonly", "enum", "override", "satisfies"]),
      literal: re,
      built_in: de2.concat(i2),
      "variable.language": le
    }, c2 = {
      className: "meta",
      begin: "@" + a2
    }, l4 = (e3, n4, t3) => {
      const a3 = e3.contains.findIndex((e4) => e4.label === n4);
      if (-1 === a3) throw Error("can not find mode to replace");
      e3.contains.splice(a3, 1, t3);
    };
    Object.assign(t2.keywords, o2), t2.exports.PARAMS_CONTAINS.push(c2);
    const d2 = t2.contains.find((e3) => "attr" === e3.scope), g3 = Object.assign({}, d2, {
      match: n3.concat(a2, n3.lookahead(/\s*\?:/))
    });
    return t2.exports.PARAMS_CONTAINS.push([t2.exports.CLASS_REFERENCE, d2, g3]), t2.contains = t2.contains.concat([c2, r2, s2, g3]), l4(t2, "shebang", e2.SHEBANG()), l4(t2, "use_strict", {
      className: "meta",
      relevance: 10,
      begin: /^\s*['"]use strict['"]/
    }), t2.contains.find((e3) => "func.def" === e3.label).relevance = 0, Object.assign(t2, {
      name: "TypeScript",
      aliases: ["ts", "tsx", "mts", "cts"]
    }), t2;
  },
  grmr_vbnet: (e2) => {
    const n3 = e2.regex, t2 = /\d{1,2}\/\d{1,2}\/\d{4}/, a2 = /\d{4}-\d{1,2}-\d{1,2}/, i2 = /(\d|1[012])(:\d+){0,2} *(AM|PM)/, r2 = /\d{1,2}(:\d{1,2}){1,2}/, s2 = {
      className: "literal",
      variants: [{ begin: n3.concat(/# */, n3.either(a2, t2), / *#/) }, {
        begin: n3.concat(/# */, r2, / *#/)
      }, { begin: n3.concat(/# */, i2, / *#/) }, {
        begin: n3.concat(/# */, n3.either(a2, t2), / +/, n3.either(i2, r2), / *#/)
      }]
    }, o2 = e2.COMMENT(/'''/, /$/, {
      contains: [{ className: "doctag", begin: /<\/?/, end: />/ }]
    }), c2 = e2.COMMENT(null, /$/, { variants: [{ begin: /'/ }, { begin: /([\t ]|^)REM(?=\s)/ }] });
    return {
      name: "Visual Basic .NET",
      aliases: ["vb"],
      case_insensitive: true,
      classNameAliases: { label: "symbol" },
      keywords: {
        keyword: "addhandler alias aggregate ansi as async assembly auto binary by byref byval call case catch class compare const continue custom declare default delegate dim distinct do each equals else elseif end enum erase error event exit explicit finally for friend from function get global goto group handles if implements imports in inherits interface into iterator join key let lib loop me mid module mustinherit mustoverride mybase myclass namespace narrowing new next notinheritable notoverridable of off on operator option optional order overloads overridable overrides paramarray partial preserve private property protected public raiseevent readonly redim removehandler resume return select set shadows shared skip static step stop structure strict sub synclock take text then throw to try unicode until using when where while widening with withevents writeonly yield",
        built_in: "addressof and andalso await directcast gettype getxmlnamespace is isfalse isnot istrue like mod nameof new not or orelse trycast typeof xor cbool cbyte cchar cdate cdbl cdec cint clng cobj csbyte cshort csng cstr cuint culng cushort",
        type: "boolean byte char date decimal double integer long object sbyte short single string uinteger ulong ushort",
        literal: "true false nothing"
      },
      illegal: "//|\\{|\\}|endif|gosub|variant|wend|^\\$ ",
      contains: [{
        className: "string",
        begin: /"(""|[^/n])"C\b/
      }, {
        className: "string",
        begin: /"/,
        end: /"/,
        illegal: /\n/,
        contains: [{ begin: /""/ }]
      }, s2, {
        className: "number",
        relevance: 0,
        variants: [{
          begin: /\b\d[\d_]*((\.[\d_]+(E[+-]?[\d_]+)?)|(E[+-]?[\d_]+))[RFD@!#]?/
        }, { begin: /\b\d[\d_]*((U?[SIL])|[%&])?/ }, { begin: /&H[\dA-F_]+((U?[SIL])|[%&])?/ }, {
          begin: /&O[0-7_]+((U?[SIL])|[%&])?/
        }, { begin: /&B[01_]+((U?[SIL])|[%&])?/ }]
      }, {
        className: "label",
        begin: /^\w+:/
      }, o2, c2, {
        className: "meta",
        begin: /[\t ]*#(const|disable|else|elseif|enable|end|externalsource|if|region)\b/,
        end: /$/,
        keywords: {
          keyword: "const disable else elseif enable end externalsource if region then"
        },
        contains: [c2]
      }]
    };
  },
  grmr_wasm: (e2) => {
    e2.regex;
    const n3 = e2.COMMENT(/\(;/, /;\)/);
    return n3.contains.push("self"), { name: "WebAssembly", keywords: {
      $pattern: /[\w.]+/,
      keyword: ["anyfunc", "block", "br", "br_if", "br_table", "call", "call_indirect", "data", "drop", "elem", "else", "end", "export", "func", "global.get", "global.set", "local.get", "local.set", "local.tee", "get_global", "get_local", "global", "if", "import", "local", "loop", "memory", "memory.grow", "memory.size", "module", "mut", "nop", "offset", "param", "result", "return", "select", "set_global", "set_local", "start", "table", "tee_local", "then", "type", "unreachable"]
    }, contains: [e2.COMMENT(/;;/, /$/), n3, {
      match: [/(?:offset|align)/, /\s*/, /=/],
      className: { 1: "keyword", 3: "operator" }
    }, { className: "variable", begin: /\$[\w_]+/ }, {
      match: /(\((?!;)|\))+/,
      className: "punctuation",
      relevance: 0
    }, {
      begin: [/(?:func|call|call_indirect)/, /\s+/, /\$[^\s)]+/],
      className: {
        1: "keyword",
        3: "title.function"
      }
    }, e2.QUOTE_STRING_MODE, {
      match: /(i32|i64|f32|f64)(?!\.)/,
      className: "type"
    }, {
      className: "keyword",
      match: /\b(f32|f64|i32|i64)(?:\.(?:abs|add|and|ceil|clz|const|convert_[su]\/i(?:32|64)|copysign|ctz|demote\/f64|div(?:_[su])?|eqz?|extend_[su]\/i32|floor|ge(?:_[su])?|gt(?:_[su])?|le(?:_[su])?|load(?:(?:8|16|32)_[su])?|lt(?:_[su])?|max|min|mul|nearest|neg?|or|popcnt|promote\/f32|reinterpret\/[fi](?:32|64)|rem_[su]|rot[lr]|shl|shr_[su]|store(?:8|16|32)?|sqrt|sub|trunc(?:_[su]\/f(?:32|64))?|wrap\/i64|xor))\b/
    }, {
      className: "number",
      relevance: 0,
      match: /[+-]?\b(?:\d(?:_?\d)*(?:\.\d(?:_?\d)*)?(?:[eE][+-]?\d(?:_?\d)*)?|0x[\da-fA-F](?:_?[\da-fA-F])*(?:\.[\da-fA-F](?:_?[\da-fA-D])*)?(?:[pP][+-]?\d(?:_?\d)*)?)\b|\binf\b|\bnan(?::0x[\da-fA-F](?:_?[\da-fA-D])*)?\b/
    }] };
  },
  grmr_xml: (e2) => {
    const n3 = e2.regex, t2 = n3.concat(/[\p{L}_]/u, n3.optional(/[\p{L}0-9_.-]*:/u), /[\p{L}0-9_.-]*/u), a2 = {
      className: "symbol",
      begin: /&[a-z]+;|&#[0-9]+;|&#x[a-f0-9]+;/
    }, i2 = {
      begin: /\s/,
      contains: [{ className: "keyword", begin: /#?[a-z_][a-z1-9_-]+/, illegal: /\n/ }]
    }, r2 = e2.inherit(i2, { begin: /\(/, end: /\)/ }), s2 = e2.inherit(e2.APOS_STRING_MODE, {
      className: "string"
    }), o2 = e2.inherit(e2.QUOTE_STRING_MODE, { className: "string" }), c2 = {
      endsWithParent: true,
      illegal: /</,
      relevance: 0,
      contains: [{
        className: "attr",
        begin: /[\p{L}0-9._:-]+/u,
        relevance: 0
      }, { begin: /=\s*/, relevance: 0, contains: [{
        className: "string",
        endsParent: true,
        variants: [{ begin: /"/, end: /"/, contains: [a2] }, {
          begin: /'/,
          end: /'/,
          contains: [a2]
        }, { begin: /[^\s"'=<>`]+/ }]
      }] }]
    };
    return {
      name: "HTML, XML",
      aliases: ["html", "xhtml", "rss", "atom", "xjb", "xsd", "xsl", "plist", "wsf", "svg"],
      case_insensitive: true,
      unicodeRegex: true,
      contains: [{
        className: "meta",
        begin: /<![a-z]/,
        end: />/,
        relevance: 10,
        contains: [i2, o2, s2, r2, { begin: /\[/, end: /\]/, contains: [{
          className: "meta",
          begin: /<![a-z]/,
          end: />/,
          contains: [i2, r2, o2, s2]
        }] }]
      }, e2.COMMENT(/<!--/, /-->/, { relevance: 10 }), {
        begin: /<!\[CDATA\[/,
        end: /\]\]>/,
        relevance: 10
      }, a2, { className: "meta", end: /\?>/, variants: [{
        begin: /<\?xml/,
        relevance: 10,
        contains: [o2]
      }, { begin: /<\?[a-z][a-z0-9]+/ }] }, {
        className: "tag",
        begin: /<style(?=\s|>)/,
        end: />/,
        keywords: { name: "style" },
        contains: [c2],
        starts: {
          end: /<\/style>/,
          returnEnd: true,
          subLanguage: "css"
        }
      }, {
        className: "tag",
        begin: /<script(?=\s|>)/,
        end: />/,
        keywords: { name: "script" },
        contains: [c2],
        starts: {
          end: /<\/script>/,
          returnEnd: true,
          subLanguage: "javascript"
        }
      }, {
        className: "tag",
        begin: /<>|<\/>/
      }, {
        className: "tag",
        begin: n3.concat(/</, n3.lookahead(n3.concat(t2, n3.either(/\/>/, />/, /\s/)))),
        end: /\/?>/,
        contains: [{ className: "name", begin: t2, relevance: 0, starts: c2 }]
      }, {
        className: "tag",
        begin: n3.concat(/<\//, n3.lookahead(n3.concat(t2, />/))),
        contains: [{
          className: "name",
          begin: t2,
          relevance: 0
        }, { begin: />/, relevance: 0, endsParent: true }]
      }]
    };
  },
  grmr_yaml: (e2) => {
    const n3 = "true false yes no null", t2 = "[\\w#;/?:@&=+$,.~*'()[\\]]+", a2 = {
      className: "string",
      relevance: 0,
      variants: [{ begin: /"/, end: /"/ }, { begin: /\S+/ }],
      contains: [e2.BACKSLASH_ESCAPE, { className: "template-variable", variants: [{
        begin: /\{\{/,
        end: /\}\}/
      }, { begin: /%\{/, end: /\}/ }] }]
    }, i2 = e2.inherit(a2, { variants: [{
      begin: /'/,
      end: /'/,
      contains: [{ begin: /''/, relevance: 0 }]
    }, { begin: /"/, end: /"/ }, {
      begin: /[^\s,{}[\]]+/
    }] }), r2 = {
      end: ",",
      endsWithParent: true,
      excludeEnd: true,
      keywords: n3,
      relevance: 0
    }, s2 = { begin: /\{/, end: /\}/, contains: [r2], illegal: "\\n", relevance: 0 }, o2 = {
      begin: "\\[",
      end: "\\]",
      contains: [r2],
      illegal: "\\n",
      relevance: 0
    }, c2 = [{
      className: "attr",
      variants: [{ begin: /[\w*@][\w*@ :()\./-]*:(?=[ \t]|$)/ }, {
        begin: /"[\w*@][\w*@ :()\./-]*":(?=[ \t]|$)/
      }, {
        begin: /'[\w*@][\w*@ :()\./-]*':(?=[ \t]|$)/
      }]
    }, {
      className: "meta",
      begin: "^---\\s*$",
      relevance: 10
    }, {
      className: "string",
      begin: "[\\|>]([1-9]?[+-])?[ ]*\\n( +)[^ ][^\\n]*\\n(\\2[^\\n]+\\n?)*"
    }, {
      begin: "<%[%=-]?",
      end: "[%-]?%>",
      subLanguage: "ruby",
      excludeBegin: true,
      excludeEnd: true,
      relevance: 0
    }, { className: "type", begin: "!\\w+!" + t2 }, {
      className: "type",
      begin: "!<" + t2 + ">"
    }, { className: "type", begin: "!" + t2 }, {
      className: "type",
      begin: "!!" + t2
    }, { className: "meta", begin: "&" + e2.UNDERSCORE_IDENT_RE + "$" }, {
      className: "meta",
      begin: "\\*" + e2.UNDERSCORE_IDENT_RE + "$"
    }, {
      className: "bullet",
      begin: "-(?=[ ]|$)",
      relevance: 0
    }, e2.HASH_COMMENT_MODE, { beginKeywords: n3, keywords: { literal: n3 } }, {
      className: "number",
      begin: "\\b[0-9]{4}(-[0-9][0-9]){0,2}([Tt \\t][0-9][0-9]?(:[0-9][0-9]){2})?(\\.[0-9]*)?([ \\t])*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?)?\\b"
    }, { className: "number", begin: e2.C_NUMBER_RE + "\\b", relevance: 0 }, s2, o2, {
      className: "string",
      relevance: 0,
      begin: /'/,
      end: /'/,
      contains: [{
        match: /''/,
        scope: "char.escape",
        relevance: 0
      }]
    }, a2], l4 = [...c2];
    return l4.pop(), l4.push(i2), r2.contains = l4, {
      name: "YAML",
      case_insensitive: true,
      aliases: ["yml"],
      contains: c2
    };
  }
});
var Ke2 = ne2;
for (const e2 of Object.keys(Pe2)) {
  const n3 = e2.replace("grmr_", "").replace("_", "-");
  Ke2.registerLanguage(n3, Pe2[e2]);
}

// navi/web/static/js/markdown.js
var marked = new ne({ gfm: true, breaks: true });
purify_default.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});
var PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"]
};
function renderMarkdown(text2) {
  const html2 = marked.parse(text2 || "");
  return purify_default.sanitize(html2, PURIFY);
}
async function copyText(text2) {
  try {
    await navigator.clipboard.writeText(text2);
    return;
  } catch {
  }
  const area = el("textarea", { readonly: true, "aria-hidden": "true", class: "copy-buffer" });
  area.value = text2;
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
function plainText(text2) {
  const box = document.createElement("div");
  box.innerHTML = renderMarkdown(text2);
  return box.textContent.replace(/\s+/g, " ").trim();
}
var afterRender = null;
function setAfterRender(fn) {
  afterRender = fn;
}
function fillMarkdown(element, text2) {
  element.innerHTML = renderMarkdown(text2);
  for (const code of element.querySelectorAll("pre > code")) {
    if (/\blanguage-(?!plaintext\b|text\b)/.test(code.className)) Ke2.highlightElement(code);
    else code.classList.add("hljs", "plain");
    const pre = code.parentElement;
    const block = el("div", { class: "code-block" });
    pre.replaceWith(block);
    block.append(pre, copyButton(code));
  }
  afterRender?.(element);
}

// navi/web/static/js/blocks.js
function thinkingBlock(text2, { open = false, label = "Thought" } = {}) {
  const body = el("div", { class: "thinking-text" }, text2 || "");
  const details = el("details", { class: "thinking", open }, el("summary", { text: label }), body);
  return { details, body };
}
function planCard(text2, open) {
  const body = el("div", { class: "markdown" });
  fillMarkdown(body, text2);
  return el("details", { class: "plan", open }, el("summary", {}, icon("plan"), " Plan"), body);
}
function notice(text2, kind) {
  return el("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : void 0 }, text2);
}
var STATUS_LABELS = {
  starting: "Waiting for Navi",
  preparing: "Preparing",
  compressing: "Summarising earlier messages",
  planning: "Planning",
  waiting: "Waiting for the model",
  researching: "Researching"
};
function statusText(phase, detail) {
  const label = STATUS_LABELS[phase] || "Working";
  return detail ? `${label}: ${detail}…` : `${label}…`;
}
var OUTCOMES = {
  ok: { status: "done", cls: "ok" },
  failed: { status: "failed", cls: "failed" },
  declined: { status: "declined", cls: "declined" },
  timeout: { status: "not run: nobody answered", cls: "declined" },
  stopped: { status: "not run: stopped", cls: "declined" }
};
var NOT_RUN = /* @__PURE__ */ new Set(["declined", "timeout", "stopped"]);
var ToolCard = class {
  constructor(tool, args, callId, onChange = () => {
  }) {
    this.tool = tool;
    this.callId = callId || "";
    this.onChange = onChange;
    this.outcome = "";
    this.declinedBy = "";
    this.status = el("span", { class: "status", text: "running" });
    this.args = el("pre", { class: "tool-args" }, formatJson(args ?? {}));
    this.result = el("pre", { class: "tool-result" });
    this.resultLabel = el("div", { class: "tool-label", text: "Result", hidden: true });
    this.result.hidden = true;
    this.subcalls = el("div", { class: "subcalls", hidden: true });
    this.node = el(
      "details",
      { class: "tool pending", dataset: { callId: this.callId, tool } },
      el("summary", {}, icon("tool"), " ", el("strong", { text: tool }), " · ", this.status),
      el(
        "div",
        { class: "tool-body" },
        el("div", { class: "tool-label", text: "Arguments" }),
        this.args,
        this.resultLabel,
        this.result,
        this.subcalls
      )
    );
  }
  nest(node) {
    this.subcalls.hidden = false;
    this.subcalls.append(node);
  }
  // The call waits for the user: the reason, and Allow / Deny (/ Always, when Navi can remember it).
  // The card opens (and every card and steps line around it), so what is asked is in view.
  ask(reason, alwaysScope, onAnswer) {
    this.approval?.remove();
    const choose = (decision) => {
      for (const b2 of this.approval.querySelectorAll("button")) b2.disabled = true;
      this.status.textContent = "answering…";
      if (!onAnswer(this.callId, decision)) {
        for (const b2 of this.approval.querySelectorAll("button")) b2.disabled = false;
        this.status.textContent = "waiting for approval";
      }
    };
    const button = (label, decision, title) => el("button", { type: "button", class: `approve-${decision}`, title, onclick: () => choose(decision) }, label);
    this.approval = el(
      "div",
      { class: "approval", role: "group", "aria-label": "Approval" },
      el("p", { class: "approval-reason", text: `Navi asks before running this: ${reason}` }),
      el(
        "div",
        { class: "approval-actions" },
        button("Allow", "allow", "Run this call"),
        button("Deny", "deny", "Do not run it; Navi is told you declined"),
        alwaysScope ? button("Always", "always", `Run it, and from now on allow ${alwaysScope} without asking`) : null
      )
    );
    this.node.querySelector(".tool-body").prepend(this.approval);
    this.node.classList.add("asking");
    this.status.textContent = "waiting for approval";
    this.unfolded = [];
    for (let node = this.node; node; node = node.parentElement?.closest("details")) {
      if (!node.open) this.unfolded.push(node);
      node.open = true;
    }
    this.onChange();
  }
  // An MCP server's question (elicit.js) during this call: shown on the card, opened like an approval.
  askFor(node) {
    this.node.querySelector(".tool-body").prepend(node);
    this.node.classList.add("asking");
    this.status.textContent = "waiting for your answer";
    this.unfolded = this.unfolded || [];
    for (let n3 = this.node; n3; n3 = n3.parentElement?.closest("details")) {
      if (!n3.open) this.unfolded.push(n3);
      n3.open = true;
    }
    this.onChange();
  }
  // The server's question is settled: the call runs on.
  settled() {
    this.node.classList.remove("asking");
    for (const node of this.unfolded || []) {
      if (!node.classList.contains("asking") && !node.querySelector(".tool.asking")) node.open = false;
    }
    this.unfolded = [];
    if (!this.outcome) this.status.textContent = "running";
    this.onChange();
  }
  // The question was answered (here, in another window, by the timeout or a stop): the buttons go.
  answered(decision, by) {
    if (!this.approval) return;
    const outcomes = {
      allow: "Allowed.",
      always: "Allowed, and remembered: Navi will not ask again for this.",
      deny: by === "timeout" ? "Not run: nobody answered in time." : by === "stop" ? "Not run: stopped." : "Declined: not run."
    };
    const outcome = el("p", { class: `approval-outcome ${decision}`, role: "status", text: outcomes[decision] || decision });
    this.approval.querySelector(".approval-actions")?.replaceWith(outcome);
    this.node.classList.remove("asking");
    for (const node of this.unfolded || []) {
      if (!node.classList.contains("asking") && !node.querySelector(".tool.asking")) node.open = false;
    }
    this.unfolded = [];
    if (decision === "deny") this.declinedBy = by || "user";
    this.status.textContent = decision === "deny" ? "not run" : "running";
    this.onChange();
  }
  get asking() {
    return this.node.classList.contains("asking");
  }
  // The browser tool's page after the call: its title and address, and its latest screenshot. The
  // title is the page's own text (textContent, never markup); the picture is a data: URL only.
  page({ url, title, tab, tabs, screenshot }) {
    this.browserView?.remove();
    const shot = typeof screenshot === "string" && screenshot.startsWith("data:image/") ? el("img", { class: "browser-shot", src: screenshot, alt: `Screenshot of ${title || url}` }) : null;
    const where = tabs > 1 ? ` (tab ${tab} of ${tabs})` : "";
    this.browserView = el(
      "figure",
      { class: "browser-page" },
      shot,
      el("figcaption", {}, el("strong", { text: title || "(untitled)" }), ` — ${url}${where}`)
    );
    this.node.querySelector(".tool-body").prepend(this.browserView);
    this.onChange();
  }
  // `outcome`: true/false (a live tool_call's success) or one of OUTCOMES' keys (the stored history).
  complete(args, result, outcome) {
    if (args !== void 0) this.args.textContent = formatJson(args);
    let key = outcome === true ? "ok" : outcome === false ? "failed" : outcome || "failed";
    if (key === "failed" && this.declinedBy) key = { user: "declined", stop: "stopped" }[this.declinedBy] || "timeout";
    const notRun = NOT_RUN.has(key);
    this.result.textContent = notRun ? String(result ?? "").replace(/^Error:\s*/, "") : result ?? "";
    this.resultLabel.textContent = notRun ? "What Navi was told" : "Result";
    this.result.hidden = false;
    this.resultLabel.hidden = false;
    const { status, cls } = OUTCOMES[key] || OUTCOMES.failed;
    this.outcome = key;
    this.node.classList.remove("pending", "ok", "failed", "declined");
    this.node.classList.add(cls);
    this.status.textContent = status;
    this.onChange();
  }
};
var TextSegment = class {
  constructor(text2 = "") {
    this.text = text2;
    this.node = el("div", { class: "markdown text" });
    Object.defineProperty(this.node, "markdown", { get: () => this.text });
    this.rendered = null;
    this.frame = 0;
    this.streaming = false;
  }
  append(delta) {
    this.text += delta;
    this.streaming = true;
    this.frame ||= requestAnimationFrame(() => this.flush());
  }
  // `partial` (with `final`): the text ends where the answer was left unfinished, drawn as while
  // it streamed.
  flush({ final = false, partial = false } = {}) {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (final) this.streaming = false;
    const shown = this.streaming || partial ? closeOpenMarkdown(this.text) : this.text;
    if (this.rendered === shown) return;
    this.rendered = shown;
    fillMarkdown(this.node, shown);
  }
};
function closeOpenMarkdown(text2) {
  const fences = text2.match(/^ {0,3}(```|~~~)/gm) || [];
  if (fences.length % 2 === 1) {
    return `${text2.replace(/\n {0,3}(`{1,2}|~{1,2})$/, "")}
${fences.at(-1).trim()}`;
  }
  if (/(^|\n) {0,3}(```|~~~)\s*$/.test(text2)) return text2;
  const start2 = text2.lastIndexOf("\n\n") + 1;
  let tail = text2.slice(start2);
  const head = text2.slice(0, start2);
  tail = tail.replace(/(\*{1,3}|`{1,2})$/, "");
  const code = (tail.match(/`/g) || []).length;
  if (code % 2 === 1) return `${head}${tail}\``;
  const outside = tail.replace(/`[^`]*`/g, "");
  let closing = "";
  for (const marker of ["**", "__"]) {
    const count = outside.split(marker).length - 1;
    if (count % 2 === 1) closing = marker + closing;
  }
  const singles = outside.replace(/\*\*|__/g, "").replace(/^\s*\*\s/gm, "");
  const stars = (singles.match(/\*/g) || []).length;
  if (stars % 2 === 1 && /\*\S[^*]*$/.test(singles)) closing = `*${closing}`;
  return `${head}${tail.replace(/\s+$/, "")}${closing}`;
}

// navi/web/static/js/branches.js
function switcher(siblings, index, onSwitch) {
  const go = (to) => () => onSwitch(siblings[to]);
  return el(
    "span",
    { class: "branch-switch", role: "group", "aria-label": "Versions" },
    el("button", { type: "button", class: "branch-prev", "aria-label": "Previous version", disabled: index === 0, onclick: go(index - 1) }, "‹"),
    el("span", { class: "branch-count", text: `${index + 1}/${siblings.length}` }),
    el("button", { type: "button", class: "branch-next", "aria-label": "Next version", disabled: index === siblings.length - 1, onclick: go(index + 1) }, "›")
  );
}
function bar(message, actions, handlers, at2 = message.created_at) {
  const node = el("div", { class: "msg-actions" });
  if ((message.siblings || []).length > 1) node.append(switcher(message.siblings, message.sibling_index || 0, handlers.onSwitch));
  node.append(...actions, stamp(at2));
  return node;
}
function stamp(at2) {
  const when = at2 ? new Date(at2) : /* @__PURE__ */ new Date();
  if (Number.isNaN(when.getTime())) return "";
  const today = (/* @__PURE__ */ new Date()).toDateString() === when.toDateString();
  const short = today ? when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : when.toLocaleDateString([], { day: "numeric", month: "short" });
  return el("time", { class: "msg-time", datetime: when.toISOString(), title: when.toLocaleString() }, short);
}
function editInPlace(node, text2, onSave) {
  const bubble = node.querySelector(".bubble");
  const actions = node.querySelector(".msg-actions");
  const box = el("textarea", { class: "edit-box", rows: 3, "aria-label": "Edit message" });
  box.value = text2;
  const restore = () => {
    form.remove();
    bubble.hidden = false;
    actions.hidden = false;
  };
  const form = el(
    "div",
    { class: "edit-form" },
    box,
    el(
      "div",
      { class: "edit-actions" },
      el("button", { type: "button", class: "edit-save", onclick: async () => {
        const changed = box.value.trim();
        if (changed && await onSave(changed)) restore();
      } }, "Save"),
      el("button", { type: "button", class: "edit-cancel", onclick: restore }, "Cancel")
    )
  );
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    restore();
  });
  bubble.hidden = true;
  actions.hidden = true;
  bubble.after(form);
  box.focus();
}
function userActions(node, m2, text2, handlers) {
  node.append(bar(m2, [
    el("button", {
      type: "button",
      class: "msg-edit",
      title: "Edit and run again as a new branch",
      onclick: () => editInPlace(node, text2, (changed) => handlers.onEdit(m2.id, changed))
    }, "Edit"),
    el("button", { type: "button", class: "msg-fork", title: "A new conversation with everything up to here", onclick: () => handlers.onFork(m2.id) }, "Fork")
  ], handlers));
}
function answerActions(turnNode, first, last, handlers, rated = null) {
  turnNode.append(bar(first, [
    ...rated && handlers.onRate ? rating(rated, handlers.onRate) : [],
    copyButton2(turnNode, "Copy", "Copy the answer as Markdown", (texts) => texts.map((n3) => n3.markdown ?? n3.innerText).join("\n\n")),
    copyButton2(turnNode, "Copy text", "Copy the answer as plain text", (texts) => texts.map((n3) => n3.innerText).join("\n\n")),
    el("button", { type: "button", class: "msg-regenerate", title: "Another answer to the same question", onclick: () => handlers.onRegenerate(first.id) }, "Regenerate"),
    el("button", { type: "button", class: "msg-fork", title: "A new conversation with everything up to here", onclick: () => handlers.onFork(last.id, last.question ? last.id : null) }, "Fork")
  ], handlers, last.created_at));
}
function rating(rated, onRate) {
  let current = rated.feedback || null;
  const buttons = [["up", "thumb-up", "A good answer"], ["down", "thumb-down", "A poor answer"]].map(([value, face, label]) => el("button", { type: "button", class: `msg-rate rate-${value}`, "aria-label": label, title: label, "aria-pressed": String(current === value) }, icon(face)));
  const show = () => buttons.forEach((b2, i2) => b2.setAttribute("aria-pressed", String(current === ["up", "down"][i2])));
  buttons.forEach((button, i2) => button.addEventListener("click", async () => {
    const wanted = current === ["up", "down"][i2] ? null : ["up", "down"][i2];
    try {
      await onRate(rated.id, wanted);
      current = wanted;
    } catch {
    }
    show();
  }));
  return buttons;
}
function copyButton2(turnNode, label, title, text2) {
  const button = el("button", { type: "button", class: "msg-copy", title }, label);
  button.addEventListener("click", async () => {
    const texts = [...turnNode.querySelectorAll(":scope > .markdown.text")];
    try {
      await navigator.clipboard.writeText(text2(texts).trim());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Could not copy";
    }
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  });
  return button;
}

// navi/web/static/js/elicit.js
var OUTCOMES2 = {
  accept: "Answered.",
  decline: "Declined.",
  cancel: "Dismissed."
};
function choices(spec) {
  if (Array.isArray(spec.enum)) return spec.enum.map((v3, i2) => [String(v3), String(spec.enumNames?.[i2] ?? v3)]);
  if (Array.isArray(spec.oneOf)) return spec.oneOf.map((o2) => [String(o2.const), String(o2.title ?? o2.const)]);
  return null;
}
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
    input = el(
      "select",
      { id, name },
      required ? null : el("option", { value: "", text: "—" }),
      ...options.map(([value, text2]) => el("option", { value, text: text2 }))
    );
    if (spec.default !== void 0) input.value = String(spec.default);
    read = () => input.value === "" ? void 0 : input.value;
  } else if (spec.type === "number" || spec.type === "integer") {
    input = el("input", { id, type: "number", name, step: spec.type === "integer" ? "1" : "any" });
    if (spec.default !== void 0) input.value = String(spec.default);
    read = () => input.value.trim() === "" ? void 0 : Number(input.value);
  } else {
    const type = { email: "email", uri: "url", date: "date" }[spec.format] || "text";
    input = el("input", { id, type, name });
    if (spec.default !== void 0) input.value = String(spec.default);
    read = () => input.value === "" ? void 0 : input.value;
  }
  input.required = Boolean(required && spec.type !== "boolean");
  return { node: el("div", { class: "elicit-field" }, label, input, hint), read, name };
}
var QuestionCard = class {
  constructor(frame, onAnswer) {
    this.id = frame.elicitation_id;
    this.onAnswer = onAnswer;
    this.error = el("p", { class: "elicit-error", role: "alert", hidden: true });
    const intro = el("p", { class: "elicit-from", text: `The MCP server “${frame.server}” asks you:` });
    const message = el("p", { class: "elicit-message", text: frame.message });
    this.actions = el("div", { class: "approval-actions elicit-actions" });
    const button = (label, action, cls, onclick) => el("button", { type: "button", class: cls, dataset: { action }, onclick }, label);
    if (frame.mode === "url") {
      const link = el("code", { class: "elicit-url", text: frame.url });
      this.body = el("div", {}, el("p", { text: "It asks you to open this page:" }), link);
      this.actions.append(
        button("Open page", "accept", "approve-allow", () => {
          if (/^https?:\/\//i.test(frame.url)) window.open(frame.url, "_blank", "noopener,noreferrer");
          this.send("accept");
        }),
        button("Decline", "decline", "approve-deny", () => this.send("decline"))
      );
    } else {
      const schema = frame.requested_schema || {};
      const required = new Set(schema.required || []);
      this.fields = Object.entries(schema.properties || {}).map(([name, spec]) => field(name, spec || {}, required.has(name)));
      this.body = el(
        "form",
        { class: "elicit-form", onsubmit: (e2) => {
          e2.preventDefault();
          this.submit();
        } },
        ...this.fields.map((f2) => f2.node)
      );
      this.actions.append(
        button("Send", "accept", "approve-allow", () => this.submit()),
        button("Decline", "decline", "approve-deny", () => this.send("decline"))
      );
    }
    this.node = el(
      "div",
      { class: "approval elicitation", role: "group", "aria-label": "Question from an MCP server", dataset: { elicitationId: this.id } },
      intro,
      message,
      this.body,
      this.error,
      this.actions
    );
  }
  submit() {
    if (this.body.reportValidity && !this.body.reportValidity()) return;
    const content = {};
    for (const f2 of this.fields) {
      const value = f2.read();
      if (value !== void 0) content[f2.name] = value;
    }
    this.send("accept", content);
  }
  send(action, content) {
    this.error.hidden = true;
    for (const b2 of this.actions.querySelectorAll("button")) b2.disabled = true;
    if (!this.onAnswer(this.id, action, content)) this.enable();
  }
  enable() {
    for (const b2 of this.actions.querySelectorAll("button")) b2.disabled = false;
  }
  // Navi refused the answer (bad_answer): it says why; the question still waits.
  refused(message) {
    this.error.textContent = message;
    this.error.hidden = false;
    this.enable();
  }
  answered(action, by) {
    const text2 = by === "timeout" ? "Nobody answered in time." : by === "stop" ? "Stopped." : by === "unattended" ? "Nobody could be asked." : OUTCOMES2[action] || action;
    this.actions.replaceWith(el("p", { class: `approval-outcome ${action === "accept" ? "allow" : "deny"}`, role: "status", text: text2 }));
    for (const input of this.node.querySelectorAll("input, select")) input.disabled = true;
    this.error.hidden = true;
  }
};

// navi/web/static/js/steps.js
var SPAWN = "spawn_agent";
function duration(ms) {
  const seconds = Math.max(1, Math.round(ms / 1e3));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
}
function list(names) {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
var unique = (names) => [...new Set(names)];
function stepsSummary({ planned, thought, cards, ms = null, activity = "" }) {
  const parts = [];
  if (planned) parts.push("planned");
  const used = unique(cards.filter((c2) => c2.outcome === "ok" || !c2.outcome).map((c2) => c2.tool));
  const helpers = used.filter((name) => name === SPAWN).length;
  const tools = used.filter((name) => name !== SPAWN);
  if (tools.length) parts.push(`used ${list(tools.length > 4 ? [...tools.slice(0, 3), `${tools.length - 3} more`] : tools)}`);
  if (helpers) parts.push("asked a helper");
  const declined = unique(cards.filter((c2) => c2.outcome === "declined").map((c2) => c2.tool));
  if (declined.length) parts.push(`you declined ${list(declined)}`);
  const notRun = cards.filter((c2) => c2.outcome === "timeout" || c2.outcome === "stopped").length;
  if (notRun) parts.push(`${notRun} call${notRun > 1 ? "s" : ""} not run`);
  const failed = cards.filter((c2) => c2.outcome === "failed").length;
  if (failed) parts.push(`${failed} call${failed > 1 ? "s" : ""} failed`);
  let text2;
  if (activity) {
    text2 = parts.length ? `${parts.join(", ")} · ${activity}` : activity;
  } else {
    if (thought) parts.push(ms !== null ? `thought for ${duration(ms)}` : "thought");
    else if (ms !== null) parts.push(`worked for ${duration(ms)}`);
    text2 = parts.join(", ") || "Working…";
  }
  return text2.charAt(0).toUpperCase() + text2.slice(1);
}
var Steps = class {
  constructor({ live = false } = {}) {
    this.label = el("span", { class: "steps-label" });
    this.body = el("div", { class: "steps-body" });
    this.node = el(
      "details",
      { class: "steps", dataset: { live: live ? "true" : "false" } },
      el("summary", {}, el("span", { class: "steps-spinner", "aria-hidden": "true" }), this.label),
      this.body
    );
    this.planned = false;
    this.thoughts = 0;
    this.cards = [];
    this.activity = "";
    this.ms = null;
    this.update();
  }
  add(node) {
    this.body.append(node);
    this.update();
  }
  plan() {
    this.planned = true;
    this.update();
  }
  thought() {
    this.thoughts += 1;
    this.update();
  }
  card(card) {
    this.cards.push(card);
    this.update();
  }
  doing(activity) {
    this.activity = activity;
    this.update();
  }
  // The turn ended (or was read back): the line says how long it took, when that is known.
  finish(ms) {
    this.activity = "";
    this.ms = Number.isFinite(ms) ? ms : null;
    this.node.dataset.live = "false";
    this.update();
  }
  update() {
    const asking = this.cards.some((c2) => c2.asking) || this.body.querySelector("details.tool.asking");
    const running = this.cards.find((c2) => !c2.outcome && !c2.asking);
    let activity = this.activity;
    if (this.node.dataset.live === "true") {
      if (asking) activity = this.node.parentElement?.querySelector(".tool.asking .elicitation") ? "waiting for your answer" : "waiting for your approval";
      else if (!activity && running) activity = `running ${running.tool === SPAWN ? "a helper" : running.tool}…`;
    }
    this.label.textContent = stepsSummary({ planned: this.planned, thought: this.thoughts > 0, cards: this.cards, ms: this.ms, activity });
  }
};

// navi/web/static/js/chat.js
var SPAWN2 = "spawn_agent";
var REVEAL_MS = 4e3;
var FILES_SUFFIX = /\n\n\[Uploaded files on disk:\n[\s\S]*\]$/;
function compressionNotice(before, after) {
  const detail = before !== void 0 ? ` (${before} → ${after} messages)` : "";
  return el("div", { class: "msg" }, notice(`Context compressed${detail}; earlier messages were summarised.`, "compressed"));
}
var Turn = class {
  // `startedAt`: when the turn began (ms since the epoch), for the time on its steps line.
  constructor({ live = false, startedAt = Date.now() } = {}) {
    this.live = live;
    this.startedAt = startedAt;
    this.node = el("article", { class: "msg turn", "aria-busy": live ? "true" : void 0 });
    this.cards = /* @__PURE__ */ new Map();
    this.spawns = [];
    this.thinking = null;
    this.segment = null;
    this.texts = [];
    this.statusNode = null;
    this.steps = null;
  }
  get text() {
    return this.texts.map((s2) => s2.text).join("");
  }
  // A notice or other block of the turn itself (not a step).
  add(node) {
    this.clearStatus();
    this.segment = null;
    this.node.append(node);
  }
  // A step: into the steps line, made (at the top of the turn) with the first one. Text written
  // before this step was said on the way, not the answer: it goes into the steps too.
  addStep(node) {
    this.clearStatus();
    if (!this.steps) {
      this.steps = new Steps({ live: this.live });
      this.node.prepend(this.steps.node);
    }
    for (const segment of this.texts) {
      if (segment.node.parentElement === this.node) {
        segment.flush({ final: true });
        segment.node.classList.add("narration");
        this.steps.body.append(segment.node);
      }
    }
    this.segment = null;
    this.steps.add(node);
  }
  status(phase, detail) {
    if (!this.statusNode) this.statusNode = el("div", { class: "status-line", role: "status" });
    this.statusNode.textContent = statusText(phase, detail);
    this.node.append(this.statusNode);
  }
  clearStatus() {
    this.statusNode?.remove();
    this.statusNode = null;
  }
  info(message) {
    this.add(notice(message, "info"));
  }
  // The model chain moved on to its next endpoint before the answer began (a `model_fallback` frame).
  fallback({ endpoint, model, reason, next_endpoint: next, next_model: nextModel, cooling }) {
    const why = cooling ? `skipped, ${reason}` : `failed: ${reason}`;
    this.add(notice(`${endpoint} (${model}) ${why} — asking ${next} (${nextModel})`, "info fallback"));
  }
  // Where a subagent's blocks go: inside the running spawn_agent card when there is one.
  place(node, isSubagent) {
    const parent = isSubagent ? this.spawns[this.spawns.length - 1] : null;
    if (parent) {
      parent.nest(node);
      this.steps?.update();
    } else {
      this.addStep(node);
    }
  }
  thinkingDelta(delta) {
    this.clearStatus();
    if (!this.thinking) {
      this.blankThought = (this.blankThought || "") + delta;
      if (!this.blankThought.trim()) return;
      delta = this.blankThought.trimStart();
      this.blankThought = "";
      this.thinking = thinkingBlock("", { open: true, label: "Thinking…" });
      this.addStep(this.thinking.details);
      this.steps.thought();
    }
    this.steps.doing("thinking…");
    this.thinking.body.append(delta);
  }
  thinkingEnd() {
    this.blankThought = "";
    if (!this.thinking) return;
    this.thinking.details.open = false;
    this.thinking.details.querySelector("summary").textContent = "Thought";
    this.thinking = null;
    this.steps?.doing("");
  }
  turnThinking(text2, isSubagent) {
    if (!text2?.trim()) return;
    const { details } = thinkingBlock(text2, { label: isSubagent ? "Subagent thought" : "Thought" });
    this.place(details, isSubagent);
    if (!isSubagent || !this.spawns.length) this.steps.thought();
  }
  plan(text2, open = true) {
    this.addStep(planCard(text2, open));
    this.steps.plan();
  }
  toolStarted(tool, args, callId, isSubagent) {
    this.thinkingEnd();
    const card = new ToolCard(tool, args, callId, () => this.steps?.update());
    if (callId) this.cards.set(callId, card);
    const nested = isSubagent && this.spawns.length > 0;
    if (!nested) card.node.open = true;
    this.place(card.node, isSubagent);
    if (!nested) this.steps.card(card);
    if (tool === SPAWN2 && !isSubagent) this.spawns.push(card);
    return card;
  }
  // `outcome`: the live frame's success (true/false), or what the stored history says.
  // `browser`: the browser tool's page after the call (a live frame's `browser`), drawn on the card.
  toolCall(tool, args, result, outcome, callId, isSubagent, browser) {
    let card = callId ? this.cards.get(callId) : null;
    if (!card) card = this.toolStarted(tool, args, callId, isSubagent);
    card.complete(args, result, outcome);
    if (browser) card.page(browser);
    const at2 = this.spawns.indexOf(card);
    if (at2 >= 0) this.spawns.splice(at2, 1);
  }
  // approval_required: the card of the call (made here if its tool_started was missed) asks.
  approvalRequired({ call_id: callId, tool, args, reason, always_scope: alwaysScope, is_subagent: isSubagent }, onAnswer) {
    this.clearStatus();
    const card = this.cards.get(callId) || this.toolStarted(tool, args, callId, isSubagent);
    card.ask(reason, alwaysScope, onAnswer);
  }
  approvalResolved(callId, decision, by) {
    this.cards.get(callId)?.answered(decision, by);
  }
  isAsking(callId) {
    return Boolean(this.cards.get(callId)?.asking);
  }
  // elicitation_required: an MCP server asks the user during a call; the question goes on the
  // card of that call (the latest running one of the tool), which opens, as an approval does.
  elicitationRequired(frame, onAnswer) {
    this.clearStatus();
    const running = [...this.cards.values()].filter((c2) => c2.tool === frame.tool && !c2.outcome);
    const card = running[running.length - 1] || this.toolStarted(frame.tool, {}, "", frame.is_subagent);
    const question = new QuestionCard(frame, onAnswer);
    (this.questions ||= /* @__PURE__ */ new Map()).set(question.id, { question, card });
    card.askFor(question.node);
  }
  elicitationResolved(id, action, by) {
    const asked = this.questions?.get(id);
    if (!asked) return;
    asked.question.answered(action, by);
    asked.card.settled();
  }
  elicitationRefused(id, message) {
    const asked = this.questions?.get(id);
    if (asked) asked.question.refused(message);
    return Boolean(asked);
  }
  textDelta(delta) {
    this.clearStatus();
    this.thinkingEnd();
    if (!this.segment) {
      this.segment = new TextSegment();
      this.texts.push(this.segment);
      this.node.append(this.segment.node);
    }
    this.steps?.doing("writing…");
    this.segment.append(delta);
  }
  // `partial`: an answer left unfinished (stopped, cut off), its Markdown drawn as it stands.
  setText(text2, { partial = false } = {}) {
    const segment = new TextSegment(text2);
    segment.flush({ final: true, partial });
    this.texts.push(segment);
    this.add(segment.node);
  }
  // The turn is over: every text drawn whole, and the steps line says how long it took (`endedAt`,
  // ms since the epoch, when the history knows; else now, for a turn this page saw start).
  // An unfinished answer (`partial`: stopped, or cut off at its length limit) has its last
  // paragraph's open Markdown closed, as while it streamed: no raw `**` is left.
  finish(content, finishReason, endedAt = null, { partial = finishReason === "length" } = {}) {
    this.clearStatus();
    this.thinkingEnd();
    for (const segment of this.texts) segment.flush({ final: true, partial: partial && segment === this.texts.at(-1) });
    if (content && !this.text) this.setText(content, { partial });
    if (finishReason === "length") this.markCut();
    this.node.removeAttribute("aria-busy");
    const end = endedAt ?? Date.now();
    this.steps?.finish(this.startedAt !== null ? end - this.startedAt : null);
  }
  markCut() {
    this.cutNotice = notice("The reply was cut off at its length limit.", "cut");
    this.add(this.cutNotice);
  }
  // Cut off at the length limit or stopped: a Continue button under the notice runs `onContinue`.
  offerContinue(onContinue) {
    if (!this.cutNotice) return;
    this.continueButton = el("button", { class: "continue", type: "button", onclick: () => onContinue() }, "Continue");
    this.cutNotice.after(this.continueButton);
  }
  dropContinue() {
    this.continueButton?.remove();
    this.continueButton = null;
  }
  // A continuation of this answer starts: the cut-off notice goes, and the text streams on in the
  // answer's last paragraph, in this same bubble.
  resume() {
    this.cutNotice?.remove();
    this.cutNotice = null;
    this.dropContinue();
    this.node.setAttribute("aria-busy", "true");
    const last = this.texts.at(-1);
    this.segment = last && last.node.parentElement === this.node ? last : null;
  }
  stopped() {
    this.finish(null, null, null, { partial: true });
    this.markStopped();
  }
  // The notice a continuation takes away, as the cut-off one.
  markStopped() {
    this.cutNotice = notice("Stopped.", "stopped");
    this.add(this.cutNotice);
  }
  // The turn failed. `onRetry` (when given) adds a Retry button that runs the turn again; the
  // button goes once the retry starts (`retrying()`), the error stays as the history shows it.
  error(message, onRetry = null) {
    this.clearStatus();
    this.thinkingEnd();
    const node = notice(`Error: ${message}`, "error");
    if (onRetry) {
      this.retryButton = el("button", { class: "retry", type: "button", onclick: () => onRetry() }, "Retry");
      node.append(" ", this.retryButton);
    }
    this.add(node);
    this.node.removeAttribute("aria-busy");
    this.steps?.finish(null);
  }
  retrying() {
    this.retryButton?.remove();
    this.retryButton = null;
  }
};
function userMessage(content, images = [], files = []) {
  const node = el("article", { class: "msg user" }, el("div", { class: "bubble" }, content));
  if (images.length) {
    node.append(el(
      "div",
      { class: "images" },
      images.map((data, i2) => el("img", { src: imageSrc(data), alt: `Attached image ${i2 + 1}` }))
    ));
  }
  if (files.length) {
    node.append(el("div", { class: "files" }, files.map((f2) => el("span", { class: "chip" }, icon("file"), f2.name))));
  }
  return node;
}
function announcedUserMessage({ content = "", files = [], images = 0 }) {
  const node = userMessage(content, [], files.map((name) => ({ name })));
  if (images) node.append(el("div", { class: "files" }, el("span", { class: "chip" }, images === 1 ? "1 image" : `${images} images`)));
  return node;
}
function answerFiles(m2, sessionId) {
  const files = (m2.metadata?.files || []).filter((f2) => f2?.name);
  const where = m2.metadata?.files_session_id || sessionId;
  if (!files.length || !where) return null;
  return el("div", { class: "files answer-files" }, files.map((f2) => el(
    "a",
    { class: "chip", href: `/sessions/${encodeURIComponent(where)}/files/${encodeURIComponent(f2.name)}`, download: f2.name },
    icon("file"),
    f2.name
  )));
}
function storedUserMessage(m2, branches = null) {
  const files = m2.metadata?.files || [];
  const text2 = files.length ? (m2.content || "").replace(FILES_SUFFIX, "") : m2.content || "";
  const node = userMessage(text2, m2.images || [], files);
  if (m2.id) node.dataset.messageId = m2.id;
  if (branches && m2.id) userActions(node, m2, text2, branches);
  return node;
}
function storedOutcome(metadata = {}) {
  const status = metadata.status;
  if (status === "ok" || status === void 0) return "ok";
  if (status === "stopped") return "stopped";
  if (metadata.declined === "timeout" || metadata.declined === "unattended") return "timeout";
  if (metadata.declined) return "declined";
  return "failed";
}
var Conversation = class {
  // Follows the end of the conversation while the reader is there (new blocks, streamed text, images
  // that finish loading); scrolling up to read stops that until they scroll back down. Following
  // happens at most once per animation frame, however many changes arrive.
  constructor(container, { onRetry = null, onContinue = null, branches = null, sessionId = () => null } = {}) {
    this.container = container;
    this.sessionId = sessionId;
    this.onRetry = onRetry;
    this.onContinue = onContinue;
    this.cut = null;
    this.branches = branches;
    this.failed = null;
    this.stick = true;
    this.frame = 0;
    container.addEventListener("scroll", () => {
      this.stick = this.nearBottom();
    });
    container.addEventListener("load", () => this.follow(), true);
    new MutationObserver(() => this.follow()).observe(container, { childList: true, subtree: true });
  }
  clear() {
    this.container.replaceChildren();
  }
  nearBottom() {
    const c2 = this.container;
    return c2.scrollHeight - c2.scrollTop - c2.clientHeight < 120;
  }
  follow() {
    this.frame ||= requestAnimationFrame(() => {
      this.frame = 0;
      if (this.stick) this.container.scrollTop = this.container.scrollHeight;
    });
  }
  // Back to the end, and keep following.
  scrollToEnd() {
    this.stick = true;
    this.follow();
  }
  append(node, before = null) {
    if (before) this.container.insertBefore(node, before);
    else this.container.append(node);
    return node;
  }
  // A new branch starts at the message `id` (a user message, or any message with its id on a node):
  // what comes after it goes, and it too unless `keep`. Unknown: everything goes (the caller
  // draws the history again at the turn's end).
  cutAfter(id, { keep = true } = {}) {
    const marked2 = [...this.container.querySelectorAll("[data-message-id]")].find((n3) => n3.dataset.messageId === id);
    const node = marked2?.closest(".msg");
    if (!node || node.parentElement !== this.container) {
      this.clear();
      return;
    }
    while (node.nextSibling) node.nextSibling.remove();
    if (!keep) node.remove();
  }
  // A user message drawn live (sent here, or announced by stream_start): its id and its actions.
  liveActions(node, message) {
    if (!message?.id) return;
    node.dataset.messageId = message.id;
    if (this.branches) userActions(node, { id: message.id }, message.content || "", this.branches);
  }
  // A live turn answered: Regenerate and Fork under it (both name it by its question's id).
  answerActions(turn, answerId = null) {
    if (!this.branches || !turn.userId) return;
    const rated = answerId ? { id: answerId } : null;
    answerActions(turn.node, { id: turn.userId }, { id: turn.userId, question: true }, this.branches, rated);
  }
  addUser(content, images, files) {
    return this.append(userMessage(content, images, files));
  }
  addAnnouncedUser(message) {
    return this.append(announcedUserMessage(message));
  }
  // A live turn failed: its error, with Retry (the failure is stored, so Retry also works after a reload).
  failTurn(turn, message, retryable) {
    turn.error(message, retryable ? this.onRetry : null);
    this.failed = retryable ? turn : null;
  }
  // A retry started: the failed turn keeps its error, without the button.
  retryStarted() {
    this.failed?.retrying();
    this.failed = null;
  }
  // The latest answer was cut off at its length limit or stopped mid-text: Continue under it goes
  // on with it (`id`, any stored part of the answer).
  offerContinue(turn, id) {
    this.cut?.dropContinue();
    this.cut = null;
    if (!this.onContinue || !id) return;
    turn.offerContinue(() => this.onContinue(id));
    this.cut = turn;
  }
  // A continuation started (stream_start with `continues`): the answer it goes on with, live again
  // (null when this page does not show it).
  continueTurn() {
    const turn = this.cut;
    this.cut = null;
    if (!turn || !turn.node.isConnected) return null;
    turn.resume();
    return turn;
  }
  // `startedAt`: when the turn began, if not now (a turn replayed after a reload began earlier).
  startTurn(startedAt = Date.now()) {
    this.cut?.dropContinue();
    this.cut = null;
    const turn = new Turn({ live: true, startedAt });
    turn.status("starting");
    this.append(turn.node);
    return turn;
  }
  // The message just sent, until its turn starts (stream_start): drawn faint, with the waiting line
  // under it, so Send is answered at once. Returns the nodes, for the caller to remove.
  addPending({ content, images = [], files = [] }) {
    const user = userMessage(content, images, files);
    user.classList.add("pending");
    const waiting = el(
      "div",
      { class: "msg pending-turn" },
      el("div", { class: "status-line", role: "status", text: statusText("starting") })
    );
    this.append(user);
    this.append(waiting);
    this.scrollToEnd();
    return [user, waiting];
  }
  addNotice(text2, kind) {
    return this.append(el("div", { class: "msg" }, notice(text2, kind)));
  }
  addCompression(before, after) {
    return this.append(compressionNotice(before, after));
  }
  // Scroll the stored message `id` into view and mark it for a moment (a search hit was opened).
  // Returns whether it is shown. Following the end stops, so the view stays on it.
  reveal(id) {
    const node = [...this.container.querySelectorAll("[data-message-id]")].find(
      (n3) => n3.dataset.messageId === id || (n3.dataset.parts || "").split(" ").includes(id)
    );
    if (!node) return false;
    const target = node.getClientRects().length ? node : node.closest(".msg") || node;
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.stick = false;
    target.scrollIntoView({ block: "center" });
    for (const old of this.container.querySelectorAll(".search-target")) old.classList.remove("search-target");
    target.classList.add("search-target");
    clearTimeout(this.revealTimer);
    this.revealTimer = setTimeout(() => target.classList.remove("search-target"), REVEAL_MS);
    return true;
  }
  // Stored display history → blocks. Assistant messages and tool results between two user messages
  // form one turn; tool results fill the cards of the calls they answer. A turn's time is from its
  // user message to its last message.
  renderHistory(messages) {
    this.clear();
    this.failed = null;
    this.cut = null;
    let turn = null;
    let asked = null;
    let last = null;
    let first = null;
    let latest = null;
    const close = () => {
      if (turn) turn.steps?.finish(asked !== null && last !== null ? last - asked : null);
      if (turn && first?.id && this.branches) {
        const rated = latest?.role === "assistant" ? { id: latest.id, feedback: latest.metadata?.feedback } : null;
        answerActions(turn.node, first, latest, this.branches, rated);
      }
      turn = null;
      first = null;
    };
    const ensureTurn = () => {
      if (!turn) {
        turn = new Turn({ startedAt: asked });
        this.container.append(turn.node);
      }
      return turn;
    };
    for (const m2 of messages) {
      const at2 = Date.parse(m2.created_at);
      if (m2.role === "user") {
        close();
        asked = Number.isFinite(at2) ? at2 : null;
        this.container.append(storedUserMessage(m2, this.branches));
        continue;
      }
      if (m2.role === "assistant" && m2.is_compression) {
        close();
        asked = null;
        this.container.append(compressionNotice(m2.metadata?.messages_before, m2.metadata?.messages_after));
        continue;
      }
      last = Number.isFinite(at2) ? at2 : last;
      first ||= m2;
      latest = m2;
      if (m2.role === "assistant" && m2.is_plan) {
        ensureTurn().plan(m2.content || "", false);
      } else if (m2.role === "assistant" && m2.metadata?.error) {
        const t2 = ensureTurn();
        this.failTurn(t2, m2.metadata.error.message || m2.content || "the turn failed", m2 === messages.at(-1));
      } else if (m2.role === "assistant") {
        const t2 = ensureTurn();
        if (m2.thinking) t2.turnThinking(m2.thinking, false);
        const cut = m2.metadata?.finish_reason === "length" && !m2.tool_calls?.length;
        if (m2.content) t2.setText(m2.content, { partial: cut || m2.stopped });
        if (cut) {
          t2.markCut();
          if (m2 === messages.at(-1)) this.offerContinue(t2, m2.id);
        }
        const shown = m2.content ? t2.texts.at(-1).node : t2.node;
        if (m2.id && !shown.dataset.messageId) shown.dataset.messageId = m2.id;
        if (m2.metadata?.parts) shown.dataset.parts = m2.metadata.parts.join(" ");
        for (const call of m2.tool_calls || []) t2.toolStarted(call.name, call.arguments, call.id, false);
        const files = answerFiles(m2, this.sessionId());
        if (files) t2.add(files);
        if (m2.stopped) {
          t2.markStopped();
          if (m2 === messages.at(-1) && m2.content && !m2.tool_calls?.length) this.offerContinue(t2, m2.id);
        }
      } else if (m2.role === "tool") {
        const page = m2.metadata?.page;
        ensureTurn().toolCall(m2.name || "tool", void 0, m2.content || "", storedOutcome(m2.metadata), m2.tool_call_id, false, page);
      }
    }
    close();
    this.scrollToEnd();
  }
};

// navi/web/static/js/citations.js
var BRACKETED = /[([]([^()[\]\n]{3,240})[)\]]/g;
var SKIP = "a, code, pre, button, .citation";
function isPdf(doc) {
  return doc.kind === "pdf" || /\.pdf$/i.test(doc.name || doc.document_name || "");
}
function placeOf(words2) {
  const page = words2.match(/\bp{1,2}\.?\s*(\d+)|\bpages?\s+(\d+)/i);
  const slide = words2.match(/\bslide\s+(\d+)/i);
  const sheet = words2.match(/\bsheet\s+([^,;]+)/i);
  return {
    page: page ? Number(page[1] || page[2]) : null,
    slide: slide ? Number(slide[1]) : null,
    sheet: sheet ? sheet[1].trim() : null
  };
}
function fileHref(id, page = null) {
  return `/documents/${encodeURIComponent(id)}/file${page ? `#page=${page}` : ""}`;
}
function showPassage({ title, text: text2, href }) {
  const opener = document.activeElement;
  const close = el("button", { type: "button", class: "icon-button", "aria-label": "Close the passage" }, icon("close"));
  const dialog = el(
    "dialog",
    { class: "dialog passage", "aria-labelledby": "passage-title" },
    el("div", { class: "dialog-head" }, el("h2", { id: "passage-title", text: title }), close),
    el("blockquote", { class: "passage-text", text: text2 || "" }),
    href ? el("p", { class: "note" }, el("a", { href, target: "_blank", rel: "noopener noreferrer" }, "Open the whole file")) : null
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener?.isConnected) opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
  return dialog;
}
function matches(hit, place) {
  const at2 = hit.place || {};
  if (place.page && at2.page !== place.page) return false;
  if (place.slide && at2.slide !== place.slide) return false;
  if (place.sheet && String(at2.sheet || "").toLowerCase() !== place.sheet.toLowerCase()) return false;
  return true;
}
async function openCited(doc, place, query) {
  try {
    const hits = await api.searchDocuments({ q: query || doc.name, document: doc.id, limit: 10 });
    const hit = hits.find((h2) => matches(h2, place)) || hits[0];
    if (!hit) {
      showPassage({ title: doc.name, text: "No passage of this document matches that citation.", href: fileHref(doc.id) });
      return;
    }
    await openHit(hit);
  } catch (error) {
    toast(`Could not show the passage: ${error.message}`);
  }
}
async function openHit(hit) {
  const page = hit.place?.page;
  if (isPdf(hit) && page) {
    window.open(fileHref(hit.document_id, page), "_blank", "noopener");
    return;
  }
  let text2 = hit.text;
  try {
    const found = await api.chunk(hit.chunk_id);
    const passage = typeof found?.passage === "string" ? found.passage : found?.passage?.text;
    if (passage) text2 = passage;
  } catch {
  }
  showPassage({ title: hit.citation || hit.document_name, text: text2, href: fileHref(hit.document_id) });
}
function claimAround(node, cited) {
  const block = node.parentElement?.closest("p, li, td, blockquote") || node.parentElement;
  const text2 = (block?.textContent || "").replace(cited, " ").replace(/\s+/g, " ").trim();
  return text2.slice(0, 300);
}
var CANDIDATE = /[([][^()[\]\n]{0,200}?\.[a-z0-9]{1,8}\b/i;
var Citations = class {
  constructor(root) {
    this.root = root;
    this.session = null;
    this.byName = /* @__PURE__ */ new Map();
    this.stale = false;
    this.ticket = 0;
  }
  setSession(id) {
    this.session = id;
    this.byName = /* @__PURE__ */ new Map();
    this.refresh();
  }
  // The conversation's documents changed (an upload became ready, a collection was attached):
  // read again now if an answer may cite one, else once one does.
  refresh(force = false) {
    this.stale = true;
    if (this.session && (force || CANDIDATE.test(this.root.textContent))) this.load();
  }
  async load() {
    const id = this.session;
    const ticket = ++this.ticket;
    this.stale = false;
    let docs = [];
    try {
      const collections = await api.sessionCollections(id);
      docs = (await Promise.all(collections.map((c2) => api.documents(c2.id).catch(() => [])))).flat();
    } catch {
      if (ticket === this.ticket) this.stale = true;
      return;
    }
    if (ticket !== this.ticket) return;
    const byName = /* @__PURE__ */ new Map();
    for (const doc of docs) {
      const key = String(doc.name || "").toLowerCase();
      if (key && doc.state === "ready" && !byName.has(key)) byName.set(key, doc);
    }
    this.byName = byName;
    for (const node of this.root.querySelectorAll(".markdown")) this.link(node);
  }
  // The document a citation's words name ("contract.pdf, p. 12" → contract.pdf), with its place.
  find(words2) {
    const lower = words2.toLowerCase();
    let best = null;
    for (const [name, doc] of this.byName) {
      if (!lower.startsWith(name)) continue;
      const next = lower.charAt(name.length);
      if (next && next !== "," && next !== ";" && next !== " ") continue;
      if (!best || name.length > best.name.length) best = { name, doc };
    }
    return best ? { doc: best.doc, place: placeOf(words2.slice(best.name.length)) } : null;
  }
  link(element) {
    if (this.stale && CANDIDATE.test(element.textContent)) this.refresh(true);
    if (!this.byName.size) return;
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    const texts = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement?.closest(SKIP) && /[([]/.test(node.nodeValue)) texts.push(node);
    }
    for (const node of texts) this.linkText(node);
  }
  linkText(node) {
    const text2 = node.nodeValue;
    const parts = [];
    let last = 0;
    for (const match of text2.matchAll(BRACKETED)) {
      const found = this.find(match[1].trim());
      if (!found) continue;
      const start2 = match.index + 1;
      parts.push(text2.slice(last, start2), this.anchor(match[1], found, node));
      last = start2 + match[1].length;
    }
    if (!parts.length) return;
    parts.push(text2.slice(last));
    node.replaceWith(...parts);
  }
  anchor(words2, { doc, place }, node) {
    const pdf = isPdf(doc);
    const href = fileHref(doc.id, pdf ? place.page : null);
    const link = el("a", {
      class: "citation",
      href,
      title: pdf ? `Open ${doc.name}${place.page ? ` at page ${place.page}` : ""}` : `Show the passage of ${doc.name}`,
      dataset: { documentId: doc.id }
    }, words2);
    if (pdf) {
      link.target = "_blank";
      link.rel = "noopener noreferrer";
    } else {
      const claim = claimAround(node, words2);
      link.addEventListener("click", (event) => {
        event.preventDefault();
        openCited(doc, place, claim);
      });
    }
    return link;
  }
};

// navi/web/static/js/docstate.js
var POLL_MS = 1e3;
var BUSY = /* @__PURE__ */ new Set(["queued", "indexing"]);
var plural = (n3, one) => `${n3} ${one}${n3 === 1 ? "" : "s"}`;
function stateText(doc) {
  switch (doc.state) {
    case "queued":
      return "queued";
    case "indexing":
      return `indexing ${Math.round((doc.progress || 0) * 100)}%`;
    case "ready": {
      const parts = ["ready"];
      if (doc.pages) parts.push(plural(doc.pages, doc.kind === "pptx" || doc.kind === "odp" ? "slide" : "page"));
      parts.push(plural(doc.chunks || 0, "chunk"));
      return parts.join(" · ");
    }
    case "failed":
      return `failed: ${doc.error || "it could not be read"}`;
    default:
      return doc.state || "";
  }
}
function stateView(doc) {
  const label = el("span", { class: "doc-state-text", text: stateText(doc) });
  const node = el("span", { class: `doc-state ${doc.state || ""}`, dataset: { state: doc.state || "" } }, label);
  if (BUSY.has(doc.state)) {
    const bar2 = el("progress", { class: "doc-progress", max: "1", "aria-label": `Indexing ${doc.name}` });
    if (doc.state === "indexing") bar2.value = Math.max(0, Math.min(1, doc.progress || 0));
    node.prepend(bar2);
  }
  if (doc.state === "ready" && doc.warnings?.length) {
    node.append(el("span", {
      class: "doc-warning",
      title: doc.warnings.join("\n"),
      text: ` · ⚠ ${doc.warnings[0]}${doc.warnings.length > 1 ? ` (+${doc.warnings.length - 1} more)` : ""}`
    }));
  }
  return node;
}
var hidden = (name) => name.startsWith(".");
function readEntries(reader) {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}
async function entryFiles(entry, out) {
  if (hidden(entry.name)) return;
  if (entry.isFile) {
    out.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    return;
  }
  if (!entry.isDirectory) return;
  const reader = entry.createReader();
  for (; ; ) {
    const batch = await readEntries(reader);
    if (!batch.length) return;
    for (const child of batch) await entryFiles(child, out);
  }
}
function droppedFiles(transfer) {
  const files = [...transfer?.files || []];
  const entries2 = [...transfer?.items || []].filter((item) => item.kind === "file").map((item) => item.webkitGetAsEntry?.() || null);
  if (!entries2.some((entry) => entry?.isDirectory)) return Promise.resolve(files.filter((f2) => !hidden(f2.name)));
  return (async () => {
    const out = [];
    for (const [i2, entry] of entries2.entries()) {
      try {
        if (entry) await entryFiles(entry, out);
        else if (files[i2] && !hidden(files[i2].name)) out.push(files[i2]);
      } catch {
      }
    }
    return out;
  })();
}
var DocumentTracker = class {
  constructor({ onChange = () => {
  }, onSettled = () => {
  } } = {}) {
    this.onChange = onChange;
    this.onSettled = onSettled;
    this.watched = /* @__PURE__ */ new Map();
    this.listeners = /* @__PURE__ */ new Map();
    this.timer = 0;
  }
  watch(id, listener) {
    if (!id) return;
    if (listener) {
      if (!this.listeners.has(id)) this.listeners.set(id, /* @__PURE__ */ new Set());
      this.listeners.get(id).add(listener);
      const known = this.watched.get(id);
      if (known) listener(known);
    }
    if (!this.watched.has(id)) this.watched.set(id, null);
    this.schedule(0);
  }
  schedule(ms = POLL_MS) {
    if (!this.timer) this.timer = setTimeout(() => this.poll(), ms);
  }
  async poll() {
    this.timer = 0;
    const open = [...this.watched].filter(([, doc]) => !doc || BUSY.has(doc.state)).map(([id]) => id);
    if (!open.length) return;
    await Promise.all(open.map(async (id) => {
      let doc;
      try {
        doc = await api.document(id);
      } catch (error) {
        if (error.status === 404) doc = { id, name: "", state: "failed", error: "deleted" };
        else return;
      }
      this.watched.set(id, doc);
      for (const listener of this.listeners.get(id) || []) listener(doc);
      this.onChange(doc);
      if (!BUSY.has(doc.state)) {
        this.listeners.delete(id);
        this.onSettled(doc);
      }
    }));
    if ([...this.watched.values()].some((doc) => !doc || BUSY.has(doc.state))) this.schedule();
  }
};

// navi/web/static/js/composer.js
var MAX_IMAGE_BYTES = 10 * 1024 * 1024;
var IMAGE_TYPES = /* @__PURE__ */ new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
function readDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error || new Error("could not read the file"));
    reader.readAsDataURL(file);
  });
}
var Composer = class {
  constructor({ form, input, send: send2, stop: stop2, fileInput, attachments, dropZone, ensureSession: ensureSession2, onSend, onStop, onQueue, tracker: tracker2 }) {
    Object.assign(this, { form, input, send: send2, stop: stop2, fileInput, attachments, ensureSession: ensureSession2, onSend, onStop, onQueue, tracker: tracker2 });
    this.images = [];
    this.files = [];
    this.uploads = 0;
    this.running = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit(event.altKey ? "steer" : "queue");
      }
    });
    input.addEventListener("input", () => {
      this.grow();
      this.updateSend();
    });
    input.addEventListener("paste", (event) => {
      const files = [...event.clipboardData?.files || []];
      if (files.length) {
        event.preventDefault();
        this.add(files);
      }
    });
    stop2.addEventListener("click", () => this.onStop());
    this.steer = form.querySelector("#steer");
    this.steer.addEventListener("click", () => this.submit("steer"));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !event.shiftKey && this.running && !event.defaultPrevented && !document.querySelector("dialog[open]")) {
        event.preventDefault();
        this.onStop();
      }
    });
    fileInput.addEventListener("change", () => {
      this.add([...fileInput.files]);
      fileInput.value = "";
    });
    dropZone.addEventListener("dragover", (event) => {
      if (![...event.dataTransfer.types].includes("Files")) return;
      event.preventDefault();
      form.classList.add("dragging");
    });
    dropZone.addEventListener("dragleave", (event) => {
      if (!dropZone.contains(event.relatedTarget)) form.classList.remove("dragging");
    });
    dropZone.addEventListener("drop", (event) => {
      form.classList.remove("dragging");
      if (!event.dataTransfer?.types.includes("Files")) return;
      event.preventDefault();
      droppedFiles(event.dataTransfer).then((files) => this.add(files));
    });
  }
  grow() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, window.innerHeight * 0.4)}px`;
  }
  setRunning(running) {
    this.running = running;
    const touch = window.matchMedia("(pointer: coarse)").matches;
    this.input.placeholder = !running ? "Message Navi…" : touch ? "Queue a message, or Steer this answer…" : "Queue a message (Enter) · steer this answer (Alt+Enter)…";
    this.send.hidden = running;
    this.steer.hidden = !running;
    this.stop.hidden = !running;
    this.fileInput.disabled = running;
    this.updateSend();
    if (!running) this.input.focus();
  }
  updateSend() {
    const empty = !this.input.value.trim() && !this.images.length && !this.files.length;
    this.send.disabled = this.running || this.uploads > 0 || empty;
    this.steer.disabled = !this.running || this.uploads > 0 || empty;
  }
  async add(files) {
    for (const file of files) {
      if (IMAGE_TYPES.has(file.type)) await this.addImage(file);
      else await this.upload(file);
    }
  }
  async addImage(file) {
    if (file.size > MAX_IMAGE_BYTES) {
      toast(`${file.name} is larger than 10 MB; images are sent with the message, so keep them smaller.`);
      return;
    }
    try {
      this.images.push({ name: file.name || "pasted image", dataUrl: await readDataUrl(file) });
    } catch (error) {
      toast(`Could not read ${file.name}: ${error.message}`);
    }
    this.renderChips();
  }
  async upload(file) {
    let sessionId;
    try {
      sessionId = await this.ensureSession();
    } catch (error) {
      toast(`Could not start a conversation: ${error.message}`);
      return;
    }
    const pending = { name: file.name, uploading: true };
    this.files.push(pending);
    this.uploads += 1;
    this.renderChips();
    try {
      const stored = await api.upload(sessionId, file);
      Object.assign(pending, { name: stored.name, path: stored.path, uploading: false });
      if (stored.document_id && this.tracker) {
        pending.documentId = stored.document_id;
        pending.doc = { id: stored.document_id, name: stored.name, state: "queued", progress: 0 };
        this.tracker.watch(stored.document_id, (doc) => {
          pending.doc = doc;
          if (this.files.includes(pending)) this.renderChips();
        });
      }
    } catch (error) {
      const at2 = this.files.indexOf(pending);
      if (at2 >= 0) this.files.splice(at2, 1);
      toast([`${file.name} was not uploaded: `, refusal(error.message)].flat());
    } finally {
      this.uploads -= 1;
      this.renderChips();
    }
  }
  renderChips() {
    const chip = (label, onRemove, thumb) => el(
      "span",
      { class: "chip" },
      thumb,
      label,
      el("button", { class: "icon-button", type: "button", "aria-label": `Remove ${label}`, onclick: onRemove }, icon("close"))
    );
    this.attachments.replaceChildren(
      ...this.images.map((img, i2) => chip(
        img.name,
        () => {
          this.images.splice(i2, 1);
          this.renderChips();
        },
        el("img", { src: img.dataUrl, alt: "" })
      )),
      ...this.files.map((f2, i2) => {
        const node = chip(
          f2.uploading ? `${f2.name} (uploading…)` : f2.name,
          () => {
            this.files.splice(i2, 1);
            this.renderChips();
          },
          icon("file")
        );
        if (f2.doc) node.insertBefore(stateView(f2.doc), node.lastChild);
        return node;
      })
    );
    this.updateSend();
  }
  message() {
    const files = this.files.filter((f2) => f2.path).map((f2) => ({ name: f2.name, path: f2.path }));
    const images = this.images.map((img) => img.dataUrl);
    let content = this.input.value.trim();
    if (!content && (files.length || images.length)) content = "Please look at what I attached.";
    return { content, images, files };
  }
  async submit(mode = "queue") {
    if (this.uploads > 0) return;
    const message = this.message();
    if (!message.content) return;
    if (this.running) {
      if (this.onQueue(message, mode)) this.clear();
      return;
    }
    await this.onSend(message);
  }
  // The documents among the files about to be sent: their chips in the sent message keep showing
  // their state.
  documents() {
    return this.files.filter((f2) => f2.path && f2.documentId).map((f2) => ({ name: f2.name, id: f2.documentId }));
  }
  dropUploads() {
    if (!this.files.length) return;
    this.files = [];
    this.renderChips();
  }
  clear() {
    this.input.value = "";
    this.images = [];
    this.files = [];
    this.renderChips();
    this.grow();
  }
};

// navi/web/static/js/gauge.js
var KEPT = 8;
var $2 = (id) => document.getElementById(id);
var turns = [];
var n2 = (value) => Number(value || 0).toLocaleString();
function turnsFrom(messages) {
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
function addTurn(usage) {
  if (!usage) return;
  turns.push({
    read: usage.prompt_tokens || 0,
    wrote: usage.completion_tokens || 0,
    estimated: Boolean(usage.estimated)
  });
  turns = turns.slice(-KEPT);
}
function setMeter(tokens, max, compressAt) {
  const meter = $2("context-meter");
  if (!max || !tokens) {
    meter.hidden = true;
    return;
  }
  const share = Math.min(1, tokens / max);
  meter.hidden = false;
  meter.setAttribute("aria-valuenow", String(tokens));
  meter.setAttribute("aria-valuemax", String(max));
  $2("context-fill").style.width = `${(share * 100).toFixed(1)}%`;
  const mark = $2("context-mark");
  const at2 = compressAt ? Math.min(1, compressAt / max) : null;
  mark.hidden = at2 === null;
  if (at2 !== null) mark.style.left = `${(at2 * 100).toFixed(1)}%`;
  $2("context-fill").classList.toggle("high", at2 !== null ? tokens >= at2 * max * 0.9 : share > 0.75);
  $2("context-text").textContent = `${n2(tokens)} / ${n2(max)} tokens`;
  $2("context-short").textContent = `${Math.round(share * 100)}%`;
  const lines = [`Context the model saw in the last turn: ${n2(tokens)} of ${n2(max)} tokens.`];
  lines.push(
    at2 !== null ? `Earlier messages are summarised from ${n2(compressAt)} tokens (${Math.round(at2 * 100)}%).` : "Compression is off."
  );
  if (turns.length) {
    lines.push("Last turns (read / written tokens):");
    for (const t2 of turns) lines.push(`  ${n2(t2.read)} / ${n2(t2.wrote)}${t2.estimated ? " (estimated)" : ""}`);
  }
  meter.title = lines.join("\n");
}

// navi/web/static/js/confirm.js
function confirmDialog({ title, message, confirm = "OK", danger = true }) {
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const yes = el("button", { type: "button", class: danger ? "danger" : "primary", value: "yes" }, confirm);
    const no = el("button", { type: "button", class: "outline", value: "no" }, "Cancel");
    const heading = el("h2", { id: "confirm-title", text: title });
    const dialog = el(
      "dialog",
      { class: "dialog confirm", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-text" },
      heading,
      el("p", { id: "confirm-text", text: message }),
      el("div", { class: "confirm-actions" }, no, yes)
    );
    let answer = false;
    yes.addEventListener("click", () => {
      answer = true;
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) dialog.close();
    });
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (opener?.isConnected) opener.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}
function askText({ title, label, value = "", confirm = "OK", options = [], maxlength = 100 }) {
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const input = el("input", {
      type: "text",
      id: "ask-text",
      maxlength: String(maxlength),
      autocomplete: "off",
      list: options.length ? "ask-options" : void 0
    });
    input.value = value;
    const choices2 = options.length ? el("datalist", { id: "ask-options" }, options.map((option) => el("option", { value: option }))) : null;
    const yes = el("button", { type: "submit", class: "primary" }, confirm);
    const no = el("button", { type: "button", class: "outline" }, "Cancel");
    const form = el(
      "form",
      { method: "dialog", class: "ask-form" },
      el("label", { for: "ask-text", text: label }),
      input,
      choices2,
      el("div", { class: "confirm-actions" }, no, yes)
    );
    const dialog = el(
      "dialog",
      { class: "dialog confirm", "aria-labelledby": "ask-title" },
      el("h2", { id: "ask-title", text: title }),
      form
    );
    let answer = null;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      answer = input.value.trim().replace(/\s+/g, " ") || null;
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) dialog.close();
    });
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (opener?.isConnected) opener.focus();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    input.select();
  });
}

// navi/web/static/js/knowledge.js
var PAUSE_MS = 300;
var SNIPPET = 280;
var plural2 = (n3, one) => `${n3} ${one}${n3 === 1 ? "" : "s"}`;
var KnowledgePanel = class {
  constructor({ dialog, openButton, closeButton, currentSession, ensureSession: ensureSession2, onChanged }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.currentSession = currentSession;
    this.ensureSession = ensureSession2;
    this.onChanged = onChanged;
    const $4 = (id) => dialog.querySelector(`#${id}`);
    this.status = $4("knowledge-status");
    this.search = $4("knowledge-search");
    this.hits = $4("knowledge-hits");
    this.list = $4("collection-list");
    this.empty = $4("collection-empty");
    this.form = $4("collection-form");
    this.nameInput = $4("collection-name");
    this.formError = $4("collection-error");
    this.docsSection = $4("collection-documents");
    this.profileBox = $4("collection-profiles");
    this.profileToggles = $4("profile-toggles");
    this.profiles = null;
    this.docsHeading = $4("documents-heading");
    this.docList = $4("document-list");
    this.docEmpty = $4("document-empty");
    this.fileInput = $4("documents-input");
    this.collections = [];
    this.attached = /* @__PURE__ */ new Set();
    this.selected = null;
    this.documents = [];
    this.documentsOf = null;
    this.pollTimer = 0;
    this.docTicket = 0;
    this.searchTimer = 0;
    this.searchTicket = 0;
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      clearTimeout(this.pollTimer);
      this.pollTimer = 0;
      if (this.opener.isConnected) this.opener.focus();
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    $4("knowledge-search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.find(this.search.value);
    });
    this.search.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.find(this.search.value), PAUSE_MS);
    });
    this.fileInput.addEventListener("change", () => {
      const files = [...this.fileInput.files];
      this.fileInput.value = "";
      this.upload(files);
    });
    dialog.addEventListener("dragover", (event) => {
      if (![...event.dataTransfer.types].includes("Files")) return;
      event.preventDefault();
      event.stopPropagation();
      dialog.classList.add("dragging");
    });
    dialog.addEventListener("dragleave", (event) => {
      if (!dialog.contains(event.relatedTarget)) dialog.classList.remove("dragging");
    });
    dialog.addEventListener("drop", (event) => {
      dialog.classList.remove("dragging");
      if (!event.dataTransfer?.types.includes("Files")) return;
      event.preventDefault();
      event.stopPropagation();
      const reading = droppedFiles(event.dataTransfer);
      reading.then((files) => this.upload(files));
    });
  }
  async open() {
    this.say("");
    if (!this.dialog.open) this.dialog.showModal();
    const touch = window.matchMedia("(hover: none) and (pointer: coarse)").matches;
    (touch ? this.dialog.querySelector("#close-knowledge") : this.search).focus();
    await this.load();
  }
  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }
  get sessionId() {
    return this.currentSession()?.id || null;
  }
  isOwn(c2) {
    return c2.kind === "session" && c2.session_id === this.sessionId;
  }
  async load() {
    const sid = this.sessionId;
    try {
      const [all, attached] = await Promise.all([api.collections(), sid ? api.sessionCollections(sid) : []]);
      const byId = new Map(all.map((c2) => [c2.id, c2]));
      for (const c2 of attached) if (!byId.has(c2.id)) byId.set(c2.id, c2);
      this.collections = [...byId.values()].filter((c2) => c2.kind !== "session" || c2.session_id === sid);
      this.collections.sort((a2, b2) => Number(this.isOwn(b2)) - Number(this.isOwn(a2)));
      this.attached = new Set(attached.map((c2) => c2.id));
    } catch (error) {
      this.say(`Could not read your collections: ${error.message}`, "error");
      return;
    }
    if (this.selected && !this.collections.some((c2) => c2.id === this.selected)) this.selected = null;
    if (!this.selected && this.collections.length) this.selected = this.collections[0].id;
    this.renderCollections();
    await this.loadDocuments();
  }
  // Read in the open conversation because it is attached to the conversation's profile.
  viaProfile(c2) {
    const profile = this.currentSession()?.profile_id;
    return Boolean(profile && c2.profiles?.includes(profile));
  }
  // The profiles a collection is attached to, as toggles (not for a conversation's own files).
  async renderProfiles(collection) {
    this.profileBox.hidden = collection.kind === "session";
    if (this.profileBox.hidden) return;
    if (!this.profiles) {
      try {
        this.profiles = await api.profiles();
      } catch (error) {
        this.profileBox.hidden = true;
        return;
      }
    }
    const focused = document.activeElement?.closest?.(".profile-toggle")?.dataset.id;
    this.profileToggles.replaceChildren(...this.profiles.map((p2) => {
      const box = el("input", {
        type: "checkbox",
        checked: (collection.profiles || []).includes(p2.id),
        onchange: (event) => this.setProfile(collection, p2, event.target.checked)
      });
      box.setAttribute("aria-label", `Read ${collection.name} in every conversation with ${p2.name}`);
      return el("label", { class: "profile-toggle", dataset: { id: p2.id } }, box, ` ${p2.name}`);
    }));
    if (focused) this.profileToggles.querySelector(`.profile-toggle[data-id="${focused}"] input`)?.focus();
  }
  async setProfile(collection, profile, on) {
    try {
      if (on) await api.attachToProfile(collection.id, profile.id);
      else await api.detachFromProfile(collection.id, profile.id);
      this.say(on ? `Every conversation with ${profile.name} reads ${collection.name} now.` : `Conversations with ${profile.name} no longer read ${collection.name}.`);
    } catch (error) {
      this.say(`Could not change it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
  }
  collectionName(c2) {
    return this.isOwn(c2) ? "This conversation's files" : c2.name;
  }
  renderCollections() {
    const sid = this.sessionId;
    this.empty.hidden = this.collections.length > 0;
    this.list.replaceChildren(...this.collections.map((c2) => {
      const name = this.collectionName(c2);
      const chosen = c2.id === this.selected;
      const count = c2.id === this.documentsOf ? this.documents.length : c2.documents ?? 0;
      const open = el(
        "button",
        {
          type: "button",
          class: "collection-open",
          "aria-pressed": chosen ? "true" : "false",
          onclick: () => this.choose(c2.id)
        },
        el("span", { class: "collection-name", text: name }),
        el("span", { class: "collection-meta", text: plural2(count, "document") })
      );
      const viaProfile = this.viaProfile(c2);
      const toggle = el("input", {
        type: "checkbox",
        checked: this.attached.has(c2.id) || this.isOwn(c2),
        disabled: this.isOwn(c2) || viaProfile,
        onchange: (event) => this.setAttached(c2, event.target.checked)
      });
      const use = el(
        "label",
        { class: "collection-use", title: this.isOwn(c2) ? "Files uploaded into this conversation are always read in it" : viaProfile ? "Read here through this conversation's profile (change it under the documents)" : sid ? "Navi reads this collection in the open conversation" : "Starts a conversation that reads this collection" },
        toggle,
        this.isOwn(c2) ? " Used here" : viaProfile ? " Used here (profile)" : " Use in this conversation"
      );
      toggle.setAttribute("aria-label", `Use ${name} in this conversation`);
      const remove = c2.kind === "user" ? el("button", {
        type: "button",
        class: "icon-button",
        "aria-label": `Delete collection ${name}`,
        title: "Delete",
        onclick: () => this.removeCollection(c2)
      }, icon("trash")) : null;
      return el(
        "li",
        { class: `collection${chosen ? " chosen" : ""}${this.attached.has(c2.id) ? " attached" : ""}`, dataset: { id: c2.id } },
        open,
        use,
        remove
      );
    }));
  }
  async choose(id) {
    this.selected = id;
    this.documents = [];
    this.documentsOf = null;
    this.renderCollections();
    await this.loadDocuments();
    this.list.querySelector(`li[data-id="${id}"] .collection-open`)?.focus();
  }
  // One reading at a time counts (a poll, an upload's, a choice's): only the latest schedules the next.
  async loadDocuments() {
    clearTimeout(this.pollTimer);
    this.pollTimer = 0;
    const ticket = ++this.docTicket;
    const id = this.selected;
    const collection = this.collections.find((c2) => c2.id === id);
    this.docsSection.hidden = !collection;
    if (!collection) return;
    this.docsHeading.textContent = `Documents in ${this.collectionName(collection)}`;
    this.renderProfiles(collection);
    let docs;
    try {
      docs = await api.documents(id);
    } catch (error) {
      if (id === this.selected) this.say(`Could not read its documents: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.docTicket || id !== this.selected || !this.dialog.open) return;
    const settled = this.documents.filter((d2) => BUSY.has(d2.state)).some((d2) => !BUSY.has(docs.find((n3) => n3.id === d2.id)?.state));
    this.documents = docs;
    this.documentsOf = id;
    this.renderDocuments();
    const count = this.list.querySelector(`li[data-id="${id}"] .collection-meta`);
    if (count) count.textContent = plural2(docs.length, "document");
    if (settled && this.attached.has(id)) this.onChanged();
    if (docs.some((d2) => BUSY.has(d2.state))) this.pollTimer = setTimeout(() => this.loadDocuments(), POLL_MS);
  }
  renderDocuments() {
    this.docEmpty.hidden = this.documents.length > 0;
    const focused = document.activeElement?.closest?.("li.document");
    const focusAction = focused ? document.activeElement.dataset.action : null;
    this.docList.replaceChildren(...this.documents.map((d2) => {
      const name = isPdf(d2) && d2.state === "ready" ? el("a", { class: "document-name", href: fileHref(d2.id), target: "_blank", rel: "noopener noreferrer", text: d2.name }) : el("span", { class: "document-name", text: d2.name });
      const actions = el(
        "span",
        { class: "document-actions" },
        d2.state === "queued" ? null : el("button", {
          type: "button",
          class: "fact-action",
          dataset: { action: "reindex" },
          "aria-label": `Re-index ${d2.name}`,
          onclick: () => this.reindex(d2)
        }, "Re-index"),
        el("button", {
          type: "button",
          class: "fact-action",
          dataset: { action: "delete" },
          "aria-label": `Delete ${d2.name}`,
          onclick: () => this.removeDocument(d2)
        }, "Delete")
      );
      return el(
        "li",
        { class: `document ${d2.state}`, dataset: { id: d2.id, state: d2.state } },
        el("div", { class: "document-main" }, name, stateView(d2)),
        actions
      );
    }));
    if (focused?.dataset.id) {
      this.docList.querySelector(`li[data-id="${focused.dataset.id}"] [data-action="${focusAction}"]`)?.focus();
    }
  }
  async create() {
    const name = this.nameInput.value.trim();
    this.showError("");
    if (!name) {
      this.showError("Give the collection a name.");
      return;
    }
    try {
      const made = await api.createCollection(name);
      this.nameInput.value = "";
      this.selected = made.id;
      this.say(`Created ${made.name}.`);
    } catch (error) {
      this.showError(error.message);
      return;
    }
    await this.load();
  }
  showError(message) {
    this.formError.textContent = message;
    this.formError.hidden = !message;
    if (message) {
      this.nameInput.setAttribute("aria-invalid", "true");
      this.nameInput.setAttribute("aria-describedby", "collection-error");
      this.nameInput.focus();
    } else {
      this.nameInput.removeAttribute("aria-invalid");
    }
  }
  async removeCollection(c2) {
    const ok = await confirmDialog({
      title: `Delete ${c2.name}?`,
      message: `Its ${plural2(c2.documents ?? 0, "document")} and their index go for good; conversations stop reading it.`,
      confirm: "Delete"
    });
    if (!ok) return;
    try {
      await api.deleteCollection(c2.id);
      this.say(`Deleted ${c2.name}.`);
      if (this.selected === c2.id) this.selected = null;
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    await this.load();
    if (this.attached.has(c2.id)) this.onChanged();
    this.nameInput.focus();
  }
  async setAttached(c2, on) {
    let sid;
    try {
      sid = await this.ensureSession();
      if (on) await api.attachCollection(sid, c2.id);
      else await api.detachCollection(sid, c2.id);
      this.say(on ? `This conversation reads ${c2.name} now.` : `This conversation no longer reads ${c2.name}.`);
    } catch (error) {
      this.say(`Could not change it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
    this.list.querySelector(`li[data-id="${c2.id}"] input[type="checkbox"]`)?.focus();
  }
  // Files chosen or dropped: into the chosen collection, one request each (so one refused file says
  // why and the others still go).
  async upload(files) {
    if (!files.length) return;
    const id = this.selected;
    const collection = this.collections.find((c2) => c2.id === id);
    if (!collection) {
      this.say("Create or choose a collection first, then add files to it.", "error");
      return;
    }
    const refused = [];
    let added = 0;
    for (const [i2, file] of files.entries()) {
      this.say(`Uploading ${file.name} (${i2 + 1} of ${files.length})…`);
      try {
        await api.addDocuments(id, [file]);
        added += 1;
      } catch (error) {
        refused.push(`${file.name}: ${error.message}`);
      }
      if (i2 === 0 || i2 === files.length - 1) await this.loadDocuments();
    }
    await this.load();
    const said = `Added ${plural2(added, "file")} to ${this.collectionName(collection)}.`;
    this.say(refused.length ? `${said} Not added: ${refused.join("; ")}` : said, refused.length ? "error" : "info");
  }
  async reindex(d2) {
    let said;
    try {
      await api.reindexDocument(d2.id);
      said = [`${d2.name} is read again.`];
    } catch (error) {
      said = [`Could not re-index it: ${error.message}`, "error"];
    }
    await this.loadDocuments();
    this.say(...said);
  }
  async removeDocument(d2) {
    const ok = await confirmDialog({
      title: `Delete ${d2.name}?`,
      message: "The document and its index go for good; answers can no longer cite it.",
      confirm: "Delete"
    });
    if (!ok) return;
    try {
      await api.deleteDocument(d2.id);
      this.say(`Deleted ${d2.name}.`);
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
    this.fileInput.focus();
  }
  async find(query) {
    const q3 = query.trim();
    const ticket = ++this.searchTicket;
    if (!q3) {
      this.hits.replaceChildren();
      this.hits.hidden = true;
      return;
    }
    let hits;
    try {
      hits = await api.searchDocuments({ q: q3, limit: 10 });
    } catch (error) {
      if (ticket === this.searchTicket) this.say(`Could not search: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.searchTicket) return;
    this.hits.hidden = false;
    if (!hits.length) {
      this.hits.replaceChildren(el("li", { class: "doc-hit none", text: "Nothing found in your documents." }));
      return;
    }
    this.hits.replaceChildren(...hits.map((hit) => {
      const title = hit.citation || hit.document_name;
      const pdfPage = isPdf(hit) && hit.place?.page;
      const open = pdfPage ? el("a", { class: "hit-citation", href: fileHref(hit.document_id, hit.place.page), target: "_blank", rel: "noopener noreferrer" }, title) : el("button", { type: "button", class: "hit-citation", onclick: () => openHit(hit) }, title);
      const text2 = (hit.text || "").replace(/\s+/g, " ").trim();
      return el(
        "li",
        { class: "doc-hit", dataset: { documentId: hit.document_id } },
        open,
        el("p", { class: "hit-text", text: text2.length > SNIPPET ? `${text2.slice(0, SNIPPET)}…` : text2 })
      );
    }));
  }
};

// navi/web/static/js/viewer.js
var KEYS = /* @__PURE__ */ new Set([
  "Enter",
  "Tab",
  "Backspace",
  "Delete",
  "Escape",
  "ArrowUp",
  "ArrowDown",
  "ArrowLeft",
  "ArrowRight",
  "Home",
  "End",
  "PageUp",
  "PageDown"
]);
var BATCH_MS = 150;
var SigninViewer = class {
  constructor({ root, say, onSaved }) {
    const $4 = (id) => root.querySelector(`#${id}`);
    this.form = $4("viewer-form");
    this.section = $4("viewer");
    this.screen = $4("viewer-screen");
    this.address = $4("viewer-address");
    this.say = say;
    this.onSaved = onSaved;
    this.ws = null;
    this.size = { width: 1280, height: 800 };
    this.typed = "";
    this.timer = null;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.start();
    });
    $4("viewer-save").addEventListener("click", () => this.send({ type: "viewer_save" }));
    $4("viewer-cancel").addEventListener("click", () => {
      this.send({ type: "viewer_cancel" });
      this.stop();
    });
    this.screen.addEventListener("click", (event) => this.click(event));
    this.screen.addEventListener("keydown", (event) => this.key(event));
    this.screen.addEventListener("wheel", (event) => {
      event.preventDefault();
      this.flush();
      this.send({ type: "viewer_scroll", dy: Math.max(-5e3, Math.min(5e3, event.deltaY)) });
    }, { passive: false });
  }
  start() {
    const f2 = this.form.elements;
    const name = f2.name.value.trim();
    const url = f2.url.value.trim();
    this.stop();
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws/browser/viewer`);
    this.ws = ws;
    this.say(`Opening ${url} in Navi's browser…`);
    ws.addEventListener("open", () => this.send({ type: "viewer_start", name, url }));
    ws.addEventListener("message", (event) => this.frame(JSON.parse(event.data), name));
    ws.addEventListener("close", () => {
      if (this.ws === ws) this.stop();
    });
  }
  frame(frame, name) {
    if (frame.type === "viewer_frame") {
      this.size = { width: frame.width, height: frame.height };
      this.screen.src = frame.image;
      this.address.textContent = `${frame.title || "(untitled)"} — ${frame.url}`;
      if (this.section.hidden) {
        this.section.hidden = false;
        this.form.hidden = true;
        this.say("");
        this.screen.focus();
      }
    } else if (frame.type === "viewer_saved") {
      this.say(`Saved the sign-in ${frame.name}${frame.sites.length ? ` (${frame.sites.join(", ")})` : ""}.`);
      this.stop();
      this.onSaved(frame.name);
    } else if (frame.type === "viewer_error") {
      this.say(`The sign-in ${name}: ${frame.message}`, "error");
    }
  }
  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }
  click(event) {
    this.flush();
    const box = this.screen.getBoundingClientRect();
    const x3 = (event.clientX - box.left) / box.width * this.size.width;
    const y3 = (event.clientY - box.top) / box.height * this.size.height;
    this.send({ type: "viewer_click", x: Math.max(0, Math.min(this.size.width, x3)), y: Math.max(0, Math.min(this.size.height, y3)) });
    this.screen.focus();
  }
  key(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key.length === 1) {
      event.preventDefault();
      this.typed += event.key;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.flush(), BATCH_MS);
    } else if (KEYS.has(event.key)) {
      event.preventDefault();
      this.flush();
      this.send({ type: "viewer_key", key: event.key });
    }
  }
  flush() {
    clearTimeout(this.timer);
    if (this.typed) this.send({ type: "viewer_text", text: this.typed });
    this.typed = "";
  }
  stop() {
    this.flush();
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
    this.section.hidden = true;
    this.form.hidden = false;
    this.screen.removeAttribute("src");
    this.address.textContent = "";
  }
};

// navi/web/static/js/skills.js
var plural3 = (n3, one) => `${n3} ${one}${n3 === 1 ? "" : "s"}`;
var SkillsPanel = class {
  constructor({ dialog, openButton, closeButton }) {
    this.dialog = dialog;
    this.opener = openButton;
    const $4 = (id) => dialog.querySelector(`#${id}`);
    this.status = $4("skills-status");
    this.list = $4("skill-list");
    this.empty = $4("skill-empty");
    this.problems = $4("skill-problems");
    this.view = $4("skill-view");
    this.viewHeading = $4("skill-view-heading");
    this.text = $4("skill-md");
    this.input = $4("skills-input");
    this.signins = $4("signin-list");
    this.signinEmpty = $4("signin-empty");
    this.viewer = new SigninViewer({ root: dialog, say: (m2, k2) => this.say(m2, k2), onSaved: () => this.loadSignins() });
    dialog.addEventListener("close", () => this.viewer.stop());
    this.skills = [];
    this.shown = null;
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      if (this.opener.isConnected) this.opener.focus();
    });
    this.input.addEventListener("change", () => {
      const file = this.input.files[0];
      this.input.value = "";
      if (file) this.install(file);
    });
  }
  async open() {
    this.say("");
    if (!this.dialog.open) this.dialog.showModal();
    this.dialog.querySelector("#close-skills").focus();
    await this.load();
  }
  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }
  async load() {
    let data;
    try {
      data = await api.skills();
    } catch (error) {
      this.say(`Could not read your skills: ${error.message}`, "error");
      return;
    }
    this.skills = data.skills;
    this.render(data.problems);
    if (this.shown && !this.skills.some((s2) => s2.name === this.shown)) this.hideView();
    await this.loadSignins();
  }
  async loadSignins() {
    let data;
    try {
      data = await api.browserProfiles();
    } catch (error) {
      this.say(`Could not read your browser sign-ins: ${error.message}`, "error");
      return;
    }
    this.signinEmpty.hidden = data.profiles.length > 0;
    this.signins.replaceChildren(...data.profiles.map((p2) => el(
      "li",
      { class: "collection", dataset: { name: p2.name } },
      el(
        "span",
        { class: "collection-open" },
        el("span", { class: "collection-name", text: p2.name }),
        el("span", { class: "collection-meta", text: p2.sites.join(", ") || "no cookies" })
      ),
      el("button", {
        type: "button",
        class: "icon-button",
        "aria-label": `Forget sign-in ${p2.name}`,
        title: "Forget",
        onclick: () => this.forget(p2.name)
      }, icon("trash"))
    )));
  }
  async forget(name) {
    const ok = await confirmDialog({
      title: `Forget ${name}?`,
      message: "Its cookies are deleted: the browser tool can no longer open those sites signed in as you.",
      confirm: "Forget"
    });
    if (!ok) return;
    try {
      await api.forgetBrowserProfile(name);
      this.say(`Forgot ${name}.`);
    } catch (error) {
      this.say(`Could not forget ${name}: ${error.message}`, "error");
    }
    await this.loadSignins();
  }
  render(problems) {
    this.empty.hidden = this.skills.length > 0;
    this.list.replaceChildren(...this.skills.map((s2) => {
      const own = s2.source === "own";
      const meta = [own ? "yours" : `from ${s2.source}`, s2.files.length ? plural3(s2.files.length, "file") : "", s2.license].filter(Boolean).join(" · ");
      const show = el(
        "button",
        {
          type: "button",
          class: "collection-open",
          "aria-pressed": s2.name === this.shown ? "true" : "false",
          title: "Show its SKILL.md",
          onclick: () => this.show(s2.name)
        },
        el("span", { class: "collection-name", text: s2.name }),
        el("span", { class: "collection-meta", text: s2.description }),
        el("span", { class: "collection-meta", text: meta })
      );
      const toggle = el("input", { type: "checkbox", checked: s2.enabled, onchange: (event) => this.setEnabled(s2, event.target.checked) });
      toggle.setAttribute("aria-label", `Offer ${s2.name} to Navi`);
      const use = el(
        "label",
        { class: "collection-use", title: "Navi sees the skill's name and description, and reads it when a task matches" },
        toggle,
        " On"
      );
      const remove = own ? el("button", {
        type: "button",
        class: "icon-button",
        "aria-label": `Remove skill ${s2.name}`,
        title: "Remove",
        onclick: () => this.remove(s2)
      }, icon("trash")) : null;
      return el("li", {
        class: `collection skill${s2.enabled ? " attached" : ""}${s2.name === this.shown ? " chosen" : ""}`,
        dataset: { name: s2.name }
      }, show, use, remove);
    }));
    this.problems.hidden = !problems.length;
    this.problems.replaceChildren(...problems.map((p2) => el("li", { text: `${p2.file}${p2.line ? `:${p2.line}` : ""}: ${p2.message}` })));
  }
  async show(name) {
    let skill;
    try {
      skill = await api.skill(name);
    } catch (error) {
      this.say(`Could not read ${name}: ${error.message}`, "error");
      return;
    }
    this.shown = name;
    this.viewHeading.textContent = `${name}: SKILL.md`;
    this.text.textContent = skill.skill_md;
    this.view.hidden = false;
    for (const li of this.list.children) {
      const chosen = li.dataset.name === name;
      li.classList.toggle("chosen", chosen);
      li.querySelector(".collection-open")?.setAttribute("aria-pressed", chosen ? "true" : "false");
    }
  }
  hideView() {
    this.shown = null;
    this.view.hidden = true;
    this.text.textContent = "";
  }
  async setEnabled(skill, enabled) {
    try {
      await api.setSkill(skill.name, enabled);
      this.say(`${skill.name} is ${enabled ? "on" : "off"}.`);
    } catch (error) {
      this.say(`Could not change ${skill.name}: ${error.message}`, "error");
    }
    await this.load();
  }
  async remove(skill) {
    const ok = await confirmDialog({
      title: `Remove ${skill.name}?`,
      message: "Its folder, with its instructions and scripts, is deleted.",
      confirm: "Remove"
    });
    if (!ok) return;
    try {
      await api.removeSkill(skill.name);
      this.say(`Removed ${skill.name}.`);
    } catch (error) {
      this.say(`Could not remove ${skill.name}: ${error.message}`, "error");
    }
    await this.load();
  }
  async install(file) {
    this.say(`Installing ${file.name}…`);
    let done;
    try {
      done = await api.installSkill(file);
    } catch (error) {
      this.say(`${file.name} was not installed: ${error.message}`, "error");
      return;
    }
    const names = done.installed.map((s2) => s2.name).join(", ");
    const trouble = done.problems.length ? ` ${plural3(done.problems.length, "skill")} could not be installed (listed below).` : "";
    this.say(`Installed ${names}.${trouble}`, done.problems.length ? "error" : "info");
    await this.load();
    if (done.problems.length) {
      this.problems.hidden = false;
      this.problems.append(...done.problems.map((p2) => el("li", { text: `${p2.file}${p2.line ? `:${p2.line}` : ""}: ${p2.message}` })));
    }
  }
};

// navi/web/static/js/jobs.js
var STATES = { queued: "waiting", running: "running", done: "done", failed: "failed", stopped: "stopped" };
var JobsPanel = class {
  constructor({ dialog, openButton, closeButton, onOpenSession }) {
    this.dialog = dialog;
    this.list = dialog.querySelector("#job-list");
    this.empty = dialog.querySelector("#job-empty");
    this.status = dialog.querySelector("#jobs-status");
    this.onOpenSession = onOpenSession;
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
  }
  open() {
    if (!this.dialog.open) this.dialog.showModal();
    this.load();
  }
  // A `job` frame: the panel drawn again when it is open.
  changed() {
    if (this.dialog.open) this.load();
  }
  async load() {
    const asked = this.asked = (this.asked || 0) + 1;
    let jobs;
    try {
      jobs = await api.jobs();
    } catch (error) {
      if (asked === this.asked) this.say(`Could not list your jobs: ${error.message}`);
      return;
    }
    if (asked !== this.asked) return;
    this.say("");
    this.empty.hidden = jobs.length > 0;
    this.list.replaceChildren(...jobs.map((job) => this.row(job)));
  }
  row(job) {
    const active = job.state === "queued" || job.state === "running";
    const progress = el("progress", { max: job.max_steps, value: Math.min(job.steps, job.max_steps), "aria-label": "Steps" });
    const stop2 = active && !job.stop_requested ? el("button", { type: "button", class: "danger", onclick: () => this.stop(job.id) }, "Stop") : null;
    const open = el("button", { type: "button", class: "link", onclick: () => {
      this.dialog.close();
      this.onOpenSession(job.session_id);
    } }, "Open");
    const research = job.mode === "research";
    const step = job.last_step ? research && job.state === "running" ? `researching: ${job.last_step}` : `latest step: ${job.last_step}` : "";
    const detail = job.error || step;
    const plan = research && job.plan?.length ? el("ol", { class: "job-plan", "aria-label": "Sub-questions" }, job.plan.map((q3) => el("li", { text: q3 }))) : null;
    const sources = research && (job.sources || job.state === "done") ? el("span", { class: "job-sources", text: job.sources === 1 ? "1 source read" : `${job.sources} sources read` }) : null;
    return el(
      "li",
      { class: `job ${job.state}${research ? " research" : ""}`, dataset: { job: job.id, state: job.state, mode: job.mode || "task" } },
      el(
        "div",
        { class: "job-head" },
        el("strong", { text: job.title }),
        research ? el("span", { class: "job-kind", text: "Research" }) : null,
        el("span", { class: "job-state", text: job.stop_requested && active ? "stopping" : STATES[job.state] })
      ),
      el("div", { class: "job-progress" }, progress, el("span", { class: "job-steps", text: `${job.steps}/${job.max_steps} steps` }), sources),
      detail ? el("p", { class: "job-detail", text: detail }) : null,
      plan,
      el("div", { class: "job-actions" }, open, stop2)
    );
  }
  async stop(id) {
    try {
      await api.stopJob(id);
    } catch (error) {
      this.say(`Could not stop it: ${error.message}`);
    }
    this.load();
  }
  say(message) {
    this.status.textContent = message;
    this.status.hidden = !message;
  }
};

// navi/web/static/js/memory.js
var PAUSE_MS2 = 250;
var SOURCES = {
  extracted: "read from a conversation",
  remembered: "remembered when you asked",
  added: "added by you",
  edited: "corrected by you"
};
function day(iso) {
  const time = Date.parse(iso);
  if (!Number.isFinite(time)) return "";
  return new Intl.DateTimeFormat(void 0, { dateStyle: "medium" }).format(new Date(time));
}
var words = (label) => String(label || "").replaceAll("_", " ");
var MemoryPanel = class {
  constructor({ dialog, openButton, closeButton, onOpenHit, onOpenSession, sessionName }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.list = dialog.querySelector("#memory-list");
    this.empty = dialog.querySelector("#memory-empty");
    this.status = dialog.querySelector("#memory-status");
    this.search = dialog.querySelector("#memory-search");
    this.form = dialog.querySelector("#memory-form");
    this.error = dialog.querySelector("#memory-error");
    this.onOpenHit = onOpenHit;
    this.onOpenSession = onOpenSession;
    this.sessionName = sessionName;
    this.facts = [];
    this.query = "";
    this.ticket = 0;
    this.timer = 0;
    this.editing = null;
    this.expanded = /* @__PURE__ */ new Set();
    this.details = /* @__PURE__ */ new Map();
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
    this.search.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.setQuery(this.search.value), PAUSE_MS2);
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
  }
  open() {
    this.say("");
    this.details.clear();
    this.expanded.clear();
    this.editing = null;
    if (!this.dialog.open) this.dialog.showModal();
    const touch = window.matchMedia("(hover: none) and (pointer: coarse)").matches;
    (touch ? this.dialog.querySelector("#close-memory") : this.search).focus();
    this.load();
  }
  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }
  setQuery(text2) {
    const query = text2.trim();
    if (query === this.query) return;
    this.query = query;
    this.load();
  }
  async load() {
    const ticket = ++this.ticket;
    let facts;
    try {
      facts = await api.memoryFacts(this.query);
    } catch (error) {
      if (ticket === this.ticket) this.say(`Could not load the memory: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.ticket) return;
    this.facts = Array.isArray(facts) ? facts : [];
    this.render();
  }
  render() {
    const focused = this.list.contains(document.activeElement) ? [document.activeElement.closest("li.fact")?.dataset.id, document.activeElement.dataset.action] : null;
    const groups = /* @__PURE__ */ new Map();
    for (const fact of this.facts) {
      if (!groups.has(fact.category)) groups.set(fact.category, []);
      groups.get(fact.category).push(fact);
    }
    this.empty.textContent = this.query ? `Nothing remembered matches “${this.query}”.` : "Nothing remembered yet.";
    this.empty.hidden = this.facts.length > 0;
    this.list.replaceChildren(...[...groups].map(([category, facts]) => {
      const id = `memory-cat-${category}`;
      return el(
        "section",
        { class: "memory-category", "aria-labelledby": id, dataset: { category } },
        el("h3", { id, text: words(category) }),
        el("ul", { class: "facts" }, facts.map((f2) => this.item(f2)))
      );
    }));
    if (focused?.[0]) {
      const row = this.list.querySelector(`li.fact[data-id="${CSS.escape(focused[0])}"]`);
      row?.querySelector(`[data-action="${focused[1]}"]`)?.focus();
    }
  }
  item(f2) {
    const name = words(f2.key);
    const shown = this.expanded.has(f2.id);
    const action = (what, label, handler, extra = {}) => el("button", {
      type: "button",
      class: "fact-action",
      dataset: { action: what },
      "aria-label": `${label}: ${name}`,
      onclick: () => handler(f2),
      ...extra
    }, label);
    const meta = [SOURCES[f2.source] || f2.source, `since ${day(f2.updated_at)}`].filter(Boolean).join(" · ");
    return el(
      "li",
      { class: "fact", dataset: { id: String(f2.id) } },
      el(
        "div",
        { class: "fact-main" },
        el("span", { class: "fact-key", text: name }),
        this.editing === f2.id ? this.editForm(f2, name) : el("span", { class: "fact-value", text: f2.value })
      ),
      el("div", { class: "fact-meta", text: meta }),
      el(
        "div",
        { class: "fact-actions" },
        action("details", shown ? "Hide" : "Where from", (x3) => this.toggle(x3), { "aria-expanded": shown ? "true" : "false" }),
        this.editing === f2.id ? null : action("edit", "Edit", (x3) => this.startEdit(x3)),
        action("delete", "Delete", (x3) => this.remove(x3, name))
      ),
      shown ? this.detailsOf(f2) : null
    );
  }
  editForm(f2, name) {
    const input = el("input", { class: "fact-input", value: f2.value, maxlength: "1000", "aria-label": `New value for ${name}` });
    const form = el(
      "form",
      { class: "fact-edit", onsubmit: (event) => {
        event.preventDefault();
        this.save(f2, input.value);
      } },
      input,
      el("button", { type: "submit", class: "primary small", dataset: { action: "save" } }, "Save"),
      el("button", {
        type: "button",
        class: "outline small",
        dataset: { action: "cancel" },
        onclick: () => {
          this.editing = null;
          this.render();
        }
      }, "Cancel")
    );
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      event.stopPropagation();
      this.editing = null;
      this.render();
    });
    return form;
  }
  startEdit(f2) {
    this.editing = f2.id;
    this.render();
    const input = this.list.querySelector(`li.fact[data-id="${f2.id}"] .fact-input`);
    input?.focus();
    input?.select();
  }
  async save(f2, text2) {
    const value = text2.trim();
    if (!value) {
      this.say("A fact needs a value; delete it to forget it.", "error");
      return;
    }
    try {
      const changed = await api.editFact(f2.id, value);
      this.say(changed.outcome === "confirmed" ? `Unchanged: ${words(f2.key)} is ${value}.` : `Changed ${words(f2.key)}: ${f2.value} → ${changed.fact.value}.`);
      this.editing = null;
      this.details.delete(f2.id);
    } catch (error) {
      this.say(`Could not change it: ${error.message}`, "error");
      return;
    }
    await this.load();
    if (this.expanded.has(f2.id)) this.loadDetails(f2.id);
    this.list.querySelector(`li.fact[data-id="${f2.id}"] [data-action="edit"]`)?.focus();
  }
  async remove(f2, name) {
    const ok = await confirmDialog({
      title: "Delete this fact?",
      message: `Navi forgets “${name}: ${f2.value}” and its former values for good.`,
      confirm: "Delete"
    });
    if (!ok) return;
    try {
      await api.deleteFact(f2.id);
      this.say(`Deleted: ${name}.`);
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    this.expanded.delete(f2.id);
    this.details.delete(f2.id);
    await this.load();
    this.search.focus();
  }
  toggle(f2) {
    if (this.expanded.has(f2.id)) this.expanded.delete(f2.id);
    else {
      this.expanded.add(f2.id);
      if (!this.details.has(f2.id)) this.loadDetails(f2.id);
    }
    this.render();
  }
  async loadDetails(id) {
    let source = null;
    let history2 = [];
    let error = null;
    try {
      [source, history2] = await Promise.all([api.factSource(id), api.factHistory(id)]);
    } catch (failure) {
      error = failure?.message || "no answer";
    }
    this.details.set(id, { source, history: Array.isArray(history2) ? history2 : [], error });
    this.render();
  }
  detailsOf(f2) {
    const found = this.details.get(f2.id);
    if (!found) return el("div", { class: "fact-details muted", text: "Loading…" });
    if (found.error) return el("div", { class: "fact-details error", text: `Could not read where it came from: ${found.error}` });
    return el("div", { class: "fact-details" }, this.sourceLine(f2, found.source), this.historyList(f2, found.history));
  }
  sourceLine(f2, source) {
    if (!source) {
      const why = f2.session_id ? "Its conversation has been deleted." : `${SOURCES[f2.source] || "Added"}, not from a conversation.`;
      return el("p", { class: "fact-source", text: why.charAt(0).toUpperCase() + why.slice(1) });
    }
    const name = source.session_name || "New conversation";
    const when = day(source.created_at);
    const link = el("a", { class: "fact-link", href: `#/s/${source.session_id}`, onclick: (event) => {
      event.preventDefault();
      this.dialog.close();
      if (source.message_id) this.onOpenHit({ session_id: source.session_id, message_id: source.message_id });
      else this.onOpenSession(source.session_id);
    } }, `“${name}”`);
    return el(
      "p",
      { class: "fact-source" },
      source.message_id ? "You said it in " : "From ",
      link,
      when ? ` on ${when}` : "",
      source.text ? el("q", { class: "fact-quote", text: source.text }) : null
    );
  }
  historyList(f2, history2) {
    if (!history2.length) return el("p", { class: "fact-history-empty muted", text: "No former values." });
    return el(
      "div",
      {},
      el("h4", { class: "fact-history-title", text: "Former values" }),
      el(
        "ol",
        { class: "fact-history", "aria-label": `Former values of ${words(f2.key)}` },
        history2.map((h2) => el(
          "li",
          {},
          el("span", { class: "fact-value", text: h2.value }),
          el("span", {
            class: "fact-meta fact-when",
            text: ` · ${day(h2.created_at)} – ${day(h2.retired_at)} · ${SOURCES[h2.source] || h2.source}`
          }),
          h2.session_id ? this.sessionLink(h2.session_id) : null
        ))
      )
    );
  }
  // A former value's conversation (its name as the sidebar knows it), opened at its start.
  sessionLink(id) {
    const name = this.sessionName(id);
    return el("span", { class: "fact-meta" }, " · in ", el("a", { class: "fact-link", href: `#/s/${id}`, onclick: (event) => {
      event.preventDefault();
      this.dialog.close();
      this.onOpenSession(id);
    } }, name ? `“${name}”` : "a conversation"));
  }
  async add() {
    const value = (id) => this.form.querySelector(`#${id}`).value.trim();
    const body = { category: value("memory-category"), key: value("memory-key"), value: value("memory-value") };
    const missing = Object.entries(body).find(([, v3]) => !v3)?.[0];
    if (missing) {
      this.showError(`Fill in the ${missing === "key" ? "“What”" : missing}.`, `memory-${missing}`);
      return;
    }
    const button = this.form.querySelector("#memory-add");
    button.disabled = true;
    try {
      const made = await api.addFact(body);
      this.showError("");
      for (const id of ["memory-key", "memory-value"]) this.form.querySelector(`#${id}`).value = "";
      const said = { created: "Added", updated: "Updated (the old value is in its history)", confirmed: "Already remembered" };
      this.say(`${said[made.outcome] || "Saved"}: ${words(made.fact.key)} = ${made.fact.value}.`);
      await this.load();
    } catch (error) {
      this.showError(error.message, null);
    } finally {
      button.disabled = false;
    }
  }
  showError(message, field2) {
    this.error.textContent = message;
    this.error.hidden = !message;
    for (const input of this.form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    if (message && field2) {
      const input = this.form.querySelector(`#${field2}`);
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", "memory-error");
      input.focus();
    }
  }
};

// navi/web/static/js/notify.js
function keyBytes(base64url) {
  const text2 = atob(base64url.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(text2, (c2) => c2.charCodeAt(0));
}
var KEY = "navi.notify";
var Notifier = class {
  constructor({ toggle, note, onOpen }) {
    this.toggle = toggle;
    this.note = note;
    this.onOpen = onOpen;
    this.supported = "Notification" in window;
    this.toggle.checked = this.enabled;
    this.toggle.addEventListener("change", () => this.changed());
    this.pushing = false;
    this.explain();
    if (this.enabled) this.subscribe();
  }
  get pushable() {
    return "serviceWorker" in navigator && "PushManager" in window;
  }
  // This browser subscribed with Navi's VAPID key and the subscription given to Navi.
  async subscribe() {
    if (!this.pushable) return;
    try {
      const registration = await navigator.serviceWorker.ready;
      const { public_key: key } = await api.pushKey();
      let subscription = await registration.pushManager.getSubscription();
      const current = subscription?.options?.applicationServerKey;
      if (subscription && current && btoa(String.fromCharCode(...new Uint8Array(current))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") !== key) {
        await subscription.unsubscribe();
        subscription = null;
      }
      subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
      await api.subscribePush(subscription.toJSON());
      this.pushing = true;
    } catch {
      this.pushing = false;
    }
    this.explain();
  }
  async unsubscribe() {
    this.pushing = false;
    if (!this.pushable) return;
    try {
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.getSubscription();
      if (!subscription) return;
      await api.unsubscribePush(subscription.endpoint).catch(() => {
      });
      await subscription.unsubscribe();
    } catch {
    }
  }
  get enabled() {
    return this.supported && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
  }
  async changed() {
    if (!this.toggle.checked) {
      localStorage.removeItem(KEY);
      await this.unsubscribe();
      this.explain();
      return;
    }
    if (!this.supported) {
      this.toggle.checked = false;
      this.explain();
      return;
    }
    let permission = Notification.permission;
    if (permission === "default") permission = await Notification.requestPermission();
    if (permission === "granted") localStorage.setItem(KEY, "on");
    this.toggle.checked = this.enabled;
    this.explain();
    if (this.enabled) await this.subscribe();
  }
  explain() {
    let text2 = "";
    if (!this.supported) text2 = "This browser cannot show notifications.";
    else if (Notification.permission === "denied") text2 = "Notifications are blocked for this site in the browser's settings.";
    else if (this.enabled && this.pushing) text2 = "This browser is notified when Navi finishes or waits for you while no Navi page is in view — closed too.";
    else if (this.enabled) text2 = "You will be notified when a scheduled run ends or waits for your approval.";
    this.note.textContent = text2;
    this.note.hidden = !text2;
  }
  // A schedule_run event (a frame, or one the poll found): ended, or waiting for an approval.
  show(event) {
    if (!this.enabled || this.pushing) return;
    let body;
    if (event.status === "waiting_approval") body = `Waiting for your approval${event.tool ? `: ${event.tool}` : ""}`;
    else if (event.status === "ok") body = plainText(event.preview || "") || "Done.";
    else body = `${event.status === "skipped" ? "Skipped" : "Failed"}: ${event.error || "no reason given"}`;
    try {
      const note = new Notification(event.title || "Navi", { body, tag: `navi-${event.schedule_run_id}` });
      note.onclick = () => {
        window.focus();
        if (event.session_id) this.onOpen(event.session_id);
        note.close();
      };
    } catch {
    }
  }
};

// navi/web/static/js/profile.js
var KEY2 = "navi.draftProfile";
var ProfilePicker = class {
  constructor({ select, modelName, currentSession, onChanged }) {
    this.select = select;
    this.modelName = modelName;
    this.currentSession = currentSession;
    this.onChanged = onChanged;
    this.profiles = [];
    this.shown = "";
    select.addEventListener("change", () => this.changed());
  }
  setProfiles(profiles) {
    this.profiles = profiles;
    this.select.replaceChildren(...profiles.map((p2) => el("option", { value: p2.id, text: p2.name })));
  }
  name(id) {
    return this.profiles.find((p2) => p2.id === id)?.name || id;
  }
  // The profile a draft's first message creates its conversation with.
  get draft() {
    const kept = localStorage.getItem(KEY2);
    return this.profiles.some((p2) => p2.id === kept) ? kept : this.profiles[0]?.id || "";
  }
  // The header names the model: the one that wrote the conversation's latest answer (`answeredBy`),
  // else the one picked for the conversation (`session.model`, "backend:model"), else the profile's
  // for this user (the one they picked for a built-in profile in Settings, else its own).
  show(profileId, session = null) {
    const id = profileId || this.draft;
    if (id && ![...this.select.options].some((o2) => o2.value === id)) {
      this.select.append(el("option", { value: id, text: id }));
    }
    this.select.value = id;
    this.shown = id;
    if ((session?.id || null) !== this.sessionId || (session?.model || null) !== this.picked) this.answered = "";
    this.sessionId = session?.id || null;
    this.picked = session?.model || null;
    this.drawModel();
  }
  profileModel() {
    return this.profiles.find((p2) => p2.id === this.shown)?.model || "";
  }
  answeredBy(model) {
    this.answered = model || "";
    this.drawModel();
  }
  drawModel() {
    const profile = this.profiles.find((p2) => p2.id === this.shown);
    const [backend, ...rest] = (this.picked || "").split(":");
    const picked = rest.join(":");
    const model = this.answered || picked || profile?.model || "";
    this.modelName.textContent = model;
    const via = picked ? backend : profile?.llm_backend;
    this.modelName.title = !model ? "" : this.answered ? `The model that wrote the latest answer: ${model}` : `The model that answers: ${model}${via ? ` (${via})` : ""}${picked ? ", picked for this conversation" : profile?.model_choice && !profile.custom ? `, picked by you for ${profile.name}` : ""}`;
  }
  async changed() {
    const id = this.select.value;
    const session = this.currentSession();
    if (!session) {
      localStorage.setItem(KEY2, id);
      this.show(id);
      return;
    }
    this.select.disabled = true;
    try {
      const updated = await api.setProfile(session.id, id);
      this.show(updated.profile_id);
      this.onChanged(updated);
    } catch (error) {
      toast(`Could not switch the profile: ${error.message}`);
      this.show(this.shown);
    } finally {
      this.select.disabled = false;
    }
  }
};

// navi/web/static/js/timing.js
var DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
function inZone(iso, timeZone) {
  if (!iso) return "";
  const date = new Date(iso);
  if (!Number.isFinite(date.getTime())) return "";
  const options = {
    weekday: "short",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  };
  try {
    return new Intl.DateTimeFormat(void 0, { ...options, timeZone }).format(date);
  } catch {
    return new Intl.DateTimeFormat(void 0, options).format(date);
  }
}
function plural4(count, unit) {
  return count === 1 ? `every ${unit}` : `every ${count} ${unit}s`;
}
function intervalWords(seconds) {
  if (seconds % 86400 === 0) return plural4(seconds / 86400, "day");
  if (seconds % 3600 === 0) return plural4(seconds / 3600, "hour");
  if (seconds % 60 === 0) return plural4(seconds / 60, "minute");
  return plural4(seconds, "second");
}
var pad = (n3) => String(n3).padStart(2, "0");
var number = (text2) => /^\d+$/.test(text2) ? Number(text2) : null;
function weekdays(field2) {
  if (field2 === "*") return "";
  if (field2 === "1-5") return " on weekdays";
  if (field2 === "0,6" || field2 === "6,0") return " at weekends";
  const parts = field2.split(",").map((part) => {
    const range = part.match(/^(\d)-(\d)$/);
    if (range) return `${DAYS[range[1]]}–${DAYS[range[2]]}`;
    return /^[0-7]$/.test(part) ? DAYS[part] : null;
  });
  return parts.includes(null) ? null : ` on ${parts.join(", ")}`;
}
function cronWords(expression) {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute, hour, day3, month, weekday] = fields;
  const m2 = number(minute);
  if (m2 === null) return null;
  if (hour === "*" && day3 === "*" && month === "*" && weekday === "*") return `every hour at :${pad(m2)}`;
  const h2 = number(hour);
  if (h2 === null || month !== "*") return null;
  const time = `${pad(h2)}:${pad(m2)}`;
  if (day3 !== "*") {
    const d2 = number(day3);
    return d2 !== null && weekday === "*" ? `monthly on day ${d2} at ${time}` : null;
  }
  const days = weekdays(weekday);
  if (days === null) return null;
  return days ? `at ${time}${days}` : `every day at ${time}`;
}
var capital = (text2) => text2.charAt(0).toUpperCase() + text2.slice(1);
function timingWords(schedule) {
  if (schedule.kind === "interval") return capital(intervalWords(schedule.every_seconds));
  if (schedule.kind === "cron") {
    const words2 = cronWords(schedule.cron);
    return words2 ? capital(words2) : `Cron ${schedule.cron}`;
  }
  return `Once, ${inZone(schedule.at, schedule.timezone)}`;
}

// navi/web/static/js/schedules.js
var STATUS = { running: "running", waiting_approval: "waiting for your approval", ok: "ok", error: "failed", skipped: "skipped" };
function runLine(run, timeZone) {
  const what = run.status === "ok" ? plainText(run.preview || "") : run.error;
  const undelivered = run.status === "ok" && run.error ? run.error : "";
  return [STATUS[run.status] || run.status, inZone(run.finished_at || run.started_at || run.due_at, timeZone), undelivered, what].filter(Boolean).join(" · ");
}
var SchedulesPanel = class {
  constructor({ dialog, openButton, closeButton, form, currentSession, profiles, onOpenSession, onStarted }) {
    this.dialog = dialog;
    this.form = form;
    this.list = dialog.querySelector("#schedule-list");
    this.empty = dialog.querySelector("#schedule-empty");
    this.error = form.querySelector("#schedule-error");
    this.currentSession = currentSession;
    this.profiles = profiles;
    this.onOpenSession = onOpenSession;
    this.onStarted = onStarted;
    this.status = dialog.querySelector("#schedules-status");
    this.schedules = [];
    this.latest = /* @__PURE__ */ new Map();
    this.loadedFor = /* @__PURE__ */ new Map();
    this.expanded = /* @__PURE__ */ new Set();
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create();
    });
    for (const radio of form.querySelectorAll('input[name="kind"]')) radio.addEventListener("change", () => this.showTiming());
  }
  get isOpen() {
    return this.dialog.open;
  }
  open() {
    const session = this.currentSession();
    const select = this.form.querySelector("#schedule-profile");
    const chosen = select.value;
    select.replaceChildren(...this.profiles().map((p2) => el("option", { value: p2.id, text: p2.name })));
    select.value = session?.profile_id || chosen || document.getElementById("profile-picker").value || select.value;
    const here = this.form.querySelector("#schedule-target-here");
    here.disabled = !session;
    here.parentElement.title = session ? "" : "Open a conversation first";
    if (!session && here.checked) this.form.querySelector('input[name="target"][value="new"]').checked = true;
    if (!this.dialog.open) this.dialog.showModal();
    const touch = window.matchMedia("(hover: none) and (pointer: coarse)").matches;
    (touch ? this.dialog.querySelector("#close-schedules") : this.form.querySelector("#schedule-prompt")).focus();
    this.refresh();
  }
  showTiming() {
    const kind = this.form.querySelector('input[name="kind"]:checked').value;
    for (const part of this.form.querySelectorAll(".timing")) part.hidden = part.dataset.kind !== kind;
  }
  async refresh() {
    try {
      this.update(await api.schedules());
    } catch (error) {
      this.say(`Could not load the schedules: ${error.message}`, "error");
    }
  }
  // The schedules as they are now (from the panel's own request or the page's poll).
  update(schedules) {
    this.schedules = schedules;
    if (!this.isOpen) return;
    this.render();
    for (const s2 of schedules) {
      const going = ["running", "waiting_approval"].includes(this.latest.get(s2.id)?.status);
      const moved = s2.last_run_at && this.loadedFor.get(s2.id) !== s2.last_run_at;
      if (moved || going || this.expanded.has(s2.id) && !this.latest.get(s2.id)?.runs) this.loadRuns(s2.id);
    }
  }
  async loadRuns(id) {
    let detail;
    try {
      detail = await api.schedule(id);
    } catch {
      return;
    }
    this.latest.set(id, { ...detail.runs[0] || {}, runs: detail.runs });
    this.loadedFor.set(id, detail.last_run_at);
    this.renderItem(id);
  }
  // A schedule_run event: the run's schedule shows its new state.
  event(event) {
    const known = this.latest.get(event.schedule_id);
    this.latest.set(event.schedule_id, {
      ...known || {},
      id: event.schedule_run_id,
      status: event.status,
      preview: event.preview,
      error: event.error,
      session_id: event.session_id,
      runs: void 0
    });
    this.loadedFor.delete(event.schedule_id);
    if (this.isOpen) this.refresh();
  }
  // A line at the top of the panel (the page's toast would sit under the modal dialog).
  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }
  render() {
    const focused = document.activeElement;
    const place = this.list.contains(focused) ? [focused.closest("li.schedule")?.dataset.id, focused.dataset.action] : null;
    this.empty.hidden = this.schedules.length > 0;
    this.list.replaceChildren(...this.schedules.map((s2) => this.item(s2)));
    if (place) {
      const row = this.list.querySelector(`li.schedule[data-id="${CSS.escape(place[0] || "")}"]`);
      (row?.querySelector(`[data-action="${place[1]}"]`) || this.dialog.querySelector("#schedule-prompt")).focus();
    }
  }
  renderItem(id) {
    const schedule = this.schedules.find((s2) => s2.id === id);
    const old = this.list.querySelector(`li[data-id="${CSS.escape(id)}"]`);
    if (!schedule || !old) return;
    const focused = old.contains(document.activeElement) ? document.activeElement.dataset.action : null;
    const fresh = this.item(schedule);
    old.replaceWith(fresh);
    if (focused) fresh.querySelector(`[data-action="${focused}"]`)?.focus();
  }
  item(s2) {
    const title = s2.title || s2.prompt.slice(0, 60);
    const state2 = s2.done ? "done" : s2.paused ? "paused" : "";
    const next = s2.next_run_at && !s2.paused ? `Next: ${inZone(s2.next_run_at, s2.timezone)}` : "";
    const latest = this.latest.get(s2.id);
    const action = (name, label, handler, extra = {}) => el("button", {
      type: "button",
      class: "schedule-action",
      dataset: { action: name },
      "aria-label": `${label}: ${title}`,
      onclick: () => handler(s2),
      ...extra
    }, label);
    const shown = this.expanded.has(s2.id);
    const runs = shown ? this.runsList(s2, latest?.runs) : null;
    return el(
      "li",
      { class: `schedule ${state2}`, dataset: { id: s2.id } },
      el(
        "div",
        { class: "schedule-main" },
        el("span", { class: "schedule-title", text: title }),
        state2 ? el("span", { class: `schedule-state ${state2}`, text: state2 === "done" ? "Done" : "Paused" }) : null
      ),
      el(
        "div",
        { class: "schedule-when" },
        `${timingWords(s2)} · ${s2.timezone}`,
        next ? el("br") : null,
        next || null
      ),
      s2.deliver ? el("div", { class: "schedule-deliver muted", text: `Also sent to ${s2.deliver.channel}: ${s2.deliver.to}` }) : null,
      latest?.status ? el("div", { class: `schedule-last ${latest.status}`, text: `Last run: ${runLine(latest, s2.timezone)}` }) : null,
      el(
        "div",
        { class: "schedule-actions" },
        s2.done ? null : action("pause", s2.paused ? "Resume" : "Pause", (x3) => this.change(x3, x3.paused ? "resume" : "pause", () => api.updateSchedule(x3.id, { paused: !x3.paused }))),
        action("run", "Run now", (x3) => this.change(x3, "run", async () => {
          await api.runSchedule(x3.id);
          this.onStarted(x3.id);
          this.say(`“${title}” is running.`);
        })),
        action("runs", shown ? "Hide runs" : "Runs", (x3) => this.toggleRuns(x3), { "aria-expanded": shown ? "true" : "false" }),
        action("delete", "Delete", (x3) => this.remove(x3, title))
      ),
      runs
    );
  }
  runsList(s2, runs) {
    if (!runs) return el("p", { class: "schedule-runs muted", text: "Loading…" });
    if (!runs.length) return el("p", { class: "schedule-runs muted", text: "It has not run yet." });
    return el(
      "ul",
      { class: "schedule-runs", "aria-label": `Recent runs of ${s2.title}` },
      ...runs.map((run) => el(
        "li",
        { class: `run ${run.status}` },
        el("span", { text: runLine(run, s2.timezone) }),
        run.session_id ? el("a", { href: `#/s/${run.session_id}`, onclick: (event) => {
          event.preventDefault();
          this.dialog.close();
          this.onOpenSession(run.session_id);
        } }, "Open conversation") : null
      ))
    );
  }
  toggleRuns(s2) {
    if (this.expanded.has(s2.id)) this.expanded.delete(s2.id);
    else {
      this.expanded.add(s2.id);
      this.loadRuns(s2.id);
    }
    this.renderItem(s2.id);
  }
  async change(s2, what, action) {
    try {
      await action();
    } catch (error) {
      this.say(`Could not ${what} it: ${error.message}`, "error");
    }
    await this.refresh();
  }
  async remove(s2, title) {
    const ok = await confirmDialog({
      title: "Delete this schedule?",
      message: `“${title}” and its runs will be deleted. The conversations it answered in stay.`,
      confirm: "Delete"
    });
    if (!ok) return;
    await this.change(s2, "delete", () => api.deleteSchedule(s2.id));
    this.latest.delete(s2.id);
    this.dialog.querySelector("#schedule-prompt").focus();
  }
  // The form as a POST /schedules body, or a sentence saying what is missing.
  body() {
    const value = (id) => this.form.querySelector(`#${id}`).value;
    const prompt = value("schedule-prompt").trim();
    if (!prompt) return { problem: "Write what Navi should do.", field: "schedule-prompt" };
    const body = { prompt, profile_id: value("schedule-profile") || void 0 };
    const title = value("schedule-title").trim();
    if (title) body.title = title;
    const session = this.currentSession();
    if (this.form.querySelector('input[name="target"]:checked').value === "here" && session) body.session_id = session.id;
    const deliver = value("schedule-deliver").trim();
    if (deliver) {
      const colon = deliver.indexOf(":");
      const channel = colon > 0 ? deliver.slice(0, colon).trim().toLowerCase() : "";
      const to = colon > 0 ? deliver.slice(colon + 1).trim() : "";
      if (!channel || !to) return { problem: "Write where to send it as channel:address, such as email:ana@example.org.", field: "schedule-deliver" };
      body.deliver = { channel, to };
    }
    const kind = this.form.querySelector('input[name="kind"]:checked').value;
    if (kind === "at") {
      const moment = new Date(value("schedule-at"));
      if (!value("schedule-at") || !Number.isFinite(moment.getTime())) return { problem: "Pick the moment it should run.", field: "schedule-at" };
      body.at = moment.toISOString();
    } else if (kind === "every") {
      const count = Number(value("schedule-every"));
      if (!Number.isInteger(count) || count < 1) return { problem: "Say every how many minutes or hours (a whole number).", field: "schedule-every" };
      body.every_seconds = count * Number(value("schedule-unit"));
    } else {
      body.cron = value("schedule-cron").trim();
      if (!body.cron) return { problem: "Write a cron expression, such as 0 7 * * 1-5.", field: "schedule-cron" };
    }
    return { body, field: kind === "every" ? "schedule-every" : `schedule-${kind}` };
  }
  showError(message, field2) {
    this.error.textContent = message;
    this.error.hidden = !message;
    for (const input of this.form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    if (message && field2) {
      const input = this.form.querySelector(`#${field2}`);
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", "schedule-error");
    }
  }
  async create() {
    const { body, problem, field: field2 } = this.body();
    if (problem) {
      this.showError(problem, field2);
      this.form.querySelector(`#${field2}`).focus();
      return;
    }
    const button = this.form.querySelector("#schedule-create");
    button.disabled = true;
    try {
      const made = await api.createSchedule(body);
      this.showError("");
      this.form.querySelector("#schedule-prompt").value = "";
      this.form.querySelector("#schedule-title").value = "";
      this.form.querySelector("#schedule-deliver").value = "";
      this.say(`Scheduled “${made.title}”.`);
      await this.refresh();
    } catch (error) {
      const bad = error.message.startsWith("deliver") ? "schedule-deliver" : field2;
      this.showError(error.message, error.status === 422 ? bad : null);
    } finally {
      button.disabled = false;
    }
  }
};

// navi/web/static/js/preferences.js
var STARTER_TOOLS = ["todo", "web_search", "web_view", "memory_search", "recall", "get_current_datetime"];
async function modelChoices() {
  try {
    return (await api.models({ check: false })).choices;
  } catch (error) {
    return [];
  }
}
function fillModels(select, choices2, chosen, defaultLabel) {
  const options = [el("option", { value: "", text: defaultLabel })];
  for (const c2 of choices2) options.push(el("option", { value: c2.id, text: `${c2.model} (${c2.backend})` }));
  if (chosen && !choices2.some((c2) => c2.id === chosen)) options.push(el("option", { value: chosen, text: chosen }));
  select.replaceChildren(...options);
  select.value = chosen || "";
}
function showError(node, message) {
  node.textContent = message;
  node.hidden = !message;
}
var InstructionsForm = class {
  constructor({ form, say }) {
    this.form = form;
    this.say = say;
    this.typed = false;
    form.addEventListener("input", () => {
      this.typed = true;
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }
  async load() {
    this.typed = false;
    try {
      const mine = await api.instructions();
      if (this.typed) return;
      this.form.elements.about_me.value = mine.about_me;
      this.form.elements.how_to_answer.value = mine.how_to_answer;
    } catch (error) {
      this.say(`Could not load your instructions: ${error.message}`, "error");
    }
  }
  async save() {
    const f2 = this.form.elements;
    try {
      await api.setInstructions({ about_me: f2.about_me.value, how_to_answer: f2.how_to_answer.value });
      this.say("Instructions saved: they apply from the next message on.");
    } catch (error) {
      this.say(`Could not save them: ${error.message}`, "error");
    }
  }
};
var BuiltinModels = class {
  constructor({ list: list2, say, onChanged }) {
    this.list = list2;
    this.say = say;
    this.onChanged = onChanged;
  }
  async load() {
    let profiles;
    let choices2;
    try {
      [profiles, choices2] = await Promise.all([api.profiles(), modelChoices()]);
    } catch (error) {
      this.say(`Could not load the profiles: ${error.message}`, "error");
      return;
    }
    this.list.replaceChildren(...profiles.filter((p2) => !p2.custom).map((p2) => {
      const id = `builtin-model-${p2.id}`;
      const select = el("select", { id, name: p2.id, dataset: { profile: p2.id } });
      fillModels(select, choices2, p2.model_choice || "", `Its own (${p2.default_model || "Navi's default"})`);
      select.addEventListener("change", () => this.pick(p2, select));
      return el("li", {}, el("label", { for: id, text: p2.name }), select);
    }));
  }
  async pick(profile, select) {
    select.disabled = true;
    try {
      const saved = await api.pickModel(profile.id, select.value);
      this.say(select.value ? `${profile.name} answers you with ${saved.model} from the next message on.` : `${profile.name} answers you with its own model (${saved.model}) again.`);
      this.onChanged();
    } catch (error) {
      this.say(`Could not pick the model: ${error.message}`, "error");
    } finally {
      select.disabled = false;
    }
  }
};
var ProfileEditor = class {
  constructor({ root, say, onChanged }) {
    this.list = root.querySelector("#custom-profile-list");
    this.form = root.querySelector("#profile-form");
    this.title = root.querySelector("#profile-form-title");
    this.tools = root.querySelector("#profile-tools");
    this.error = root.querySelector("#profile-error");
    this.newButton = root.querySelector("#new-profile");
    this.say = say;
    this.onChanged = onChanged;
    this.editing = null;
    this.newButton.addEventListener("click", () => this.edit(null));
    root.querySelector("#profile-cancel").addEventListener("click", () => this.closeForm());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }
  async load() {
    try {
      this.profiles = (await api.profiles()).filter((p2) => p2.custom);
    } catch (error) {
      this.say(`Could not load your profiles: ${error.message}`, "error");
      return;
    }
    this.list.replaceChildren(...this.profiles.map((p2) => el(
      "li",
      { class: "remembered-item", dataset: { profile: p2.id } },
      el(
        "span",
        { class: "remembered-what" },
        el("strong", { text: p2.name }),
        el("span", { class: "note", text: ` · ${p2.model} · ${p2.tools.length} tools` })
      ),
      el(
        "span",
        { class: "row-buttons" },
        el("button", { type: "button", class: "outline small", "aria-label": `Edit ${p2.name}`, onclick: () => this.edit(p2) }, "Edit"),
        el("button", { type: "button", class: "outline small", "aria-label": `Delete ${p2.name}`, onclick: () => this.remove(p2) }, "Delete")
      )
    )));
  }
  async edit(profile) {
    this.editing = profile?.id || null;
    this.title.textContent = profile ? `Edit ${profile.name}` : "New profile";
    const f2 = this.form.elements;
    f2.name.value = profile?.name || "";
    f2.instructions.value = profile?.instructions || "";
    showError(this.error, "");
    const [choices2, tools, signIns] = await Promise.all([
      modelChoices(),
      api.tools().catch(() => []),
      api.browserProfiles().then((d2) => d2.profiles.map((p2) => p2.name)).catch(() => [])
    ]);
    fillModels(f2.model, choices2, profile?.model_choice || "", "Navi's default model");
    const chosen = profile?.browser_profile || "";
    const names = chosen && !signIns.includes(chosen) ? [...signIns, chosen] : signIns;
    f2.browser_profile.replaceChildren(
      el("option", { value: "" }, "None (signed out)"),
      ...names.map((n3) => el("option", { value: n3, selected: n3 === chosen }, n3))
    );
    const ticked = new Set(profile ? profile.tools : STARTER_TOOLS);
    this.tools.replaceChildren(...tools.map((t2) => el(
      "label",
      { title: t2.description },
      el("input", { type: "checkbox", name: "tool", value: t2.name, checked: ticked.has(t2.name) }),
      ` ${t2.name}`
    )));
    this.form.hidden = false;
    this.newButton.hidden = true;
    f2.name.focus();
  }
  closeForm() {
    this.form.hidden = true;
    this.newButton.hidden = false;
    this.editing = null;
  }
  async save() {
    const f2 = this.form.elements;
    const spec = {
      name: f2.name.value.trim(),
      instructions: f2.instructions.value,
      model: f2.model.value,
      browser_profile: f2.browser_profile.value,
      tools: [...this.tools.querySelectorAll('input[name="tool"]:checked')].map((box) => box.value)
    };
    if (!spec.name) return showError(this.error, "Give the profile a name.");
    try {
      const saved = this.editing ? await api.updateProfile(this.editing, spec) : await api.createProfile(spec);
      this.say(`Profile ${saved.name} saved: pick it beside a conversation's title.`);
    } catch (error) {
      return showError(this.error, error.message);
    }
    this.closeForm();
    await this.load();
    this.onChanged();
  }
  async remove(profile) {
    try {
      await api.deleteProfile(profile.id);
      this.say(`Profile ${profile.name} deleted: its conversations go on in the default profile.`);
    } catch (error) {
      this.say(`Could not delete it: ${error.message}`, "error");
    }
    await this.load();
    this.onChanged();
    this.newButton.focus();
  }
};
var ConversationOptions = class {
  constructor({ dialog, openButton, closeButton, currentSession, defaultModel, onSaved }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.form = dialog.querySelector("form");
    this.error = dialog.querySelector("#conversation-options-error");
    this.currentSession = currentSession;
    this.defaultModel = defaultModel;
    this.onSaved = onSaved;
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => this.opener.focus());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }
  // Shown for a conversation (a draft has nothing to set yet).
  setSession(session) {
    this.opener.hidden = !session;
  }
  async open() {
    const session = this.currentSession();
    if (!session) return;
    showError(this.error, "");
    const f2 = this.form.elements;
    f2.system_prompt.value = session.system_prompt || "";
    fillModels(f2.model, await modelChoices(), session.model || "", `The profile's model (${this.defaultModel() || "default"})`);
    if (!this.dialog.open) this.dialog.showModal();
    f2.model.focus();
  }
  async save() {
    const session = this.currentSession();
    if (!session) return;
    const f2 = this.form.elements;
    const body = { model: f2.model.value, system_prompt: f2.system_prompt.value };
    try {
      await api.setOptions(session.id, body);
    } catch (error) {
      return showError(this.error, error.message);
    }
    this.onSaved({ model: body.model || null, system_prompt: body.system_prompt.trim() || null });
    this.dialog.close();
  }
};

// navi/web/static/js/settings.js
var THEME = "navi.theme";
var KINDS = ["answers", "approvals", "reminders", "jobs", "notes"];
function applyTheme(theme) {
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
var SettingsPanel = class {
  constructor({ dialog, openButton, closeButton, onProfilesChanged }) {
    this.dialog = dialog;
    this.opener = openButton;
    this.list = dialog.querySelector("#remembered-list");
    this.empty = dialog.querySelector("#remembered-empty");
    this.status = dialog.querySelector("#settings-status");
    openButton.addEventListener("click", () => this.open());
    closeButton.addEventListener("click", () => this.dialog.close());
    dialog.addEventListener("close", () => this.opener.focus());
    for (const radio of dialog.querySelectorAll('input[name="theme"]')) {
      radio.addEventListener("change", () => this.setTheme(radio.value));
    }
    dialog.querySelector("#sign-out").addEventListener("click", () => this.signOut());
    this.notify = dialog.querySelector("#notify-settings");
    this.notifyEdits = 0;
    this.enableNotify(false);
    this.notify.addEventListener("change", () => {
      this.notifyEdits += 1;
      this.saveNotify();
    });
    const say = (message, kind) => this.say(message, kind);
    this.instructions = new InstructionsForm({ form: dialog.querySelector("#instructions-form"), say });
    this.profiles = new ProfileEditor({ root: dialog, say, onChanged: onProfilesChanged });
    this.builtinModels = new BuiltinModels({ list: dialog.querySelector("#builtin-models"), say, onChanged: onProfilesChanged });
    this.models = dialog.querySelector("#models-list");
    this.chains = dialog.querySelector("#models-chains");
  }
  async loadModels() {
    let body;
    try {
      body = await api.models();
    } catch (error) {
      this.models.replaceChildren(el("li", { class: "note", text: `Could not load the models: ${error.message}` }));
      return;
    }
    this.models.replaceChildren(...body.models.map((m2) => modelItem(m2)));
    const chains = Object.entries(body.chains).map(([name, ids]) => `${name}: ${ids.join(" → ")}`);
    if (body.side) chains.push(`side calls: ${body.side} first`);
    this.chains.textContent = body.from_file ? chains.join(" · ") : "One model, from the settings (no MODELS_FILE): no fallback.";
  }
  async loadNotify() {
    const edits = this.notifyEdits;
    let chosen;
    try {
      chosen = await api.notifySettings();
    } catch (error) {
      this.say(`Could not load the notification settings: ${error.message}`, "error");
      return;
    }
    this.enableNotify(true);
    if (edits !== this.notifyEdits) return;
    const form = this.notify.elements;
    for (const kind of KINDS) form[kind].checked = Boolean(chosen[kind]);
    form.quiet.checked = Boolean(chosen.quiet);
    if (chosen.quiet) {
      form.start.value = chosen.quiet.start;
      form.end.value = chosen.quiet.end;
    }
  }
  enableNotify(on) {
    for (const input of this.notify.elements) input.disabled = !on;
  }
  async saveNotify() {
    const form = this.notify.elements;
    const body = Object.fromEntries(KINDS.map((kind) => [kind, form[kind].checked]));
    body.quiet = form.quiet.checked && form.start.value && form.end.value ? { start: form.start.value, end: form.end.value } : null;
    try {
      await api.saveNotifySettings(body);
      this.say("Notification settings saved.");
    } catch (error) {
      this.say(`Could not save them: ${error.message}`, "error");
    }
  }
  get theme() {
    return localStorage.getItem(THEME) || "system";
  }
  setTheme(theme) {
    if (theme === "system") localStorage.removeItem(THEME);
    else localStorage.setItem(THEME, theme);
    applyTheme(theme);
  }
  open() {
    const chosen = this.dialog.querySelector(`input[name="theme"][value="${this.theme}"]`);
    if (chosen) chosen.checked = true;
    this.say("");
    if (!this.dialog.open) this.dialog.showModal();
    this.dialog.querySelector('input[name="theme"]:checked')?.focus();
    this.load();
  }
  say(message, kind = "info") {
    this.status.textContent = message;
    this.status.className = `panel-status ${kind}`;
    this.status.hidden = !message;
  }
  async load() {
    this.loadNotify();
    this.instructions.load();
    this.profiles.load();
    this.builtinModels.load();
    this.loadModels();
    let remembered;
    try {
      remembered = await api.remembered();
    } catch (error) {
      this.say(`Could not load the remembered answers: ${error.message}`, "error");
      return;
    }
    this.empty.hidden = remembered.length > 0;
    this.list.replaceChildren(...remembered.map((r2) => this.item(r2)));
  }
  item(r2) {
    const what = r2.program ? `${r2.tool}: ${r2.program}` : `${r2.tool} (every call)`;
    return el(
      "li",
      { class: "remembered-item", dataset: { tool: r2.tool, program: r2.program || "" } },
      el(
        "span",
        { class: "remembered-what" },
        el("code", { text: what }),
        el("span", { class: "note", text: ` · ${relativeTime(r2.created_at)}` })
      ),
      el("button", {
        type: "button",
        class: "outline small",
        "aria-label": `Forget: ${what}`,
        onclick: () => this.forget(r2, what)
      }, "Forget")
    );
  }
  async forget(r2, what) {
    try {
      await api.forget(r2.tool, r2.program);
      this.say(`Forgotten: Navi asks again before ${what}.`);
    } catch (error) {
      this.say(`Could not forget it: ${error.message}`, "error");
    }
    await this.load();
    (this.list.querySelector("button") || this.dialog.querySelector("#sign-out")).focus();
  }
  async signOut() {
    try {
      await api.logout();
    } catch (error) {
      this.say(`Could not sign out: ${error.message}`, "error");
      return;
    }
    window.location.assign("/login");
  }
};
function modelItem(m2) {
  const state2 = m2.state;
  let said = "not checked";
  let kind = "unknown";
  if (state2) {
    if (!state2.reachable) [said, kind] = ["unreachable", "down"];
    else if (state2.model_present === false) [said, kind] = ["model missing", "down"];
    else [said, kind] = ["ready", "up"];
  }
  if (m2.cooling) [said, kind] = [`skipped after ${m2.cooling.failures} failure(s)`, "down"];
  const facts = [m2.backend, m2.model];
  const window2 = m2.window || state2?.window;
  if (window2) facts.push(`${window2.toLocaleString()} tokens`);
  if (m2.capabilities?.length) facts.push(m2.capabilities.join(", "));
  if (m2.price) facts.push(`$${m2.price[0]}/$${m2.price[1]} per Mtok`);
  return el(
    "li",
    { class: "model-item", dataset: { model: m2.id, state: kind } },
    el("strong", { text: m2.id }),
    el("span", { class: "note", text: ` ${facts.join(" · ")}` }),
    el("span", { class: `model-state ${kind}`, text: ` — ${said}`, title: state2?.detail || m2.cooling?.reason || "" })
  );
}

// navi/web/static/js/shortcuts.js
var TYPING = /* @__PURE__ */ new Set(["INPUT", "TEXTAREA", "SELECT"]);
function typing(target) {
  return TYPING.has(target?.tagName) || Boolean(target?.isContentEditable);
}
function installShortcuts({ dialog, openButton, closeButton, newConversation: newConversation2, search, focusInput }) {
  const show = () => {
    if (!dialog.open) dialog.showModal();
  };
  openButton.addEventListener("click", show);
  closeButton.addEventListener("click", () => dialog.close());
  document.addEventListener("keydown", (event) => {
    const ctrl = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    const modal = document.querySelector("dialog[open]");
    if (ctrl && event.shiftKey && key === "o") {
      event.preventDefault();
      modal?.close();
      newConversation2();
    } else if (ctrl && !event.shiftKey && key === "k") {
      event.preventDefault();
      modal?.close();
      search();
    } else if (event.shiftKey && event.key === "Escape") {
      event.preventDefault();
      focusInput();
    } else if (ctrl && key === "/") {
      event.preventDefault();
      show();
    } else if (!ctrl && !event.altKey && !typing(event.target) && !modal) {
      if (event.key === "?") {
        event.preventDefault();
        show();
      } else if (event.key === "/") {
        event.preventDefault();
        focusInput();
      }
    }
  });
}

// navi/web/static/js/queue.js
var QueueView = class {
  constructor(container, { onEdit, onCancel }) {
    Object.assign(this, { container, onEdit, onCancel });
    this.items = /* @__PURE__ */ new Map();
    this.since = null;
  }
  set(list2) {
    this.since = null;
    this.items = new Map(list2.map((m2) => [m2.message_id, m2]));
    this.render();
  }
  clear() {
    this.set([]);
  }
  // The list read from the server is as it was at some moment of the request, and a frame that came
  // meanwhile may be newer: `reading()` starts noting changes, `read(list)` takes the list and then
  // the changes again, in order (each one only sets or deletes a row, so once more is harmless).
  reading() {
    this.since = [];
  }
  read(list2) {
    const changes = this.since || [];
    if (!list2) {
      this.since = null;
      return;
    }
    this.set(list2);
    for (const [id, frame] of changes) frame ? this.items.set(id, frame) : this.items.delete(id);
    this.render();
  }
  has(id) {
    return this.items.has(id);
  }
  upsert(frame) {
    this.since?.push([frame.message_id, frame]);
    this.items.set(frame.message_id, frame);
    this.render();
  }
  remove(id) {
    this.since?.push([id, null]);
    if (!this.items.delete(id)) return false;
    this.render();
    return true;
  }
  render() {
    const items = [...this.items.values()].sort((a2, b2) => a2.position - b2.position);
    this.container.hidden = !items.length;
    this.container.replaceChildren(...items.map((m2) => this.row(m2)));
  }
  row(m2) {
    const text2 = el("div", { class: "bubble" }, m2.content);
    const label = m2.mode === "steer" ? "steering · waits for the next step" : "queued · runs after this answer";
    const edit = el("button", { type: "button", class: "link queue-edit" }, "Edit");
    const cancel = el("button", { type: "button", class: "link queue-cancel" }, "Cancel");
    const node = el(
      "li",
      { class: "queued-msg", "data-message-id": m2.message_id },
      el("span", { class: "queue-label" }, label),
      text2,
      el("div", { class: "queue-actions" }, edit, cancel)
    );
    edit.addEventListener("click", () => {
      const box = el("textarea", { class: "queue-text", rows: "2", "aria-label": "Queued message" });
      box.value = m2.content;
      const save = el("button", { type: "button", class: "link queue-save" }, "Save");
      save.addEventListener("click", () => {
        if (box.value.trim()) this.onEdit(m2.message_id, box.value.trim());
      });
      const restore = () => {
        box.replaceWith(text2);
        save.replaceWith(edit);
      };
      box.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !event.shiftKey) {
          event.preventDefault();
          save.click();
        } else if (event.key === "Escape") {
          event.preventDefault();
          restore();
          edit.focus();
        }
      });
      text2.replaceWith(box);
      edit.replaceWith(save);
      box.focus();
    });
    cancel.addEventListener("click", () => this.onCancel(m2.message_id));
    return node;
  }
};
function steeredMessage(message) {
  return el(
    "div",
    { class: "msg user steered", "data-message-id": message.id },
    el("span", { class: "queue-label" }, "you, while it worked"),
    el("div", { class: "bubble" }, message.content)
  );
}

// navi/web/static/js/status.js
var POLL_MS2 = 3e4;
var PROBE_MS = 3e3;
var SETTING = { ollama: "OLLAMA_HOST", openai: "OPENAI_BASE_URL", anthropic: "ANTHROPIC_API_KEY" };
var MODEL_CODES = { model_unreachable: "unreachable", model_not_found: "missing", model_auth: "unreachable" };
function describe(status) {
  if (!status.reachable) {
    const setting = SETTING[status.backend];
    return { state: "unreachable", label: `Model server unreachable${setting ? ` — check ${setting}` : ""}` };
  }
  if (status.model_available === false) return { state: "missing", label: `Model not found: ${status.model}` };
  if (status.model_available === null) return { state: "ready", label: "Model server ready" };
  return { state: "ready", label: "Model ready" };
}
var StatusLight = class {
  constructor(button) {
    this.button = button;
    this.label = button.querySelector(".label");
    this.online = true;
    this.socket = "none";
    this.model = { state: "unknown", label: "", detail: "" };
    this.timer = 0;
    this.probe = 0;
    this.asking = null;
    this.waiters = [];
    this.onBack = null;
    button.addEventListener("click", () => {
      const { detail } = this.shown();
      if (detail) toast(detail, this.button.dataset.state === "ready" ? "info" : "error");
    });
    connectivity.addEventListener("offline", () => this.setOnline(false));
    connectivity.addEventListener("online", () => this.setOnline(true));
  }
  start() {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), POLL_MS2);
  }
  get reachable() {
    return this.online && this.socket !== "reconnecting";
  }
  // Resolves once Navi answers again (at once when it does).
  whenOnline() {
    if (this.reachable) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  // The open session's WebSocket: "open", "reconnecting", or "none" when no session is open.
  setSocket(state2) {
    const was = this.reachable;
    this.socket = state2;
    if (state2 === "open") this.online = true;
    this.changed(was);
  }
  setOnline(online) {
    if (online === this.online) return;
    const was = this.reachable;
    this.online = online;
    this.changed(was);
  }
  changed(was) {
    const now = this.reachable;
    clearTimeout(this.probe);
    if (!now) this.probe = setTimeout(() => this.ping(), PROBE_MS);
    if (now && !was) {
      for (const resolve of this.waiters.splice(0)) resolve();
      this.refresh();
      this.onBack?.();
    }
    this.render();
  }
  async ping() {
    try {
      await api.health();
    } catch {
    }
    if (!this.reachable && this.socket !== "reconnecting") this.probe = setTimeout(() => this.ping(), PROBE_MS);
  }
  // One question at a time; a call while one is under way shares it.
  refresh() {
    this.asking ??= this.ask().finally(() => {
      this.asking = null;
    });
    return this.asking;
  }
  async ask() {
    let status;
    try {
      status = await api.modelStatus();
    } catch (error) {
      if (this.online) this.setModel("unknown", "Model status unknown", `Could not ask Navi about the model server: ${error.message}`);
      return;
    }
    const { state: state2, label } = describe(status);
    this.setModel(state2, label, status.detail);
  }
  // A turn was answered: the model is there, whatever an older check said.
  turnAnswered() {
    if (this.model.state !== "ready") this.setModel("ready", "Model ready", "The model answered the last message.");
  }
  // A turn failed: a model error changes the light at once (and is checked again soon).
  turnFailed(code, message) {
    const state2 = MODEL_CODES[code];
    if (!state2) return;
    const label = state2 === "missing" ? "Model not found" : "Model server unreachable";
    this.setModel(state2, label, message);
  }
  setModel(state2, label, detail) {
    this.model = { state: state2, label, detail: detail || "" };
    this.render();
  }
  shown() {
    if (!this.reachable) {
      return {
        state: "offline",
        label: "Navi unreachable — reconnecting…",
        detail: "Navi is not answering (stopped or restarting?). The page reconnects by itself; a message you send now goes out once it is back."
      };
    }
    return this.model;
  }
  render() {
    const { state: state2, label, detail } = this.shown();
    this.button.dataset.state = state2;
    this.label.textContent = label;
    this.button.title = detail;
    this.button.setAttribute("aria-label", label);
    this.button.hidden = !label;
  }
};

// navi/web/static/js/rowmenu.js
var RowMenu = class {
  constructor() {
    this.node = null;
    this.button = null;
    this.onDocument = (event) => {
      if (this.node && !this.node.contains(event.target) && event.target !== this.button) this.close();
    };
  }
  open(button, items) {
    const same = this.button === button;
    this.close();
    if (same) return;
    this.button = button;
    button.setAttribute("aria-expanded", "true");
    const entries2 = items.map((item) => el("button", {
      type: "button",
      role: "menuitem",
      class: item.danger ? "danger-text" : void 0,
      onclick: (event) => {
        event.stopPropagation();
        this.close(false);
        item.run();
      }
    }, icon(item.icon), item.label));
    this.node = el("div", { class: "row-menu", role: "menu", "aria-label": button.getAttribute("aria-label") }, entries2);
    this.node.addEventListener("keydown", (event) => this.key(event, entries2));
    document.body.append(this.node);
    this.place(button);
    entries2[0].focus();
    document.addEventListener("pointerdown", this.onDocument, true);
  }
  // Under the button, inside the window (above it when there is no room below).
  place(button) {
    const box = button.getBoundingClientRect();
    const menu = this.node.getBoundingClientRect();
    const left = Math.max(8, Math.min(box.right - menu.width, window.innerWidth - menu.width - 8));
    const below = box.bottom + 4;
    const top = below + menu.height > window.innerHeight - 8 ? Math.max(8, box.top - menu.height - 4) : below;
    Object.assign(this.node.style, { left: `${left}px`, top: `${top}px` });
  }
  key(event, entries2) {
    const at2 = entries2.indexOf(document.activeElement);
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      this.close();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      entries2[(at2 + step + entries2.length) % entries2.length].focus();
    } else if (event.key === "Tab") {
      this.close();
    }
  }
  close(refocus = true) {
    if (!this.node) return;
    document.removeEventListener("pointerdown", this.onDocument, true);
    this.node.remove();
    this.node = null;
    const button = this.button;
    this.button = null;
    if (button?.isConnected) {
      button.setAttribute("aria-expanded", "false");
      if (refocus) button.focus();
    }
  }
};

// navi/web/static/js/search.js
var MIN_CHARS = 2;
var PAUSE_MS3 = 250;
function markedSnippet(snippet, highlights) {
  const chars = Array.from(String(snippet ?? ""));
  const nodes = [];
  let at2 = 0;
  const spans = (Array.isArray(highlights) ? highlights : []).filter((h2) => Array.isArray(h2) && Number.isInteger(h2[0]) && Number.isInteger(h2[1])).map(([start2, end]) => [Math.max(0, start2), Math.min(chars.length, end)]).filter(([start2, end]) => start2 < end).sort((a2, b2) => a2[0] - b2[0]);
  for (const [start2, end] of spans) {
    if (start2 < at2) continue;
    if (start2 > at2) nodes.push(document.createTextNode(chars.slice(at2, start2).join("")));
    nodes.push(el("mark", { text: chars.slice(start2, end).join("") }));
    at2 = end;
  }
  if (at2 < chars.length) nodes.push(document.createTextNode(chars.slice(at2).join("")));
  return nodes;
}
function day2(iso) {
  const time = Date.parse(iso);
  if (!Number.isFinite(time)) return "";
  return new Intl.DateTimeFormat(void 0, { dateStyle: "medium" }).format(new Date(time));
}
var MessageSearch = class {
  // `onChange`: the hits (or the state of the search) changed, the list redraws.
  constructor({ onChange, onOpen }) {
    this.onChange = onChange;
    this.onOpen = onOpen;
    this.query = "";
    this.hits = [];
    this.pending = false;
    this.error = null;
    this.timer = 0;
    this.ticket = 0;
  }
  // The box's text changed: search it after a pause (or forget the hits when it is too short).
  update(text2) {
    const query = text2.trim();
    if (query === this.query) return;
    clearTimeout(this.timer);
    this.ticket += 1;
    this.query = query;
    this.hits = [];
    this.error = null;
    this.pending = query.length >= MIN_CHARS;
    if (this.pending) this.timer = setTimeout(() => this.run(query, this.ticket), PAUSE_MS3);
  }
  async run(query, ticket) {
    let hits = [];
    let error = null;
    try {
      hits = await api.search(query);
      if (!Array.isArray(hits)) hits = [];
    } catch (failure) {
      error = failure?.message || "no answer";
    }
    if (ticket !== this.ticket) return;
    Object.assign(this, { hits, error, pending: false });
    this.onChange();
  }
  get active() {
    return this.query.length >= MIN_CHARS;
  }
  // The "Messages" group, or nothing (too short a query, still waiting, or no hit).
  section() {
    if (!this.active) return null;
    const heading = el("h2", { class: "group-label", id: "group-messages", text: "Messages" });
    if (this.error) {
      return el(
        "section",
        { class: "session-group message-hits", "aria-labelledby": "group-messages" },
        heading,
        el("p", { class: "search-error", role: "status", text: `Could not search the messages: ${this.error}` })
      );
    }
    if (!this.hits.length) return null;
    return el(
      "section",
      { class: "session-group message-hits", "aria-labelledby": "group-messages" },
      heading,
      el("ul", { class: "session-rows" }, this.hits.map((hit) => this.item(hit)))
    );
  }
  item(hit) {
    const name = hit.session_name || "New conversation";
    const meta = [day2(hit.created_at), hit.role === "user" ? "you" : "Navi"].filter(Boolean).join(" · ");
    return el(
      "li",
      { class: "search-hit", dataset: { session: hit.session_id, message: hit.message_id } },
      el(
        "button",
        { class: "hit-open", type: "button", onclick: () => this.onOpen(hit) },
        el("span", { class: "hit-name", text: name }),
        el("span", { class: "hit-meta", text: meta }),
        el("span", { class: "hit-snippet" }, markedSnippet(hit.snippet, hit.highlights))
      )
    );
  }
};

// navi/web/static/js/touchdrag.js
var LONG_PRESS = 450;
var SLOP = 10;
function touchDrag({ root, rows, targetAt, onDrop }) {
  let press = null;
  let swallowClick = null;
  const mark = (target) => {
    if (press.over === target) return;
    press.over?.classList.remove("drop-here");
    press.over = target;
    target?.classList.add("drop-here");
  };
  const end = () => {
    if (!press) return;
    clearTimeout(press.timer);
    press.ghost?.remove();
    press.row.classList.remove("lifted");
    press.over?.classList.remove("drop-here");
    document.body.classList.remove("touch-dragging");
    press = null;
  };
  const follow = (x3, y3) => {
    const box = press.row.getBoundingClientRect();
    press.ghost.style.transform = `translate(${x3 - press.dx}px, ${y3 - box.height / 2}px)`;
    mark(targetAt(x3, y3));
  };
  const lift = () => {
    const { row } = press;
    const box = row.getBoundingClientRect();
    press.lifted = true;
    press.dx = press.x - box.left;
    press.ghost = el("div", { class: "drag-ghost", "aria-hidden": "true" }, row.querySelector(".session-name")?.cloneNode(true));
    press.ghost.style.width = `${box.width}px`;
    document.body.append(press.ghost);
    row.classList.add("lifted");
    document.body.classList.add("touch-dragging");
    navigator.vibrate?.(15);
    follow(press.x, press.y);
  };
  root.addEventListener("pointerdown", (event) => {
    if (event.pointerType !== "touch" || !event.isPrimary) return;
    const row = event.target.closest?.(rows);
    if (!row || event.target.closest("input, .row-more")) return;
    end();
    press = { row, id: row.dataset.id, x: event.clientX, y: event.clientY, pointerId: event.pointerId, lifted: false };
    press.timer = setTimeout(() => {
      if (press?.row === row) lift();
    }, LONG_PRESS);
  });
  root.addEventListener("pointermove", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    if (press.lifted) {
      event.preventDefault();
      follow(event.clientX, event.clientY);
    } else if (Math.hypot(event.clientX - press.x, event.clientY - press.y) > SLOP) {
      end();
    }
  });
  root.addEventListener("pointerup", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    if (press.lifted) {
      const { id } = press;
      const target = targetAt(event.clientX, event.clientY);
      swallowClick = { x: event.clientX, y: event.clientY };
      setTimeout(() => {
        swallowClick = null;
      }, 400);
      end();
      if (target) onDrop(id, target);
    } else {
      end();
    }
  });
  root.addEventListener("pointercancel", end);
  root.addEventListener("touchmove", (event) => {
    if (press?.lifted) event.preventDefault();
  }, { passive: false });
  root.addEventListener("contextmenu", (event) => {
    if (press) event.preventDefault();
  });
  root.addEventListener("click", (event) => {
    if (!swallowClick || Math.hypot(event.clientX - swallowClick.x, event.clientY - swallowClick.y) > SLOP) return;
    swallowClick = null;
    event.preventDefault();
    event.stopPropagation();
  }, true);
}

// navi/web/static/js/transfer.js
var FORMATS = [
  { format: "markdown", label: "Export as Markdown", extension: "md" },
  { format: "pdf", label: "Export as PDF", extension: "pdf" },
  { format: "json", label: "Export archive (JSON)", extension: "json" }
];
var SOURCES2 = { chatgpt: "ChatGPT", claude: "Claude", navi: "a Navi archive" };
function download(filename, blob) {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1e3);
}
function nameOf(response, title, id, extension) {
  const given = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "")?.[1];
  if (given) return given;
  const safe = title.replace(/[^\w.-]+/g, "-").slice(0, 60) || "session";
  return `navi-${safe}-${id.slice(0, 8)}.${extension}`;
}
async function exportSession(session, title, format = "json") {
  const kind = FORMATS.find((f2) => f2.format === format) || FORMATS[2];
  try {
    const response = await api.exportRaw(session.id, kind.format);
    download(nameOf(response, title, session.id, kind.extension), await response.blob());
    toast("Exported.", "info");
  } catch (error) {
    toast(`Could not export: ${error.message}`);
  }
}
async function importFile(file) {
  try {
    const done = await api.importFile(file);
    const count = done.imported.length;
    const from = SOURCES2[done.source] || "the file";
    const again = done.skipped ? `; ${done.skipped} were imported before` : "";
    toast(`Imported ${count} conversation${count === 1 ? "" : "s"} from ${from}${again}.`, "info");
    return done;
  } catch (error) {
    toast(`Could not import ${file.name}: ${error.message}`);
    return null;
  }
}

// navi/web/static/js/sidebar.js
var DRAG_TYPE = "application/x-navi-session";
function sessionTitle(session) {
  return session?.name || "New conversation";
}
var DAY = 864e5;
function startOfDay(time) {
  const date = new Date(time);
  date.setHours(0, 0, 0, 0);
  return date.getTime();
}
function dateGroup(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (!Number.isFinite(then)) return "Older";
  const days = Math.round((startOfDay(now) - startOfDay(then)) / DAY);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days <= 7) return "Previous 7 days";
  if (days <= 30) return "Previous 30 days";
  return new Intl.DateTimeFormat(void 0, { month: "long", year: "numeric" }).format(new Date(then));
}
var Sidebar = class {
  constructor({ list: list2, search, onOpen, onOpenHit, onDeleted, onRenamed }) {
    this.list = list2;
    this.search = search;
    this.onOpen = onOpen;
    this.messages = new MessageSearch({ onChange: () => this.render(), onOpen: (hit) => onOpenHit(hit) });
    this.onDeleted = onDeleted;
    this.onRenamed = onRenamed;
    this.sessions = [];
    this.frames = 0;
    this.gone = /* @__PURE__ */ new Set();
    this.asked = 0;
    this.profiles = [];
    this.currentId = null;
    this.renaming = null;
    this.menu = new RowMenu();
    this.archivedView = false;
    this.newFolders = /* @__PURE__ */ new Set();
    this.dragging = null;
    list2.addEventListener("dragover", (event) => this.dragOver(event));
    list2.addEventListener("dragleave", (event) => event.target.closest?.("[data-drop]")?.classList.remove("drop-here"));
    list2.addEventListener("drop", (event) => this.drop(event));
    touchDrag({
      root: list2,
      rows: "li.session",
      targetAt: (x3, y3) => document.elementFromPoint(x3, y3)?.closest?.("#sessions [data-drop], #new-folder") || null,
      onDrop: (id, target) => this.dropOn(id, target)
    });
    search.addEventListener("input", () => {
      this.messages.update(search.value);
      this.render();
    });
    search.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && search.value) {
        event.stopPropagation();
        this.clearSearch();
      } else if (event.key === "Enter") {
        this.targets()[0]?.click();
      } else if (event.key === "ArrowDown") {
        event.preventDefault();
        this.targets()[0]?.focus();
      }
    });
    list2.addEventListener("keydown", (event) => this.move(event));
  }
  clearSearch() {
    this.search.value = "";
    this.messages.update("");
    this.render();
  }
  // What Up and Down go through: the rows' buttons, then the message hits.
  targets() {
    return [...this.list.querySelectorAll("button.session-open, button.hit-open")];
  }
  move(event) {
    const targets = this.targets();
    const at2 = targets.indexOf(event.target);
    if (at2 < 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = at2 + (event.key === "ArrowDown" ? 1 : -1);
      if (next < 0) this.search.focus();
      else targets[Math.min(next, targets.length - 1)].focus();
    } else if (event.key === "Escape" && this.search.value) {
      event.stopPropagation();
      this.search.focus();
    }
  }
  setProfiles(profiles) {
    this.profiles = profiles;
  }
  profileName(id) {
    return this.profiles.find((p2) => p2.id === id)?.name || id;
  }
  rows() {
    return [...this.list.querySelectorAll("li.session")];
  }
  select(id) {
    this.currentId = id;
    for (const item of this.rows()) {
      const current = item.dataset.id === id;
      item.classList.toggle("current", current);
      item.querySelector(".session-open")?.setAttribute("aria-current", current ? "page" : "false");
    }
  }
  async refresh() {
    const ask = ++this.asked;
    let sessions;
    for (let attempt = 0; ; attempt++) {
      const frames = this.frames;
      try {
        sessions = await api.sessions(this.archivedView);
      } catch (error) {
        toast(`Could not load the conversations: ${error.message}`);
        return;
      }
      if (ask !== this.asked) return;
      if (frames === this.frames || attempt >= 2) break;
    }
    this.sessions = this.current(sessions);
    this.render();
  }
  current(sessions) {
    return sessions.filter((s2) => !this.gone.has(s2.id));
  }
  // GET /sessions answered elsewhere (the schedule watch's poll): redraw only when something changed.
  setSessions(sessions) {
    if (this.archivedView) return;
    sessions = this.current(sessions);
    if (JSON.stringify(sessions) === JSON.stringify(this.sessions)) return;
    this.sessions = sessions;
    this.render();
  }
  // A scheduled run answered in this session (true), or the page showed it (false): the badge follows.
  setUnread(id, unread) {
    const session = this.sessions.find((s2) => s2.id === id);
    if (!session) {
      if (unread) this.refresh();
      return;
    }
    if (session.unread === unread) return;
    session.unread = unread;
    this.render();
  }
  isUnread(id) {
    return Boolean(this.sessions.find((s2) => s2.id === id)?.unread);
  }
  // A session_updated frame: change the entry in place, drop a deleted one, fetch the list for a
  // session this page has not seen yet (created or imported elsewhere).
  apply(frame) {
    this.frames++;
    const at2 = this.sessions.findIndex((s2) => s2.id === frame.session_id);
    if (frame.deleted) {
      this.gone.add(frame.session_id);
      if (at2 < 0) return;
      this.sessions.splice(at2, 1);
      this.render();
      return;
    }
    if (at2 < 0) {
      this.refresh();
      return;
    }
    const session = this.sessions[at2];
    const moved = session.pinned !== frame.pinned || frame.archived !== void 0 && session.archived !== frame.archived;
    Object.assign(session, { name: frame.name, profile_id: frame.profile_id, pinned: frame.pinned });
    if ("folder" in frame) session.folder = frame.folder;
    if (moved) this.refresh();
    else this.render();
  }
  // The open conversation on a visible page is being read: no badge there (the page marks it read).
  badged(session) {
    return session.unread && !(session.id === this.currentId && document.visibilityState === "visible");
  }
  matches(session) {
    const words2 = this.search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const text2 = `${sessionTitle(session)} ${this.profileName(session.profile_id)}`.toLowerCase();
    return words2.every((word) => text2.includes(word));
  }
  render() {
    if (this.renaming && this.list.querySelector(".rename-input")) return;
    const focused = document.activeElement?.closest?.("li.session")?.dataset.id;
    const focusedHit = document.activeElement?.closest?.("li.search-hit")?.dataset.message;
    const shown = this.sessions.filter((s2) => this.matches(s2));
    const folders = this.archivedView ? [] : this.folderSections(shown);
    const groups = [];
    for (const session of shown.filter((s2) => this.archivedView || !s2.folder)) {
      const label = session.pinned ? "Pinned" : dateGroup(session.last_active);
      if (groups.at(-1)?.label !== label) groups.push({ label, sessions: [] });
      groups.at(-1).sessions.push(session);
    }
    const dated = groups.map(({ label, sessions }) => {
      const id = `group-${label.replace(/\W+/g, "-").toLowerCase()}`;
      return el(
        "section",
        { class: "session-group", "aria-labelledby": id },
        el("h2", { class: "group-label", id, text: label }),
        el("ul", { class: "session-rows" }, sessions.map((s2) => this.item(s2)))
      );
    });
    const unfiled = el("div", { class: "unfiled", dataset: { drop: "" } }, dated);
    const sections = this.archivedView ? [this.archivedHead(), ...dated] : [...folders, unfiled];
    const hits = this.messages.section();
    const empty = this.sessions.length && !shown.length && !hits ? el("p", { class: "no-match", text: "No conversation matches." }) : null;
    this.list.replaceChildren(...sections, ...empty ? [empty] : [], ...hits ? [hits] : []);
    this.select(this.currentId);
    if (focused) this.list.querySelector(`li.session[data-id="${CSS.escape(focused)}"] .session-open`)?.focus();
    if (focusedHit) this.list.querySelector(`li.search-hit[data-message="${CSS.escape(focusedHit)}"] .hit-open`)?.focus();
  }
  // A folder: its name (a drop target) and its conversations, most recently active first. Folders
  // made here that hold nothing yet are shown too, to drop into.
  folderSections(shown) {
    const names = /* @__PURE__ */ new Set([...this.newFolders, ...this.sessions.map((s2) => s2.folder).filter(Boolean)]);
    for (const name of names) if (this.sessions.some((s2) => s2.folder === name)) this.newFolders.delete(name);
    const searching = Boolean(this.search.value.trim());
    return [...names].sort((a2, b2) => a2.localeCompare(b2)).flatMap((name) => {
      const inside = shown.filter((s2) => s2.folder === name);
      if (searching && !inside.length) return [];
      const id = `folder-${[...name].map((c2) => c2.codePointAt(0).toString(36)).join("-")}`;
      const more = el("button", {
        class: "icon-button folder-more",
        type: "button",
        title: "Folder",
        "aria-label": `More: folder ${name}`,
        "aria-haspopup": "menu",
        "aria-expanded": "false",
        onclick: (event) => {
          event.stopPropagation();
          this.menu.open(more, [{ label: "Rename folder", icon: "edit", run: () => this.renameFolder(name) }]);
        }
      }, icon("more"));
      return [el(
        "section",
        { class: "session-group folder", "aria-labelledby": id, dataset: { drop: name } },
        el("div", { class: "folder-head" }, el("h2", { class: "group-label folder-label", id }, icon("folder"), name), more),
        inside.length ? el("ul", { class: "session-rows" }, inside.map((s2) => this.item(s2))) : el("p", { class: "folder-empty", text: "Drag a conversation here." })
      )];
    });
  }
  archivedHead() {
    return el(
      "div",
      { class: "archived-head" },
      el("h2", { class: "group-label", text: "Archived" }),
      el("button", { type: "button", class: "link-button", onclick: () => this.showArchived(false) }, "Back to conversations"),
      this.sessions.length ? null : el("p", { class: "no-match", text: "No archived conversation." })
    );
  }
  showArchived(on) {
    this.archivedView = on;
    this.onArchivedView?.(on);
    this.clearSearch();
    this.sessions = [];
    this.refresh();
  }
  // "New folder": a name, shown at once as a place to drop conversations into.
  async newFolder(sessionId = null) {
    const name = await askText({ title: "New folder", label: "Its name", confirm: "Create" });
    if (!name) return;
    if (sessionId) await this.fileIn(sessionId, name);
    else {
      this.newFolders.add(name);
      if (this.archivedView) this.showArchived(false);
      else this.render();
    }
  }
  async moveTo(session) {
    const names = [.../* @__PURE__ */ new Set([...this.newFolders, ...this.sessions.map((s2) => s2.folder).filter(Boolean)])].sort();
    const name = await askText({
      title: "Move to folder",
      label: `Folder for “${sessionTitle(session)}”`,
      value: session.folder || "",
      confirm: "Move",
      options: names
    });
    if (name && name !== session.folder) await this.fileIn(session.id, name);
  }
  fileIn(id, folder) {
    return this.change("move it", () => api.place(id, { folder }));
  }
  archive(session, archived) {
    return this.change(archived ? "archive it" : "bring it back", async () => {
      await api.place(session.id, { archived });
      toast(archived ? `“${sessionTitle(session)}” is archived: “Archived” shows it.` : `“${sessionTitle(session)}” is back in the list.`, "info");
    });
  }
  dragOver(event) {
    const target = event.target.closest?.("[data-drop]");
    if (!target || !event.dataTransfer?.types.includes(DRAG_TYPE)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    for (const other of this.list.querySelectorAll(".drop-here")) if (other !== target) other.classList.remove("drop-here");
    target.classList.add("drop-here");
  }
  drop(event) {
    const target = event.target.closest?.("[data-drop]");
    const id = event.dataTransfer?.getData(DRAG_TYPE);
    if (!target || !id) return;
    event.preventDefault();
    target.classList.remove("drop-here");
    this.dropOn(id, target);
  }
  // A row dropped on a folder, the dated list (out of its folder) or "New folder".
  dropOn(id, target) {
    if (target.id === "new-folder") return this.newFolder(id);
    const folder = target.dataset.drop || null;
    const session = this.sessions.find((s2) => s2.id === id);
    if (session && (session.folder || null) !== folder) this.fileIn(id, folder);
  }
  // A folder's new name: every conversation in it moves (POST /sessions/folders/rename); a folder
  // made here that holds nothing yet is renamed here.
  async renameFolder(name) {
    const to = await askText({ title: "Rename folder", label: `New name for “${name}”`, value: name, confirm: "Rename" });
    if (!to || to === name) return;
    if (this.newFolders.has(name)) {
      this.newFolders.delete(name);
      this.newFolders.add(to);
      this.render();
      return;
    }
    await this.change("rename the folder", () => api.renameFolder(name, to));
  }
  item(session) {
    const title = sessionTitle(session);
    const meta = [this.profileName(session.profile_id), relativeTime(session.last_active)];
    if (session.active) meta.push("● running");
    const more = el("button", {
      class: "icon-button row-more",
      type: "button",
      title: "More",
      "aria-label": `More: ${title}`,
      "aria-haspopup": "menu",
      "aria-expanded": "false",
      onclick: (event) => {
        event.stopPropagation();
        this.openMenu(session, more);
      }
    }, icon("more"));
    return el(
      "li",
      {
        class: "session",
        dataset: { id: session.id },
        draggable: "true",
        ondragstart: (event) => {
          event.dataTransfer.setData(DRAG_TYPE, session.id);
          event.dataTransfer.effectAllowed = "move";
          this.dragging = session.id;
        },
        ondragend: () => {
          this.dragging = null;
        }
      },
      el(
        "button",
        { class: "session-open", type: "button", onclick: () => this.onOpen(session.id) },
        el(
          "span",
          { class: "session-name" },
          session.pinned ? el("span", { class: "pinned-mark", title: "Pinned" }, icon("pin", "pinned")) : null,
          this.badged(session) ? el("span", { class: "unread-badge", title: "A scheduled run answered here" }, "New", el("span", { class: "visually-hidden", text: ":" })) : null,
          title
        ),
        el("span", { class: "session-meta", text: meta.join(" · ") })
      ),
      el("span", { class: "session-actions" }, more)
    );
  }
  openMenu(session, button) {
    this.menu.open(button, [
      { label: session.pinned ? "Unpin" : "Pin", icon: session.pinned ? "unpin" : "pin", run: () => this.pin(session) },
      { label: "Rename", icon: "edit", run: () => this.rename(session) },
      { label: "Move to folder…", icon: "folder", run: () => this.moveTo(session) },
      ...session.folder ? [{ label: "Remove from folder", icon: "folder", run: () => this.fileIn(session.id, null) }] : [],
      session.archived ? { label: "Unarchive", icon: "archive", run: () => this.archive(session, false) } : { label: "Archive", icon: "archive", run: () => this.archive(session, true) },
      ...FORMATS.map(({ format, label }) => ({ label, icon: "download", run: () => exportSession(session, sessionTitle(session), format) })),
      { label: "Delete", icon: "trash", danger: true, run: () => this.remove(session) }
    ]);
  }
  // Run one change, say what went wrong if it failed, and show the list as it is now.
  async change(what, action) {
    try {
      await action();
    } catch (error) {
      toast(`Could not ${what}: ${error.message}`);
    }
    await this.refresh();
  }
  pin(session) {
    return this.change("pin", () => api.pin(session.id, !session.pinned));
  }
  // The name becomes a text box in its row: Enter (or leaving it) saves, Escape keeps the old name.
  // An empty name lets Navi name the conversation again.
  rename(session) {
    const row = this.list.querySelector(`li.session[data-id="${CSS.escape(session.id)}"]`);
    const name = row?.querySelector(".session-name");
    if (!name) return;
    const input = el("input", {
      class: "rename-input",
      type: "text",
      maxlength: "200",
      "aria-label": `New name for ${sessionTitle(session)} (empty: Navi names it)`
    });
    input.value = session.name || "";
    this.renaming = session.id;
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      this.renaming = null;
      const value = input.value.trim();
      const refocus = () => this.list.querySelector(`li.session[data-id="${CSS.escape(session.id)}"] .session-open`)?.focus();
      if (!save || value === (session.name || "")) {
        this.render();
        refocus();
        return;
      }
      await this.change("rename", async () => this.onRenamed?.(await api.rename(session.id, value)));
      refocus();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        finish(true);
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
    input.addEventListener("click", (event) => event.stopPropagation());
    row.classList.add("renaming");
    row.querySelector(".session-open").replaceWith(el("div", { class: "session-open editing" }, input));
    input.focus();
    input.select();
  }
  async remove(session) {
    const ok = await confirmDialog({
      title: "Delete this conversation?",
      message: `“${sessionTitle(session)}” and its uploaded files will be deleted. This cannot be undone.`,
      confirm: "Delete"
    });
    if (!ok) return;
    await this.change("delete", async () => {
      await api.remove(session.id);
      this.onDeleted?.(session.id);
    });
  }
};

// navi/web/static/js/socket.js
var VISIBILITY_SECONDS = 30;
var SessionSocket = class {
  constructor(sessionId, { onFrame, onOpen, onStatus, onGone, onSignedOut }) {
    this.sessionId = sessionId;
    this.onFrame = onFrame;
    this.onOpen = onOpen;
    this.onStatus = onStatus;
    this.onGone = onGone;
    this.onSignedOut = onSignedOut || (() => window.location.assign("/"));
    this.ws = null;
    this.closed = false;
    this.lastSeq = 0;
    this.lastRun = "";
    this.retries = 0;
    this.timer = 0;
    this.waiters = [];
    this.reportVisibility = () => {
      if (this.ready) this.ws.send(JSON.stringify({ type: "visibility", visible: document.visibilityState === "visible" }));
    };
    document.addEventListener("visibilitychange", this.reportVisibility);
    this.beat = setInterval(this.reportVisibility, VISIBILITY_SECONDS * 1e3);
    this.connect();
  }
  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const since = this.lastSeq ? `?since=${this.lastSeq}&run=${encodeURIComponent(this.lastRun)}` : "";
    return `${scheme}://${location.host}/ws/sessions/${encodeURIComponent(this.sessionId)}${since}`;
  }
  connect() {
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      const reconnected = this.retries > 0;
      this.retries = 0;
      this.reportVisibility();
      for (const { resolve } of this.waiters.splice(0)) resolve();
      this.onStatus?.("open");
      this.onOpen?.({ reconnected });
    };
    ws.onmessage = (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame.seq !== void 0) {
        const sameRun = frame.run_id === void 0 || frame.run_id === this.lastRun;
        if (sameRun && frame.type !== "stream_start" && frame.seq <= this.lastSeq) return;
        this.lastSeq = frame.seq;
        if (frame.run_id !== void 0) this.lastRun = frame.run_id;
      }
      this.onFrame(frame);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws || this.closed) return;
      if (event.code === 4004) {
        this.fail(new Error("This conversation no longer exists."));
        this.onGone?.();
        return;
      }
      if (event.code === 4401) {
        this.closed = true;
        this.fail(new Error("Signed out: sign in again."));
        this.onSignedOut?.();
        return;
      }
      this.onStatus?.("reconnecting");
      const delay = Math.min(4e3, 250 * 2 ** this.retries++);
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }
  // Resolves once the socket is open (at once when it is); fails when it is closed, or after `ms`
  // (0: no time limit).
  whenOpen(ms = 8e3) {
    if (this.ready) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = ms ? setTimeout(() => reject(new Error("Could not reach Navi; check that it is running.")), ms) : 0;
      this.waiters.push({
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        }
      });
    });
  }
  fail(error) {
    for (const { reject } of this.waiters.splice(0)) reject(error);
  }
  get ready() {
    return this.ws?.readyState === WebSocket.OPEN;
  }
  send(frame) {
    if (!this.ready) throw new Error("Not connected to Navi yet; try again in a moment.");
    this.ws.send(JSON.stringify(frame));
  }
  close() {
    this.closed = true;
    document.removeEventListener("visibilitychange", this.reportVisibility);
    clearInterval(this.beat);
    this.fail(new Error("The conversation was closed."));
    clearTimeout(this.timer);
    this.ws?.close();
  }
};

// navi/web/static/js/watch.js
var POLL_MS3 = 4e3;
var REPORTED = /* @__PURE__ */ new Set(["ok", "error", "skipped", "waiting_approval"]);
var GOING = /* @__PURE__ */ new Set(["running", "waiting_approval"]);
var ScheduleWatch = class {
  constructor({ api: api2, onEvent, onSessions, onSchedules }) {
    this.api = api2;
    this.onEvent = onEvent;
    this.onSessions = onSessions;
    this.onSchedules = onSchedules;
    this.since = Date.now() - 5e3;
    this.lastRun = /* @__PURE__ */ new Map();
    this.going = /* @__PURE__ */ new Set();
    this.seen = /* @__PURE__ */ new Set();
    this.unread = null;
    this.timer = 0;
    this.polling = false;
  }
  // A frame or a polled run: report it unless this run's status was reported already.
  event(event) {
    if (!REPORTED.has(event.status) && event.status !== "running") return;
    const key = `${event.schedule_run_id}:${event.status}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.onEvent(event);
  }
  // A socket is open (frames come through it): no poll. None is open: poll.
  setSocketOpen(open) {
    clearTimeout(this.timer);
    this.polling = !open;
    if (this.polling) this.timer = setTimeout(() => this.poll(), POLL_MS3);
  }
  async poll() {
    if (!this.polling) return;
    try {
      const [sessions, schedules] = await Promise.all([this.api.sessions(), this.api.schedules()]);
      this.onSessions(sessions);
      this.onSchedules(schedules);
      const unread = new Set(sessions.filter((s2) => s2.unread).map((s2) => s2.id));
      const newlyUnread = this.unread !== null && [...unread].some((id) => !this.unread.has(id));
      this.unread = unread;
      await this.check(schedules, newlyUnread);
    } catch {
    }
    if (this.polling) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.poll(), POLL_MS3);
    }
  }
  // This page started a run of this schedule (Run now): follow it until it ends.
  started(scheduleId) {
    this.going.add(scheduleId);
  }
  async check(schedules, all = false) {
    const moved = schedules.filter((s2) => all || this.going.has(s2.id) || s2.last_run_at && s2.last_run_at !== this.lastRun.get(s2.id));
    this.lastRun = new Map(schedules.map((s2) => [s2.id, s2.last_run_at]));
    const details = await Promise.all(moved.map((s2) => this.api.schedule(s2.id).catch(() => null)));
    for (const detail of details) {
      if (!detail) continue;
      this.going.delete(detail.id);
      for (const run of [...detail.runs].reverse()) {
        if (GOING.has(run.status)) this.going.add(detail.id);
        const when = Date.parse(run.finished_at || run.started_at || run.due_at);
        if (!(when >= this.since) || !REPORTED.has(run.status)) continue;
        this.event({
          type: "schedule_run",
          schedule_id: detail.id,
          schedule_run_id: run.id,
          session_id: run.session_id,
          status: run.status,
          title: detail.title,
          manual: run.manual,
          preview: run.preview,
          error: run.error
        });
      }
    }
  }
};

// navi/web/static/js/voice.js
var HOLD_MS = 350;
var SPEECH_LEVEL = 0.04;
var BARGE_MS = 250;
var SILENCE_MS = 1200;
var NO_MIC = "Navi cannot hear you: allow the microphone for this site in the browser's settings (the icon in the address bar), then try again.";
var ABBREVIATIONS = ["e.g.", "i.e.", "etc.", "mr.", "mrs.", "ms.", "dr.", "vs.", "no.", "st."];
var END = /(?<=[.!?…])["')\]]*\s+|\n[ \t]*\n/g;
var VOICE_CODES = /* @__PURE__ */ new Set(["unsupported_format", "corrupt_audio", "too_large", "too_long", "no_speech", "voice_busy", "voice_unavailable", "voice_server_failed"]);
var NOTHING_HEARD = /* @__PURE__ */ new Set(["unsupported_format", "corrupt_audio", "too_large", "too_long", "no_speech"]);
var HEAR_MS = 12e4;
function speakable(markdown) {
  let text2 = markdown.replace(/^[ \t]*(```|~~~)[\s\S]*?(^[ \t]*\1[^\n]*$|$(?![\s\S]))/gm, "\n\n").replace(/`[^`\n]*`/g, "").replace(/!\[([^\]\n]{0,300})\]\([^)\s]{0,2000}\)/g, "$1").replace(/\[([^\]\n]{1,300})\]\([^)\s]{0,2000}\)/g, "$1").replace(/\b(?:https?:\/\/|www\.)\S+/gi, "").replace(/<\/?[a-zA-Z][^>\n]{0,200}>/g, "").replace(/^[ \t]{0,3}#{1,6}[ \t]*/gm, "").replace(/^[ \t]*(?:[-*+]|\d+[.)])\s+/gm, "").replace(/^[ \t]*>\s?/gm, "");
  for (let i2 = 0; i2 < 2; i2++) text2 = text2.replace(/(\*\*|__|\*|_|~~)(?=\S)([^\n]{1,200}?)(?<=\S)\1/g, "$2");
  text2 = text2.replace(/\|/g, ", ").replace(/#/g, "");
  return text2.split("\n").map((line) => line.replace(/[ \t]+/g, " ").trim()).filter(Boolean).map((line) => /[.!?…:;,)]$/.test(line) ? line : `${line}.`).join("\n");
}
function abbreviated(text2, end) {
  const head = text2.slice(Math.max(0, end - 8), end).trimEnd().toLowerCase();
  return ABBREVIATIONS.some((a2) => head.endsWith(a2));
}
function pieces(text2) {
  const out = [];
  let start2 = 0;
  for (const match of text2.matchAll(END)) {
    if (abbreviated(text2, match.index)) continue;
    const piece = text2.slice(start2, match.index).trim();
    if (piece) out.push(piece);
    start2 = match.index + match[0].length;
  }
  const tail = text2.slice(start2).trim();
  if (tail) out.push(tail);
  return out;
}
var Sentences = class {
  constructor() {
    this.raw = "";
    this.done = 0;
  }
  feed(delta) {
    this.raw += delta;
    return this.take(false);
  }
  finish() {
    return this.take(true);
  }
  take(final) {
    const pending = this.raw.slice(this.done);
    let cut = pending.length;
    if (!final) {
      if ((pending.match(/```/g) || []).length % 2 === 1) return [];
      cut = 0;
      let worded = false;
      let seen = 0;
      for (const match of pending.matchAll(END)) {
        if (abbreviated(pending, match.index)) continue;
        worded ||= /\w/.test(pending.slice(seen, match.index));
        seen = match.index + match[0].length;
        if (worded) {
          cut = seen;
          worded = false;
        }
      }
      if (!cut) return [];
    }
    this.done += cut;
    return pieces(speakable(pending.slice(0, cut)));
  }
};
async function voiceRequest(path, options) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  if (!response.ok) {
    let message = response.statusText;
    try {
      message = (await response.json()).error?.message || message;
    } catch {
    }
    throw Object.assign(new Error(message), { status: response.status });
  }
  return response;
}
function dataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}
function audioBlob(frame) {
  const bytes = Uint8Array.from(atob(frame.audio), (c2) => c2.charCodeAt(0));
  return new Blob([bytes], { type: frame.format === "opus" ? "audio/ogg" : `audio/${frame.format}` });
}
var Player = class {
  constructor(audio, onIdle) {
    Object.assign(this, { audio, onIdle, queue: [], current: null, awaiting: false, controller: new AbortController() });
    audio.dataset.played = "0";
  }
  get busy() {
    return this.awaiting || Boolean(this.current) || this.queue.length > 0;
  }
  play(text2, blob) {
    this.enqueue(text2, Promise.resolve(blob));
  }
  say(text2) {
    const signal = this.controller.signal;
    const audio = voiceRequest("/v1/audio/speech", {
      method: "POST",
      signal,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: "tts-1", voice: "alloy", input: text2, response_format: "mp3" })
    }).then((r2) => r2.blob());
    audio.catch(() => {
    });
    this.enqueue(text2, audio);
  }
  enqueue(text2, audio) {
    this.queue.push({ text: text2, audio });
    if (!this.current) this.next();
  }
  async next() {
    const job = this.queue.shift();
    if (!job) {
      this.current = null;
      if (!this.awaiting) this.onIdle();
      return;
    }
    this.current = job;
    try {
      const blob = await job.audio;
      if (this.current !== job) return;
      const url = URL.createObjectURL(blob);
      this.audio.src = url;
      await new Promise((resolve, reject) => {
        this.audio.onended = resolve;
        this.audio.onerror = () => reject(new Error("the answer's audio does not play"));
        this.audio.onpause = () => {
          if (this.current !== job) resolve();
        };
        this.audio.play().then(() => {
          this.audio.dataset.played = String(Number(this.audio.dataset.played) + 1);
          this.audio.dataset.sentence = job.text;
        }, reject);
      });
      URL.revokeObjectURL(url);
    } catch (error) {
      if (error.name !== "AbortError" && this.current === job) toast(`Could not speak the answer: ${error.message}`);
    }
    if (this.current === job) this.next();
  }
  spoken() {
    this.awaiting = false;
    if (!this.current && !this.queue.length) this.onIdle();
  }
  stop(reason = "stopped") {
    this.controller.abort();
    this.controller = new AbortController();
    this.queue = [];
    this.awaiting = false;
    const was = this.current;
    this.current = null;
    if (was) {
      this.audio.dataset.stopped = reason;
      this.audio.pause();
    }
  }
};
var VoiceControls = class {
  constructor({ input, row, composer: composer2, conversation: conversation2, socket, ensureSession: ensureSession2 }) {
    Object.assign(this, { input, composer: composer2, conversation: conversation2, socket, ensureSession: ensureSession2 });
    this.hearing = [];
    this.live = /* @__PURE__ */ new Set();
    this.muted = /* @__PURE__ */ new Set();
    this.session = null;
    this.aloud = false;
    this.handsFree = false;
    this.answering = false;
    this.mic = el("button", { type: "button", id: "mic", class: "icon-button mic", "aria-label": "Talk (hold, or tap to start and stop)", title: "Talk: hold, or tap to start and stop (Space held in an empty box)" }, icon("mic"));
    this.meter = el("span", { id: "mic-level", class: "mic-level", "aria-hidden": "true", dataset: { level: "0" } }, el("span"));
    this.aloudButton = el("button", { type: "button", id: "answer-aloud", class: "toggle", "aria-pressed": "false", title: "Read this conversation's answers aloud", "aria-label": "Answer aloud" }, icon("speaker"));
    this.handsButton = el("button", { type: "button", id: "hands-free", class: "toggle", "aria-pressed": "false", title: "Hands-free: talk, hear the answer, talk again", "aria-label": "Hands-free" }, icon("handsfree"));
    this.status = el("span", { id: "voice-status", class: "voice-status", role: "status", "aria-live": "polite" });
    this.audio = el("audio", { id: "voice-player", hidden: true });
    this.player = new Player(this.audio, () => this.afterSpeaking());
    row.querySelector("#send").before(this.mic, this.meter, this.aloudButton, this.handsButton);
    row.after(this.status);
    row.append(this.audio);
    this.wire();
    this.watchAnswers(conversation2);
  }
  wire() {
    this.mic.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      if (this.recorder && this.mode === "tap") {
        this.finish();
        return;
      }
      if (!this.recorder) {
        this.pressedAt = performance.now();
        this.mode = "pending";
        this.listen();
      }
    });
    this.mic.addEventListener("pointerup", () => {
      if (this.mode !== "pending") return;
      if (performance.now() - this.pressedAt >= HOLD_MS) this.finish();
      else this.mode = "tap";
    });
    this.mic.addEventListener("click", (event) => {
      if (event.detail !== 0) return;
      if (this.recorder) this.finish();
      else {
        this.mode = "tap";
        this.listen();
      }
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === " " && !event.repeat && this.input.value === "" && !this.recorder) {
        event.preventDefault();
        this.mode = "key";
        this.listen();
      }
    });
    this.input.addEventListener("keyup", (event) => {
      if (event.key === " " && this.mode === "key") this.finish();
    });
    this.aloudButton.addEventListener("click", () => this.setAloud(!this.aloud));
    this.handsButton.addEventListener("click", () => this.setHandsFree(!this.handsFree));
  }
  // A conversation opened: its own "answer aloud" choice. A new conversation starts without it; the
  // choice made in a draft goes with the conversation the first message makes of it.
  setSession(id) {
    const fromDraft = !this.session;
    this.session = id || null;
    if (!fromDraft) this.player.stop("switched");
    const stored = this.session ? localStorage.getItem(`navi.aloud.${this.session}`) : null;
    if (this.session && stored === null && fromDraft) this.setAloud(this.aloud);
    else this.setAloud(stored === "1", false);
  }
  setAloud(on, remember = true) {
    const was = this.speaking;
    this.aloud = on;
    this.aloudButton.setAttribute("aria-pressed", String(on));
    if (remember && this.session) localStorage.setItem(`navi.aloud.${this.session}`, on ? "1" : "0");
    if (!on && !this.handsFree) this.player.stop();
    if (this.speaking !== was) this.tellSpeak();
  }
  get speaking() {
    return this.aloud || this.handsFree;
  }
  // Navi is told whether to speak this connection's answers (an answer streaming now is read from
  // its current sentence). Sent while speaking, it stops what is left of the answers (barge-in).
  tellSpeak() {
    const socket = this.socket();
    if (!socket?.ready) return;
    if (this.speaking && this.answering) this.player.awaiting = true;
    try {
      socket.send({ type: "speak", on: this.speaking, format: "mp3" });
    } catch {
    }
  }
  // The session's socket opened (first time, or again after a drop): a new connection speaks nothing
  // until told, and what the old one was hearing or speaking is gone.
  socketOpened() {
    for (const waiter of this.hearing.splice(0)) waiter.reject(new Error("the connection to Navi was lost; try again"));
    this.live.clear();
    this.muted.clear();
    this.player.awaiting = false;
    if (this.speaking) this.tellSpeak();
  }
  // Stop what is playing and what Navi has left to say of it.
  hush(reason) {
    const busy = this.player.busy;
    this.player.stop(reason);
    if (!busy) return;
    for (const run of this.live) this.muted.add(run);
    this.live.clear();
    if (this.speaking) this.tellSpeak();
  }
  async setHandsFree(on) {
    const was = this.speaking;
    this.handsFree = on;
    this.handsButton.setAttribute("aria-pressed", String(on));
    if (this.speaking !== was) this.tellSpeak();
    if (on) {
      if (!await this.openMic()) {
        this.setHandsFree(false);
        return;
      }
      this.say("Hands-free: talk whenever you like.");
      this.watch = setInterval(() => this.tick(), 50);
    } else {
      clearInterval(this.watch);
      if (this.recorder) this.finish({ send: false });
      this.closeMic();
    }
  }
  say(text2) {
    this.status.textContent = text2;
  }
  // The microphone's stream and a level meter on it (kept open in hands-free mode).
  async openMic() {
    if (this.stream) return true;
    try {
      if (!navigator.mediaDevices?.getUserMedia) throw Object.assign(new Error("no microphone API"), { name: "NotSupportedError" });
      this.stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    } catch (error) {
      const text2 = error.name === "NotSupportedError" ? "This browser cannot record here (it needs https or localhost)." : NO_MIC;
      this.say(text2);
      toast(text2);
      this.mic.dataset.denied = "true";
      return false;
    }
    this.context = new AudioContext();
    const analyser = this.context.createAnalyser();
    analyser.fftSize = 1024;
    this.context.createMediaStreamSource(this.stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    this.level = () => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const s2 of samples) sum += s2 * s2;
      return Math.sqrt(sum / samples.length);
    };
    const draw = () => {
      if (!this.stream) return;
      const level = this.level();
      this.meter.dataset.level = level.toFixed(3);
      this.meter.firstChild.style.width = `${Math.min(100, Math.round(level * 400))}%`;
      requestAnimationFrame(draw);
    };
    requestAnimationFrame(draw);
    return true;
  }
  closeMic() {
    this.stream?.getTracks().forEach((t2) => t2.stop());
    this.context?.close();
    this.stream = this.context = null;
    this.meter.dataset.level = "0";
  }
  async listen() {
    if (!await this.openMic()) {
      this.mode = null;
      return;
    }
    if (this.recorder) return;
    this.hush("listening");
    this.ensureSession().catch(() => {
    });
    const type = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4"].find((t2) => MediaRecorder.isTypeSupported(t2));
    const recorder = new MediaRecorder(this.stream, type ? { mimeType: type } : {});
    const chunks = [];
    recorder.ondataavailable = (event) => {
      if (event.data.size) chunks.push(event.data);
    };
    this.recorded = new Promise((resolve) => {
      recorder.onstop = () => resolve(new Blob(chunks, { type: recorder.mimeType }));
    });
    recorder.start(250);
    this.recorder = recorder;
    this.heard = false;
    this.quietSince = null;
    this.mic.classList.add("recording");
    this.mic.setAttribute("aria-pressed", "true");
    this.say("Listening…");
  }
  // Recording ends: the clip is transcribed into the message box (hands-free: and sent).
  async finish({ send: send2 = this.handsFree } = {}) {
    const recorder = this.recorder;
    if (!recorder) return;
    this.recorder = null;
    this.mode = null;
    this.mic.classList.remove("recording");
    this.mic.setAttribute("aria-pressed", "false");
    recorder.stop();
    const blob = await this.recorded;
    if (!this.handsFree) this.closeMic();
    if (!send2 && this.handsFree) return;
    this.say("Transcribing…");
    this.transcribing = true;
    try {
      const text2 = await this.hear(blob);
      this.input.value = this.input.value ? `${this.input.value.trimEnd()} ${text2}` : text2;
      this.input.dispatchEvent(new Event("input", { bubbles: true }));
      this.input.focus();
      this.say("");
      if (send2) await this.composer.submit();
    } catch (error) {
      this.say(NOTHING_HEARD.has(error.code) ? `Nothing to send: ${error.message}` : `Could not transcribe: ${error.message}`);
    } finally {
      this.transcribing = false;
    }
  }
  // The clip as a `voice` frame on the conversation's socket (opened first in a draft); its words
  // come back as `transcript` (only transcribed here: the page puts them in the box and sends them).
  async hear(blob) {
    await this.ensureSession();
    const socket = this.socket();
    await socket.whenOpen();
    const audio = await dataUrl(blob);
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      waiter.timer = setTimeout(() => {
        this.hearing = this.hearing.filter((w3) => w3 !== waiter);
        reject(new Error("Navi did not answer in time"));
      }, HEAR_MS);
      this.hearing.push(waiter);
      try {
        socket.send({ type: "voice", audio, send: false });
      } catch (error) {
        this.hearing = this.hearing.filter((w3) => w3 !== waiter);
        reject(error);
      }
    });
  }
  // The socket's voice frames (main.js's handleFrame): a clip's words, an answer's spoken sentences.
  frame(frame) {
    if (frame.type === "transcript") {
      const waiter = this.hearing.shift();
      clearTimeout(waiter?.timer);
      waiter?.resolve(frame.text);
    } else if (frame.type === "speech") {
      if (this.muted.has(frame.run_id) || !this.speaking) return;
      this.live.add(frame.run_id);
      this.player.play(frame.text, audioBlob(frame));
    } else if (frame.type === "speech_end") {
      this.live.delete(frame.run_id);
      if (this.muted.delete(frame.run_id)) return;
      if (!this.live.size) this.player.spoken();
    }
  }
  // An `error` frame: true when it is about voice (a clip that could not be heard, speech that failed).
  error(frame) {
    if (!VOICE_CODES.has(frame.code) || frame.seq !== void 0) return false;
    const waiter = this.hearing.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.reject(Object.assign(new Error(frame.message), { code: frame.code }));
    } else {
      this.player.spoken();
      toast(`Could not speak the answer: ${frame.message}`);
    }
    return true;
  }
  // Hands-free: start when someone talks, end after a pause, and barge in on a playing answer.
  tick() {
    if (!this.stream || !this.level) return;
    const now = performance.now();
    const loud = this.level() > SPEECH_LEVEL;
    if (this.player.busy) {
      this.loudSince = loud ? this.loudSince ?? now : null;
      if (this.loudSince !== null && now - this.loudSince >= BARGE_MS) {
        this.hush("barge-in");
        this.listen();
      }
      return;
    }
    if (!this.recorder) {
      if (loud && !this.answering && !this.transcribing) this.listen();
      return;
    }
    if (loud) {
      this.heard = true;
      this.quietSince = null;
      return;
    }
    this.quietSince ??= now;
    if (this.heard && now - this.quietSince >= SILENCE_MS) this.finish({ send: true });
  }
  afterSpeaking() {
  }
  // hands-free listens again through `tick` once the answer is spoken
  // The page's answer frames: Navi speaks the answer (`speech` frames) when asked to.
  turnStarted(runId) {
    this.answering = true;
    if (!this.speaking) return;
    this.live.add(runId);
    this.player.awaiting = true;
  }
  turnEnded() {
    this.answering = false;
  }
  // A speaker button on every answer, in its row of actions (before the time) once it has one:
  // reads that answer from the start.
  watchAnswers(conversation2) {
    const place = (turn, button) => {
      const actions = turn.querySelector(":scope > .msg-actions");
      if (!actions) {
        if (!button.isConnected) turn.append(button);
      } else if (button.parentElement !== actions) {
        const time = actions.querySelector(":scope > .msg-time");
        if (time) time.before(button);
        else actions.append(button);
      }
    };
    const add = (turn) => {
      const drawn = turn.querySelector(".speak-answer");
      if (drawn) {
        place(turn, drawn);
        return;
      }
      const button = el("button", { type: "button", class: "icon-button speak-answer", "aria-label": "Read this answer aloud", title: "Read aloud" }, icon("speaker"));
      button.addEventListener("click", () => {
        this.hush("replaced");
        const found = new Sentences();
        for (const sentence of [...found.feed(readable(turn)), ...found.finish()]) this.player.say(sentence);
      });
      place(turn, button);
    };
    new MutationObserver(() => {
      for (const turn of conversation2.querySelectorAll("article.msg.turn:not([aria-busy])")) add(turn);
    }).observe(conversation2, { childList: true, subtree: true, attributes: true, attributeFilter: ["aria-busy"] });
  }
};
function readable(turn) {
  const parts = [];
  for (const node of turn.querySelectorAll(":scope > .markdown.text")) {
    const copy = node.cloneNode(true);
    copy.querySelectorAll("pre, code, .citation").forEach((n3) => n3.remove());
    copy.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6, blockquote").forEach((n3) => n3.append("\n\n"));
    parts.push(copy.textContent);
  }
  return parts.join("\n\n");
}

// navi/web/static/js/main.js
var $3 = (id) => document.getElementById(id);
var state = {
  session: null,
  // the open session (GET /sessions/{id} without its messages)
  socket: null,
  turn: null,
  // the live Turn while a run streams
  pending: null,
  // the message sent, until its stream_start (or its error)
  replaying: false,
  // opened mid-run: the next stream_start is the replay of that run
  unanswered: 0,
  // opened with history ending in a user's message (this many messages drawn)
  replayFrom: 0,
  // when that run's message was stored (the replayed turn's start)
  retrying: false,
  // Retry was pressed: the next stream_start is that retry
  continuing: false,
  // the turn running is a continuation of a cut-off answer
  opening: 0,
  // which openSession call is the latest (an older one finishing late must not win)
  reveal: null,
  // {session, message}: a search hit opened, its message is shown once its session is
  creating: null,
  // the session being created for a first message or upload
  waiting: null,
  // the nodes drawn for a message sent, until its turn starts
  queued: null,
  // a message waiting for Navi to be reachable (a token: Stop or a switch voids it)
  branching: null,
  // an edit or regenerate frame sent, until its turn starts (or it is refused)
  branchTurn: false
  // the live turn runs on a new branch: the history is drawn again at its end
};
var conversation = new Conversation($3("messages"), {
  sessionId: () => state.session?.id,
  onRetry: retry,
  onContinue: (id) => sendBranchFrame({ type: "continue", message_id: id }),
  branches: {
    onEdit: editMessage,
    onRegenerate: regenerate,
    onSwitch: switchBranch,
    onFork: forkAt,
    onRate: (messageId, rating2) => api.rate(state.session.id, messageId, rating2)
  }
});
var light = new StatusLight($3("model-status"));
var citations = new Citations($3("messages"));
setAfterRender((element) => citations.link(element));
var tracker = new DocumentTracker({ onSettled: () => citations.refresh() });
var sidebar = new Sidebar({
  list: $3("sessions"),
  search: $3("session-search"),
  onOpen: (id) => navigate(id),
  onOpenHit: openHit2,
  onDeleted: (id) => {
    if (state.session?.id === id) navigate(null);
  },
  onRenamed: (updated) => {
    if (state.session?.id === updated.id) setHeader({ ...state.session, ...updated });
  }
});
sidebar.onArchivedView = (on) => $3("show-archived").setAttribute("aria-pressed", String(on));
$3("import-button").addEventListener("click", () => $3("import-file").click());
$3("import-file").addEventListener("change", async (event) => {
  const file = event.target.files?.[0];
  event.target.value = "";
  if (!file) return;
  const done = await importFile(file);
  if (!done) return;
  if (sidebar.archivedView) sidebar.showArchived(false);
  else await sidebar.refresh();
});
$3("new-folder").addEventListener("click", () => sidebar.newFolder());
$3("new-folder").addEventListener("dragover", (event) => {
  if (!event.dataTransfer?.types.includes("application/x-navi-session")) return;
  event.preventDefault();
  event.dataTransfer.dropEffect = "move";
});
$3("new-folder").addEventListener("drop", (event) => {
  const id = event.dataTransfer?.getData("application/x-navi-session");
  if (!id) return;
  event.preventDefault();
  sidebar.newFolder(id);
});
$3("show-archived").addEventListener("click", () => sidebar.showArchived(!sidebar.archivedView));
var picker = new ProfilePicker({
  select: $3("profile-picker"),
  modelName: $3("model-name"),
  currentSession: () => state.session,
  onChanged: (updated) => {
    if (state.session?.id === updated.id) setHeader({ ...state.session, profile_id: updated.profile_id });
    sidebar.refresh();
  }
});
var notifier = new Notifier({ toggle: $3("notify-toggle"), note: $3("notify-note"), onOpen: (id) => navigate(id) });
var watch = new ScheduleWatch({
  api,
  onEvent: scheduleEvent,
  onSessions: (sessions) => sidebar.setSessions(sessions),
  onSchedules: (schedules) => panel.update(schedules)
});
var panel = new SchedulesPanel({
  dialog: $3("schedules"),
  openButton: $3("open-schedules"),
  closeButton: $3("close-schedules"),
  form: $3("schedule-form"),
  currentSession: () => state.session,
  profiles: () => sidebar.profiles,
  onOpenSession: (id) => {
    closeDrawer();
    navigate(id);
  },
  onStarted: (id) => watch.started(id)
});
new MemoryPanel({
  dialog: $3("memory"),
  openButton: $3("open-memory"),
  closeButton: $3("close-memory"),
  onOpenHit: (hit) => {
    closeDrawer();
    openHit2(hit);
  },
  onOpenSession: (id) => {
    closeDrawer();
    navigate(id);
  },
  sessionName: (id) => sidebar.sessions.find((s2) => s2.id === id)?.name
});
var jobsPanel = new JobsPanel({
  dialog: $3("jobs"),
  openButton: $3("open-jobs"),
  closeButton: $3("close-jobs"),
  onOpenSession: (id) => {
    closeDrawer();
    navigate(id);
  }
});
async function startJob(mode) {
  const text2 = $3("input").value.trim();
  if (!text2) {
    toast(mode === "research" ? "Write the question first, then press Research." : "Write the task first, then press Background.", "info");
    return;
  }
  try {
    const sessionId = await ensureSession();
    const job = await api.startJob(text2, sessionId, mode);
    composer.clear();
    const what = mode === "research" ? `Research “${job.title}” started: its report` : `Background job “${job.title}” started: its result`;
    toast(`${what} will be posted here.`, "info");
  } catch (error) {
    toast(`Could not start it: ${error.message}`);
  }
}
$3("background").addEventListener("click", () => startJob("task"));
$3("research").addEventListener("click", () => startJob("research"));
function jobChanged(frame) {
  jobsPanel.changed();
  const ended = ["done", "failed", "stopped"].includes(frame.state);
  if (ended && frame.origin_session_id && state.session?.id === frame.origin_session_id && !state.turn) {
    redrawHistory(frame.origin_session_id);
  }
}
var settings = new SettingsPanel({
  dialog: $3("settings"),
  openButton: $3("open-settings"),
  closeButton: $3("close-settings"),
  onProfilesChanged: () => loadProfiles().catch(() => {
  })
});
var conversationOptions = new ConversationOptions({
  dialog: $3("conversation-options"),
  openButton: $3("open-conversation-options"),
  closeButton: $3("close-conversation-options"),
  currentSession: () => state.session,
  defaultModel: () => picker.profileModel(),
  onSaved: (fields) => {
    if (state.session) setHeader({ ...state.session, ...fields });
  }
});
var composer = new Composer({
  form: $3("composer"),
  input: $3("input"),
  send: $3("send"),
  stop: $3("stop"),
  fileInput: $3("file-input"),
  attachments: $3("attachments"),
  dropZone: document.querySelector(".main"),
  ensureSession,
  onSend: send,
  onStop: stop,
  onQueue: queueMessage,
  tracker
});
var voice = new VoiceControls({
  input: $3("input"),
  row: document.querySelector("#composer .composer-row"),
  composer,
  conversation: $3("messages"),
  socket: () => state.socket,
  ensureSession
});
new KnowledgePanel({
  dialog: $3("knowledge"),
  openButton: $3("open-knowledge"),
  closeButton: $3("close-knowledge"),
  currentSession: () => state.session,
  ensureSession,
  onChanged: () => citations.refresh()
});
new SkillsPanel({ dialog: $3("skills"), openButton: $3("open-skills"), closeButton: $3("close-skills") });
function watchSentDocuments(node, documents) {
  if (!node || !documents.length) return;
  for (const chip of node.querySelectorAll(".files .chip")) {
    const doc = documents.find((d2) => d2.name === chip.textContent.trim());
    if (!doc) continue;
    tracker.watch(doc.id, (read) => {
      chip.querySelector(".doc-state")?.remove();
      if (read.state !== "ready") chip.append(stateView(read));
    });
  }
}
function queueMessage(message, mode) {
  if (!state.socket?.ready) return false;
  state.socket.send({ type: "message", ...message, mode });
  return true;
}
var queueView = new QueueView($3("queue"), {
  onEdit: (id, content) => state.socket?.send({ type: "queue_edit", message_id: id, content }),
  onCancel: (id) => state.socket?.send({ type: "queue_cancel", message_id: id })
});
function setHeader(session) {
  if (session?.id !== state.session?.id) voice.setSession(session?.id);
  state.session = session;
  const title = session ? sessionTitle(session) : "Navi";
  $3("session-title").textContent = title;
  $3("temporary-badge").hidden = !session?.temporary;
  document.title = session ? `${title} · Navi` : "Navi";
  picker.show(session?.profile_id, session);
  conversationOptions.setSession(session);
  document.querySelector(".debug-link").href = session ? `/debug?session=${session.id}` : "/debug";
}
function navigate(id) {
  const hash = id ? `#/s/${id}` : "#/";
  if (location.hash !== hash) location.hash = hash;
  else route();
}
function openHit2(hit) {
  state.reveal = { session: hit.session_id, message: hit.message_id };
  if (state.session?.id === hit.session_id) {
    closeDrawer();
    revealPending();
  } else {
    navigate(hit.session_id);
  }
}
async function revealPending() {
  if (!state.reveal || state.reveal.session !== state.session?.id) return;
  const { session, message } = state.reveal;
  state.reveal = null;
  if (conversation.reveal(message)) return;
  if (state.turn || state.replaying) {
    toast("That message is on another version of this conversation: open it again when Navi has answered.", "info");
    return;
  }
  try {
    await api.branch(session, message);
  } catch (error) {
    toast(error.status === 404 ? "That message is not there any more." : `Could not show it: ${error.message}`);
    return;
  }
  await redrawHistory(session);
  if (state.session?.id === session && !conversation.reveal(message)) toast("That message is not shown here any more.", "info");
}
function currentRouteId() {
  const match = location.hash.match(/^#\/s\/([\w-]+)(?:\?m=([\w-]+))?$/);
  if (match?.[2]) {
    state.reveal = { session: match[1], message: match[2] };
    history.replaceState(null, "", `#/s/${match[1]}`);
  }
  return match ? match[1] : null;
}
async function createSession() {
  const toggle = $3("temporary-toggle");
  const created = await api.create(picker.draft || void 0, { temporary: toggle.checked });
  toggle.checked = false;
  if (!created.temporary) await sidebar.refresh();
  return created.session_id;
}
function dropTemporary(session, { closing = false } = {}) {
  if (!session?.temporary) return;
  if (closing) {
    fetch(`/sessions/${session.id}`, { method: "DELETE", credentials: "same-origin", keepalive: true }).catch(() => {
    });
  } else {
    api.remove(session.id).catch(() => {
    });
  }
}
window.addEventListener("pagehide", () => dropTemporary(state.session, { closing: true }));
function ensureSession() {
  if (state.session) return Promise.resolve(state.session.id);
  state.creating ??= (async () => {
    const id = await createSession();
    await openSession(id, { fresh: true });
    if (!state.session?.temporary) history.replaceState(null, "", `#/s/${id}`);
    return id;
  })().finally(() => {
    state.creating = null;
  });
  return state.creating;
}
function closeSession() {
  state.socket?.close();
  dropTemporary(state.session);
  Object.assign(state, {
    socket: null,
    pending: null,
    retrying: false,
    session: null,
    waiting: null,
    unanswered: 0
  });
  queueView.clear();
  endTurn();
  light.setSocket("none");
  watch.setSocketOpen(false);
}
function readIfShown() {
  const id = state.session?.id;
  if (!id || document.visibilityState !== "visible") return;
  if (!state.session.unread && !sidebar.isUnread(id)) return;
  state.session.unread = false;
  sidebar.setUnread(id, false);
  api.markRead(id).catch(() => {
  });
}
var ENDED = /* @__PURE__ */ new Set(["ok", "error", "skipped"]);
function scheduleEvent(event) {
  const shown = event.session_id && state.session?.id === event.session_id;
  if (event.unread && event.session_id) {
    if (shown) state.session.unread = true;
    sidebar.setUnread(event.session_id, true);
  }
  if (shown && ENDED.has(event.status)) readIfShown();
  const seen = shown && document.visibilityState === "visible" && document.hasFocus();
  if (!seen && (ENDED.has(event.status) || event.status === "waiting_approval")) notifier.show(event);
  panel.event(event);
}
async function openSession(id, { fresh = false } = {}) {
  if (state.reveal && state.reveal.session !== id) state.reveal = null;
  if (!fresh) state.queued = null;
  closeSession();
  if (!fresh) composer.dropUploads();
  const ticket = ++state.opening;
  let detail;
  try {
    detail = await api.session(id);
  } catch (error) {
    if (ticket !== state.opening) return;
    toast(error.status === 404 ? "That conversation no longer exists." : `Could not open it: ${error.message}`);
    navigate(null);
    return;
  }
  if (ticket !== state.opening) return;
  const { messages, ...session } = detail;
  setHeader(session);
  sidebar.select(id);
  $3("empty-state").hidden = true;
  $3("messages").hidden = false;
  turnsFrom(messages);
  picker.answeredBy(messages.findLast((m2) => m2.role === "assistant" && m2.metadata?.model)?.metadata.model);
  setMeter(session.context_token_count, session.max_context_tokens, session.compress_at_tokens);
  citations.setSession(id);
  if (session.active) {
    const last = messages.map((m2) => m2.role === "user" && !m2.metadata?.steered).lastIndexOf(true);
    conversation.renderHistory(last >= 0 ? messages.slice(0, last + 1) : messages);
    state.replaying = true;
    state.replayFrom = last >= 0 ? Date.parse(messages[last].created_at) || Date.now() : Date.now();
    composer.setRunning(true);
  } else {
    conversation.renderHistory(messages);
    state.unanswered = messages.at(-1)?.role === "user" ? messages.length : 0;
  }
  queueView.reading();
  api.queue(id).then((q3) => {
    if (ticket === state.opening) queueView.read(q3.messages);
  }, () => {
    if (ticket === state.opening) queueView.read(null);
  });
  state.socket = new SessionSocket(id, {
    onFrame: (frame) => {
      handleFrame(frame);
      if (!state.pending) clearWaiting();
    },
    onOpen: ({ reconnected }) => {
      voice.socketOpened();
      resync(id, reconnected);
    },
    onStatus: (status) => {
      light.setSocket(status);
      watch.setSocketOpen(status === "open");
    },
    onGone: () => {
      toast("This conversation was deleted.");
      navigate(null);
    }
  });
  watch.setSocketOpen(true);
  readIfShown();
  if (!fresh) closeDrawer();
  revealPending();
}
function resync(id, reconnected) {
  if (state.unanswered) answeredMeanwhile(id, state.unanswered);
  state.unanswered = 0;
  if (!state.replaying && !(reconnected && state.turn)) return;
  setTimeout(async () => {
    if (state.session?.id !== id || !state.replaying && !state.turn) return;
    const detail = await api.session(id).catch(() => null);
    if (!detail || detail.active || state.session?.id !== id) return;
    conversation.renderHistory(detail.messages);
    turnsFrom(detail.messages);
    setMeter(detail.context_token_count, detail.max_context_tokens, detail.compress_at_tokens);
    endTurn();
  }, reconnected ? 0 : 1500);
}
async function answeredMeanwhile(id, drawn) {
  const detail = await api.session(id).catch(() => null);
  if (!detail || detail.active || state.session?.id !== id || state.turn || state.pending) return;
  if (detail.messages.length === drawn) return;
  conversation.renderHistory(detail.messages);
  turnsFrom(detail.messages);
  setMeter(detail.context_token_count, detail.max_context_tokens, detail.compress_at_tokens);
}
async function route() {
  const id = currentRouteId();
  if (id && id === state.session?.id) return;
  if (id) {
    await openSession(id);
  } else {
    state.opening += 1;
    state.queued = null;
    closeSession();
    citations.setSession(null);
    setHeader(null);
    setMeter(0, 0);
    conversation.clear();
    $3("messages").hidden = true;
    $3("empty-state").hidden = false;
    sidebar.select(null);
  }
}
function showWaiting(message) {
  if (state.waiting?.[0].isConnected) return;
  $3("empty-state").hidden = true;
  $3("messages").hidden = false;
  state.waiting = conversation.addPending(message);
}
function clearWaiting() {
  if (!state.waiting) return;
  for (const node of state.waiting) node.remove();
  state.waiting = null;
  if (!state.session) {
    $3("messages").hidden = true;
    $3("empty-state").hidden = false;
  }
}
function showQueued() {
  const line = state.waiting?.[1]?.querySelector(".status-line");
  if (!line) return;
  line.textContent = "Navi is not reachable: your message goes out as soon as it is back (Stop takes it back).";
  line.classList.add("queued");
}
function showSending() {
  const line = state.waiting?.[1]?.querySelector(".status-line");
  if (!line) return;
  line.textContent = statusText("starting");
  line.classList.remove("queued");
}
async function send(message) {
  const ticket = {};
  state.queued = ticket;
  const voided = () => state.queued !== ticket;
  showWaiting(message);
  composer.setRunning(true);
  try {
    for (; ; ) {
      try {
        await ensureSession();
        break;
      } catch (error) {
        if (!error.network || voided()) throw error;
        showQueued();
        await light.whenOnline();
        if (voided()) return;
        showSending();
      }
    }
    if (voided()) return;
    showWaiting(message);
    composer.setRunning(true);
    if (!state.socket.ready) {
      showQueued();
      await state.socket.whenOpen(0);
      if (voided()) return;
      showSending();
    }
    state.queued = null;
    state.pending = message;
    state.socket.send({ type: "message", ...message });
  } catch (error) {
    if (voided()) return;
    Object.assign(state, { queued: null, pending: null });
    clearWaiting();
    composer.setRunning(false);
    toast(error.message);
  }
}
function retry() {
  if (!state.socket || state.turn) return;
  try {
    state.socket.send({ type: "retry" });
    state.retrying = true;
    composer.setRunning(true);
  } catch (error) {
    toast(error.message);
  }
}
function answerApproval(callId, decision) {
  try {
    state.socket.send({ type: "approval", call_id: callId, decision });
    return true;
  } catch (error) {
    toast(error.message);
    return false;
  }
}
function answerElicitation(id, action, content) {
  try {
    state.socket.send({ type: "elicitation", elicitation_id: id, action, ...content ? { content } : {} });
    return true;
  } catch (error) {
    toast(error.message);
    return false;
  }
}
async function stop() {
  if (state.queued) {
    Object.assign(state, { queued: null, pending: null });
    clearWaiting();
    composer.setRunning(false);
    return;
  }
  if (!state.session) return;
  try {
    await api.stop(state.session.id);
  } catch (error) {
    toast(`Could not stop: ${error.message}`);
  }
}
function liveTurn() {
  if (!state.turn) state.turn = conversation.startTurn();
  return state.turn;
}
function endTurn() {
  const redraw = state.branchTurn;
  Object.assign(state, {
    turn: null,
    replaying: false,
    retrying: false,
    branching: null,
    branchTurn: false,
    continuing: false
  });
  composer.setRunning(false);
  if (redraw && state.session) redrawHistory(state.session.id);
}
async function sendBranchFrame(frame) {
  if (!state.socket || state.turn || state.branching) {
    toast("Wait until Navi has answered.");
    return false;
  }
  const socket = state.socket;
  state.branching = frame;
  composer.setRunning(true);
  try {
    await socket.whenOpen();
    if (state.socket !== socket) return false;
    socket.send(frame);
  } catch (error) {
    if (state.socket !== socket) return false;
    if (state.branching === frame) state.branching = null;
    composer.setRunning(false);
    toast(error.message);
    return false;
  }
  return true;
}
function editMessage(id, content) {
  return sendBranchFrame({ type: "edit", message_id: id, content });
}
function regenerate(id) {
  return sendBranchFrame({ type: "regenerate", message_id: id });
}
async function switchBranch(id) {
  const sid = state.session?.id;
  if (!sid || state.turn) return;
  try {
    await api.branch(sid, id);
  } catch (error) {
    toast(error.message);
    return;
  }
  await redrawHistory(sid);
}
async function forkAt(id, answerTo = null) {
  const sid = state.session?.id;
  if (!sid) return;
  try {
    if (answerTo) {
      const { messages } = await api.session(sid);
      const at2 = messages.findIndex((m2) => m2.id === answerTo);
      const next = messages.findIndex((m2, i2) => i2 > at2 && m2.role === "user");
      id = messages.at(next >= 0 ? next - 1 : -1)?.id ?? answerTo;
    }
    const made = await api.fork(sid, id);
    sidebar.refresh();
    navigate(made.session_id);
  } catch (error) {
    toast(error.message);
  }
}
async function redrawHistory(sid) {
  const detail = await api.session(sid).catch(() => null);
  if (!detail || state.session?.id !== sid || state.turn) return;
  conversation.renderHistory(detail.messages);
  turnsFrom(detail.messages);
  setMeter(detail.context_token_count, detail.max_context_tokens, detail.compress_at_tokens);
}
function branchStarted(frame) {
  state.branchTurn = true;
  const sent = state.branching;
  if (frame.retry && frame.message) conversation.cutAfter(frame.message.id, { keep: true });
  else if (sent?.type === "edit") conversation.cutAfter(sent.message_id, { keep: false });
  else if (frame.parent_id === null) conversation.clear();
  else conversation.cutAfter(frame.parent_id, { keep: true });
  return !frame.retry && frame.message ? conversation.addAnnouncedUser(frame.message) : null;
}
function sessionUpdated(frame) {
  sidebar.apply(frame);
  if (state.session?.id !== frame.session_id) return;
  if (frame.deleted) return;
  setHeader({ ...state.session, name: frame.name, profile_id: frame.profile_id, pinned: frame.pinned });
}
function handleFrame(frame) {
  switch (frame.type) {
    case "stream_start": {
      if (frame.continues) {
        state.turn = conversation.continueTurn() || conversation.startTurn();
        Object.assign(state, { replaying: false, retrying: false, continuing: true });
        composer.setRunning(true);
        conversation.scrollToEnd();
        break;
      }
      if (frame.message) queueView.remove(frame.message.id);
      let asked = null;
      if (frame.parent_id !== void 0) {
        asked = branchStarted(frame);
      } else if (frame.retry) {
        conversation.retryStarted();
      } else if (state.pending) {
        const { content, images, files } = state.pending;
        asked = conversation.addUser(content, images, files);
        watchSentDocuments(asked, composer.documents());
        state.pending = null;
        composer.clear();
      } else if (!state.replaying && frame.message) {
        asked = conversation.addAnnouncedUser(frame.message);
      }
      if (asked) conversation.liveActions(asked, frame.message);
      if (!state.replaying) voice.turnStarted(frame.run_id);
      state.turn = conversation.startTurn(state.replaying ? state.replayFrom : Date.now());
      state.turn.userId = frame.message?.id;
      Object.assign(state, { replaying: false, retrying: false });
      composer.setRunning(true);
      conversation.scrollToEnd();
      break;
    }
    case "thinking_delta":
      liveTurn().thinkingDelta(frame.delta);
      break;
    case "thinking_end":
      liveTurn().thinkingEnd();
      break;
    case "turn_thinking":
      liveTurn().turnThinking(frame.thinking, frame.is_subagent);
      break;
    case "plan_ready":
      liveTurn().plan(frame.plan);
      break;
    case "tool_started":
      liveTurn().toolStarted(frame.tool, frame.args, frame.call_id, frame.is_subagent);
      break;
    case "tool_call":
      liveTurn().toolCall(frame.tool, frame.args, frame.result, frame.success, frame.call_id, frame.is_subagent, frame.browser);
      break;
    case "approval_required":
      liveTurn().approvalRequired(frame, answerApproval);
      break;
    case "approval_resolved":
      liveTurn().approvalResolved(frame.call_id, frame.decision, frame.by);
      break;
    case "elicitation_required":
      liveTurn().elicitationRequired(frame, answerElicitation);
      break;
    case "elicitation_resolved":
      liveTurn().elicitationResolved(frame.elicitation_id, frame.action, frame.by);
      break;
    case "stream_delta":
      liveTurn().textDelta(frame.delta);
      break;
    case "stream_end":
      voice.turnEnded();
      liveTurn().finish(frame.content, frame.finish_reason);
      if (!state.continuing) conversation.answerActions(liveTurn(), frame.message_id);
      if (frame.finish_reason === "length") conversation.offerContinue(liveTurn(), frame.message_id);
      light.turnAnswered();
      picker.answeredBy(frame.model);
      addTurn(frame.usage);
      setMeter(frame.context_tokens, frame.max_context_tokens, frame.compress_at_tokens);
      endTurn();
      sidebar.refresh();
      break;
    case "stream_stopped":
      voice.turnEnded();
      liveTurn().stopped();
      if (!state.continuing) conversation.answerActions(liveTurn());
      if (frame.message_id) conversation.offerContinue(liveTurn(), frame.message_id);
      endTurn();
      sidebar.refresh();
      break;
    case "status":
      liveTurn().status(frame.phase, frame.detail);
      break;
    case "notice":
      liveTurn().info(frame.message);
      break;
    case "model_fallback":
      liveTurn().fallback(frame);
      break;
    case "context_compressed":
      conversation.addCompression(frame.messages_before, frame.messages_after);
      break;
    case "profile_switched":
      if (state.session) setHeader({ ...state.session, profile_id: frame.profile_id });
      break;
    case "transcript":
    case "speech":
    case "speech_end":
      voice.frame(frame);
      break;
    case "error":
      if (!voice.error(frame)) handleError(frame);
      break;
    case "session_updated":
      sessionUpdated(frame);
      break;
    case "schedule_run":
      watch.event(frame);
      break;
    case "job":
      jobChanged(frame);
      break;
    case "queued":
      if (frame.session_id !== state.session?.id) break;
      queueView.upsert(frame);
      if (state.pending?.content === frame.content) {
        state.pending = null;
        composer.clear();
      }
      break;
    case "queue_cancelled":
      if (frame.session_id === state.session?.id) queueView.remove(frame.message_id);
      break;
    case "steered":
      queueView.remove(frame.message_id);
      liveTurn().add(steeredMessage(frame.message));
      break;
    default:
      break;
  }
}
var REFUSALS = {
  busy: "Navi is still answering in this conversation (perhaps in another window). Your message is kept: send it once the answer is done.",
  nothing_to_retry: "There is nothing to retry: the failed turn was answered or removed.",
  nothing_to_continue: "There is nothing to continue: only the latest answer, cut off at its length limit or stopped, can be."
};
function handleError(frame) {
  if (frame.code === "not_queued" || frame.code === "queue_full") {
    toast(frame.message);
    return;
  }
  if (frame.code === "bad_answer" || frame.code === "elicitation_not_found") {
    if (!state.turn?.elicitationRefused(frame.elicitation_id, frame.message)) toast(frame.message);
    return;
  }
  if (frame.code === "approval_not_found") {
    if (state.turn?.isAsking(frame.call_id)) toast(frame.message);
    return;
  }
  if (frame.seq !== void 0 && state.continuing) {
    conversation.failTurn(liveTurn(), frame.message, false);
    endTurn();
    return;
  }
  if (frame.seq !== void 0 && frame.code !== "nothing_to_retry") {
    light.turnFailed(frame.code, frame.message);
    conversation.failTurn(liveTurn(), frame.message, true);
    state.pending = null;
    endTurn();
    return;
  }
  if (state.turn && frame.seq !== void 0) state.turn.node.remove();
  if (state.pending || state.retrying || state.turn || state.branching) {
    state.pending = null;
    endTurn();
  }
  toast(REFUSALS[frame.code] || frame.message);
}
function closeDrawer() {
  $3("sidebar").classList.remove("open");
}
var PHONE = window.matchMedia("(max-width: 760px)");
function openDrawer() {
  $3("sidebar").classList.add("open");
}
$3("open-sidebar").addEventListener("click", () => {
  openDrawer();
  $3("sessions").querySelector("button")?.focus();
});
function newConversation() {
  navigate(null);
  closeDrawer();
  $3("input").focus();
}
installShortcuts({
  dialog: $3("shortcuts"),
  openButton: $3("open-shortcuts"),
  closeButton: $3("close-shortcuts"),
  newConversation,
  search: () => {
    if (PHONE.matches) openDrawer();
    $3("session-search").focus();
    $3("session-search").select();
  },
  focusInput: () => {
    closeDrawer();
    $3("input").focus();
  }
});
for (const example of document.querySelectorAll("#examples .example")) {
  example.addEventListener("click", () => {
    if (composer.running) return;
    $3("input").value = example.dataset.prompt;
    $3("input").dispatchEvent(new Event("input"));
    composer.submit();
  });
}
document.querySelector(".main").addEventListener("click", (event) => {
  if (!$3("sidebar").classList.contains("open") || event.target.closest("#open-sidebar")) return;
  closeDrawer();
  event.preventDefault();
  event.stopPropagation();
}, true);
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || !$3("sidebar").classList.contains("open")) return;
  event.preventDefault();
  closeDrawer();
}, true);
for (const opener of ["open-schedules", "open-memory", "open-knowledge", "open-skills", "open-jobs", "open-settings", "open-shortcuts"]) $3(opener).addEventListener("click", closeDrawer);
$3("close-sidebar").addEventListener("click", () => {
  closeDrawer();
  $3("open-sidebar").focus();
});
$3("new-session").addEventListener("submit", (event) => {
  event.preventDefault();
  newConversation();
});
window.addEventListener("hashchange", route);
document.addEventListener("visibilitychange", readIfShown);
async function loadProfiles() {
  const profiles = await api.profiles();
  sidebar.setProfiles(profiles);
  picker.setProfiles(profiles);
  picker.show(state.session?.profile_id || picker.shown, state.session);
}
light.onBack = () => {
  loadProfiles().catch(() => {
  });
  sidebar.refresh().catch(() => {
  });
};
async function start() {
  fillIcons();
  try {
    await loadProfiles();
  } catch (error) {
    toast(`Navi is not answering: ${error.message}`);
  }
  await sidebar.refresh();
  light.start();
  $3("composer").hidden = false;
  composer.setRunning(false);
  await route();
  document.body.dataset.ready = "true";
}
start();
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => {
  });
  navigator.serviceWorker.addEventListener("message", (event) => {
    if (event.origin && event.origin !== location.origin) return;
    const data = event.data || {};
    if (data.type !== "navi-open" || typeof data.url !== "string") return;
    const match = data.url.match(/#\/s\/([\w-]+)(?:\?m=([\w-]+))?$/);
    if (!match) return navigate(null);
    if (match[2]) {
      state.reveal = { session: match[1], message: match[2] };
      if (state.session?.id === match[1]) return revealPending();
    }
    navigate(match[1]);
  });
}
