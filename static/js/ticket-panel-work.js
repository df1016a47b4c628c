// The ticket panel's work on a ticket beyond its fields (ticket-panel.js draws those): blockers, time entries
// added by hand, the history, archive / unarchive and delete (confirmed). Each control shows only to those the
// role table lets use it; the API refuses the others anyway.
"use strict";

(() => {
  const tb = window.trackerBoard;
  const tp = window.trackerPanel;
  const api = window.trackerApi;
  const { element, muted, localTime } = tp.words;
  const find = (selector) => tp.element.querySelector(selector);
  const button = (action) => find(`[data-panel-action="${action}"]`);
  const history = find("[data-panel-history]");

  // ---- archive, unarchive, delete ------------------------------------------------------------------------

  tp.onDraw((ticket) => {
    const archived = ticket.archived_at !== null;
    button("archive").hidden = archived || !tb.can("edit");
    button("unarchive").hidden = !archived || !tb.can("manage");
    button("delete").hidden = !(tb.can("manage") || ticket.creator.id === tb.userId);
    drawBlockers(ticket);
    if (history.open) loadHistory();
  });

  tp.actions.archive = () => tp.write(() => api.post(`${tp.ticketUrl()}/archive`));
  tp.actions.unarchive = () => tp.write(() => api.post(`${tp.ticketUrl()}/unarchive`));
  tp.actions.delete = async () => {
    const { ref } = tp.current();
    const sure = await window.trackerConfirm({
      title: `Delete ${ref}?`, yes: "Delete",
      text: "It leaves the board and every list; only staff can bring it back.",
    });
    if (!sure || tp.current()?.ref !== ref) return;
    if (await tp.write(() => api.post(`${tp.ticketUrl()}/delete`))) {
      tp.close();
      tb.notify(`${ref} was deleted.`);
    }
  };

  // ---- blockers -------------------------------------------------------------------------------------------

  function drawBlockers(ticket) {
    const prefix = tb.payload().project.prefix;
    tp.drawList("blockers", ticket.blockers, (blocker) => {
      const ref = `${prefix}-${blocker.project_ticket_number}`;
      const item = element("li", {}, element("strong", { textContent: ref }), ` ${blocker.title} `,
                           muted(`(${tb.statusLabel(blocker.status)})`));
      if (tb.can("edit")) {
        const remove = element("button", { type: "button", className: "chip-remove", textContent: "×",
                                           ariaLabel: `Remove the blocker ${ref}` });
        remove.dataset.unblock = blocker.id;
        item.append(remove);
      }
      return item;
    }, "Nothing blocks it.");
    const taken = new Set([ticket.id, ...ticket.blockers.map((blocker) => blocker.id)]);
    const others = [...tb.element.querySelectorAll("[data-ticket-id]")]
      .map((card) => tb.ticket(Number(card.dataset.ticketId)))
      .filter((other) => other && !taken.has(other.id));
    const select = find("[data-panel-form=blocker] select");
    const options = others.map((other) => new Option(`${other.prefix_ref} ${other.title}`, other.id));
    const key = (list) => list.map((option) => `${option.value}\n${option.text}`).join("\n");
    const wanted = options.length ? options : [new Option("No other ticket", "")];
    if (key([...select.options]) !== key(wanted)) select.replaceChildren(...wanted);
    select.disabled = find("[data-panel-form=blocker] button").disabled = !options.length;
  }

  tp.forms.blocker = (data) => tp.write(() => api.post(`/api/v1/tickets/${tp.current().id}/blockers`, {
    blocker_ticket_id: Number(data.get("blocker_ticket_id")),
  }));

  // ---- time entries added by hand ---------------------------------------------------------------------------

  tp.forms["time-entry"] = async (data, form) => {
    const body = { minutes: Number(data.get("minutes")) };
    if (data.get("note").trim()) body.note = data.get("note").trim();
    if (await tp.write(() => api.post(`/api/v1/tickets/${tp.current().id}/time-entries`, body))) form.reset();
    tp.refresh({ time: true });
  };

  tp.element.addEventListener("click", (event) => {
    const target = event.target.closest("[data-unblock], [data-delete-entry]");
    if (!target || !tp.current()) return;
    if (target.dataset.unblock) {
      tp.write(() => api.post(`/api/v1/tickets/${tp.current().id}/blockers/${target.dataset.unblock}/delete`));
    } else {
      tp.write(() => api.post(`/api/v1/time-entries/${target.dataset.deleteEntry}/delete`))
        .then(() => tp.refresh({ time: true }));
    }
  });

  // ---- history --------------------------------------------------------------------------------------------

  const ACTIONS = {
    created: "created it", updated: "changed", moved: "moved it", archived: "archived it",
    unarchived: "unarchived it", assigned: "assigned", unassigned: "unassigned", sorted: "reordered it",
    commented: "commented", comment_edited: "edited a comment", comment_deleted: "deleted a comment",
    checklist_item_added: "added a checklist item", checklist_item_toggled: "ticked a checklist item",
    checklist_item_updated: "renamed a checklist item", checklist_item_deleted: "deleted a checklist item",
    checklist_sorted: "reordered the checklist", blocker_added: "added a blocker",
    blocker_removed: "removed a blocker", attachments_added: "attached files",
    attachment_deleted: "deleted an attachment", time_started: "started a timer", time_stopped: "stopped a timer",
    time_added: "added time", time_edited: "edited time", time_deleted: "deleted time",
  };

  function describe(entry) {
    const what = ACTIONS[entry.action] ?? entry.action.replaceAll("_", " ");
    const fields = Object.keys(entry.changes).filter((name) => name !== "sort_order");
    if (entry.action === "moved" && entry.changes.status) {
      return `${what} from ${tb.statusLabel(entry.changes.status.old)} to ${tb.statusLabel(entry.changes.status.new)}`;
    }
    return entry.action === "updated" && fields.length ? `${what} ${fields.join(", ").replaceAll("_", " ")}` : what;
  }

  async function loadHistory() {
    const opened = tp.current();
    try {
      const { history: entries } = await api.get(`${tp.ticketUrl()}/history`);
      if (tp.current() !== opened) return;
      tp.drawList("history", entries, (entry) => {
        const when = element("time", { dateTime: `${entry.created_at.replace(" ", "T")}Z`,
                                       textContent: localTime(entry.created_at) });
        return element("li", {}, element("strong", { textContent: entry.actor?.name ?? "Someone" }),
                       ` ${describe(entry)} `, when);
      }, "Nothing yet.");
    } catch (error) {
      tp.drawList("history", [error], () => muted(api.explain(error), "li"), "");
    }
  }

  history.addEventListener("toggle", () => {
    if (history.open && tp.current()) loadHistory();
  });
})();
