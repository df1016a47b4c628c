// Markdown editors (`[data-editor="markdown"]`: a textarea, a "Preview" toggle and a preview area): the preview
// is the service's own rendering (POST /api/v1/markdown, the renderer and sanitizer every page shows Markdown
// through), never HTML built here. `trackerMarkdown.write(editor)` goes back to the textarea.
"use strict";

window.trackerMarkdown = (() => {
  const api = window.trackerApi;

  function parts(editor) {
    return {
      toggle: editor.querySelector("[data-md-preview-toggle]"),
      textarea: editor.querySelector("textarea"),
      preview: editor.querySelector("[data-md-preview]"),
    };
  }

  function write(editor) {
    const { toggle, textarea, preview } = parts(editor);
    toggle.setAttribute("aria-pressed", "false");
    preview.hidden = true;
    textarea.hidden = false;
  }

  async function preview(editor) {
    const { toggle, textarea, preview: shown } = parts(editor);
    toggle.setAttribute("aria-pressed", "true");
    shown.textContent = "Rendering…";
    shown.hidden = false;
    textarea.hidden = true;
    try {
      const { html } = await api.post("/api/v1/markdown", { text: textarea.value });
      // Safe to insert: rendered with raw HTML escaped and sanitized by an allow-list on the server.
      shown.innerHTML = html || "<p>Nothing to preview.</p>";
      for (const link of shown.querySelectorAll("a[href]")) link.target = "_blank";
      editor.dispatchEvent(new CustomEvent("markdown:previewed", { bubbles: true }));
    } catch (error) {
      shown.textContent = `No preview. ${api.explain(error)}.`;
    }
  }

  document.addEventListener("click", (event) => {
    const toggle = event.target.closest("[data-editor=markdown] [data-md-preview-toggle]");
    if (!toggle) return;
    const editor = toggle.closest("[data-editor=markdown]");
    if (toggle.getAttribute("aria-pressed") === "true") {
      write(editor);
      parts(editor).textarea.focus();
    } else preview(editor);
  });

  return { write, preview };
})();
