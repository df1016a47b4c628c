// The header's notifications menu: the unread count, kept current by the user's notification socket
// (decisions.md, "Notifications"; every frame carries the new count), and, when opened, the latest
// notifications, each a link to its ticket's panel on its board, with "Mark all read". Frames sent while
// the socket was down are lost, so after a reconnect the count (and an open list) is read again.
"use strict";

(() => {
  const menu = document.querySelector("[data-menu=notifications]");
  if (!menu) return;
  const api = window.trackerApi;
  const badge = menu.querySelector("[data-notification-badge]");
  const counter = badge.querySelector("[data-unread-count]");
  const dropdown = menu.querySelector(".notifications-panel");
  const list = menu.querySelector("[data-notification-list]");
  const note = menu.querySelector("[data-notifications-note]");
  const markAll = menu.querySelector("[data-notifications-action=mark-all-read]");
  const ACCESS_LOST = 4403; // token revoked or user deactivated: reconnecting will not help
  const SHOWN = 20; // the API's list holds the 20 most recent
  let delay = 1000;
  let loaded = false; // the list holds what the API listed, plus what came live since

  function show(count) {
    counter.textContent = String(count);
    badge.classList.toggle("has-unread", count > 0);
    badge.setAttribute("aria-label", `Notifications, ${count} unread`);
    markAll.disabled = count === 0;
  }

  async function refresh() {
    try {
      show((await api.get(badge.dataset.countUrl)).count);
      if (loaded) await load();
    } catch {
      // offline: the next reconnect reads it again
    }
  }

  // ---- the list ----------------------------------------------------------------------------------------

  async function load() {
    try {
      const { notifications } = await api.get(menu.dataset.listUrl);
      list.replaceChildren(...notifications.map(item));
      loaded = true;
      note.hidden = notifications.length > 0;
      note.textContent = "No notifications yet.";
    } catch (error) {
      note.hidden = false;
      note.textContent = `The notifications could not be read. ${api.explain(error)}.`;
    }
  }

  function item(notification) {
    const row = document.createElement("li");
    const link = document.createElement("a");
    // A notification knows its ticket's global id, not its number: the board page takes either.
    link.href = `/projects/${notification.project_id}/board/?ticket_id=${notification.ticket_id}`;
    link.className = "notification";
    link.classList.toggle("unread", notification.read_at === null);
    link.dataset.projectId = notification.project_id;
    link.dataset.ticketId = notification.ticket_id;
    const message = document.createElement("span");
    message.textContent = notification.message;
    const when = document.createElement("time");
    when.dateTime = `${notification.created_at.replace(" ", "T")}Z`;
    when.textContent = new Date(when.dateTime).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    link.append(message, when);
    if (notification.read_at === null) link.setAttribute("aria-label", `Unread: ${notification.message}`);
    row.append(link);
    return row;
  }

  function arrived(notification) {
    if (!loaded) return;
    list.prepend(item(notification));
    while (list.childElementCount > SHOWN) list.lastElementChild.remove();
    note.hidden = true;
  }

  // ---- opening, closing ----------------------------------------------------------------------------------

  function setOpen(open) {
    dropdown.hidden = !open;
    badge.setAttribute("aria-expanded", String(open));
    if (open && !loaded) load();
  }

  badge.addEventListener("click", () => setOpen(dropdown.hidden));
  document.addEventListener("click", (event) => {
    if (!dropdown.hidden && !menu.contains(event.target)) setOpen(false);
  });
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !dropdown.hidden) {
      setOpen(false);
      badge.focus();
    }
  });

  markAll.addEventListener("click", async () => {
    try {
      show((await api.post(menu.dataset.markAllUrl)).unread_count);
      for (const link of list.querySelectorAll(".unread")) {
        link.classList.remove("unread");
        link.removeAttribute("aria-label");
      }
    } catch (error) {
      note.hidden = false;
      note.textContent = `Not marked. ${api.explain(error)}.`;
    }
  });

  // Following a notification marks its ticket's notifications read; the board page, when it shows that
  // ticket's board, opens the ticket's panel in place of a reload.
  list.addEventListener("click", (event) => {
    const link = event.target.closest("a.notification");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    const ticketId = Number(link.dataset.ticketId);
    if (link.classList.contains("unread")) markTicketRead(ticketId);
    const opening = new CustomEvent("tracker:open-ticket", {
      cancelable: true, detail: { projectId: Number(link.dataset.projectId), ticketId },
    });
    if (!document.dispatchEvent(opening)) {
      event.preventDefault();
      setOpen(false);
    }
  });

  function markTicketRead(ticketId) {
    for (const link of list.querySelectorAll(`.unread[data-ticket-id="${ticketId}"]`)) {
      link.classList.remove("unread");
      link.removeAttribute("aria-label");
    }
    api.post(menu.dataset.markTicketUrl, { ticket_id: ticketId }, { keepalive: true })
      .then((body) => show(body.unread_count))
      .catch(() => {}); // the next load of the list shows them unread again
  }

  // ---- live ----------------------------------------------------------------------------------------------

  function connect(reconnecting) {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${window.location.host}${badge.dataset.socketPath}`);
    socket.addEventListener("open", () => {
      badge.dataset.live = ""; // the badge is current from here on (tests wait for it)
      delay = 1000;
      if (reconnecting) refresh();
    });
    socket.addEventListener("message", (event) => {
      const frame = JSON.parse(event.data);
      if (frame.event !== "notification.created") return;
      show(frame.unread_count);
      arrived(frame.notification);
    });
    socket.addEventListener("close", (event) => {
      delete badge.dataset.live;
      if (event.code === ACCESS_LOST) return;
      setTimeout(() => connect(true), delay);
      delay = Math.min(delay * 2, 30000);
    });
  }

  show(Number(counter.textContent));
  connect(false);
})();
