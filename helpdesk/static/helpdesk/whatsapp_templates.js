// The composer's WhatsApp templates: the preview shows the body with the values typed so far, as the customer
// will read it ({{n}} stays where nothing is typed yet). Without JavaScript the preview shows the bare body.
(function () {
  "use strict";
  function refresh(form) {
    var preview = form.querySelector(".wa-preview");
    if (!preview) return;
    var body = preview.getAttribute("data-body") || "";
    preview.textContent = body.replace(/\{\{\s*(\d+)\s*\}\}/g, function (whole, n) {
      var input = form.querySelector('[data-wa-variable="' + n + '"]');
      return input && input.value ? input.value : whole;
    });
  }
  document.addEventListener("input", function (event) {
    var target = event.target;
    if (target instanceof HTMLInputElement && target.hasAttribute("data-wa-variable")) {
      refresh(target.form);
    }
  });
})();
