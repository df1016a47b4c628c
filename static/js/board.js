// The live board. It draws the board payload embedded in the page, then applies the frames of the
// project's websocket (decisions.md, "Real-time board", "Event log"). Frames carry a per-project `seq`:
// a reconnect asks for the frames after the last one applied (`?since=`), which the server replays from
// its event log; the whole board is fetched again only when the server answers `resync_required` (too
// far behind), after a gap, or when no frame was applied yet. Kinds the board does not draw (comments,
// time entries, …) only advance `seq`.
//
// The page's other scripts (board-edit.js, board-filters.js, ticket-panel.js) build on `window.trackerBoard`
// and on two events of the board element: `board:changed` after anything redrew cards, and `board:frame`
// (detail: the frame) after each applied frame. Everything starts once they are all loaded.
"use strict";

const ACCESS_LOST = 4403; // the server closed the socket for good: no membership any more
const MAX_RETRY_DELAY_MS = 30000;
// The role ladder of the API's role table (decisions.md, "Roles"); the API enforces it, the page only
// leaves out the controls a role cannot use.
const RANK = { viewer: 1, contributor: 2, editor: 3, developer: 3, manager: 4 };
const NEEDED = { sort: RANK.contributor, edit: RANK.editor, manage: RANK.manager };

const board = document.querySelector("[data-board]");
const columns = new Map(
  [...board.querySelectorAll("[data-status]")].map((column) => [column.dataset.status, column]),
);
const cardTemplate = document.getElementById("card-template");
const liveStatus = document.querySelector("[data-live-status]");
const projectId = Number(board.dataset.projectId);
const userId = Number(board.dataset.userId);

const tickets = new Map(); // global id -> the board's ticket in its board shape (hidden columns' too)
let payload = { project: { role: "viewer" }, columns: [], tags: [], members: [] };
let lastSeq = null; // seq of the last frame applied; null when unknown (page load, after a refetch)
let queued = null; // frames received while the board is being fetched, applied once it is drawn
let reloadAgain = false;
let retries = 0;

function can(action) {
  return (RANK[payload.project.role] ?? 0) >= NEEDED[action];
}

// ---- drawing -------------------------------------------------------------------------------------

// Cards whose ticket did not change are kept, not redrawn: a reload (one follows every page load and
// reconnect) leaves focus, and what the person is pointing at, where they were.
function drawBoard(newPayload) {
  payload = newPayload;
  const drawn = new Map([...board.querySelectorAll("[data-ticket-id]")].map((card) => {
    const id = Number(card.dataset.ticketId);
    return [id, { ticket: tickets.get(id), card }];
  }));
  const cardFor = (ticket) => {
    const before = drawn.get(ticket.id);
    if (before && JSON.stringify(before.ticket) === JSON.stringify(ticket)) {
      tickets.set(ticket.id, ticket);
      return before.card;
    }
    return drawCard(ticket);
  };
  tickets.clear();
  const drawnRank = board.dataset.canSort;
  board.dataset.canEdit = can("edit");
  board.dataset.canSort = can("sort");
  document.querySelector("[data-role]").textContent = payload.project.role;
  if (drawnRank !== board.dataset.canSort) drawn.clear(); // the cards' controls depend on the role
  for (const column of columns.values()) {
    column.querySelector("[data-add-ticket]").hidden = !can("edit");
  }
  for (const { status, tickets: listed } of payload.columns) {
    const cards = cardsOf(status);
    if (cards) cards.replaceChildren(...listed.map(cardFor));
    else listed.forEach((ticket) => tickets.set(ticket.id, ticket)); // a hidden column's: the panel opens them
  }
  changed();
  // User Timing (DevTools, bench/board_page.py): when the page's first drawing of the board was done.
  if (!performance.getEntriesByName("board:drawn").length) performance.mark("board:drawn");
}

function drawCard(ticket) {
  tickets.set(ticket.id, ticket);
  const card = cardTemplate.content.firstElementChild.cloneNode(true);
  const field = (name) => card.querySelector(`[data-field="${name}"]`);
  card.dataset.ticketId = ticket.id;
  field("ref").textContent = ticket.prefix_ref;
  field("type").textContent = ticket.type;
  field("type").dataset.type = ticket.type;
  field("priority").textContent = ticket.priority ?? "";
  field("priority").dataset.priority = ticket.priority ?? "none";
  field("title").textContent = ticket.title;
  field("title").href = ticketLink(ticket.project_ticket_number);
  field("tags").append(...ticket.tags.map(drawTag));
  drawChecklist(field("checklist"), ticket);
  field("comments").textContent = ticket.reaction_count || "";
  field("comments").title = `${ticket.reaction_count} comments`;
  drawDeadline(field("deadline"), ticket.deadline);
  field("assignees").append(...ticket.assignees.map(drawAvatar));
  const move = card.querySelector("[data-action=move]");
  if (can("sort")) move.setAttribute("aria-label", `Move ${ticket.prefix_ref} to…`);
  else move.remove();
  return card;
}

