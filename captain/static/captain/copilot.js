// The copilot under the reply box (templates/captain/partials/copilot.html; captain/copilot/views/copilot.py).
// A button posts the request, the text streams into the reply box (or the summary box) as it is generated, and
// when the stream ends (or cannot be opened: no live server, a proxy) the final result is read from the status
// URL, which is the source of truth. Nothing is ever sent to the customer from here: the agent edits the text
// and presses Send, the page's ordinary reply. No inline script: the CSP allows none.
(function () {
  "use strict";

  var panel = document.getElementById("copilot");
  if (!panel) { return; }
  var form = panel.closest("form");
  var textarea = form ? form.querySelector('textarea[name="content"]') : null;
  if (!textarea) { return; }
  var startUrl = panel.dataset.startUrl;
  var buttons = panel.querySelectorAll("[data-copilot-kind]");
  var statusLine = panel.querySelector("[data-copilot-status]");
  var summaryBox = panel.querySelector("[data-copilot-summary]");
  var summaryText = panel.querySelector("[data-copilot-summary-text]");
  var sourcesBox = panel.querySelector("[data-copilot-sources]");
  var sourceList = panel.querySelector("[data-copilot-source-list]");
  var REWRITES = { rephrase: true, fix_tone: true, translate: true };
  var POLL_MS = 1000;
  var POLL_LIMIT_MS = 180000;
  // The status lines come from the panel's data-msg-* attributes, rendered in the person's language through the
  // same catalog as the page (no JavaScript catalog to load); the English here is only a fallback.
  function msg(name, fallback) {
    return panel.dataset["msg" + name] || fallback;
  }
  var WORKING = {
    draft: msg("WorkingDraft", "Drafting a reply…"),
    summary: msg("WorkingSummary", "Summarising the conversation…"),
    rephrase: msg("WorkingRephrase", "Rephrasing your text…"),
    fix_tone: msg("WorkingFixTone", "Fixing the tone…"),
    translate: msg("WorkingTranslate", "Translating into the customer's language…")
  };
  var READY = {
    draft: msg("ReadyDraft", "Draft ready: edit it as you like, then press Send."),
    summary: msg("ReadySummary", "Summary ready (only you see it)."),
    rephrase: msg("ReadyRephrase", "Rephrased: check it, then press Send."),
    fix_tone: msg("ReadyFixTone", "Tone fixed: check it, then press Send."),
    translate: msg("ReadyTranslate", "Translated: check it, then press Send.")
  };
  var current = null; // {kind, before, streamed, source, finished}

  function setStatus(text, isError) {
    statusLine.textContent = text;
    statusLine.hidden = !text;
    statusLine.classList.toggle("error", !!isError);
  }

  function setBusy(busy) {
    panel.dataset.busy = busy ? "true" : "false";
    for (var i = 0; i < buttons.length; i++) { buttons[i].disabled = busy; }
  }

  function putText(text) {
    textarea.value = text;
    // Other scripts of the composer (the canned-response picker) follow the box through its input events.
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function showSources(sources) {
    sourceList.textContent = "";
    (sources || []).forEach(function (s) {
      var item = document.createElement("li");
      var title = s.title || s.url || "Knowledge " + s.number;
      if (s.url && /^https?:\/\//i.test(s.url)) {
        var link = document.createElement("a");
        link.href = s.url;
        link.textContent = title;
        link.target = "_blank";
        link.rel = "noopener noreferrer";
        item.appendChild(link);
      } else {
        item.textContent = title;
      }
      if (s.number) { item.value = s.number; }
      sourceList.appendChild(item);
    });
    sourcesBox.hidden = !(sources && sources.length);
  }

  function csrfToken() {
    var input = form.querySelector('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : "";
  }

  function finish(run) {
    if (!current || current.finished) { return; }
    current.finished = true;
    if (current.source) { current.source.close(); }
    var kind = current.kind;
    if (run.status === "done") {
      if (kind === "summary") {
        summaryText.textContent = run.output;
        summaryBox.hidden = false;
      } else {
        putText(run.output);
        textarea.focus();
      }
      showSources(kind === "draft" ? run.sources : []);
      setStatus(READY[kind] || msg("Done", "Done."), false);
    } else {
      // Whatever streamed before the failure is not the result: the agent gets their own text back.
      if (kind !== "summary" && current.streamed) { putText(current.before); }
      setStatus(run.error || msg("Failed", "The copilot failed. Try again."), true);
    }
    panel.dataset.lastRun = String(run.id);
    panel.dataset.lastStatus = run.status;
    current = null;
    setBusy(false);
  }

  function poll(statusUrl, startedAt) {
    if (!current) { return; }
    fetch(statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(function (run) {
        if (run.finished) { finish(run); return; }
        if (Date.now() - startedAt > POLL_LIMIT_MS) {
          finish({ id: run.id, status: "failed", error: msg("TooLong", "The copilot is taking too long. Try again later.") });
          return;
        }
        setTimeout(function () { poll(statusUrl, startedAt); }, POLL_MS);
      })
      .catch(function () {
        if (Date.now() - startedAt > POLL_LIMIT_MS) {
          finish({ status: "failed", error: msg("Unreadable", "The copilot's result could not be read. Try again.") });
          return;
        }
        setTimeout(function () { poll(statusUrl, startedAt); }, POLL_MS * 2);
      });
  }

  function follow(urls) {
    var startedAt = Date.now();
    var state = current;
    var stopped = false;
    function stopStreaming() {
      if (stopped) { return; }
      stopped = true;
      if (state.source) { state.source.close(); }
      poll(urls.status_url, startedAt);
    }
    if (typeof EventSource === "undefined") { stopStreaming(); return; }
    var source = new EventSource(urls.stream_url);
    state.source = source;
    source.onmessage = function (event) {
      var message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      if (message.type === "thought" && typeof message.text === "string" && !state.finished) {
        state.text += message.text;
        state.streamed = true;
        if (state.kind === "summary") {
          summaryText.textContent = state.text;
          summaryBox.hidden = false;
        } else {
          putText(state.text);
        }
      } else if (message.type === "end") {
        stopStreaming();
      }
    };
    // A stream that cannot open or breaks: the stored result is read instead (no automatic reconnect).
    source.onerror = stopStreaming;
  }

  function start(kind) {
    if (current) { return; }
    var text = textarea.value;
    if (REWRITES[kind] && !text.trim()) {
      setStatus(msg("TypeFirst", "Type your text in the reply box first; the copilot rewrites what you wrote."), true);
      textarea.focus();
      return;
    }
    var body = new FormData();
    body.append("kind", kind);
    if (REWRITES[kind]) { body.append("text", text); }
    current = { kind: kind, before: text, text: "", streamed: false, source: null, finished: false };
    setBusy(true);
    setStatus(WORKING[kind] || msg("Working", "Working…"), false);
    if (kind !== "summary") { showSources([]); }
    fetch(startUrl, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" }
    })
      .then(function (response) {
        return response.json().then(
          function (data) { return { ok: response.ok, data: data }; },
          function () { return { ok: false, data: {} }; }
        );
      })
      .then(function (result) {
        if (!result.ok) {
          finish({ status: "failed", error: result.data.error || msg("NoStart", "The copilot could not start. Try again.") });
          return;
        }
        follow(result.data);
      })
      .catch(function () {
        finish({ status: "failed", error: msg("Unreachable", "The copilot could not be reached. Check your connection.") });
      });
  }

  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener("click", function (event) {
      event.preventDefault();
      start(event.currentTarget.dataset.copilotKind);
    });
  }
  var close = panel.querySelector("[data-copilot-close]");
  if (close) {
    close.addEventListener("click", function () { summaryBox.hidden = true; });
  }
})();
