// The header's profile picker and model name: they show the open conversation's profile (or the
// draft's), and changing the picker changes that conversation's profile (PATCH /sessions/{id}) — or,
// in a draft, the profile its first message creates it with. The draft's choice is remembered in
// this browser (localStorage), so "New conversation" starts with the profile last picked for one.

import { api } from "./api.js";
import { el, toast } from "./dom.js";

const KEY = "navi.draftProfile";

export class ProfilePicker {
  constructor({ select, modelName, currentSession, onChanged }) {
    this.select = select;
    this.modelName = modelName;
    this.currentSession = currentSession; // () → the open session, or null in a draft
    this.onChanged = onChanged; // (updated session) → the page shows it
    this.profiles = [];
    this.shown = ""; // the profile id on screen
    select.addEventListener("change", () => this.changed());
  }

  setProfiles(profiles) {
    this.profiles = profiles;
    this.select.replaceChildren(...profiles.map((p) => el("option", { value: p.id, text: p.name })));
  }

  name(id) {
    return this.profiles.find((p) => p.id === id)?.name || id;
  }

  // The profile a draft's first message creates its conversation with.
  get draft() {
    const kept = localStorage.getItem(KEY);
    return this.profiles.some((p) => p.id === kept) ? kept : this.profiles[0]?.id || "";
  }

  // The header names the model: the one that wrote the conversation's latest answer (`answeredBy`),
  // else the one picked for the conversation (`session.model`, "backend:model"), else the profile's
  // for this user (the one they picked for a built-in profile in Settings, else its own).
  show(profileId, session = null) {
    const id = profileId || this.draft;
    if (id && ![...this.select.options].some((o) => o.value === id)) {
      this.select.append(el("option", { value: id, text: id })); // a profile this page was not told of
    }
    this.select.value = id;
    this.shown = id;
    if ((session?.id || null) !== this.sessionId || (session?.model || null) !== this.picked) this.answered = "";
    this.sessionId = session?.id || null;
    this.picked = session?.model || null;
    this.drawModel();
  }

  profileModel() {
    return this.profiles.find((p) => p.id === this.shown)?.model || "";
  }

  answeredBy(model) {
    this.answered = model || "";
    this.drawModel();
  }

  drawModel() {
    const profile = this.profiles.find((p) => p.id === this.shown);
    const [backend, ...rest] = (this.picked || "").split(":");
    const picked = rest.join(":");
    const model = this.answered || picked || profile?.model || "";
    this.modelName.textContent = model;
    const via = picked ? backend : profile?.llm_backend;
    this.modelName.title = !model ? ""
      : this.answered ? `The model that wrote the latest answer: ${model}`
      : `The model that answers: ${model}${via ? ` (${via})` : ""}${picked ? ", picked for this conversation"
        : profile?.model_choice && !profile.custom ? `, picked by you for ${profile.name}` : ""}`;
  }

  async changed() {
    const id = this.select.value;
    const session = this.currentSession();
    if (!session) {
      localStorage.setItem(KEY, id);
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
}
