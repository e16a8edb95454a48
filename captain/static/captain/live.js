// Live panel of the playground and the debug log: the thoughts and steps of a run in progress, read from the
// server-sent events of captain.answering.views.live. Internal (the account's administrators only). Everything is inserted
// as text, never as HTML. Without EventSource, or when the stream fails, the page falls back silently: the
// playground reloads itself every second as it did before, the debug log simply shows no live panel.
(function () {
  "use strict";

  var panel = document.getElementById("live-panel");
  if (!panel || !panel.dataset.liveUrl) { return; }
  var reloadOnEnd = panel.dataset.reloadOnEnd === "1";
  var log = panel.querySelector("[data-live-log]");
  var planBox = panel.querySelector("[data-live-plan]");
  var statusEl = panel.querySelector("[data-live-status]");
  var currentThought = null;

  function reloadSoon() { window.setTimeout(function () { window.location.reload(); }, 1000); }

  if (!window.EventSource) {
    if (reloadOnEnd) { reloadSoon(); }
    return;
  }

  function line(cls, label, text) {
    var li = document.createElement("li");
    li.className = cls;
    var b = document.createElement("b");
    b.textContent = label;
    li.appendChild(b);
    if (text) { li.appendChild(document.createTextNode(" " + text)); }
    log.appendChild(li);
    li.scrollIntoView({ block: "nearest" });
    return li;
  }

  function thought(agent, text) {
    if (!currentThought || currentThought.dataset.agent !== agent) {
      var li = line("live-thought", "thinking" + (agent ? " (" + agent + ")" : "") + ":", "");
      currentThought = document.createElement("pre");
      currentThought.className = "thought-text";
      currentThought.dataset.agent = agent || "";
      li.appendChild(currentThought);
    }
    currentThought.textContent += text;
  }

  function showPlan(plan) {
    if (!plan || !planBox) { return; }
    planBox.textContent = "";
    var head = document.createElement("div");
    head.className = "small";
    var steps = plan.steps || [];
    var done = steps.filter(function (s) { return s && s.done; }).length;
    head.textContent = "Plan · " + (plan.status || "") + " · " + done + "/" + steps.length + " done" +
      (plan.waiting_for ? " · waiting for: " + plan.waiting_for : "");
    planBox.appendChild(head);
    if (plan.goal) {
      var goal = document.createElement("div");
      goal.textContent = "Goal: " + plan.goal;
      planBox.appendChild(goal);
    }
    var ol = document.createElement("ol");
    ol.className = "plan-steps";
    steps.forEach(function (s) {
      var li = document.createElement("li");
      li.className = s && s.done ? "step-done" : "step-open";
      li.textContent = (s && s.done ? "☑ " : "☐ ") + (s ? s.text : "");
      ol.appendChild(li);
    });
    planBox.appendChild(ol);
    planBox.hidden = false;
  }

  function event(agent, e) {
    var data = e.data || {};
    if (e.type === "thought") { currentThought = null; return; }  // the streamed pieces are already shown
    currentThought = null;
    if (e.type === "plan") {
      showPlan(data.plan);
      line("live-event", "plan", (data.action || e.name || e.detail || "updated"));
      return;
    }
    var what = e.type.replace(/_/g, " ");
    var text = e.name || "";
    if (e.type === "confirmation") { text = (data.tool || e.name || "") + " · " + (data.status || ""); }
    if (e.type === "artifact") { text = (data.ref || "") + " · " + (data.tool || "") + " · " + (data.size || 0) + " characters"; }
    if (e.detail && e.type !== "llm_call") { text += (text ? " · " : "") + e.detail; }
    line("live-event event-" + e.type, what + (agent ? " (" + agent + ")" : ""), text);
  }

  var source = new EventSource(panel.dataset.liveUrl);
  panel.hidden = false;
  source.onmessage = function (message) {
    var data;
    try { data = JSON.parse(message.data); } catch (err) { return; }
    if (data.type === "thought") { thought(data.agent, data.text || ""); }
    else if (data.type === "event" && data.event) { event(data.agent, data.event); }
    else if (data.type === "end") {
      source.close();
      panel.dataset.ended = "1";
      if (reloadOnEnd) { window.location.reload(); return; }
      statusEl.textContent = "The run is over: reload the page to read it in full.";
    }
  };
  source.onerror = function () {
    if (panel.dataset.ended) { return; }
    if (reloadOnEnd) {  // the playground: back to reloading every second, which also reopens the stream
      source.close();
      reloadSoon();
      return;
    }
    if (source.readyState === EventSource.CLOSED && !log.children.length) { panel.hidden = true; }
  };
})();
