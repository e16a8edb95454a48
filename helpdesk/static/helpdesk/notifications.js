// The notification bell: live items, mark read without a reload, and an optional pop-up and sound.
//
// live.js owns the page's one EventSource and re-dispatches each event as a `helpdesk:event` CustomEvent on
// `document`; this file only listens (a second stream per tab would double the server's connections). Items are
// built with textContent, never HTML: the text comes from the server but is treated as untrusted here too.
(function () {
  "use strict";
  var bell = document.querySelector("[data-notif-bell]");
  if (!bell) { return; }
  var countEl = bell.querySelector("[data-notif-count]");
  var list = bell.querySelector("[data-notif-items]");
  var empty = bell.querySelector("[data-notif-empty]");
  var alertsBox = bell.querySelector("[data-notif-alerts]");
  var readAllForm = bell.querySelector("form[data-notif-read-all]");
  var userId = parseInt(bell.dataset.userId || "0", 10);
  var STORE_KEY = "helpdesk.notifications.alerts";
  var MAX_ITEMS = 8;
  var seen = {};
  var audio = null;

  function csrfToken() {
    var input = bell.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function setCount(n) {
    n = Math.max(0, n | 0);
    countEl.textContent = String(n);
    countEl.hidden = n === 0;
    bell.dataset.unread = String(n);
  }

  function currentCount() { return parseInt(countEl.textContent || "0", 10) || 0; }

  function readUrl(id) {
    // The server renders the URL for id 0; only the id segment changes.
    return bell.dataset.readUrl.replace(/\/0\/read\/$/, "/" + id + "/read/");
  }

  function post(url) {
    var body = new FormData();
    body.append("csrfmiddlewaretoken", csrfToken());
    return fetch(url, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      keepalive: true,
      headers: { "Accept": "application/json", "X-CSRFToken": csrfToken() }
    }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.json();
    });
  }

  function markRead(item) {
    var id = item.dataset.notifId;
    if (!item.classList.contains("unread")) { return Promise.resolve(); }
    return post(readUrl(id)).then(function (data) {
      item.classList.remove("unread");
      var form = item.querySelector("form[data-notif-read]");
      if (form) { form.remove(); }
      setCount(data.unread);
    });
  }

  function wireItem(item) {
    seen[item.dataset.notifId] = true;
    var form = item.querySelector("form[data-notif-read]");
    if (form) {
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        markRead(item).catch(function () { form.submit(); });
      });
    }
    var link = item.querySelector("a[data-notif-link]");
    if (link) {
      // Opening it reads it; keepalive lets the POST finish while the browser follows the link.
      link.addEventListener("click", function () { markRead(item).catch(function () {}); });
    }
  }

  // The conversation page offers a way back to the page the notification was opened from (`?from=`).
  function withOrigin(url) {
    var here = window.location.pathname + window.location.search;
    return url + (url.indexOf("?") < 0 ? "?" : "&") + "from=" + encodeURIComponent(here);
  }

  function buildItem(detail) {
    var item = document.createElement("li");
    item.className = "notif-item unread";
    item.dataset.notifId = String(detail.id);
    var link = document.createElement("a");
    link.setAttribute("data-notif-link", "");
    link.textContent = detail.text || bell.dataset.msgNew || "New notification";
    // Only a path of this site: an event is never a way to send someone elsewhere.
    var url = String(detail.url || "");
    link.href = /^\/(?!\/)/.test(url) ? withOrigin(url) : "#";
    item.appendChild(link);
    var meta = document.createElement("span");
    meta.className = "notif-meta";
    var when = document.createElement("time");
    when.textContent = bell.dataset.msgJustNow || "just now";
    meta.appendChild(when);
    var form = document.createElement("form");
    form.method = "post";
    form.action = readUrl(detail.id);
    form.setAttribute("data-notif-read", "");
    var token = document.createElement("input");
    token.type = "hidden";
    token.name = "csrfmiddlewaretoken";
    token.value = csrfToken();
    var button = document.createElement("button");
    button.type = "submit";
    button.className = "link";
    button.textContent = bell.dataset.msgMarkRead || "Mark read";
    form.appendChild(token);
    form.appendChild(button);
    meta.appendChild(form);
    item.appendChild(meta);
    return item;
  }

  function alertsEnabled() {
    try { return window.localStorage.getItem(STORE_KEY) === "on"; } catch (e) { return false; }
  }

  function beep() {
    // A short two-tone chime generated on the spot: no sound file to serve or cache.
    var Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) { return; }
    try {
      audio = audio || new Context();
      if (audio.state === "suspended") { audio.resume(); }
      var now = audio.currentTime;
      [880, 1320].forEach(function (freq, i) {
        var osc = audio.createOscillator();
        var gain = audio.createGain();
        osc.type = "sine";
        osc.frequency.value = freq;
        gain.gain.setValueAtTime(0.0001, now + i * 0.12);
        gain.gain.exponentialRampToValueAtTime(0.2, now + i * 0.12 + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.12 + 0.18);
        osc.connect(gain).connect(audio.destination);
        osc.start(now + i * 0.12);
        osc.stop(now + i * 0.12 + 0.2);
      });
      bell.dataset.lastSound = String(Date.now());
    } catch (e) { /* no sound is better than a broken page */ }
  }

  function popup(detail) {
    if (!("Notification" in window) || window.Notification.permission !== "granted") { return; }
    try {
      var shown = new window.Notification("Captain Helpdesk", { body: detail.text || "", tag: "helpdesk-" + detail.id });
      shown.onclick = function () {
        window.focus();
        if (/^\/(?!\/)/.test(String(detail.url || ""))) { window.location.href = withOrigin(detail.url); }
      };
      bell.dataset.lastPopup = String(detail.id);
    } catch (e) { /* some browsers only allow notifications from a service worker */ }
  }

  function onNotification(detail) {
    if (!detail || detail.id == null || seen[detail.id]) { return; }
    if (userId && detail.user_id != null && detail.user_id !== userId) { return; }
    var item = buildItem(detail);
    wireItem(item);
    list.insertBefore(item, list.firstChild);
    if (empty) { empty.hidden = true; }
    var items = list.querySelectorAll(".notif-item");
    for (var i = MAX_ITEMS; i < items.length; i++) { items[i].remove(); }
    setCount(currentCount() + 1);
    if (alertsEnabled()) {
      beep();
      popup(detail);
    }
  }

  document.addEventListener("helpdesk:event", function (event) {
    var detail = event.detail;
    if (detail && detail.type === "notification") { onNotification(detail); }
  });

  list.querySelectorAll(".notif-item").forEach(wireItem);

  if (readAllForm) {
    readAllForm.addEventListener("submit", function (event) {
      event.preventDefault();
      post(readAllForm.action).then(function (data) {
        list.querySelectorAll(".notif-item.unread").forEach(function (item) {
          item.classList.remove("unread");
          var form = item.querySelector("form[data-notif-read]");
          if (form) { form.remove(); }
        });
        setCount(data.unread);
      }).catch(function () { readAllForm.submit(); });
    });
  }

  if (alertsBox) {
    alertsBox.checked = alertsEnabled();
    alertsBox.addEventListener("change", function () {
      try { window.localStorage.setItem(STORE_KEY, alertsBox.checked ? "on" : "off"); } catch (e) { /* private mode */ }
      if (!alertsBox.checked) { return; }
      // Permission is asked here, on the person's own click, as browsers require; a refusal keeps the sound.
      if ("Notification" in window && window.Notification.permission === "default") {
        window.Notification.requestPermission();
      }
      beep();  // the click also unlocks audio for later notifications
    });
  }
})();
