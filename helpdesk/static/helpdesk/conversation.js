// The conversation page's composer and side panel: reply vs private note, the "/" canned-response picker, and
// keeping the page's state in step after a one-click action (htmx swaps the side panel; see
// templates/dashboard/partials/side_panel.html). No inline script: the CSP allows none.
(function () {
  "use strict";

  var root = document.getElementById("conversation");
  var composer = document.getElementById("composer");
  if (!root || !composer) { return; }

  // ---- reply or private note: the composer's look follows the choice (CSS keys on data-kind) ------------------
  function syncKind() {
    var checked = composer.querySelector('input[name="kind"]:checked');
    composer.dataset.kind = checked ? checked.value : "reply";
  }
  composer.addEventListener("change", function (event) {
    if (event.target.name === "kind") { syncKind(); }
  });
  syncKind();

  // ---- canned responses: "/" + letters opens a picker filtered as you type -------------------------------------
  var textarea = document.getElementById("composer-text");
  var picker = document.getElementById("canned-picker");
  var url = textarea && textarea.dataset.cannedUrl;
  var items = [];
  var active = -1;
  var token = null; // {start, end, query} of the "/word" being typed
  var requestSeq = 0;

  function currentToken() {
    var caret = textarea.selectionStart;
    if (caret !== textarea.selectionEnd) { return null; }
    var before = textarea.value.slice(0, caret);
    // A "/" at the start of the text or after whitespace, followed by a short code being typed.
    var match = /(^|\s)\/([^\s\/]{0,64})$/.exec(before);
    if (!match) { return null; }
    return { start: caret - match[2].length - 1, end: caret, query: match[2] };
  }

  function close() {
    // A lookup still in flight must not re-open what was just closed (Escape, an insert, a blur).
    requestSeq++;
    picker.hidden = true;
    picker.textContent = "";
    textarea.setAttribute("aria-expanded", "false");
    textarea.removeAttribute("aria-activedescendant");
    items = [];
    active = -1;
    token = null;
  }

  function highlight(index) {
    active = index;
    Array.prototype.forEach.call(picker.children, function (li, i) {
      li.classList.toggle("active", i === index);
      li.setAttribute("aria-selected", i === index ? "true" : "false");
      if (i === index) {
        textarea.setAttribute("aria-activedescendant", li.id);
        li.scrollIntoView({ block: "nearest" });
      }
    });
  }

  function render(results) {
    picker.textContent = "";
    items = results;
    if (!results.length) {
      var empty = document.createElement("li");
      empty.className = "empty";
      empty.textContent = (root.dataset.msgNoCanned || "No canned response matches “/{query}”.").replace("{query}", token.query);
      picker.appendChild(empty);
    }
    results.forEach(function (item, i) {
      // Built with textContent: a canned response is shown as text, never as HTML.
      var li = document.createElement("li");
      li.id = "canned-option-" + i;
      li.setAttribute("role", "option");
      li.dataset.shortCode = item.short_code;
      var code = document.createElement("strong");
      code.textContent = "/" + item.short_code;
      var text = document.createElement("span");
      text.className = "muted";
      text.textContent = " " + (item.content.length > 90 ? item.content.slice(0, 89) + "…" : item.content);
      li.appendChild(code);
      li.appendChild(text);
      li.addEventListener("mousedown", function (event) {
        event.preventDefault(); // keep the focus in the textarea
        insert(i);
      });
      picker.appendChild(li);
    });
    picker.hidden = false;
    textarea.setAttribute("aria-expanded", "true");
    highlight(results.length ? 0 : -1);
  }

  function insert(index) {
    var item = items[index];
    if (!item || !token) { return; }
    var value = textarea.value;
    textarea.value = value.slice(0, token.start) + item.content + value.slice(token.end);
    var caret = token.start + item.content.length;
    textarea.setSelectionRange(caret, caret);
    close();
    textarea.focus();
    textarea.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function lookup() {
    var found = currentToken();
    if (!found) { close(); return; }
    token = found;
    var seq = ++requestSeq;
    fetch(url + "?q=" + encodeURIComponent(found.query), {
      headers: { "Accept": "application/json" }, credentials: "same-origin"
    })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        // Only the latest request counts, and only while the "/" token is still being typed.
        if (!data || seq !== requestSeq || !currentToken()) { return; }
        render(data.results || []);
      })
      .catch(function () { close(); });
  }

  if (textarea && picker && url) {
    textarea.addEventListener("input", function (event) {
      if (event.isTrusted === false && picker.hidden) { return; }
      lookup();
    });
    textarea.addEventListener("click", function () { if (!picker.hidden) { lookup(); } });
    textarea.addEventListener("blur", function () { window.setTimeout(close, 150); });
    textarea.addEventListener("keydown", function (event) {
      if (picker.hidden) { return; }
      if (event.key === "ArrowDown" && items.length) {
        event.preventDefault();
        highlight((active + 1) % items.length);
      } else if (event.key === "ArrowUp" && items.length) {
        event.preventDefault();
        highlight((active - 1 + items.length) % items.length);
      } else if ((event.key === "Enter" || event.key === "Tab") && active >= 0) {
        event.preventDefault();
        insert(active);
      } else if (event.key === "Escape") {
        event.preventDefault();
        close();
      }
    });
  }

  // ---- one-click actions (htmx): keep the page's state in step with the swapped side panel --------------------
  document.body.addEventListener("htmx:afterSettle", function () {
    var status = document.getElementById("status");
    if (status && status.dataset.status) {
      // The poll compares the server's status with this: a change made here is not "changed elsewhere".
      root.dataset.status = status.dataset.status;
    }
    // On a phone the panel is full screen while it is the page's target ("Actions", #side-panel); the swapped-in
    // panel is a new element that is not the target, so it would fall back under the conversation after every
    // action. Target it again (replace: no new history entry).
    var panel = document.getElementById("side-panel");
    if (panel && window.location.hash === "#side-panel" && !panel.matches(":target")) {
      window.location.replace("#side-panel");
    }
  });
  document.body.addEventListener("htmx:responseError", function (event) {
    var result = document.getElementById("action-result");
    if (!result) { return; }
    var code = event.detail && event.detail.xhr ? event.detail.xhr.status : 0;
    // Texts in the page's language, rendered by the template (dashboard/conversation_detail.html).
    var say = document.getElementById("conversation").dataset;
    result.textContent = code === 403 ? (say.msgForbidden || "You may not do this (sign in again?).") :
      (say.msgFailed || "That did not work (error {code}). Reload the page and try again.").replace("{code}", code);
    result.classList.add("error");
    result.hidden = false;
  });
  document.body.addEventListener("htmx:sendError", function () {
    var result = document.getElementById("action-result");
    if (!result) { return; }
    result.textContent = document.getElementById("conversation").dataset.msgUnreachable ||
      "The server could not be reached. Try again.";
    result.classList.add("error");
    result.hidden = false;
  });
})();
