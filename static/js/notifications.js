// The header's unread-notification badge, kept current by the user's notification socket
// (decisions.md, "Notifications"): every frame carries the new unread count. Frames sent while the
// socket was down are lost, so after a reconnect the count is read once more from the session route.
(() => {
  const badge = document.querySelector("[data-notification-badge]");
  if (!badge) return;
  const counter = badge.querySelector("[data-unread-count]");
  const ACCESS_LOST = 4403; // token revoked or user deactivated: reconnecting will not help
  let delay = 1000;

  function show(count) {
    counter.textContent = String(count);
    badge.classList.toggle("has-unread", count > 0);
  }

  async function refresh() {
    try {
      const response = await fetch(badge.dataset.countUrl, { credentials: "same-origin" });
      if (response.ok) show((await response.json()).count);
    } catch {
      // offline: the next reconnect reads it again
    }
  }

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
      if (frame.event === "notification.created") show(frame.unread_count);
    });
    socket.addEventListener("close", (event) => {
      delete badge.dataset.live;
      if (event.code === ACCESS_LOST) return;
      setTimeout(() => connect(true), delay);
      delay = Math.min(delay * 2, 30000);
    });
  }

  connect(false);
})();
