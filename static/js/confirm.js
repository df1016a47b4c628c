// A question before a change that cannot be undone (delete, remove, rotate): `await trackerConfirm({title,
// text, yes})` is true when the person chose `yes`, false on Cancel or Escape. One dialog for the whole page.
"use strict";

window.trackerConfirm = (() => {
  const dialog = document.querySelector("[data-confirm-dialog]");
  return ({ title, text, yes }) => new Promise((resolve) => {
    const opener = document.activeElement;
    dialog.querySelector("[data-confirm-title]").textContent = title;
    dialog.querySelector("[data-confirm-text]").textContent = text;
    dialog.querySelector("[data-confirm-yes]").textContent = yes;
    dialog.returnValue = "";
    dialog.addEventListener("close", () => {
      if (opener?.isConnected) opener.focus();
      resolve(dialog.returnValue === "yes");
    }, { once: true });
    dialog.showModal();
  });
})();
