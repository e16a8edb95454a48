// The composer's "Attach files": the chosen files listed before sending, each with a remove button. The list is
// the file input's own FileList, rebuilt through a DataTransfer when one is removed, so the form posts exactly
// what is shown (a plain multipart form: without this script the input still works). The server checks every
// file (type, size per channel, count) and refuses the whole message with a message naming the file.
(function () {
  "use strict";

  var input = document.getElementById("composer-files");
  var list = document.getElementById("chosen-files");
  var textarea = document.getElementById("composer-text");
  // The limits matter once files are chosen; until then the line would only push the composer down the screen.
  var hint = document.getElementById("composer-files-hint");
  if (!input || !list) { return; }

  function size(bytes) {
    if (bytes >= 1000 * 1000) { return (bytes / (1000 * 1000)).toFixed(1) + " MB"; }
    return Math.max(1, Math.ceil(bytes / 1000)) + " kB";
  }

  function remove(index) {
    var kept = new DataTransfer();
    Array.prototype.forEach.call(input.files, function (file, i) {
      if (i !== index) { kept.items.add(file); }
    });
    input.files = kept.files;
    render();
    input.focus();
  }

  function render() {
    list.textContent = "";
    Array.prototype.forEach.call(input.files, function (file, index) {
      var item = document.createElement("li");
      var name = document.createElement("span");
      name.className = "chosen-name";
      name.textContent = file.name;
      var meta = document.createElement("span");
      meta.className = "muted small";
      meta.textContent = " (" + size(file.size) + ") ";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "remove-file link";
      button.textContent = list.dataset.removeLabel || "Remove";
      button.setAttribute("aria-label", (list.dataset.removeLabel || "Remove") + " " + file.name);
      button.addEventListener("click", function () { remove(index); });
      item.appendChild(name);
      item.appendChild(meta);
      item.appendChild(button);
      list.appendChild(item);
    });
    list.hidden = input.files.length === 0;
    if (hint) { hint.hidden = input.files.length === 0; }
    // A reply of files alone needs no text.
    if (textarea) { textarea.required = input.files.length === 0; }
  }

  input.addEventListener("change", render);
  render();
})();
