// The live board. It draws the board payload embedded in the page, then applies the frames of the
// project's websocket (decisions.md, "Real-time board", "Event log"). Frames carry a per-project `seq`:
// a reconnect asks for the frames after the last one applied (`?since=`), which the server replays from
// its event log; the whole board is fetched again only when the server answers `resync_required` (too
// far behind), after a gap, or when no frame was applied yet. Kinds the board does not draw (comments,
// time entries, …) only advance `seq`.
"use strict";

const ACCESS_LOST = 4403; // the server closed the socket for good: no membership any more
const MAX_RETRY_DELAY_MS = 30000;

const board = document.querySelector("[data-board]");
const columns = new Map(
  [...board.querySelectorAll("[data-status]")].map((column) => [column.dataset.status, column]),
);
const cardTemplate = document.getElementById("card-template");
const liveStatus = document.querySelector("[data-live-status]");

let lastSeq = null; // seq of the last frame applied; null when unknown (page load, after a refetch)
let queued = null; // frames received while the board is being fetched, applied once it is drawn
let reloadAgain = false;
let retries = 0;

// ---- drawing -------------------------------------------------------------------------------------

function drawBoard(payload) {
  for (const column of columns.values()) column.querySelector(".cards").replaceChildren();
  for (const { status, tickets } of payload.columns) {
    columns.get(status)?.querySelector(".cards").append(...tickets.map(drawCard));
  }
  updateCounts();
}

function drawCard(ticket) {
  const card = cardTemplate.content.firstElementChild.cloneNode(true);
  const field = (name) => card.querySelector(`[data-field="${name}"]`);
  card.dataset.ticketId = ticket.id;
  field("ref").textContent = ticket.prefix_ref;
  field("type").textContent = ticket.type;
  field("type").dataset.type = ticket.type;
  field("priority").textContent = ticket.priority ?? "";
  field("priority").dataset.priority = ticket.priority ?? "none";
  field("title").textContent = ticket.title;
  field("tags").append(...ticket.tags.map(drawTag));
  drawChecklist(field("checklist"), ticket);
  field("comments").textContent = ticket.reaction_count || "";
  field("comments").title = `${ticket.reaction_count} comments`;
  drawDeadline(field("deadline"), ticket.deadline);
  field("assignees").append(...ticket.assignees.map(drawAvatar));
  return card;
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

function isLight(hex) {
  const [r, g, b] = [1, 3, 5].map((start) => parseInt(hex.slice(start, start + 2), 16));
  return 0.299 * r + 0.587 * g + 0.114 * b > 160;
}

function updateCounts() {
  for (const column of columns.values()) {
    column.querySelector(".column-count").textContent = column.querySelector(".cards").childElementCount;
  }
}

// ---- frames --------------------------------------------------------------------------------------

function cardOf(ticketId) {
  return board.querySelector(`[data-ticket-id="${ticketId}"]`);
}

// A created, moved or unarchived ticket goes to the end of its column, an updated one stays in place;
// a ticket moved into a column the page does not show (hidden) just leaves.
function placeTicket({ ticket }) {
  const existing = cardOf(ticket.id);
  const cards = columns.get(ticket.status)?.querySelector(".cards");
  if (!cards) {
    existing?.remove();
    return;
  }
  const card = drawCard(ticket);
  if (existing?.parentElement === cards) existing.replaceWith(card);
  else {
    existing?.remove();
    cards.append(card);
  }
  card.classList.add("changed");
}

function removeTicket({ ticket }) {
  cardOf(ticket.id)?.remove();
}

function sortColumn({ status, ticket_ids: ticketIds }) {
  const cards = columns.get(status)?.querySelector(".cards");
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

function receive(frame) {
  if (frame.event === "resync_required") {
    reloadBoard();
  } else if (queued) {
    queued.push(frame);
  } else if (lastSeq !== null && frame.seq <= lastSeq) {
    // Already part of the board we hold.
  } else if (lastSeq !== null && frame.seq > lastSeq + 1) {
    reloadBoard(frame);
  } else {
    APPLY[frame.event]?.(frame);
    lastSeq = frame.seq;
    updateCounts();
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

drawBoard(JSON.parse(document.getElementById("board-data").textContent));
connect();