// A ticket's panel on this page: `?ticket=<number>`, the number of its reference, as e-mails link it.
function ticketLink(number) {
  return `${board.dataset.pageUrl}?ticket=${number}`;
}

function ticketNumbered(number) {
  return [...tickets.values()].find((ticket) => ticket.project_ticket_number === number);
}

function drawTag(tag) {
  const chip = document.createElement("span");
  chip.className = "tag";
  chip.textContent = tag.name;
  chip.style.backgroundColor = tag.color;
  chip.style.color = isLight(tag.color) ? "#1f2328" : "#fff";
  return chip;
}

function drawChecklist(element, ticket) {
  if (!ticket.checklist_total) {
    element.hidden = true;
    return;
  }
  element.querySelector(".checklist-text").textContent = `${ticket.checklist_done}/${ticket.checklist_total}`;
  element.querySelector(".checklist-bar span").style.width =
    `${(100 * ticket.checklist_done) / ticket.checklist_total}%`;
  element.classList.toggle("complete", ticket.checklist_done === ticket.checklist_total);
  element.title = `Checklist: ${ticket.checklist_done} of ${ticket.checklist_total} done`;
}

function drawDeadline(element, deadline) {
  if (deadline === null) return;
  const day = new Date(`${deadline}T00:00:00`);
  element.textContent = day.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  element.title = `Deadline ${deadline}`;
  element.classList.toggle("overdue", deadline < new Date().toISOString().slice(0, 10));
}

function drawAvatar(user) {
  const avatar = document.createElement(user.avatar ? "img" : "span");
  avatar.className = "avatar";
  avatar.title = user.name;
  if (user.avatar) {
    avatar.src = user.avatar;
    avatar.alt = user.name;
  } else {
    avatar.textContent = initials(user.name);
    avatar.style.backgroundColor = `hsl(${(user.id * 67) % 360} 55% 42%)`;
  }
  return avatar;
}

function initials(name) {
  return name.split(/\s+/).filter(Boolean).slice(0, 2).map((word) => word[0].toUpperCase()).join("");
}

