// The conversation workspace: open at the latest messages with the reply box in view (as a chat does), on a
// wide screen (the thread scrolls in its own pane) and on a phone (the page scrolls). No framework.
(function () {
  "use strict";

  var root = document.getElementById("conversation");
  var thread = document.getElementById("thread");
  var composer = document.getElementById("composer");
  if (!root || !thread || !composer) { return; }

  function showLatest() {
    if (window.location.hash) { return; }  // a link to something on the page ("Actions") wins
    if (new URLSearchParams(window.location.search).has("before")) { return; }  // paging back: stay on top
    thread.scrollTop = thread.scrollHeight;  // the thread's own scroll (wide screens)
    // The page's scroll (one pane): to the end of the conversation's column, where the reply box sits under the
    // latest message (it is sticky, so measuring the box itself would say it is in view already).
    var column = composer.parentElement.getBoundingClientRect();
    if (column.bottom > window.innerHeight) { window.scrollBy(0, column.bottom - window.innerHeight); }
  }
  showLatest();
})();
