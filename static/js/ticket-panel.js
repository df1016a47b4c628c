// The ticket panel: a card's detail beside the board, opened by a click on the card, by a link with
// `?ticket=<number>` (e-mails', and the address bar's while a panel is open) or `?ticket_id=<id>` (the
// notifications menu's) on load. Everything is read from and written to the API;
// frames of the board socket about the open ticket refresh it, so changes made elsewhere show while it is
// open. The description is Markdown: the page shows it as the server renders it, through the docs pages'
// sanitizing renderer (the detail's `description_html`), never as HTML built here. The description is saved with
// `If-Match`: when someone changed it meanwhile (412), the newer version shows and nothing is overwritten unless
// the person asks. Blockers, history, time entries, archive and delete: ticket-panel-work.js, on `trackerPanel`.
"use strict";

(() => {
  const tb = window.trackerBoard;
  const api = window.trackerApi;
  const panel = document.querySelector("[data-panel=ticket]");
  panel.append(document.getElementById("panel-template").content.cloneNode(true));

  const find = (selector) => panel.querySelector(selector);
  const field = (name) => find(`[data-panel-field="${name}"]`);
  const list = (name) => find(`[data-panel-list="${name}"]`);
  const form = (name) => find(`[data-panel-form="${name}"]`);
  const input = (name) => find(`[data-panel-input="${name}"]`);
  const errorLine = find("[data-panel-error]");

  const PRIORITIES = { urgent: "Urgent", high: "High", medium: "Medium", low: "Low" };
  const TYPES = { feature: "Feature", bug: "Bug", release: "Release" };
  const REFRESH_DELAY_MS = 60; // a write's own answer and its frame come together: one refresh for both

  let current = null; // {id, number, ref, detail, time, base}; base: the description being edited, {etag, text}
  let opener = null; // what had focus when the panel opened: it gets it back on close
  let refreshTimer = null;
  let refreshWanted = { time: false };
  let ticking = null;
  const drawHooks = []; // called with the detail each time it is drawn (ticket-panel-work.js)

  const ticketUrl = () => `/api/v1/projects/${tb.projectId}/tickets/${current.number}`;

  // ---- opening and closing -------------------------------------------------------------------------

  function openTicket(ticketId) {
    const ticket = tb.ticket(ticketId);
    if (!ticket) {
      tb.notify("That ticket is not on this board any more (archived or deleted).");
      return;
    }
    if (current?.id !== ticketId) opener = document.activeElement;
    current = { id: ticketId, number: ticket.project_ticket_number, ref: ticket.prefix_ref };
    showEditors();
    closeEditors();
    showError("");
    field("ref").textContent = ticket.prefix_ref;
    field("title").textContent = ticket.title;
    for (const name of ["description", "upload-status", "timer", "time-total"]) field(name).replaceChildren();
    find("[data-panel-history]").open = false;
    for (const name of ["assignees", "tags", "checklist", "attachments", "comments", "blockers", "time-entries",
                        "history"]) {
      list(name).replaceChildren();
      delete list(name).dataset.drawn;
    }
    panel.hidden = false;
    document.body.classList.add("panel-open");
    history.replaceState(null, "", tb.ticketLink(ticket.project_ticket_number));
    panel.focus();
    refresh({ time: true });
  }

  function closePanel() {
    if (!current) return;
    const card = tb.cardOf(current.id);
    current = null;
    clearInterval(ticking);
    panel.hidden = true;
    document.body.classList.remove("panel-open");
    history.replaceState(null, "", tb.element.dataset.pageUrl);
    const back = opener?.isConnected ? opener : card?.querySelector(".card-open");
    back?.focus();
  }

  // The controls a role may use, and only those (the API refuses the others anyway).
  function showEditors() {
    const editing = tb.can("edit");
    for (const element of panel.querySelectorAll("[data-needs=edit]")) element.hidden = !editing;
    for (const element of panel.querySelectorAll("[data-needs=read]")) element.hidden = editing;
  }

  function closeEditors() {
    form("title").hidden = true;
    form("description").hidden = true;
    find("[data-panel-conflict]").hidden = true;
    find(".panel-title-row").hidden = false;
    field("description").hidden = false;
  }

  // ---- reading -----------------------------------------------------------------------------------------

  function scheduleRefresh({ time = false } = {}) {
    refreshWanted = { time: refreshWanted.time || time };
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      const wanted = refreshWanted;
      refreshWanted = { time: false };
      refresh(wanted);
    }, REFRESH_DELAY_MS);
  }

  async function refresh({ time }) {
    const opened = current;
    try {
      const [detail, entries] = await Promise.all([
        api.get(`${ticketUrl()}?description=html`),
        time ? api.get(`/api/v1/tickets/${opened.id}/time-entries`) : null,
      ]);
      if (current !== opened) return; // closed, or another ticket opened meanwhile
      const descriptionChanged = opened.detail?.description !== detail.ticket.description;
      opened.detail = detail.ticket;
      drawDetail(detail.ticket);
      if (entries) {
        opened.time = entries;
        drawTime();
      }
      if (descriptionChanged) drawDescription(detail.ticket.description_html);
    } catch (error) {
      if (current === opened) showError(api.explain(error));
    }
  }

  function drawDescription(html) {
    const target = field("description");
    // Safe to insert: the server rendered it with html off and sanitized it with an allow-list (no script,
    // no event attribute, no style; core/markdown.py); the page's CSP forbids inline script besides.
    target.innerHTML = html;
    for (const link of target.querySelectorAll("a[href]")) link.target = "_blank";
    if (!target.childElementCount) target.append(muted("No description."));
  }

  function drawDetail(ticket) {
    if (form("title").hidden) field("title").textContent = ticket.title;
    field("ref").textContent = ticket.prefix_ref;
    field("archived").hidden = ticket.archived_at === null;
    drawChoice("status", ticket.status, statusChoices(), tb.statusLabel(ticket.status));
    drawChoice("priority", ticket.priority ?? "", null, PRIORITIES[ticket.priority] ?? "None");
    drawChoice("type", ticket.type, null, TYPES[ticket.type]);
    drawChoice("deadline", ticket.deadline ?? "", null, ticket.deadline ?? "None");
    drawAssignees(ticket);
    drawTags(ticket);
    drawChecklist(ticket);
    drawAttachments(ticket);
    drawComments(ticket);
    for (const hook of drawHooks) hook(ticket);
  }

  // A field shown as a control to editors and as text to others; a control in use is left alone.
  function drawChoice(name, value, options, text) {
    const control = input(name);
    field(name).textContent = text;
    if (document.activeElement === control) return;
    if (options) replaceOptions(control, options);
    control.value = value;
  }

  function statusChoices() {
    return tb.payload().columns.map(({ status }) => new Option(tb.statusLabel(status), status));
  }

  function drawAssignees(ticket) {
    const assigned = new Set(ticket.assignees.map((user) => user.id));
    drawList("assignees", ticket.assignees, (user) => chip(user.name, {
      label: `Unassign ${user.name}`, data: { unassign: user.id },
    }), "Nobody");
    const others = tb.payload().members.filter((member) => !assigned.has(member.id));
    fillAddForm(form("assign"), others.map((member) => new Option(member.name, member.id)), "Everyone is assigned");
  }

  function drawTags(ticket) {
    const on = new Set(ticket.tags.map((tag) => tag.id));
    drawList("tags", ticket.tags, (tag) => chip(tag.name, {
      label: `Remove the tag ${tag.name}`, data: { untag: tag.id }, color: tag.color,
    }), "None");
    const others = tb.payload().tags.filter((tag) => !on.has(tag.id));
    fillAddForm(form("tag"), others.map((tag) => new Option(tag.name, tag.id)), "No other tag");
  }

  // A list of the panel: an item drawn for each entry, or a word saying there is none. Drawn again only when
  // its entries changed: a refresh leaves the items (and what is being clicked) in place.
  function drawList(name, entries, drawEntry, noneText) {
    const target = list(name);
    const drawn = JSON.stringify([entries, tb.can("edit")]);
    if (target.dataset.drawn === drawn) return;
    target.dataset.drawn = drawn;
    target.replaceChildren(...(entries.length ? entries.map(drawEntry) : [muted(noneText, "li")]));
  }

  function fillAddForm(addForm, options, emptyText) {
    const select = addForm.querySelector("select");
    replaceOptions(select, options.length ? options : [new Option(emptyText, "")]);
    select.disabled = addForm.querySelector("button").disabled = !options.length;
  }

  // Only when they differ: a refresh leaves a list being chosen from as it is.
  function replaceOptions(select, options) {
    const key = (list) => list.map((option) => `${option.value}\n${option.text}`).join("\n");
    if (key([...select.options]) !== key(options)) select.replaceChildren(...options);
  }

  function chip(text, { label, data, color }) {
    const item = document.createElement("li");
    item.className = "chip";
    const name = document.createElement("span");
    name.textContent = text;
    if (color) item.style.setProperty("--chip-color", color);
    item.append(name);
    if (tb.can("edit")) {
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "chip-remove";
      remove.textContent = "×";
      remove.setAttribute("aria-label", label);
      Object.assign(remove.dataset, data);
      item.append(remove);
    }
    return item;
  }

  function drawChecklist(ticket) {
    const done = ticket.checklist.filter((item) => item.done).length;
    field("checklist-progress").textContent = ticket.checklist.length ? `${done}/${ticket.checklist.length}` : "";
    drawList("checklist", ticket.checklist, (item) => {
      const row = document.createElement("li");
      row.classList.toggle("done", Boolean(item.done));
      const label = document.createElement("label");
      if (tb.can("edit")) {
        const box = document.createElement("input");
        box.type = "checkbox";
        box.checked = Boolean(item.done);
        box.dataset.itemId = item.id;
        label.append(box);
      } else {
        const mark = document.createElement("span");
        mark.className = "check-mark";
        mark.textContent = item.done ? "✓" : "○";
        mark.setAttribute("aria-label", item.done ? "done:" : "to do:");
        label.append(mark);
      }
      label.append(` ${item.text}`);
      row.append(label);
      return row;
    }, "No items.");
  }

  function drawAttachments(ticket) {
    drawList("attachments", ticket.attachments, (file) => {
      const link = element("a", { href: `/api/v1/attachments/${file.id}`, download: file.original_name,
                                  textContent: file.original_name });
      return element("li", {}, link, " ", muted(size(file.filesize)));
    }, "No attachments.");
  }

  function drawComments(ticket) {
    drawList("comments", ticket.comments, (comment) => {
      const when = element("time", { dateTime: `${comment.created_at.replace(" ", "T")}Z`,
                                     textContent: localTime(comment.created_at) });
      const head = element("div", { className: "comment-head" },
                           element("strong", { textContent: comment.user_name }), " ", when);
      const body = element("div", { className: "comment-body markdown" });
      // Safe to insert: the server rendered it with raw HTML escaped and sanitized it (core/markdown.py).
      if (comment.message_html !== undefined) body.innerHTML = comment.message_html;
      else body.textContent = comment.message;
      return element("li", {}, head, body);
    }, "No comments yet.");
  }

  // ---- time ---------------------------------------------------------------------------------------------

  function myTimer() {
    return current.time?.entries.find((entry) => entry.user_id === tb.userId && entry.is_running !== 0) ?? null;
  }

  function drawTime() {
    const timer = myTimer();
    const button = find("[data-panel-action=timer]");
    field("time-total").textContent = duration(current.time.total_minutes * 60);
    button.textContent = timer ? "Stop timer" : "Start timer";
    button.setAttribute("aria-pressed", String(timer?.is_running === 1));
    clearInterval(ticking);
    const show = () => {
      field("timer").textContent = !timer ? "" : timer.is_running === 2 ? "Your timer is paused"
        : `Your timer: ${clock(timer.minutes * 60 + (Date.now() - utc(timer.started_at)) / 1000)}`;
    };
    show();
    if (timer?.is_running === 1) ticking = setInterval(show, 1000);
    drawEntries(current.time.entries.filter((entry) => entry.is_running === 0));
  }

  // Finished entries, everyone's: their owner (or a manager) may delete them.
  function drawEntries(entries) {
    const manager = tb.can("manage");
    drawList("time-entries", entries, (entry) => {
      const what = `${duration(entry.minutes * 60)} by ${entry.user_name}`;
      const item = element("li", {}, element("span", { textContent: what }));
      if (entry.note) item.append(" ", muted(`· ${entry.note}`));
      if (entry.user_id === tb.userId || manager) {
        item.append(" ", element("button", { type: "button", className: "link", textContent: "Delete",
                                             ariaLabel: `Delete ${what}` }));
        item.lastElementChild.dataset.deleteEntry = entry.id;
      }
      return item;
    }, "No time recorded yet.");
  }

  async function toggleTimer() {
    const timer = myTimer();
    try {
      if (timer) await api.post(`/api/v1/time-entries/${timer.id}/stop`);
      else await api.post(`/api/v1/tickets/${current.id}/time-entries/start`);
      showError("");
    } catch (error) {
      const elsewhere = tb.ticket(error.body?.running_ticket_id);
      showError(elsewhere ? `Your timer is running on ${elsewhere.prefix_ref}: stop it there first.`
        : api.explain(error));
    }
    scheduleRefresh({ time: true });
  }

  // ---- writing ------------------------------------------------------------------------------------------

  // Every change goes through here: the API call, then a refresh (its frame asks for one too), or the
  // reason it was refused, shown in the panel.
  async function write(call) {
    const opened = current;
    try {
      await call();
      if (current === opened) showError("");
      return true;
    } catch (error) {
      if (current === opened) showError(api.explain(error));
      return false;
    } finally {
      if (current === opened) scheduleRefresh();
    }
  }

  const update = (changes) => write(() => api.post(`${ticketUrl()}/update`, changes));

  function showError(message) {
    errorLine.textContent = message;
    errorLine.hidden = !message;
  }

  const ACTIONS = {
    close: closePanel,
    timer: toggleTimer,
    "edit-title": () => openEditor("title", current.detail?.title ?? field("title").textContent,
                                   find(".panel-title-row")),
    "cancel-title": () => leaveEditor("title"),
    "edit-description": editDescription,
    "cancel-description": () => leaveEditor("description"),
    "take-theirs": () => {
      form("description").elements.description.value = current.base.text;
      find("[data-panel-conflict]").hidden = true;
      form("description").elements.description.focus();
    },
    "save-mine": () => saveDescription(form("description").elements.description.value),
  };

  // The title and the description are edited in place of what shows them.
  function openEditor(name, value, shown) {
    const editor = form(name);
    editor.elements[name].value = value;
    shown.hidden = true;
    editor.hidden = false;
    editor.elements[name].focus();
  }

  // The version the edit starts from, with its ETag: the save sends it as If-Match.
  async function readBase() {
    const { data, etag } = await api.get(ticketUrl(), { withEtag: true });
    return { etag, text: data.ticket.description };
  }

  async function editDescription() {
    const opened = current;
    try {
      opened.base = await readBase();
    } catch (error) {
      showError(api.explain(error));
      return;
    }
    if (current !== opened) return;
    window.trackerMarkdown.write(form("description").querySelector("[data-editor=markdown]"));
    openEditor("description", opened.base.text, field("description"));
  }

  // Saved over `current.base` only: if the ticket changed since, the answer is 412 and nothing was written. A
  // change elsewhere than in the description (a comment, a tag) is no conflict: the save goes again on the
  // new version. A changed description is shown, and the person chooses.
  async function saveDescription(text) {
    const opened = current;
    const save = () => api.post(`${ticketUrl()}/update`, { description: text },
                                { headers: { "If-Match": opened.base.etag } });
    try {
      await save();
    } catch (error) {
      if (error.status !== 412 || current !== opened) return showError(api.explain(error));
      const newer = await readBase().catch(() => null);
      if (!newer || current !== opened) return showError(api.explain(error));
      const theirs = newer.text;
      const unchanged = theirs === opened.base.text;
      opened.base = newer;
      if (!unchanged) return showConflict();
      try {
        await save();
      } catch (again) {
        return showError(api.explain(again));
      }
    }
    showError("");
    ACTIONS["cancel-description"]();
    scheduleRefresh();
  }

  async function showConflict() {
    const opened = current;
    const conflict = find("[data-panel-conflict]");
    try {
      const { ticket } = await api.get(`${ticketUrl()}?description=html`);
      if (current !== opened) return;
      const history = await api.get(`${ticketUrl()}/history`);
      const edit = history.history.find((entry) => "description" in entry.changes);
      conflict.querySelector("[data-conflict-by]").textContent = edit ? `${edit.actor.name} edited it.` : "";
      // Safe to insert: the server's sanitized rendering (core/markdown.py).
      conflict.querySelector("[data-conflict-html]").innerHTML = ticket.description_html || "<p>(empty)</p>";
      conflict.hidden = false;
      conflict.querySelector("[data-panel-action=take-theirs]").focus();
    } catch (error) {
      showError(api.explain(error));
    }
  }

  function leaveEditor(name) {
    closeEditors();
    find(`[data-panel-action=edit-${name}]`).focus();
  }

  const FORMS = {
    async title(data) {
      if (await update({ title: data.get("title").trim() })) ACTIONS["cancel-title"]();
    },
    description: (data) => saveDescription(data.get("description")),
    assign: (data) => write(() => api.post(`${ticketUrl()}/assign`, { user_id: Number(data.get("user_id")) })),
    tag: (data) => update({ tags: [...current.detail.tags.map((tag) => tag.id), Number(data.get("tag_id"))] }),
    async checklist(data, element) {
      if (await write(() => api.post(`/api/v1/tickets/${current.id}/checklist`, { text: data.get("text") }))) {
        element.reset();
      }
    },
    async comment(data, element) {
      const opened = current;
      if (await write(() => api.post(`${ticketUrl()}/comments`, { comment: data.get("comment") }))) {
        if (current === opened) element.reset();
      }
    },
  };

  const CHANGES = {
    status: (value) => write(() => api.post(`${ticketUrl()}/move`, { status: value })),
    priority: (value) => update({ priority: value || null }),
    type: (value) => update({ type: value }),
    deadline: (value) => update({ deadline: value || null }),
    files: (value, element) => upload(element.files).finally(() => (element.value = "")),
  };

  async function upload(files) {
    if (!files.length) return;
    const data = new FormData();
    for (const file of files) data.append("files[]", file);
    const status = field("upload-status");
    status.textContent = `Uploading ${files.length} file${files.length > 1 ? "s" : ""}…`;
    const done = await write(() => api.post(`/api/v1/tickets/${current.id}/attachments`, data));
    status.textContent = done ? "Uploaded." : "";
  }

  panel.addEventListener("click", (event) => {
    const target = event.target.closest("[data-panel-action], [data-unassign], [data-untag]");
    if (!target || !current) return;
    if (target.dataset.panelAction) ACTIONS[target.dataset.panelAction]?.();
    else if (target.dataset.unassign) {
      write(() => api.post(`${ticketUrl()}/unassign`, { user_id: Number(target.dataset.unassign) }));
    } else {
      const tagId = Number(target.dataset.untag);
      update({ tags: current.detail.tags.map((tag) => tag.id).filter((id) => id !== tagId) });
    }
  });

  panel.addEventListener("submit", (event) => {
    const name = event.target.dataset.panelForm;
    if (!name || !current || !FORMS[name]) return;
    event.preventDefault();
    FORMS[name](new FormData(event.target), event.target);
  });

  panel.addEventListener("change", (event) => {
    const target = event.target;
    if (!current) return;
    if (target.dataset.panelInput) CHANGES[target.dataset.panelInput](target.value, target);
    else if (target.dataset.itemId) write(() => api.post(`/api/v1/checklist/${target.dataset.itemId}/toggle`));
  });

  panel.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.name === "comment") {
      event.target.form.requestSubmit();
    }
  });

  // Escape leaves an editor of the panel, else closes the panel, wherever the focus is (but in a menu or a
  // dialog of its own, which Escape closes first).
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !current || event.target.closest("[data-menu], dialog")) return;
    const editing = event.target.closest("[data-panel-form=title], [data-panel-form=description]");
    if (editing) ACTIONS[`cancel-${editing.dataset.panelForm}`]();
    else closePanel();
  });

  // ---- files dropped on the panel ----------------------------------------------------------------------

  const dropzone = find("[data-dropzone]");
  const carriesFiles = (event) => event.dataTransfer?.types.includes("Files");

  dropzone.addEventListener("dragover", (event) => {
    if (!carriesFiles(event) || !tb.can("edit")) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    dropzone.classList.add("over");
  });
  dropzone.addEventListener("dragleave", () => dropzone.classList.remove("over"));
  dropzone.addEventListener("drop", (event) => {
    dropzone.classList.remove("over");
    if (!carriesFiles(event) || !tb.can("edit") || !current) return;
    event.preventDefault();
    upload(event.dataTransfer.files);
  });
  // A file dropped anywhere else would make the browser leave the board to show it.
  for (const kind of ["dragover", "drop"]) {
    window.addEventListener(kind, (event) => {
      if (carriesFiles(event) && !dropzone.contains(event.target)) {
        event.preventDefault();
        event.dataTransfer.dropEffect = "none";
      }
    });
  }

  // ---- what opens it, what refreshes it ----------------------------------------------------------------

  tb.element.addEventListener("click", (event) => {
    const link = event.target.closest(".card-open");
    if (!link || event.defaultPrevented || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) {
      return;
    }
    event.preventDefault();
    openTicket(Number(link.closest("[data-ticket-id]").dataset.ticketId));
  });

  // The notifications menu asks before it follows a link to a ticket of this board.
  document.addEventListener("tracker:open-ticket", (event) => {
    if (event.detail.projectId !== tb.projectId || !tb.ticket(event.detail.ticketId)) return;
    event.preventDefault();
    openTicket(event.detail.ticketId);
  });

  tb.element.addEventListener("board:frame", ({ detail: frame }) => {
    if (!current || (frame.ticket?.id ?? frame.ticket_id) !== current.id) return;
    if (frame.event === "ticket.deleted") {
      showError(`${current.ref} was deleted.`);
      return;
    }
    scheduleRefresh({ time: frame.event.startsWith("time_entry.") });
  });

  tb.element.addEventListener("board:changed", () => {
    if (current) showEditors();
  });

  document.addEventListener("DOMContentLoaded", () => {
    // board.js has drawn the board by now (its listener came first). A number not on it (archived, deleted,
    // mistyped) opens nothing: openTicket says so.
    const asked = new URLSearchParams(window.location.search);
    if (asked.has("ticket_id")) openTicket(Number(asked.get("ticket_id")));
    else if (asked.has("ticket")) openTicket(tb.ticketNumbered(Number(asked.get("ticket")))?.id);
  });

  // What ticket-panel-work.js builds on: the open ticket, the write path, the actions and forms it adds.
  window.trackerPanel = {
    element: panel,
    current: () => current,
    ticketUrl,
    write,
    refresh: scheduleRefresh,
    close: closePanel,
    onDraw: (hook) => drawHooks.push(hook),
    actions: ACTIONS,
    forms: FORMS,
    drawList,
    words: { element, muted, localTime, duration },
  };

  // ---- words ---------------------------------------------------------------------------------------------

  function element(tag, properties, ...children) {
    const made = Object.assign(document.createElement(tag), properties);
    made.append(...children);
    return made;
  }

  function muted(text, tag = "span") {
    return element(tag, { className: "muted", textContent: text });
  }

  function utc(timestamp) {
    return Date.parse(`${timestamp.replace(" ", "T")}Z`);
  }

  function localTime(timestamp) {
    return new Date(utc(timestamp)).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function duration(seconds) {
    const minutes = Math.round(seconds / 60);
    if (!minutes) return "none yet";
    const hours = Math.floor(minutes / 60);
    return hours ? `${hours} h ${String(minutes % 60).padStart(2, "0")} min` : `${minutes} min`;
  }

  function clock(seconds) {
    const whole = Math.max(0, Math.floor(seconds));
    const parts = [Math.floor(whole / 3600), Math.floor(whole / 60) % 60, whole % 60];
    return parts.map((part, index) => (index ? String(part).padStart(2, "0") : part)).join(":");
  }

  function size(bytes) {
    if (bytes < 1024) return `${bytes} B`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
    return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  }
})();
