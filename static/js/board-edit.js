// Changing the board: drag a card (SortableJS, static/vendor/sortablejs), move it from its "Move to…"
// dialog (the keyboard's way to do the same), add a ticket at the foot of a column.
//
// A card lands where it is dropped: the page sends a relative move (`after_id` the card now above it, or
// `before_id` the card below it, decisions.md "API conventions for integrators"). A contributor may only
// reorder a column, which the API does by `tickets/sort`. The card moves at once; if the API refuses, it
// goes back where it was and a message says why. The move's frame then confirms the place for everyone.
"use strict";

(() => {
  const { element: board, projectId } = window.trackerBoard;
  const api = window.trackerApi;
  const ticketsUrl = `/api/v1/projects/${projectId}/tickets`;

  // ---- one move, however it was asked for --------------------------------------------------------

  // `card` already stands where it should land; `origin` says where it stood: {cards, next}.
  async function commitMove(card, origin) {
    const ticket = window.trackerBoard.ticket(Number(card.dataset.ticketId));
    const cards = card.parentElement;
    const status = cards.closest("[data-status]").dataset.status;
    const started = performance.now();
    window.trackerBoard.changed();
    try {
      if (status === ticket.status && !window.trackerBoard.can("edit")) {
        const ids = [...cards.querySelectorAll("[data-ticket-id]")].map((each) => Number(each.dataset.ticketId));
        await api.post(`${ticketsUrl}/sort`, { status, ticket_ids: ids });
      } else {
        await api.post(`${ticketsUrl}/${ticket.project_ticket_number}/move`, { status, ...placeOf(card) });
      }
      measure("board:move", started); // the drop until the API's answer
    } catch (error) {
      putBack(card, origin);
      window.trackerBoard.notify(`${ticket.prefix_ref} was not moved. ${api.explain(error)}.`);
      if (error.status === 403) window.trackerBoard.reload(); // the role changed: the board shows the new one
    }
  }

  // User Timing (DevTools, bench/board_page.py), the last one of each name only.
  function measure(name, started) {
    performance.clearMeasures(name);
    performance.measure(name, { start: started });
  }

  function placeOf(card) {
    const above = card.previousElementSibling;
    const below = card.nextElementSibling;
    if (above) return { after_id: Number(above.dataset.ticketId) };
    if (below) return { before_id: Number(below.dataset.ticketId) };
    return {}; // an empty column: its end is its only place
  }

  function putBack(card, { cards, next }) {
    if (next?.parentElement === cards) cards.insertBefore(card, next);
    else if (next === null) cards.append(card);
    else {
      window.trackerBoard.reload(); // the board changed meanwhile: the server knows best
      return;
    }
    window.trackerBoard.changed();
  }

  // ---- drag and drop ---------------------------------------------------------------------------------

  let origin = null;
  const sortables = [];

  for (const column of window.trackerBoard.columns.values()) {
    sortables.push(window.Sortable.create(column.querySelector(".cards"), {
      group: { name: "board", pull: () => window.trackerBoard.can("edit"), put: () => window.trackerBoard.can("edit") },
      draggable: ".ticket-card",
      filter: "[data-action=move]",
      preventOnFilter: false,
      // Pointer events rather than the browser's own drag and drop: the same on mouse, pen and touch, and a
      // drop lands on the place the placeholder shows. On touch a short press starts a drag, so that a
      // swipe still scrolls the columns.
      forceFallback: true,
      fallbackOnBody: true,
      delayOnTouchOnly: true,
      delay: 150,
      ghostClass: "card-placeholder",
      // The placeholder goes above a card while the pointer is on its upper half and below it on its lower half,
      // whichever way the drag came from (SortableJS alone swaps by direction: moving down over a card's upper
      // half put the card below it); the drop lands where the placeholder shows.
      onMove(event, pointerEvent) {
        if (!event.related.matches(".ticket-card")) return true;
        const y = pointerEvent.touches?.[0]?.clientY ?? pointerEvent.clientY;
        return y < event.relatedRect.top + event.relatedRect.height / 2 ? -1 : 1;
      },
      dragClass: "card-dragged",
      onStart(event) {
        origin = { cards: event.from, next: event.item.nextElementSibling };
        board.classList.add("dragging");
      },
      onEnd(event) {
        board.classList.remove("dragging");
        suppressNextClick(event.item);
        if (event.from === event.to && event.oldIndex === event.newIndex) return;
        commitMove(event.item, origin);
      },
    }));
  }

  // The click that ends a drag is not a click on the card.
  function suppressNextClick(card) {
    const swallow = (event) => event.preventDefault();
    card.addEventListener("click", swallow, { capture: true, once: true });
    setTimeout(() => card.removeEventListener("click", swallow, { capture: true }), 0);
  }

  // Cards slide aside as a card passes them, but not in a long column: SortableJS measures and animates
  // every card of the column at each step, which made a drag over a 400-card column crawl (bench/board_page.py).
  const ANIMATED_UP_TO = 100;

  board.addEventListener("board:changed", () => {
    for (const sortable of sortables) {
      sortable.option("disabled", !window.trackerBoard.can("sort"));
      sortable.option("animation", sortable.el.childElementCount <= ANIMATED_UP_TO ? 120 : 0);
    }
  });

  // ---- "Move to…" ------------------------------------------------------------------------------------

  const dialog = document.querySelector("[data-move-dialog]");
  const form = dialog.querySelector("[data-move-form]");
  const columnSelect = form.elements.status;
  const positionSelect = form.elements.position;
  let moving = null; // the card whose dialog is open

  board.addEventListener("click", (event) => {
    const button = event.target.closest("[data-action=move]");
    if (button) openMoveDialog(button.closest("[data-ticket-id]"));
  });

  function openMoveDialog(card) {
    moving = card;
    const ticket = window.trackerBoard.ticket(Number(card.dataset.ticketId));
    dialog.querySelector("[data-move-ref]").textContent = ticket.prefix_ref;
    const current = card.closest("[data-status]").dataset.status;
    const reachable = window.trackerBoard.can("edit") ? [...window.trackerBoard.columns.keys()] : [current];
    columnSelect.replaceChildren(...reachable.map((slug) => option(slug, window.trackerBoard.statusLabel(slug))));
    columnSelect.value = current;
    fillPositions();
    dialog.returnValue = ""; // Escape closes without a value of its own
    dialog.showModal();
    columnSelect.focus();
  }

  // Every place in the chosen column: first, or after each of its cards (but the one moving).
  function fillPositions() {
    const cards = window.trackerBoard.cardsOf(columnSelect.value);
    const others = [...cards.children].filter((card) => card !== moving);
    const choices = [option("first", "At the top")];
    for (const card of others) {
      const ticket = window.trackerBoard.ticket(Number(card.dataset.ticketId));
      choices.push(option(`after:${card.dataset.ticketId}`, `After ${ticket.prefix_ref} ${ticket.title}`));
    }
    positionSelect.replaceChildren(...choices);
    const above = moving.parentElement === cards ? moving.previousElementSibling : others.at(-1);
    positionSelect.value = above ? `after:${above.dataset.ticketId}` : "first";
  }

  function option(value, text) {
    const element = document.createElement("option");
    element.value = value;
    element.textContent = text;
    return element;
  }

  columnSelect.addEventListener("change", fillPositions);

  dialog.addEventListener("close", () => {
    const card = moving;
    moving = null;
    if (dialog.returnValue !== "move" || !card.isConnected) {
      card?.querySelector("[data-action=move]")?.focus();
      return;
    }
    const cards = window.trackerBoard.cardsOf(columnSelect.value);
    const from = { cards: card.parentElement, next: card.nextElementSibling };
    const position = positionSelect.value;
    const above = position === "first" ? null : window.trackerBoard.cardOf(position.slice("after:".length));
    if (above) above.after(card);
    else cards.prepend(card);
    card.querySelector("[data-action=move]")?.focus();
    if (from.cards !== card.parentElement || from.next !== card.nextElementSibling) commitMove(card, from);
  });

  // ---- add a ticket ------------------------------------------------------------------------------------

  board.addEventListener("submit", async (event) => {
    const addForm = event.target.closest("[data-add-ticket]");
    if (!addForm) return;
    event.preventDefault();
    const input = addForm.querySelector("[data-action=add-ticket]");
    const title = input.value.trim();
    if (!title) return;
    const status = addForm.closest("[data-status]").dataset.status;
    input.disabled = true;
    try {
      await api.post(ticketsUrl, { title, status });
      input.value = ""; // the ticket.created frame draws the card
    } catch (error) {
      window.trackerBoard.notify(`The ticket was not added. ${api.explain(error)}.`);
    } finally {
      input.disabled = false;
      input.focus();
    }
  });
})();
