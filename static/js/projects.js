// The project list's "New project" form: POST /api/v1/projects, then the new project's board.
"use strict";

(() => {
  const form = document.querySelector("[data-action=new-project]");
  const error = document.querySelector("[data-new-project-error]");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: form.elements.name.value.trim() };
    if (form.elements.prefix.value.trim()) body.prefix = form.elements.prefix.value.trim();
    form.querySelector("button").disabled = true;
    try {
      const { project } = await window.trackerApi.post("/api/v1/projects", body);
      window.location.assign(`/projects/${project.id}/board/`);
    } catch (refused) {
      error.textContent = `The project was not created. ${window.trackerApi.explain(refused)}.`;
      error.hidden = false;
      form.querySelector("button").disabled = false;
    }
  });
})();
