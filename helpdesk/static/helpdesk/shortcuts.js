// Keyboard shortcuts of the dashboard (the `?` overlay, templates/dashboard/partials/shortcuts.html, lists them).
// Single keys act only when no text field has the focus, so typing is never taken for a command; Ctrl/Cmd+Enter
// in the reply box sends it. Each shortcut clicks or follows what is on the page (a link, an htmx button), so it
// does exactly what the mouse does, through the same views and checks.
(function () {
  "use strict";

  var dialog = document.getElementById("shortcuts");
  var composer = document.getElementById("composer");
  var text = document.getElementById("composer-text");
  var picker = document.getElementById("canned-picker");

  function typing(target) {
    if (!target || !target.tagName) { return false; }
    var tag = target.tagName.toLowerCase();
    return tag === "textarea" || tag === "select" || target.isContentEditable ||
      (tag === "input" && !/^(checkbox|radio|button|submit)$/i.test(target.type || ""));
  }

  function follow(selector) {
    var link = document.querySelector(selector);
    if (link && link.href) { window.location.href = link.href; return true; }
    return false;
  }

  function press(selector) {
    var button = document.querySelector(selector);
    if (button && !button.disabled) { button.click(); return true; }
    return false;
  }

  function compose(kind) {
    if (!composer || !text) { return false; }
    var radio = composer.querySelector('input[name="kind"][value="' + kind + '"]');
    if (radio && !radio.checked) {
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
    }
    text.focus();
    return true;
  }

  function assignToMe() {
    var select = document.querySelector("select[name=assignee][data-me]");
    if (!select) { return false; }
    select.value = select.dataset.me;
    var button = select.form && select.form.querySelector("button[type=submit]");
    if (button) { button.click(); }
    return true;
  }

  function search() {
    var box = document.querySelector(".filters input[name=q]");
    if (box) { box.focus(); box.select(); return true; }
    // On a conversation: its list, with the search box ready.
    var back = document.querySelector("a[data-shortcut-back]");
    if (back) { window.location.href = back.href + "#search"; return true; }
    return false;
  }

  // On a list: j/k move between conversations, Enter (the link's own) opens one.
  function moveInList(step) {
    var links = Array.prototype.slice.call(document.querySelectorAll("tr[data-conversation] td.customer a"));
    if (!links.length) { return false; }
    var at = links.indexOf(document.activeElement);
    var next = at < 0 ? (step > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, at + step));
    links[next].focus();
    links[next].closest("tr").scrollIntoView({ block: "nearest" });
    return true;
  }

  var COMMANDS = {
    "j": function () { return follow("a[data-shortcut-next]") || moveInList(1); },
    "k": function () { return follow("a[data-shortcut-previous]") || moveInList(-1); },
    "u": function () { return follow("a[data-shortcut-back]"); },
    "r": function () { return compose("reply"); },
    "n": function () { return compose("note"); },
    "e": function () { return press("button[data-action=resolve]"); },
    "a": assignToMe,
    "m": function () {
      var picker = document.querySelector("select[data-macro-picker]");
      if (!picker) { return false; }
      picker.focus();
      return true;
    },
    "/": search,
    "?": function () {
      if (!dialog) { return false; }
      if (dialog.open) { dialog.close(); } else { dialog.showModal(); }
      return true;
    }
  };

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) { return; }
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target === text) {
      // Send (the canned picker, when open, owns Enter).
      if (picker && !picker.hidden) { return; }
      event.preventDefault();
      if (composer.reportValidity()) { composer.requestSubmit(); }
      return;
    }
    if (event.key === "Escape" && event.target === text && (!picker || picker.hidden)) {
      text.blur();  // back to the shortcuts
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) { return; }
    var command = COMMANDS[event.key];
    if (command && command()) { event.preventDefault(); }
  });

  if (window.location.hash === "#search") { search(); }
})();
