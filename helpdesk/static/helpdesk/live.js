// Live updates: ONE EventSource per tab on the account's event stream (body[data-events-url]).
//
// Every event is re-dispatched on `document` as a `helpdesk:event` CustomEvent (detail = the event object) for
// the other scripts of the page (notifications, the conversation page's poll in dashboard.js). The stream state
// is announced as `helpdesk:live-state` (detail: "open" | "down") and kept in body[data-live-state].
//
// On list pages (regions marked [data-live-region]) a conversation or message event refreshes the list and the
// folder counts without a reload: the current URL is fetched once for a burst of events and each marked region
// is swapped for its new version. Events carry ids only; the HTML comes from the ordinary, access-checked page.
// On a conversation page only the sidebar's folder counts follow (lists/counts.json).
(function () {
  "use strict";

  var url = document.body.dataset.eventsUrl;
  if (!url || !window.EventSource) { return; }

  var REOPEN_MS = 60000;   // after a refusal (503: Redis away) or a closed stream, try again this much later
  var BURST_MS = 150;      // events within this window share one refresh
  var source = null;
  var wasDown = false;

  function setState(state) {
    if (document.body.dataset.liveState === state) { return; }
    document.body.dataset.liveState = state;
    document.dispatchEvent(new CustomEvent("helpdesk:live-state", { detail: state }));
  }

  function dispatch(event) {
    document.dispatchEvent(new CustomEvent("helpdesk:event", { detail: event }));
  }

  // ---- list pages: refresh the marked regions -------------------------------------------------------
  var isListPage = !document.getElementById("conversation") &&
    document.querySelector('[data-live-region]') !== null;
  var timer = null;
  var inFlight = false;
  var again = false;

  function busyRegion(region) {
    // Never take away what someone is doing: a focused control or a ticked box inside the region.
    return region.contains(document.activeElement) && document.activeElement !== document.body ||
      region.querySelector("input:checked") !== null;
  }

  function refreshList() {
    timer = null;
    if (inFlight) { again = true; return; }
    inFlight = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Live-Refresh": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live-region]").forEach(function (region) {
          var name = region.dataset.liveRegion;
          var next = fresh.querySelector('[data-live-region="' + name + '"]');
          if (!next || busyRegion(region)) { return; }
          if (region.innerHTML !== next.innerHTML) {
            // Server-rendered with autoescaping, from the same page the browser would load.
            region.innerHTML = next.innerHTML;
          }
        });
        document.dispatchEvent(new CustomEvent("helpdesk:list-refreshed"));
      })
      .catch(function () { /* the next event or the reconnect refreshes again */ })
      .finally(function () {
        inFlight = false;
        if (again) { again = false; scheduleRefresh(); }
      });
  }

  function scheduleRefresh() {
    if (!isListPage || timer !== null) { return; }
    timer = window.setTimeout(refreshList, BURST_MS);
  }

  // ---- an open conversation: the sidebar's folder counts ------------------------------------------------
  // The conversation page is not re-fetched on every event (its own poll keeps the thread); only the counts are,
  // as JSON with the page's filters, once for a burst of events.
  var counts = isListPage ? null : document.querySelector("ul.folders[data-counts-url]");
  var countsTimer = null;

  function refreshCounts() {
    countsTimer = null;
    fetch(counts.dataset.countsUrl + window.location.search, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data || !data.counts) { return; }
        counts.querySelectorAll("[data-folder-count]").forEach(function (span) {
          var value = data.counts[span.dataset.folderCount];
          if (typeof value === "number") { span.textContent = String(value); }
        });
      })
      .catch(function () { /* the next event refreshes again */ });
  }

  function scheduleCounts() {
    if (counts === null || countsTimer !== null) { return; }
    countsTimer = window.setTimeout(refreshCounts, BURST_MS);
  }

  // ---- the stream ------------------------------------------------------------------------------------
  function open() {
    source = new EventSource(url);
    source.onopen = function () {
      setState("open");
      if (wasDown) { wasDown = false; scheduleRefresh(); }  // events may have been missed meanwhile
    };
    source.onmessage = function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      if (!event || typeof event !== "object") { return; }
      dispatch(event);
      if (event.type === "conversation" || event.type === "message" || event.type === "resync") {
        scheduleRefresh();
        scheduleCounts();
      }
    };
    source.onerror = function () {
      setState("down");
      wasDown = true;
      if (source.readyState === EventSource.CLOSED) {
        // Refused (503) or not a stream: EventSource gives up, so we try again later ourselves.
        source = null;
        window.setTimeout(open, REOPEN_MS);
      }
      // Otherwise EventSource reconnects by itself after the server's retry hint.
    };
  }

  // While the stream is down, lists still refresh now and then (the conversation page has its own poll).
  window.setInterval(function () {
    if (document.body.dataset.liveState !== "open" && !document.hidden) { scheduleRefresh(); }
  }, REOPEN_MS);

  setState("down");
  open();
  window.addEventListener("pagehide", function () { if (source) { source.close(); source = null; } });
  window.addEventListener("pageshow", function (e) {
    if (e.persisted && source === null) { wasDown = true; open(); }  // back from the page cache
  });
})();
