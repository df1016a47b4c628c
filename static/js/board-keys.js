// The board's keyboard: j / k to the next or previous card (as shown: filtered out ones are skipped), Enter
// opens it (the card's link), Esc closes (ticket-panel.js, the dialogs themselves), m its "Move to…", c adds a
// card to its column, / the filter, ? the list of keys. Keys typed into a field, or with Ctrl, Alt or Cmd, are
// the field's. The "Skip to the board" link, the first Tab stop of the page, lands on the first card.
"use strict";

(() => {
  const tb = window.trackerBoard;
  const keysDialog = document.querySelector("[data-keys-dialog]");

  const shownCards = () => [...tb.element.querySelectorAll(".ticket-card:not([hidden])")];
  const focusedCard = () => document.activeElement?.closest?.("[data-ticket-id]") ?? null;

  function focusCard(card) {
    const link = card?.querySelector(".card-open");
    if (!link) return;
    link.focus();
    card.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  function step(by) {
    const cards = shownCards();
    const index = cards.indexOf(focusedCard());
    focusCard(cards[index === -1 ? 0 : Math.min(Math.max(index + by, 0), cards.length - 1)]);
  }

  function addToColumn() {
    const column = focusedCard()?.closest("[data-status]") ?? tb.columns.values().next().value;
    const input = column?.querySelector("[data-add-ticket]:not([hidden]) [data-action=add-ticket]");
    input?.focus();
  }

  const KEYS = {
    j: () => step(1),
    k: () => step(-1),
    m: () => focusedCard()?.querySelector("[data-action=move]")?.click(),
    c: addToColumn,
    "/": () => document.querySelector("[data-filter=text]").focus(),
    "?": () => keysDialog.showModal(),
  };

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const typing = event.target.closest?.("input, textarea, select, [contenteditable], dialog");
    const action = KEYS[event.key];
    if (typing || !action || document.querySelector("dialog[open]")) return;
    event.preventDefault();
    action();
  });

  document.querySelector("[data-keys-open]").addEventListener("click", () => keysDialog.showModal());

  document.querySelector("[data-skip-to-board]").addEventListener("click", (event) => {
    const first = shownCards()[0];
    if (!first) return; // the link's own target, the board, takes the focus
    event.preventDefault();
    focusCard(first);
  });

  // The panel opens below the header, never over it: its top follows the header's height (which wraps on a
  // narrow screen).
  const topbar = document.querySelector("[data-topbar]");
  new ResizeObserver(() => {
    document.documentElement.style.setProperty("--topbar-height", `${topbar.offsetHeight}px`);
  }).observe(topbar);
})();
