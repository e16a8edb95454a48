// The availability switch in the top bar: with JavaScript the choice is saved as soon as it changes, with
// fetch, and the page stays as it is (the form's own submit button is for browsers without JavaScript).
(function () {
  "use strict";
  var form = document.querySelector("form[data-availability-form]");
  if (!form) { return; }
  var select = form.querySelector("select[name=availability]");
  var button = form.querySelector("[data-availability-submit]");
  var status = form.querySelector("[data-availability-status]");
  var saved = select.value;
  // Texts in the page's language, rendered by the template (dashboard/partials/availability.html).
  var say = form.dataset;
  if (button) { button.hidden = true; }

  select.addEventListener("change", function () {
    var body = new FormData(form);
    status.textContent = say.msgSaving || "Saving…";
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRFToken": body.get("csrfmiddlewaretoken") }
    })
      .then(function (response) {
        return response.json().then(function (data) { return { ok: response.ok, data: data }; });
      })
      .then(function (result) {
        if (!result.ok) { throw new Error(result.data.error || "Not saved."); }
        saved = result.data.availability;
        select.className = "availability-" + saved;
        status.textContent = (say.msgSaved || "You are {availability}.").replace("{availability}", result.data.label);
      })
      .catch(function () {
        select.value = saved;
        status.textContent = say.msgFailed || "Not saved: try again.";
      });
  });
})();
