// The project's settings page (managers): general settings, statuses (reordered by drag with SortableJS or by the
// arrows), tags, members and webhooks, each read from and written to the API the page shares with every client.
// A section says what happened in its status line; a refused change shows the API's reason and is drawn again
// as the API has it.
"use strict";

(() => {
  const api = window.trackerApi;
  const { project_id: projectId, owner_id: ownerId, user_id: userId } =
    JSON.parse(document.getElementById("settings-data").textContent);
  const base = `/api/v1/projects/${projectId}`;
  const section = (name) => document.querySelector(`[data-settings="${name}"]`);
  const listOf = (name) => document.querySelector(`[data-list="${name}"]`);
  const formOf = (name) => document.querySelector(`[data-form="${name}"]`);

  function say(name, message, failed = false) {
    const line = section(name).querySelector("[data-section-status]");
    line.textContent = message;
    line.classList.toggle("error", failed);
  }

  // One change: the call, then what the section says. A refusal is explained and the section drawn again.
  async function change(name, call, done, redraw) {
    try {
      const answer = await call();
      if (done) say(name, done);
      return answer ?? true;
    } catch (error) {
      say(name, api.explain(error), true);
      await redraw?.();
      return null;
    }
  }

  function fromTemplate(id) {
    return document.getElementById(id).content.firstElementChild.cloneNode(true);
  }

  function field(row, name) {
    return row.querySelector(`[data-field="${name}"]`);
  }

  function label(element, text) {
    element.setAttribute("aria-label", text);
    return element;
  }

  // ---- general ---------------------------------------------------------------------------------------------

  formOf("general").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const body = {
      name: form.elements.name.value.trim(), prefix: form.elements.prefix.value.trim(),
      description: form.elements.description.value, docs_enabled: form.elements.docs_enabled.checked,
      estimation_mode: form.elements.estimation_mode.value,
    };
    const answer = await change("general", () => api.post(`${base}/update`, body), "Saved.");
    if (answer) {
      form.elements.prefix.value = answer.project.prefix;
      document.querySelector("[data-project-prefix]").textContent = answer.project.prefix;
    }
  });

  // ---- statuses --------------------------------------------------------------------------------------------

  async function loadStatuses() {
    const { statuses } = await api.get(`${base}/statuses`);
    listOf("statuses").replaceChildren(...statuses.map(statusRow));
  }

  function statusRow(status) {
    const row = fromTemplate("status-row");
    row.dataset.statusSlug = status.slug;
    label(field(row, "color"), `Colour of ${status.label}`).value = status.color;
    label(field(row, "label"), `Name of the status ${status.slug}`).value = status.label;
    field(row, "slug").textContent = status.slug;
    field(row, "hidden").checked = status.hidden;
    field(row, "hidden").setAttribute("aria-label", `Hide ${status.label} from the board`);
    label(row.querySelector("[data-action=up]"), `Move ${status.label} up`);
    label(row.querySelector("[data-action=down]"), `Move ${status.label} down`);
    label(row.querySelector("[data-action=delete]"), `Delete the status ${status.label}`);
    return row;
  }

  const statusSlugs = () => [...listOf("statuses").children].map((row) => row.dataset.statusSlug);

  function sortStatuses(focus) {
    return change("statuses", () => api.post(`${base}/statuses/sort`, { slugs: statusSlugs() }), "Order saved.",
                  loadStatuses).then(() => focus?.focus());
  }

  listOf("statuses").addEventListener("change", (event) => {
    const row = event.target.closest("[data-status-slug]");
    const name = event.target.dataset.field;
    if (!row || !name) return; // SortableJS sends the list a "change" event of its own while dragging
    const value = name === "hidden" ? event.target.checked : event.target.value.trim();
    if (name === "label" && !value) return loadStatuses();
    change("statuses", () => api.post(`${base}/statuses/${row.dataset.statusSlug}/update`, { [name]: value }),
           "Saved.", loadStatuses);
  });

  listOf("statuses").addEventListener("click", async (event) => {
    const button = event.target.closest("[data-action]");
    if (!button) return;
    const row = button.closest("[data-status-slug]");
    const name = field(row, "label").value;
    if (button.dataset.action === "delete") {
      if (!await window.trackerConfirm({ title: `Delete the status ${name}?`, yes: "Delete",
                                         text: "Its column leaves the board. Only an empty column can go." })) return;
      if (await change("statuses", () => api.post(`${base}/statuses/${row.dataset.statusSlug}/delete`),
                       `${name} deleted.`)) row.remove();
      return;
    }
    const sibling = button.dataset.action === "up" ? row.previousElementSibling : row.nextElementSibling;
    if (!sibling) return;
    if (button.dataset.action === "up") sibling.before(row);
    else sibling.after(row);
    sortStatuses(button);
  });

  window.Sortable.create(listOf("statuses"), {
    handle: ".drag-handle", animation: 120, forceFallback: true, ghostClass: "card-placeholder",
    onEnd: (event) => {
      if (event.oldIndex !== event.newIndex) sortStatuses();
    },
  });

  formOf("add-status").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const body = { label: form.elements.label.value.trim(), color: form.elements.color.value };
    const answer = await change("statuses", () => api.post(`${base}/statuses`, body), `${body.label} added.`);
    if (answer) {
      listOf("statuses").append(statusRow(answer.status));
      form.elements.label.value = "";
    }
  });

  // ---- tags ------------------------------------------------------------------------------------------------

  async function loadTags() {
    const { tags } = await api.get(`${base}/tags`);
    listOf("tags").replaceChildren(...tags.map(tagRow));
  }

  function tagRow(tag) {
    const row = fromTemplate("tag-row");
    row.dataset.tagId = tag.id;
    label(field(row, "color"), `Colour of the tag ${tag.name}`).value = tag.color;
    label(field(row, "name"), `Name of the tag ${tag.name}`).value = tag.name;
    label(row.querySelector("[data-action=delete]"), `Delete the tag ${tag.name}`);
    return row;
  }

  listOf("tags").addEventListener("change", (event) => {
    const row = event.target.closest("[data-tag-id]");
    const name = event.target.dataset.field;
    const value = event.target.value.trim();
    if (!value) return loadTags();
    change("tags", () => api.post(`${base}/tags/${row.dataset.tagId}/update`, { [name]: value }), "Saved.",
           loadTags);
  });

  listOf("tags").addEventListener("click", async (event) => {
    if (!event.target.closest("[data-action=delete]")) return;
    const row = event.target.closest("[data-tag-id]");
    const name = field(row, "name").value;
    if (!await window.trackerConfirm({ title: `Delete the tag ${name}?`, yes: "Delete",
                                       text: "It is taken off every ticket that has it." })) return;
    if (await change("tags", () => api.post(`${base}/tags/${row.dataset.tagId}/delete`), `${name} deleted.`)) {
      row.remove();
    }
  });

  formOf("add-tag").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const body = { name: form.elements.name.value.trim(), color: form.elements.color.value };
    const answer = await change("tags", () => api.post(`${base}/tags`, body), `${body.name} added.`);
    if (answer) {
      listOf("tags").append(tagRow(answer.tag));
      form.elements.name.value = "";
    }
  });

  // ---- members ---------------------------------------------------------------------------------------------

  async function loadMembers() {
    const [{ members }] = await Promise.all([api.get(`${base}/members`), loadInvitations()]);
    listOf("members").replaceChildren(...members.map(memberRow));
  }

  function memberRow(member) {
    const row = fromTemplate("member-row");
    const owner = member.id === ownerId;
    row.dataset.memberId = member.id;
    field(row, "name").textContent = member.id === userId ? `${member.name} (you)` : member.name;
    field(row, "owner").hidden = !owner;
    const role = label(field(row, "role"), `Role of ${member.name}`);
    role.value = member.role;
    role.disabled = owner; // the owner stays a manager
    const remove = label(row.querySelector("[data-action=remove]"), `Remove ${member.name} from the project`);
    if (owner) remove.remove();
    return row;
  }

  listOf("members").addEventListener("change", async (event) => {
    const row = event.target.closest("[data-member-id]");
    const role = event.target.value;
    const name = field(row, "name").textContent;
    await change("members", () => api.post(`${base}/members/${row.dataset.memberId}/update`, { role }),
                 `${name} is now ${role}.`, loadMembers);
    if (Number(row.dataset.memberId) === userId && role !== "manager") window.location.assign("/projects/");
  });

  listOf("members").addEventListener("click", async (event) => {
    if (!event.target.closest("[data-action=remove]")) return;
    const row = event.target.closest("[data-member-id]");
    const name = field(row, "name").textContent;
    if (!await window.trackerConfirm({ title: `Remove ${name}?`, yes: "Remove",
                                       text: "They lose access to the project at once." })) return;
    if (!await change("members", () => api.post(`${base}/members/${row.dataset.memberId}/delete`),
                      `${name} removed.`, loadMembers)) return;
    if (Number(row.dataset.memberId) === userId) window.location.assign("/projects/");
    else row.remove();
  });

  // ---- invitations (in the members section) ---------------------------------------------------------------

  async function loadInvitations() {
    const { invitations } = await api.get(`${base}/invitations`);
    listOf("invitations").replaceChildren(...invitations.map(invitationRow));
    showWhetherInvited();
  }

  function showWhetherInvited() {
    section("members").querySelector("[data-invitations-empty]").hidden = listOf("invitations").children.length > 0;
  }

  function invitationRow(invitation) {
    const row = fromTemplate("invitation-row");
    row.dataset.invitationId = invitation.id;
    field(row, "email").textContent = invitation.email;
    field(row, "role").textContent = invitation.role;
    field(row, "expires").textContent = `until ${invitation.expires_at.slice(0, 16)} UTC`;
    label(row.querySelector("[data-action=revoke]"), `Revoke the invitation of ${invitation.email}`);
    return row;
  }

  formOf("invite").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const body = { email: form.elements.email.value.trim(), role: form.elements.role.value };
    const answer = await change("members", () => api.post(`${base}/invitations`, body),
                                `Invitation sent to ${body.email}.`);
    if (!answer) return;
    listOf("invitations").prepend(invitationRow(answer.invitation));
    showWhetherInvited();
    form.elements.email.value = "";
  });

  listOf("invitations").addEventListener("click", async (event) => {
    if (!event.target.closest("[data-action=revoke]")) return;
    const row = event.target.closest("[data-invitation-id]");
    const email = field(row, "email").textContent;
    if (!await window.trackerConfirm({ title: `Revoke the invitation of ${email}?`, yes: "Revoke",
                                       text: "Its link stops working at once." })) return;
    if (!await change("members", () => api.post(`/api/v1/invitations/${row.dataset.invitationId}/revoke`),
                      `The invitation of ${email} is revoked.`, loadInvitations)) return;
    row.remove();
    showWhetherInvited();
  });

  // ---- webhooks ---------------------------------------------------------------------------------------------

  async function loadWebhooks() {
    const { webhooks } = await api.get(`${base}/webhooks`);
    listOf("webhooks").replaceChildren(...webhooks.map(webhookRow));
  }

  function webhookRow(webhook) {
    const row = fromTemplate("webhook-row");
    row.dataset.webhookId = webhook.id;
    field(row, "url").textContent = webhook.url;
    label(field(row, "active"), `${webhook.url} active`).checked = webhook.active;
    const events = webhook.events.includes("*") ? "every event" : webhook.events.join(", ");
    field(row, "summary").textContent = [webhook.description, `Sends ${events}.`].filter(Boolean).join(" · ");
    field(row, "disabled").hidden = !webhook.disabled_reason;
    field(row, "disabled").textContent = webhook.disabled_reason ?? "";
    return row;
  }

  function showSecret(url, secret) {
    const box = section("webhooks").querySelector("[data-webhook-secret]");
    box.querySelector("[data-secret-for]").textContent = url;
    box.querySelector("[data-secret-value]").textContent = secret;
    box.hidden = false;
    box.querySelector("button").focus();
  }

  const webhookUrl = (row) => `/api/v1/webhooks/${row.dataset.webhookId}`;

  async function loadDeliveries(row) {
    const target = field(row, "deliveries");
    try {
      const { deliveries } = await api.get(`${webhookUrl(row)}/deliveries?limit=10`);
      target.replaceChildren(deliveries.length ? deliveriesTable(deliveries) : muted("No deliveries yet."));
    } catch (error) {
      target.replaceChildren(muted(api.explain(error)));
    }
  }

  function muted(text) {
    return Object.assign(document.createElement("p"), { className: "muted", textContent: text });
  }

  function deliveriesTable(deliveries) {
    const table = document.createElement("table");
    table.className = "table";
    table.innerHTML = "<thead><tr><th scope=col>Event</th><th scope=col>Status</th><th scope=col>Answer</th>" +
      "<th scope=col>Attempts</th><th scope=col>When</th><th scope=col><span class=visually-hidden>Action</span></th>" +
      "</tr></thead><tbody></tbody>";
    for (const delivery of deliveries) {
      const cells = [delivery.event, delivery.status, delivery.response_status ?? delivery.error ?? "—",
                     delivery.attempts, delivery.created_at];
      const line = table.tBodies[0].insertRow();
      for (const value of cells) line.insertCell().textContent = value;
      line.cells[1].dataset.deliveryStatus = delivery.status;
      const redeliver = Object.assign(document.createElement("button"), {
        type: "button", className: "link", textContent: "Redeliver",
      });
      redeliver.dataset.redeliver = delivery.id;
      redeliver.setAttribute("aria-label", `Redeliver ${delivery.event} #${delivery.seq ?? delivery.id}`);
      line.insertCell().append(redeliver);
    }
    return table;
  }

  listOf("webhooks").addEventListener("change", (event) => {
    const row = event.target.closest("[data-webhook-id]");
    const active = event.target.checked;
    change("webhooks", () => api.post(`${webhookUrl(row)}/update`, { active }),
           active ? "Switched on." : "Switched off.", loadWebhooks);
  });

  listOf("webhooks").addEventListener("click", async (event) => {
    const button = event.target.closest("[data-action], [data-redeliver]");
    if (!button) return;
    const row = button.closest("[data-webhook-id]");
    const url = field(row, "url").textContent;
    const deliveries = field(row, "deliveries");
    if (button.dataset.redeliver) {
      await change("webhooks", () => api.post(`${webhookUrl(row)}/deliveries/${button.dataset.redeliver}/redeliver`),
                   "Sent again.");
      return loadDeliveries(row);
    }
    switch (button.dataset.action) {
      case "deliveries": {
        const open = deliveries.hidden;
        deliveries.hidden = !open;
        button.setAttribute("aria-expanded", String(open));
        if (open) await loadDeliveries(row);
        break;
      }
      case "ping":
        await change("webhooks", () => api.post(`${webhookUrl(row)}/ping`), "A test message is on its way.");
        if (!deliveries.hidden) await loadDeliveries(row);
        break;
      case "rotate": {
        if (!await window.trackerConfirm({ title: "Rotate the signing secret?", yes: "Rotate",
                                           text: "For 24 hours both the old and the new secret sign." })) return;
        const answer = await change("webhooks", () => api.post(`${webhookUrl(row)}/rotate-secret`), "Rotated.");
        if (answer) showSecret(url, answer.secret);
        break;
      }
      case "delete":
        if (!await window.trackerConfirm({ title: `Delete the webhook ${url}?`, yes: "Delete",
                                           text: "It receives nothing more." })) return;
        if (await change("webhooks", () => api.post(`${webhookUrl(row)}/delete`), "Deleted.")) row.remove();
        break;
    }
  });

  const allEvents = formOf("add-webhook").querySelector("[data-all-events]");
  allEvents.addEventListener("change", () => {
    for (const box of formOf("add-webhook").querySelectorAll("[name=events]")) box.disabled = allEvents.checked;
  });

  formOf("add-webhook").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const events = allEvents.checked ? ["*"]
      : [...form.querySelectorAll("[name=events]:checked")].map((box) => box.value);
    const body = { url: form.elements.url.value.trim(), description: form.elements.description.value.trim(), events };
    const answer = await change("webhooks", () => api.post(`${base}/webhooks`, body), "Added.");
    if (!answer) return;
    listOf("webhooks").append(webhookRow(answer.webhook));
    form.reset();
    allEvents.dispatchEvent(new Event("change"));
    showSecret(answer.webhook.url, answer.secret);
  });

  // ---- import and export --------------------------------------------------------------------------------------

  // A job started here is followed until it ends: its progress feeds the bar, its end says what it did.
  const transfer = section("import-export").querySelector("[data-transfer]");
  const JOB_POLL_MS = 400;
  let following = null;

  function drawJob(job) {
    const { done, total } = job.progress;
    const bar = transfer.querySelector("[data-progress]");
    bar.max = Math.max(total, 1);
    bar.value = job.status === "succeeded" ? bar.max : Math.min(done, bar.max);
    bar.setAttribute("aria-valuetext", total ? `${done} of ${total}` : job.status);
    transfer.querySelector("[data-transfer-what]").textContent = job.kind === "export" ? "Export" : "Import";
    transfer.querySelector("[data-transfer-status]").textContent = job.status;
    transfer.querySelector("[data-transfer-detail]").textContent = job.error ?? summary(job);
    const download = transfer.querySelector("[data-transfer-download]");
    download.hidden = !job.download_url;
    if (job.download_url) download.querySelector("a").href = job.download_url;
    transfer.hidden = false;
  }

  function summary(job) {
    if (job.status !== "succeeded") return job.progress.total ? `${job.progress.done} of ${job.progress.total}` : "";
    if (job.kind === "export") return "Ready.";
    const { created, updated, skipped_count: skipped, users } = job.report;
    const made = Object.entries(created).filter(([, count]) => count).map(([what, count]) => `${count} ${what.replaceAll("_", " ")}`);
    return [`Created ${made.join(", ") || "nothing"}`, `updated ${updated.tickets} tickets`,
            `skipped ${skipped}`, users.unmatched.length ? `people not found: ${users.unmatched.join(", ")}` : ""]
      .filter(Boolean).join("; ") + ".";
  }

  async function follow(job) {
    following = job.id;
    drawJob(job);
    while (following === job.id && ["queued", "running"].includes(job.status)) {
      await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
      try {
        job = (await api.get(`/api/v1/jobs/${job.id}`)).job;
      } catch (error) {
        return say("import-export", api.explain(error), true);
      }
      if (following === job.id) drawJob(job);
    }
    if (following !== job.id) return;
    say("import-export", job.status === "succeeded" ? `The ${job.kind} is done.` : `The ${job.kind} failed.`,
        job.status !== "succeeded");
    if (job.kind === "import" && job.status === "succeeded") await Promise.all([loadStatuses(), loadTags(), loadMembers()]);
  }

  formOf("export").addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = await change("import-export", () => api.post(`${base}/exports`), "Export started.");
    if (answer) follow(answer.job);
  });

  formOf("import").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const data = new FormData();
    data.append("file", form.elements.file.files[0]);
    data.append("source", form.elements.source.value);
    data.append("project_id", String(projectId));
    const answer = await change("import-export", () => api.post("/api/v1/imports", data), "Import started.");
    if (!answer) return;
    form.reset();
    follow(answer.job);
  });

  // ---- start --------------------------------------------------------------------------------------------

  document.addEventListener("DOMContentLoaded", async () => {
    const loads = { statuses: loadStatuses, tags: loadTags, members: loadMembers, webhooks: loadWebhooks };
    await Promise.all(Object.entries(loads).map(([name, load]) => load().catch((error) => {
      say(name, `Could not be read. ${api.explain(error)}.`, true);
    })));
    document.body.dataset.settingsLoaded = ""; // every section drawn (tests wait for it)
  });
})();
