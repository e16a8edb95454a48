// Bulk select on a conversation list: "tick all", the count of ticked conversations, and only the field the
// chosen action needs. The form itself is plain (it works without this script); the live list refresh leaves
// the list alone while something is ticked (live.js).
(function () {
  "use strict";

  var form = document.querySelector("form[data-bulk]");
  if (!form) { return; }
  var count = form.querySelector("[data-bulk-count]");
  var chooser = form.querySelector("[data-bulk-action]");
  var apply = form.querySelector("[data-bulk-apply]");
  var hint = count.textContent;

  function ticked() {
    return document.querySelectorAll('input[name="ids"][form="bulk-form"]:checked').length;
  }

  function sync() {
    var n = ticked();
    count.textContent = n ? n + " ticked" : hint;
    apply.disabled = n === 0;
    form.querySelectorAll("[data-bulk-for]").forEach(function (field) {
      field.hidden = field.dataset.bulkFor !== chooser.value;
    });
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches("[data-bulk-all]")) {
      document.querySelectorAll('input[name="ids"][form="bulk-form"]').forEach(function (box) {
        box.checked = target.checked;
      });
    }
    if (target.matches('input[name="ids"], [data-bulk-all], [data-bulk-action]')) { sync(); }
  });
  document.addEventListener("helpdesk:list-refreshed", sync);
  sync();
})();
