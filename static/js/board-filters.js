// Filters of the board: by text (title, reference, tag names), assignee and tag, and "my tickets", applied
// as they are typed or chosen, without a reload. They hide cards; the board and its order stay whole, so a
// drag or a frame while filtering still works on the real board.
"use strict";

(() => {
  const { element: board, userId } = window.trackerBoard;
  const toolbar = document.querySelector(".board-toolbar");
  const control = (name) => toolbar.querySelector(`[data-filter="${name}"]`);
  const text = control("text");
  const assignee = control("assignee");
  const tag = control("tag");
  const mine = control("mine");
  const clear = control("clear");
  const summary = toolbar.querySelector("[data-filter-summary]");

  function criteria() {
    return {
      words: text.value.toLowerCase().split(/\s+/).filter(Boolean),
      assignee: mine.getAttribute("aria-pressed") === "true" ? String(userId) : assignee.value,
      tag: tag.value,
    };
  }

  function matches(ticket, { words, assignee: who, tag: tagId }) {
    const haystack = [ticket.title, ticket.prefix_ref, ...ticket.tags.map((each) => each.name)].join(" ").toLowerCase();
    if (!words.every((word) => haystack.includes(word))) return false;
    if (who === "none" && ticket.assignees.length) return false;
    if (who && who !== "none" && !ticket.assignees.some((user) => String(user.id) === who)) return false;
    return !tagId || ticket.tags.some((each) => String(each.id) === tagId);
  }

  function apply() {
    const started = performance.now();
    const wanted = criteria();
    const active = wanted.words.length > 0 || wanted.assignee !== "" || wanted.tag !== "";
    let shown = 0;
    let total = 0;
    for (const card of board.querySelectorAll("[data-ticket-id]")) {
      const visible = !active || matches(window.trackerBoard.ticket(Number(card.dataset.ticketId)), wanted);
      if (card.hidden === visible) card.hidden = !visible;
      shown += visible;
      total += 1;
    }
    clear.hidden = !active;
    summary.textContent = active ? `${shown} of ${total} tickets shown` : "";
    window.trackerBoard.updateCounts();
    performance.clearMeasures("board:filter"); // User Timing (DevTools, bench/board_page.py): the last one
    performance.measure("board:filter", { start: started });
  }

  // The choices follow the board's members and tags (as of the board's last load), keeping what is chosen.
  let filledFrom = null;

  function fillChoices() {
    const payload = window.trackerBoard.payload();
    if (payload === filledFrom) return;
    filledFrom = payload;
    const { members, tags } = payload;
    refill(assignee, 2, members.map((member) => [member.id, member.name]));
    refill(tag, 1, tags.map((each) => [each.id, each.name]));
  }

  function refill(select, fixed, entries) {
    const chosen = select.value;
    const options = entries.map(([value, label]) => new Option(label, value));
    select.replaceChildren(...[...select.options].slice(0, fixed), ...options);
    select.value = [...select.options].some((each) => each.value === chosen) ? chosen : "";
  }

  text.addEventListener("input", apply);
  assignee.addEventListener("change", () => {
    mine.setAttribute("aria-pressed", "false");
    apply();
  });
  tag.addEventListener("change", apply);
  mine.addEventListener("click", () => {
    const pressed = mine.getAttribute("aria-pressed") !== "true";
    mine.setAttribute("aria-pressed", String(pressed));
    if (pressed) assignee.value = "";
    apply();
  });
  clear.addEventListener("click", () => {
    text.value = "";
    assignee.value = "";
    tag.value = "";
    mine.setAttribute("aria-pressed", "false");
    apply();
    text.focus();
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && text.value) {
      text.value = "";
      apply();
    }
  });

  board.addEventListener("board:changed", () => {
    fillChoices();
    apply();
  });
})();
