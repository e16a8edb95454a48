// Captain Helpdesk dashboard: the account switcher, and the poll that appends new messages to an open
// conversation without a reload. No framework: the server renders (and escapes) every fragment we insert.
(function () {
  "use strict";

  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });

  var root = document.getElementById("conversation");
  if (!root) { return; }
  var thread = document.getElementById("thread");
  var statusEl = document.getElementById("status");
  var banner = document.getElementById("changed-banner");
  var lastId = parseInt(root.dataset.lastId || "0", 10);
  var firstId = parseInt(root.dataset.firstId || "0", 10);
  var initialStatus = root.dataset.status;
  var interval = parseInt(root.dataset.pollInterval || "3000", 10);
  var busy = false;

  function poll() {
    if (busy || document.hidden) { return; }
    busy = true;
    var url = root.dataset.pollUrl + "?after=" + lastId + "&since=" + firstId;
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        if (data.html && data.html.trim()) {
          // Server-rendered with autoescaping (dashboard/partials/messages.html): safe to insert as HTML.
          thread.insertAdjacentHTML("beforeend", data.html);
          thread.lastElementChild && thread.lastElementChild.scrollIntoView({ block: "nearest" });
        }
        lastId = Math.max(lastId, data.last_id || 0);
        if (!firstId && lastId) { firstId = lastId; }
        Object.keys(data.deliveries || {}).forEach(function (id) {
          var el = thread.querySelector('[data-delivery="' + id + '"]');
          if (el && el.dataset.status !== data.deliveries[id]) {
            el.dataset.status = data.deliveries[id];
            el.textContent = data.deliveries[id] === "none" ? "Not sent" :
              data.deliveries[id].charAt(0).toUpperCase() + data.deliveries[id].slice(1);
            el.className = "delivery delivery-" + data.deliveries[id];
          }
        });
        if (data.status !== initialStatus) {
          statusEl.textContent = data.status_display;
          banner.hidden = false;
        }
      })
      .catch(function () { /* a missed poll is retried at the next tick */ })
      .finally(function () { busy = false; });
  }

  window.setInterval(poll, interval);
})();
