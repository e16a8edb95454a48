// Captain Helpdesk dashboard: the account switcher, and the poll that appends new messages to an open
// conversation without a reload (run when live.js reports an event for it) and re-renders its actions when its
// status changed elsewhere. No framework: the server
// renders (and escapes) every fragment we insert.
(function () {
  "use strict";

  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });

  var root = document.getElementById("conversation");
  if (!root) { return; }
  var thread = document.getElementById("thread");
  var lastId = parseInt(root.dataset.lastId || "0", 10);
  var firstId = parseInt(root.dataset.firstId || "0", 10);
  // One-click actions (conversation.js, htmx) keep root.dataset.status current: a change made on this page is
  // not "changed elsewhere".
  var SETTLE_MS = 1500;
  // Live updates (live.js) trigger the poll when an event for this conversation arrives. The timer is a safety
  // net: every minute while the stream is open (an event lost), at the page's own interval while it is not
  // (Redis away, a server without streaming): the page then behaves as it did before live updates.
  var FALLBACK_MS = 60000;
  var downInterval = parseInt(root.dataset.pollInterval || "3000", 10);
  var match = /\/conversations\/(\d+)\//.exec(root.dataset.pollUrl || "");
  var conversationId = match ? parseInt(match[1], 10) : null;
  var busy = false;
  var again = false;
  var lastPoll = Date.now();

  function poll() {
    if (busy) { again = true; return; }
    if (document.hidden) { again = true; return; }  // polled when the tab is shown again
    busy = true;
    lastPoll = Date.now();
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
            // The status's name in the page's language (data-msg-delivery-* on #conversation).
            var status = data.deliveries[id];
            el.textContent = root.dataset["msgDelivery" + status.charAt(0).toUpperCase() + status.slice(1)] ||
              (status === "none" ? "Not sent" : status.charAt(0).toUpperCase() + status.slice(1));
            el.className = "delivery delivery-" + data.deliveries[id];
          }
        });
        if (data.status !== root.dataset.status) {
          // The event of this page's own action can beat its htmx swap: decide once the swap has settled.
          var seen = data.status;
          setTimeout(function () {
            if (seen !== root.dataset.status) { refreshActions(seen); }
          }, SETTLE_MS);
        }
      })
      .catch(function () { /* a missed poll is retried at the next event or by the safety net */ })
      .finally(function () {
        busy = false;
        if (again) { again = false; poll(); }
      });
  }

  // Someone else changed the status (a colleague resolved it, the AI handed it over): the status line, the
  // escalation box, the side panel's actions and the list beside are fetched again from the page itself, so a
  // resolved conversation no longer offers Take over or Resolve. What is typed in the reply box stays.
  var REGIONS = ["side-panel", "status", "escalation"];
  function refreshActions(status) {
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Live-Refresh": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        REGIONS.forEach(function (id) {
          var old = document.getElementById(id);
          var next = fresh.getElementById(id);
          if (!old || !next) { return; }
          // Server-rendered with autoescaping, from the same page the browser would load.
          old.replaceWith(next);
          if (window.htmx) { window.htmx.process(next); }  // its one-click forms work again
        });
        var pane = document.querySelector(".queue-pane");
        var freshPane = fresh.querySelector(".queue-pane");
        if (pane && freshPane) { pane.innerHTML = freshPane.innerHTML; }
        root.dataset.status = status;
      })
      .catch(function () { /* the next event or the safety-net poll tries again */ });
  }

  document.addEventListener("helpdesk:event", function (e) {
    var event = e.detail || {};
    if (event.type === "resync" || (conversationId !== null && event.conversation_id === conversationId)) { poll(); }
  });
  document.addEventListener("helpdesk:live-state", function (e) {
    if (e.detail === "open" && Date.now() - lastPoll > 1000) { poll(); }  // back after an outage
  });
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && again) { again = false; poll(); }
  });
  window.setInterval(function () {
    var open = document.body.dataset.liveState === "open";
    if (Date.now() - lastPoll >= (open ? FALLBACK_MS : downInterval)) { poll(); }
  }, Math.min(downInterval, 5000));
})();
