// The composer tells the server a person is writing a reply, so the customer's website chat shows "typing"
// (helpdesk/views/typing.py). Only while "Reply to the customer" is chosen: a private note is for the team, and
// the customer must not even learn that one is being written. At most one signal every EVERY_MS, on typing
// only (the server throttles too, per conversation). Without JavaScript nothing is sent and nothing is missed.
(function () {
  "use strict";

  var EVERY_MS = 3000;
  var composer = document.getElementById("composer");
  var textarea = document.getElementById("composer-text");
  var url = composer && composer.dataset.typingUrl;
  if (!composer || !textarea || !url || !window.fetch) { return; }
  var csrf = composer.querySelector('input[name="csrfmiddlewaretoken"]');
  var last = 0;

  function replying() {
    // The radio itself, not data-kind: the `n` / `r` shortcuts and a click change it before anything else runs.
    var checked = composer.querySelector('input[name="kind"]:checked');
    return !checked || checked.value === "reply";
  }

  textarea.addEventListener("input", function () {
    if (!replying() || !textarea.value.trim()) { return; }
    var now = Date.now();
    if (now - last < EVERY_MS) { return; }
    last = now;
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf ? csrf.value : "" },
      keepalive: true
    }).catch(function () { /* best effort: the customer just sees no "typing" */ });
  });
})();