// Whether dark text reads better than white on this colour (WCAG's contrast ratio of each, by relative luminance).
function isLight(hex) {
  const channel = (start) => {
    const value = parseInt(hex.slice(start, start + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  const DARK_TEXT = 0.0165; // #1f2328
  return (luminance + 0.05) / (DARK_TEXT + 0.05) > 1.05 / (luminance + 0.05);
}

// The count of each column is of the cards shown (a filter hides the others).
function updateCounts() {
  for (const column of columns.values()) {
    const cards = column.querySelector(".cards");
    const shown = cards.querySelectorAll(".ticket-card:not([hidden])").length;
    const count = column.querySelector(".column-count");
    count.textContent = shown;
    count.title = shown === cards.childElementCount ? "" : `${shown} of ${cards.childElementCount} shown`;
  }
}

function changed() {
  updateCounts();
  board.dispatchEvent(new CustomEvent("board:changed"));
}

// ---- frames --------------------------------------------------------------------------------------

function cardOf(ticketId) {
  return board.querySelector(`[data-ticket-id="${ticketId}"]`);
}

function cardsOf(status) {
  return columns.get(status)?.querySelector(".cards") ?? null;
}

// A created or unarchived ticket goes to the end of its column, an updated one stays in place, a moved one
// goes right before the card its frame names (`before_id`, null: the end of the column); a ticket moved
// into a column the page does not show (hidden) just leaves.
function placeTicket(frame) {
  const { ticket } = frame;
  const existing = cardOf(ticket.id);
  const cards = cardsOf(ticket.status);
  if (!cards) {
    tickets.set(ticket.id, ticket);
    existing?.remove();
    return;
  }
  const card = drawCard(ticket);
  const hadFocus = existing?.contains(document.activeElement) ? document.activeElement.dataset : null;
  if (frame.event === "ticket.moved") {
    const next = frame.before_id == null ? null : cardOf(frame.before_id);
    cards.insertBefore(card, next?.parentElement === cards ? next : null);
    existing?.remove();
  } else if (existing?.parentElement === cards) existing.replaceWith(card);
  else {
    existing?.remove();
    cards.append(card);
  }
  if (hadFocus) card.querySelector(hadFocus.action ? `[data-action="${hadFocus.action}"]` : "a")?.focus();
  card.classList.add("changed");
}

function removeTicket({ ticket }) {
  tickets.delete(ticket.id);
  cardOf(ticket.id)?.remove();
}

function sortColumn({ status, ticket_ids: ticketIds }) {
  const cards = cardsOf(status);
  if (!cards) return;
  for (const id of ticketIds) {
    const card = cardOf(id);
    if (card?.parentElement === cards) cards.append(card);
  }
}

const APPLY = {
  "ticket.created": placeTicket,
  "ticket.updated": placeTicket,
  "ticket.moved": placeTicket,
  "ticket.unarchived": placeTicket,
  "ticket.archived": removeTicket,
  "ticket.deleted": removeTicket,
  "column.sorted": sortColumn,
};

// The columns themselves (the page's own markup) changed in the project's settings.
const COLUMN_EVENTS = new Set(["status.created", "status.updated", "status.deleted", "statuses.sorted"]);

function receive(frame) {
  if (COLUMN_EVENTS.has(frame.event)) notify("This board's columns were changed: reload the page to see them.");
  if (frame.event === "resync_required") {
    reloadBoard();
  } else if (queued) {
    queued.push(frame);
  } else if (lastSeq !== null && frame.seq <= lastSeq) {
    // Already part of the board we hold.
  } else if (lastSeq !== null && frame.seq > lastSeq + 1) {
    reloadBoard(frame);
  } else {
    const apply = APPLY[frame.event];
    apply?.(frame);
    lastSeq = frame.seq;
    if (apply) changed();
    board.dispatchEvent(new CustomEvent("board:frame", { detail: frame }));
  }
}

// Fetch and draw the whole board; frames arriving meanwhile wait in `queued`. Asked again while
// fetching (say, a reconnect), it fetches once more: the first answer may predate what was missed.
async function reloadBoard(...pending) {
  if (queued) {
    queued.push(...pending);
    reloadAgain = true;
    return;
  }
  queued = pending;
  do {
    reloadAgain = false;
    if (!(await fetchBoard())) return;
  } while (reloadAgain);
  // Queued frames may be older than the fetched board; every later change has a frame of its own
  // still to come, so applying them in order converges on the current board.
  const frames = queued.sort((a, b) => a.seq - b.seq);
  queued = null;
  lastSeq = null;
  frames.forEach(receive);
  board.dataset.synced = ""; // the board shown is the server's as of now (tests wait for it)
}

async function fetchBoard() {
  let response;
  try {
    response = await fetch(board.dataset.boardUrl, { headers: { Accept: "application/json" } });
  } catch {
    return true; // offline: the socket drops too, and its reconnect reloads
  }
  if (!response.ok || response.redirected) {
    window.location.reload(); // logged out, or no longer a member: the page itself says so
    return false;
  }
  drawBoard(await response.json());
  return true;
}

// ---- connection ----------------------------------------------------------------------------------

function connect() {
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  // Resuming needs a frame applied since the board was last drawn; before that, a reload after opening.
  const since = lastSeq === null || queued ? null : lastSeq;
  const query = since === null ? "" : `?since=${since}`;
  const socket = new WebSocket(`${scheme}://${window.location.host}${board.dataset.socketPath}${query}`);
  showStatus("connecting", "Connecting…");
  socket.addEventListener("open", () => {
    retries = 0;
    showStatus("live", "Live");
    if (since === null) reloadBoard(); // whatever happened while disconnected
  });
  socket.addEventListener("message", (event) => receive(JSON.parse(event.data)));
  socket.addEventListener("close", (event) => {
    if (event.code === ACCESS_LOST) {
      showStatus("lost", "No access");
      return;
    }
    // Exponential backoff with jitter, so a restarted server is not hit by every page at once.
    const delay = Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** retries) * (0.5 + Math.random() / 2);
    retries += 1;
    showStatus("offline", `Offline, retrying in ${Math.ceil(delay / 1000)} s`);
    setTimeout(connect, delay);
  });
}

function showStatus(state, text) {
  liveStatus.dataset.liveStatus = state;
  liveStatus.textContent = text;
}

// ---- messages ------------------------------------------------------------------------------------

const toast = document.querySelector("[data-toast]");
let toastTimer = null;

function notify(message) {
  toast.querySelector("[data-toast-text]").textContent = message;
  toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (toast.hidden = true), 8000);
}

toast.querySelector("[data-toast-close]").addEventListener("click", () => (toast.hidden = true));

window.trackerBoard = {
  element: board,
  projectId,
  userId,
  columns,
  can,
  cardOf,
  cardsOf,
  changed,
  notify,
  reload: () => reloadBoard(),
  ticket: (ticketId) => tickets.get(ticketId),
  ticketNumbered,
  payload: () => payload,
  statusLabel: (slug) => columns.get(slug)?.dataset.label ?? slug,
  ticketLink,
  updateCounts,
};

document.addEventListener("DOMContentLoaded", () => {
  drawBoard(JSON.parse(document.getElementById("board-data").textContent));
  connect();
});
