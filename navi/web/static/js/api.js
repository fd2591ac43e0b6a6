// REST calls to Navi. Same origin, cookie credentials; errors become exceptions with Navi's message.
// Every call also tells `connectivity` whether Navi answered, for the header's status light.

export class ApiError extends Error {
  constructor(status, message, { network = false } = {}) {
    super(message);
    this.status = status;
    this.network = network; // the request got no answer (Navi down, network gone)
  }
}

// Whether Navi answers: "offline" when a request got no answer, "online" when one did.
export const connectivity = new EventTarget();

async function request(method, path, body, { raw = false } = {}) {
  const options = { method, credentials: "same-origin", headers: {} };
  if (body instanceof FormData) {
    options.body = body;
  } else if (body instanceof Blob) { // a file sent as it is (a skill's zip)
    options.headers["Content-Type"] = body.type || "application/octet-stream";
    options.body = body;
  } else if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch { // no answer at all: Navi is down or the network is gone
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
    } catch { /* not JSON */ }
    throw new ApiError(response.status, detail);
  }
  return raw ? response : response.json();
}

export const api = {
  pushKey: () => request("GET", "/push/key"),
  jobs: () => request("GET", "/jobs"),
  notifySettings: () => request("GET", "/push/settings"),
  saveNotifySettings: (settings) => request("PUT", "/push/settings", settings),
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
  setOptions: (id, options) => request("PATCH", `/sessions/${id}`, options), // model, system_prompt
  instructions: () => request("GET", "/agents/instructions"),
  setInstructions: (body) => request("PUT", "/agents/instructions", body),
  createProfile: (spec) => request("POST", "/agents/profiles", spec),
  updateProfile: (id, spec) => request("PUT", `/agents/profiles/${encodeURIComponent(id)}`, spec),
  renameFolder: (folder, to) => request("POST", "/sessions/folders/rename", { folder, to }),
  pickModel: (id, model) => request("PUT", `/agents/profiles/${encodeURIComponent(id)}/model`, { model }),
  deleteProfile: (id) => request("DELETE", `/agents/profiles/${encodeURIComponent(id)}`, undefined, { raw: true }),
  pin: (id, pinned) => request("PATCH", `/sessions/${id}/pin`, { pinned }),
  remove: (id) => request("DELETE", `/sessions/${id}`),
  rate: (id, messageId, rating) => request("PUT", `/sessions/${id}/messages/${encodeURIComponent(messageId)}/feedback`, { rating }),
  exportRaw: (id, format = "json") => request("GET", `/sessions/${id}/export?format=${format}`, undefined, { raw: true }),
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
  search: (q, limit = 20) => request("GET", `/search?q=${encodeURIComponent(q)}&limit=${limit}`),
  facts: () => request("GET", "/memory/facts"),
  memoryFacts: (q = "") => request("GET", `/memory/facts?limit=1000${q ? `&q=${encodeURIComponent(q)}` : ""}`),
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
  forget: (tool, program) =>
    request("DELETE", `/approvals/remembered/${encodeURIComponent(tool)}${program ? `?program=${encodeURIComponent(program)}` : ""}`),
  logout: () => request("POST", "/logout", undefined, { raw: true }),
  // Documents (the Knowledge panel, citations): collections, their documents, search, attaching.
  collections: () => request("GET", "/collections"),
  createCollection: (name) => request("POST", "/collections", { name }),
  deleteCollection: (id) => request("DELETE", `/collections/${id}`, undefined, { raw: true }),
  documents: (collectionId) => request("GET", `/documents?collection=${encodeURIComponent(collectionId)}`),
  document: (id) => request("GET", `/documents/${id}`),
  deleteDocument: (id) => request("DELETE", `/documents/${id}`, undefined, { raw: true }),
  reindexDocument: (id) => request("POST", `/documents/${id}/reindex`),
  addDocuments: (collectionId, files) => {
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    return request("POST", `/collections/${collectionId}/documents`, form);
  },
  searchDocuments: ({ q, collection, document, limit = 5 }) => {
    const query = new URLSearchParams({ q, limit: String(limit) });
    if (collection) query.set("collection", collection);
    if (document) query.set("document", document);
    return request("GET", `/documents/search?${query}`);
  },
  chunk: (id) => request("GET", `/documents/chunks/${id}`),
  sessionCollections: (sid) => request("GET", `/sessions/${sid}/collections`),
  attachCollection: (sid, cid) => request("PUT", `/sessions/${sid}/collections/${cid}`, undefined, { raw: true }),
  // Agent Skills (the Skills panel): list, view, install from a zip, turn on and off, remove.
  skills: () => request("GET", "/skills"),
  skill: (name) => request("GET", `/skills/${encodeURIComponent(name)}`),
  installSkill: (file, replace = false) =>
    request("POST", `/skills${replace ? "?replace=true" : ""}`, new Blob([file], { type: "application/zip" })),
  setSkill: (name, enabled) => request("PATCH", `/skills/${encodeURIComponent(name)}`, { enabled }),
  removeSkill: (name) => request("DELETE", `/skills/${encodeURIComponent(name)}`, undefined, { raw: true }),
  browserProfiles: () => request("GET", "/browser/profiles"),
  forgetBrowserProfile: (name) =>
    request("DELETE", `/browser/profiles/${encodeURIComponent(name)}`, undefined, { raw: true }),
  detachCollection: (sid, cid) => request("DELETE", `/sessions/${sid}/collections/${cid}`, undefined, { raw: true }),
  attachToProfile: (cid, pid) => request("PUT", `/collections/${cid}/profiles/${encodeURIComponent(pid)}`, undefined, { raw: true }),
  detachFromProfile: (cid, pid) => request("DELETE", `/collections/${cid}/profiles/${encodeURIComponent(pid)}`, undefined, { raw: true }),
};
