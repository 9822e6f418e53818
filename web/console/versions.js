// Versions page (#/versions/TABLE): the table's versions as version/list/ answers them (number,
// timestamp, metadata), its tags as tags/list/ answers them (name -> version, manifest size), and
// the actions of the REST API on them: tags/create/ on a version, tags/delete/, and restore/ of a
// version (after a confirmation; the page shows the version the server answers, or its error).
import * as api from "./api.js";
import { bytes, el, main, reportError, showBanner, table, tableSelect } from "./ui.js";

function metadataText(m) {
  const entries = Object.entries(m || {});
  if (entries.length === 0) return el("span", { class: "muted" }, "none");
  return entries.map(([k, v]) => el("div", {}, `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`));
}

function localTime(rfc3339) {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString();
}

export function pageVersions(tableName) {
  const header = el("div", { class: "toolbar" }, "loading…");
  const forms = el("div", { class: "toolbar" });
  const action = el("div", { id: "version-action", class: "muted" });
  const out = el("div", { id: "versions-area" });
  main.replaceChildren(el("h2", {}, "Versions and tags"), header, forms, action, out);
  (async () => {
    try {
      const { sel, names } = await tableSelect(tableName, (t) => (location.hash = `#/versions/${encodeURIComponent(t)}`));
      if (!tableName) {
        if (names.length) location.replace(`#/versions/${encodeURIComponent(names[0])}`);
        else header.replaceChildren(el("span", { class: "muted" }, "no tables in this database"));
        return;
      }
      const tagName = el("input", { id: "tag-name", size: 16, placeholder: "tag name" });
      const tagVersion = el("input", { id: "tag-version", type: "number", min: 1, style: "width:6rem" });
      const createBtn = el("button", { id: "create-tag" }, "Create tag");
      const restoreVersion = el("input", { id: "restore-version", type: "number", min: 1, placeholder: "version", style: "width:6rem" });
      const restoreBtn = el("button", { id: "restore-btn" }, "Restore…");
      const refreshBtn = el("button", { id: "refresh-versions" }, "Refresh");
      const stamp = el("span", { class: "muted" });

      // Runs one action: its result (or the server's error) in the action line, then a reload.
      const act = async (button, busy, fn) => {
        if (button) button.disabled = true;
        action.className = "muted";
        action.textContent = busy;
        try {
          const text = await fn();
          action.className = "ok";
          action.replaceChildren(text);
        } catch (e) {
          reportError(e, action);
        } finally {
          if (button) button.disabled = false;
        }
        try {
          await load();
        } catch (e) {
          reportError(e, out);
        }
      };

      const readVersion = (input, what) => {
        const v = Number(input.value);
        if (!input.value.trim() || !Number.isInteger(v)) throw new Error(`enter the version ${what} (a whole number)`);
        return v;
      };

      const createTag = () =>
        act(createBtn, "creating the tag…", async () => {
          const name = tagName.value.trim();
          if (!name) throw new Error("enter a tag name");
          const version = readVersion(tagVersion, "to tag");
          await api.tablePost(tableName, "tags/create", { tag: name, version });
          tagName.value = "";
          return el("span", { id: "tag-result" }, `Tag “${name}” created on version ${version}.`);
        });

      const deleteTag = (name, version, button) => {
        if (!confirm(`Delete the tag “${name}” (version ${version}) of table “${tableName}”?`)) return;
        act(button, "deleting the tag…", async () => {
          await api.tablePost(tableName, "tags/delete", { tag: name });
          return el("span", { id: "tag-result" }, `Tag “${name}” deleted.`);
        });
      };

      const restore = (version, button) => {
        if (!confirm(`Restore table “${tableName}” to version ${version}? Restoring makes that version's data the table's current data.`)) return;
        act(button, `restoring version ${version}…`, async () => {
          const r = await api.tablePost(tableName, "restore", { version });
          return el("span", { id: "restore-result" }, `Restore of version ${version}: the table is at version ${r.version}.`);
        });
      };

      createBtn.addEventListener("click", createTag);
      tagName.addEventListener("keydown", (e) => e.key === "Enter" && createTag());
      restoreBtn.addEventListener("click", () => {
        try {
          restore(readVersion(restoreVersion, "to restore"), restoreBtn);
        } catch (e) {
          reportError(e, action);
        }
      });
      refreshBtn.addEventListener("click", () => load().catch((e) => reportError(e, out)));

      const load = async () => {
        const [desc, list, tags] = await Promise.all([
          api.tablePost(tableName, "describe", {}),
          api.tablePost(tableName, "version/list", {}),
          api.tablePost(tableName, "tags/list", {}),
        ]);
        const current = desc.version;
        const versions = list.versions || [];
        const tagEntries = Object.entries(tags || {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        const tagsOf = (v) => tagEntries.filter(([, t]) => t.version === v).map(([n]) => n);
        if (!tagVersion.value) tagVersion.value = current;
        out.replaceChildren(
          el(
            "div",
            { class: "cards" },
            el("div", { class: "card" }, "current version", el("b", { id: "current-version" }, current)),
            el("div", { class: "card" }, "versions listed", el("b", { id: "version-count" }, versions.length), el("small", { class: "muted" }, "by version/list/")),
            el("div", { class: "card" }, "tags", el("b", { id: "tag-count" }, tagEntries.length)),
          ),
          el("h3", {}, `Versions (${versions.length})`),
          table(
            ["version", "timestamp (UTC)", "local time", "metadata", "tags", ""],
            versions.map((v) =>
              el(
                "tr",
                { "data-version": v.version },
                el("td", { class: "num" }, v.version, v.version === current ? el("small", { class: "muted" }, " current") : null),
                el("td", { class: "ts" }, v.timestamp),
                el("td", { class: "muted" }, localTime(v.timestamp)),
                el("td", {}, metadataText(v.metadata)),
                el("td", {}, tagsOf(v.version).join(", ")),
                el(
                  "td",
                  {},
                  el("button", { class: "tag-this", onclick: () => ((tagVersion.value = v.version), tagName.focus()) }, "tag…"),
                  " ",
                  el("button", { class: "restore-this", onclick: (e) => restore(v.version, e.target) }, "restore…"),
                ),
              ),
            ),
            { id: "versions" },
          ),
          el("h3", {}, `Tags (${tagEntries.length})`),
          tagEntries.length === 0
            ? el("p", { class: "muted", id: "no-tags" }, "no tags")
            : table(
                ["tag", "version", "manifest size", ""],
                tagEntries.map(([name, t]) =>
                  el(
                    "tr",
                    { "data-tag": name },
                    el("td", {}, name),
                    el("td", { class: "num tag-version" }, t.version, t.version === current ? el("small", { class: "muted" }, " current") : null),
                    el("td", { class: "num" }, bytes(t.manifestSize)),
                    el(
                      "td",
                      {},
                      el("button", { class: "restore-tag", onclick: (e) => restore(t.version, e.target) }, "restore…"),
                      " ",
                      el("button", { class: "delete-tag", onclick: (e) => deleteTag(name, t.version, e.target) }, "delete"),
                    ),
                  ),
                ),
                { id: "tags" },
              ),
        );
        stamp.textContent = `refreshed ${new Date().toLocaleTimeString()}`;
        showBanner(null);
      };

      header.replaceChildren("table ", sel, refreshBtn, stamp);
      forms.replaceChildren(
        el("label", {}, "new tag ", tagName),
        el("label", {}, "on version ", tagVersion),
        createBtn,
        el("span", { class: "muted" }, "·"),
        el("label", {}, "restore version ", restoreVersion),
        restoreBtn,
      );
      await load();
    } catch (e) {
      reportError(e, header);
    }
  })();
  return null;
}
