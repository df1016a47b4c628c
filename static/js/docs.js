// The documentation pages' writing (contributors and up; comments for every member): a new folder or article, the
// article edited as Markdown with a preview and saved with `If-Match` (a version saved meanwhile is shown, never
// overwritten unless asked), comments and uploads, all through the API. What the server renders is the page:
// after a write it is loaded again.
"use strict";

(() => {
  const api = window.trackerApi;
  const root = document.querySelector("[data-docs]");
  const docs = `/api/v1/projects/${root.dataset.projectId}/docs`;
  const articleUrl = root.dataset.articleId ? `${docs}/articles/${root.dataset.articleId}` : null;
  const errorLine = document.querySelector("[data-docs-error]");
  const form = (name) => document.querySelector(`[data-form="${name}"]`);

  function showError(error) {
    errorLine.textContent = error ? api.explain(error) : "";
    errorLine.hidden = !error;
  }

  async function attempt(call) {
    try {
      const answer = await call();
      showError(null);
      return answer;
    } catch (error) {
      showError(error);
      return null;
    }
  }

  const idOrNull = (value) => (value ? Number(value) : null);

  // ---- new folder, new article -----------------------------------------------------------------------------

  for (const name of ["new-article", "new-folder"]) {
    const opener = document.querySelector(`[data-action="${name}"]`);
    opener?.addEventListener("click", () => {
      const shown = form(name).hidden;
      form(name).hidden = !shown;
      opener.setAttribute("aria-expanded", String(shown));
      if (shown) form(name).elements.title.focus();
    });
  }

  form("new-folder")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { title, parent_id: parent } = event.target.elements;
    if (await attempt(() => api.post(`${docs}/folders`, { title: title.value.trim(), parent_id: idOrNull(parent.value) }))) {
      window.location.reload();
    }
  });

  form("new-article")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { title, folder_id: folder } = event.target.elements;
    const body = { title: title.value.trim() };
    if (folder.value) body.folder_id = Number(folder.value);
    const answer = await attempt(() => api.post(`${docs}/articles`, body));
    if (answer) window.location.assign(`/projects/${root.dataset.projectId}/docs/articles/${answer.article.id}/?edit`);
  });

  // ---- the article: edit with a preview, saved with If-Match ---------------------------------------------

  const editor = form("article");
  const view = document.querySelector("[data-article-view]");
  const conflict = editor?.querySelector("[data-conflict]");
  let base = null; // {etag, title, content}: the version the edit started from

  async function readBase() {
    const { data, etag } = await api.get(articleUrl, { withEtag: true });
    return { etag, title: data.article.title, content: data.article.content };
  }

  async function startEditing() {
    base = await attempt(readBase);
    if (!base) return;
    editor.elements.title.value = base.title;
    editor.elements.content.value = base.content;
    window.trackerMarkdown.write(editor.querySelector("[data-editor=markdown]"));
    conflict.hidden = true;
    view.hidden = true;
    editor.hidden = false;
    editor.elements.content.focus();
  }

  function stopEditing() {
    editor.hidden = true;
    view.hidden = false;
    document.querySelector("[data-action=edit-article]").focus();
  }

  async function save() {
    const body = { title: editor.elements.title.value.trim(), content: editor.elements.content.value };
    try {
      await api.post(articleUrl, body, { headers: { "If-Match": base.etag } });
      window.location.assign(window.location.pathname); // the page as the server renders it now
    } catch (error) {
      if (error.status !== 412) return showError(error);
      // Changed meanwhile: a change of the title or the content is shown and waits for the person; any other
      // change (a comment, an upload) is none of the editor's business, and the save goes on the new version.
      const newer = await attempt(readBase);
      if (!newer) return;
      const theirs = newer.title !== base.title || newer.content !== base.content;
      base = newer;
      if (theirs) await showConflict();
      else await save();
    }
  }

  async function showConflict() {
    const [{ html }, { versions }] = await Promise.all([
      api.post("/api/v1/markdown", { text: base.content }),
      api.get(`${articleUrl}/versions`),
    ]);
    const by = versions[0]?.edited_by?.name;
    conflict.querySelector("[data-conflict-by]").textContent = by ? `${by} edited it.` : "";
    // Safe to insert: the server's sanitized rendering (POST /api/v1/markdown).
    conflict.querySelector("[data-conflict-html]").innerHTML = `<h3></h3>${html}`;
    conflict.querySelector("[data-conflict-html] h3").textContent = base.title;
    conflict.hidden = false;
    conflict.querySelector("[data-action=take-theirs]").focus();
  }

  document.querySelector("[data-action=edit-article]")?.addEventListener("click", startEditing);
  editor?.addEventListener("submit", (event) => {
    event.preventDefault();
    save();
  });
  editor?.addEventListener("click", (event) => {
    const action = event.target.closest("[data-action]")?.dataset.action;
    if (action === "cancel-edit") stopEditing();
    else if (action === "save-mine") save();
    else if (action === "take-theirs") {
      editor.elements.title.value = base.title;
      editor.elements.content.value = base.content;
      conflict.hidden = true;
      editor.elements.content.focus();
    }
  });
  editor?.addEventListener("keydown", (event) => {
    if (event.key === "Escape") stopEditing();
  });
  if (editor && new URLSearchParams(window.location.search).has("edit")) startEditing();

  // ---- comments and uploads ------------------------------------------------------------------------------

  form("comment")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const message = event.target.elements.message.value;
    if (await attempt(() => api.post(`${articleUrl}/comments`, { message }))) window.location.reload();
  });

  document.querySelector("[data-docs-upload]")?.addEventListener("change", async (event) => {
    const files = event.target.files;
    if (!files.length) return;
    const data = new FormData();
    for (const file of files) data.append("files[]", file);
    document.querySelector("[data-upload-status]").textContent = "Uploading…";
    if (await attempt(() => api.post(`${articleUrl}/attachments`, data))) window.location.reload();
    else document.querySelector("[data-upload-status]").textContent = "";
  });
})();
