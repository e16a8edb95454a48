/*
 * The website chat widget: one script tag on the customer's page, no dependencies, no inline script or style
 * (styles are set through element.style, which a strict Content-Security-Policy allows).
 *
 *   <script src="https://helpdesk.example/static/helpdesk/widget/widget.js" data-website-token="..." async></script>
 *
 * The visitor token is kept in localStorage, so a returning visitor continues their conversation. Replies arrive
 * through the visitor event stream (server-sent events); the thread is read from the visitor API. The page may
 * call window.HelpdeskWidget.setUser(identifier, {name, email, identifier_hash}), open() and close(), and listen
 * on window for "helpdesk:ready", "helpdesk:message" (detail: the message) and "helpdesk:error" (detail: {code}).
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.HelpdeskWidget) return;
  var websiteToken = script.getAttribute("data-website-token") || "";
  var base = (script.getAttribute("data-base-url") || new URL(script.src).origin) + "/widget/" + encodeURIComponent(websiteToken);
  var storageKey = "helpdesk-widget:" + websiteToken;
  var lang = (script.getAttribute("data-locale") || navigator.language || "en").toLowerCase().indexOf("zh") === 0 ? "zh" : "en";
  var TEXT = {
    en: { open: "Open chat", close: "Close chat", title: "Chat with us", label: "Your message", send: "Send",
          placeholder: "Type your message…", unavailable: "The chat is not available on this page.",
          failed: "Your message could not be sent. Please try again.", you: "You", newReply: "New reply from ", stars: "%s of 5 stars", typing: "Typing…", prechat: "Before we start", yourName: "Your name", yourEmail: "Your e-mail", start: "Start chat",
          attach: "Attach a file (image or audio)", fileRefused: "This file could not be sent.",
          away: "We are away right now. Leave your e-mail and question: the answer will also be sent to you by e-mail." },
    zh: { open: "打开聊天", close: "关闭聊天", title: "与我们聊天", label: "您的消息", send: "发送",
          placeholder: "输入您的消息…", unavailable: "此页面无法使用聊天。",
          failed: "消息发送失败，请重试。", you: "您", newReply: "新回复：", stars: "%s 星（共 5 星）", typing: "正在输入…", prechat: "开始之前", yourName: "您的姓名", yourEmail: "您的电子邮箱", start: "开始聊天",
          attach: "添加文件（图片或音频）", fileRefused: "此文件无法发送。",
          away: "我们现在不在线。请留下您的电子邮箱和问题，答复也会通过电子邮件发送给您。" }
  }[lang];

  var state = { token: null, lastId: 0, seen: {}, conversations: {}, stream: null, ready: null, started: false };
  try { state.token = window.localStorage.getItem(storageKey); } catch (e) { state.token = null; }

  function css(el, styles) { for (var k in styles) el.style[k] = styles[k]; return el; }
  function make(tag, attrs, styles) {
    var el = document.createElement(tag);
    for (var k in attrs || {}) el.setAttribute(k, attrs[k]);
    return css(el, styles || {});
  }

  var root = make("div", { "data-helpdesk-widget": "", lang: lang },
    { position: "fixed", right: "16px", bottom: "16px", zIndex: "2147483000", fontFamily: "system-ui, sans-serif", fontSize: "15px" });
  var bubble = make("button", { type: "button", "aria-label": TEXT.open, "aria-expanded": "false", "data-widget-bubble": "" },
    { width: "56px", height: "56px", borderRadius: "28px", border: "0", background: "#1f6feb", color: "#fff", fontSize: "24px", cursor: "pointer" });
  // A drawn speech bubble, not an emoji: not every visitor's system has an emoji font.
  function icon(d, size, stroke) {
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", size);
    svg.setAttribute("height", size);
    svg.setAttribute("aria-hidden", "true");
    var path = document.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", d);
    path.setAttribute("fill", stroke ? "none" : "currentColor");
    if (stroke) { path.setAttribute("stroke", "currentColor"); path.setAttribute("stroke-width", "2"); path.setAttribute("stroke-linecap", "round"); }
    svg.append(path);
    return svg;
  }
  var CLIP = "M21 11.5l-8.5 8.5a5 5 0 0 1-7-7l8.5-8.5a3.3 3.3 0 0 1 4.7 4.7l-8.5 8.5a1.7 1.7 0 0 1-2.4-2.4l7.8-7.8";
  bubble.append(icon("M4 4h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z", "26"));
  var panel = make("div", { role: "dialog", "aria-label": TEXT.title, "data-widget-panel": "", hidden: "" },
    { position: "fixed", right: "8px", bottom: "80px", width: "min(360px, calc(100vw - 16px))", height: "min(520px, calc(100vh - 96px))",
      background: "#fff", color: "#1b1f24", border: "1px solid #d0d7de", borderRadius: "12px", boxShadow: "0 8px 24px rgba(0,0,0,.2)",
      flexDirection: "column", overflow: "hidden" });
  var header = make("div", {}, { display: "flex", alignItems: "center", justifyContent: "space-between", padding: "10px 12px", background: "#1f6feb", color: "#fff" });
  var title = make("h2", { "data-widget-title": "" }, { margin: "0", fontSize: "16px" });
  title.textContent = TEXT.title;
  var closer = make("button", { type: "button", "aria-label": TEXT.close }, { background: "transparent", border: "0", color: "#fff", fontSize: "20px", cursor: "pointer" });
  closer.textContent = "×";
  var log = make("div", { role: "log", "aria-live": "polite", "aria-label": TEXT.title, "data-widget-log": "", tabindex: "0" },
    { flex: "1", overflowY: "auto", padding: "12px", display: "flex", flexDirection: "column", gap: "8px" });
  var status = make("p", { role: "status", "data-widget-status": "" }, { margin: "0", padding: "0 12px", color: "#9a3412", fontSize: "13px" });
  var form = make("form", { "data-widget-form": "" }, { display: "flex", gap: "8px", padding: "10px 12px", borderTop: "1px solid #d0d7de" });
  var inputId = "helpdesk-widget-input-" + Math.random().toString(36).slice(2);
  var label = make("label", { for: inputId }, { position: "absolute", width: "1px", height: "1px", overflow: "hidden", clip: "rect(0 0 0 0)" });
  label.textContent = TEXT.label;
  var input = make("input", { id: inputId, type: "text", autocomplete: "off", maxlength: "5000", placeholder: TEXT.placeholder, "data-widget-input": "" },
    { flex: "1", minWidth: "0", padding: "8px", border: "1px solid #8c959f", borderRadius: "6px", fontSize: "15px" });
  var sendButton = make("button", { type: "submit", "data-widget-send": "" },
    { padding: "8px 12px", border: "0", borderRadius: "6px", background: "#1f6feb", color: "#fff", cursor: "pointer" });
  sendButton.textContent = TEXT.send;
  // Files: a labelled button opens the (hidden) file picker; what is sent is checked again on the helpdesk.
  var attach = make("button", { type: "button", "aria-label": TEXT.attach, title: TEXT.attach, "data-widget-attach": "" },
    { padding: "8px", border: "1px solid #8c959f", borderRadius: "6px", background: "#fff", color: "#1b1f24", cursor: "pointer" });
  attach.append(icon(CLIP, "18", true));
  var picker = make("input", { type: "file", accept: "image/*,audio/*", tabindex: "-1", "aria-hidden": "true", "data-widget-file-input": "" },
    { display: "none" });
  var typing = make("p", { "data-widget-typing": "", hidden: "" }, { margin: "0", padding: "0 12px 4px", color: "#57606a", fontSize: "13px" });
  typing.textContent = TEXT.typing;
  // Outside the inbox's business hours: the away message (a note, read by screen readers with the panel).
  var away = make("p", { role: "note", "data-widget-away": "", hidden: "" },
    { margin: "0", padding: "8px 12px", background: "#fff8c5", color: "#4d2d00", fontSize: "13px" });
  var prechat = make("form", { "data-widget-prechat": "", "aria-label": TEXT.prechat, hidden: "" },
    { flexDirection: "column", gap: "6px", padding: "10px 12px", borderTop: "1px solid #d0d7de" });
  function prechatField(name, label, type) {
    var id = inputId + "-" + name;
    var fieldLabel = make("label", { for: id }, { fontSize: "13px" });
    fieldLabel.textContent = label;
    var field = make("input", { id: id, name: name, type: type, autocomplete: name, "data-widget-prechat-field": name },
      { padding: "6px", border: "1px solid #8c959f", borderRadius: "6px", fontSize: "15px" });
    return [fieldLabel, field];
  }
  var prechatStart = make("button", { type: "submit" },
    { padding: "8px 12px", border: "0", borderRadius: "6px", background: "#1f6feb", color: "#fff", cursor: "pointer" });
  prechatStart.textContent = TEXT.start;
  header.append(title, closer);
  form.append(label, attach, picker, input, sendButton);
  panel.append(header, away, log, typing, status, prechat, form);
  root.append(panel, bubble);

  function request(method, path, body) {
    // A file goes as a form: the browser sets its multipart Content-Type (with the boundary) itself.
    var isForm = typeof FormData !== "undefined" && body instanceof FormData;
    var headers = isForm ? {} : { "Content-Type": "application/json" };
    if (state.token) headers["X-Visitor-Token"] = state.token;
    return fetch(base + path, { method: method, headers: headers, credentials: "omit", mode: "cors",
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body) })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (data) {
          if (!response.ok) { var error = new Error(data.detail || response.status); error.code = data.error || String(response.status); throw error; }
          return data;
        });
      });
  }

  function keepToken(token) {
    state.token = token;
    try { window.localStorage.setItem(storageKey, token); } catch (e) { /* private mode: this page view only */ }
  }

  // Events for the page (as Chatwoot's chatwoot:ready / chatwoot:on-message / chatwoot:error): the page can
  // open the chat on a reply, count unread messages or log failures. The detail is a plain copy.
  function emit(name, detail) {
    try { window.dispatchEvent(new CustomEvent("helpdesk:" + name, { detail: detail })); } catch (e) { /* old browser */ }
  }

  function showMessage(m) {
    if (state.seen[m.id]) return;
    state.seen[m.id] = true;
    // The thread read when the chat starts is history; every message after it is news to the page.
    if (state.started) emit("message", { id: m.id, conversation_id: m.conversation_id, incoming: m.incoming, text: m.text,
      sender_name: m.sender_name, files: (m.files || []).map(function (f) { return { name: f.name, url: f.url }; }) });
    state.lastId = Math.max(state.lastId, m.id);
    state.conversations[m.conversation_id] = true;
    var item = make("div", { "data-widget-message": m.incoming ? "visitor" : "reply" },
      { alignSelf: m.incoming ? "flex-end" : "flex-start", maxWidth: "85%", padding: "8px 10px", borderRadius: "10px",
        background: m.incoming ? "#ddf4ff" : "#f6f8fa", whiteSpace: "pre-wrap", overflowWrap: "anywhere" });
    var who = make("div", { "data-widget-sender": "" }, { fontSize: "12px", color: "#57606a", marginBottom: "2px" });
    who.textContent = m.incoming ? TEXT.you : m.sender_name;
    var text = make("div", { "data-widget-text": "" });
    text.textContent = m.text;
    item.append(who, text);
    // Files an agent attached: links to signed copies on the helpdesk (they open in a new tab). The visitor's
    // own files are named only (they have them).
    (m.files || []).forEach(function (file) {
      if (!file.url) {
        var own = make("div", { "data-widget-own-file": "" }, { marginTop: "4px", display: "flex", alignItems: "center", gap: "4px" });
        own.append(icon(CLIP, "14", true), document.createTextNode(file.name));
        return item.append(own);
      }
      var link = make("a", { href: file.url, target: "_blank", rel: "noopener noreferrer", "data-widget-file": "" },
        { display: "block", marginTop: "4px", color: "#0969da" });
      link.textContent = file.name;
      item.append(link);
    });
    // The satisfaction request offers exactly 1..5: shown as stars, answered with the number.
    var rating = (m.suggestions || []).join(",") === "1,2,3,4,5";
    (m.suggestions || []).forEach(function (suggestion) {
      var chip = make("button", { type: "button", "data-widget-suggestion": "" },
        { margin: "6px 6px 0 0", padding: "4px 8px", border: "1px solid #1f6feb", borderRadius: "12px", background: "#fff", color: "#1f6feb", cursor: "pointer" });
      chip.textContent = rating ? "★".repeat(Number(suggestion)) : suggestion;
      if (rating) chip.setAttribute("aria-label", TEXT.stars.replace("%s", suggestion));
      chip.addEventListener("click", function () { send(suggestion); });
      item.append(chip);
    });
    log.append(item);
    if (!m.incoming) showTyping(false);
    log.scrollTop = log.scrollHeight;
  }

  var typingTimer = null;
  function showTyping(on, ms) {
    clearTimeout(typingTimer);
    typing.hidden = !on;
    // A lost "typing_end" or a reply that never comes must not leave the indicator on for ever; when it lapses,
    // what was stored meanwhile is read once more, in case its event was missed.
    if (on) typingTimer = setTimeout(function () { typing.hidden = true; refreshSoon(); }, ms || 15000);
  }

  function refresh() {
    if (!state.token) return Promise.resolve();
    return request("GET", "/messages/?after=" + state.lastId).then(function (data) { data.messages.forEach(showMessage); });
  }

  // A reading that fails (the helpdesk busy or restarting, the network away) is tried again a few times: the
  // stream says a message exists only once, and the visitor must not miss a reply because one request failed.
  var RETRY_MS = [1000, 3000, 8000];
  function refreshSoon(attempt) {
    attempt = attempt || 0;
    return refresh().catch(function () {
      if (attempt < RETRY_MS.length) setTimeout(function () { refreshSoon(attempt + 1); }, RETRY_MS[attempt]);
    });
  }

  var streamRefusals = 0;
  function listen() {
    if (state.stream) state.stream.close();
    if (!state.token || typeof EventSource === "undefined") return;
    var stream = state.stream = new EventSource(base + "/events/?visitor_token=" + encodeURIComponent(state.token));
    stream.addEventListener("open", function () { streamRefusals = 0; refreshSoon(); });
    stream.addEventListener("error", function () {
      // EventSource reconnects by itself after a dropped connection, but gives up on a refused one (the helpdesk
      // busy or its Redis away: 503). Then read what was stored and open it again later, waiting longer each time.
      if (stream.readyState !== EventSource.CLOSED || state.stream !== stream) return;
      refreshSoon();
      var wait = Math.min(30000, 2000 * Math.pow(2, streamRefusals++));
      setTimeout(function () { if (state.stream === stream) listen(); }, wait);
    });
    stream.addEventListener("message", function (event) {
      var data = {};
      try { data = JSON.parse(event.data); } catch (e) { data = {}; }
      if (data.type === "typing") return showTyping(true);
      if (data.type === "typing_end") showTyping(false);
      refreshSoon();
    });
  }

  function start() {
    if (!state.ready) {
      state.ready = request("POST", "/session/").then(function (data) {
        keepToken(data.visitor_token);
        if (data.name) title.textContent = data.name;
        root.setAttribute("data-widget-state", "ready");
        return refresh().then(function () {
          var fields = (data.prechat || []).slice();
          var askEmail = data.away && data.ask_email && !emailGiven();
          if (data.away) showAway(data.away_message);
          if (askEmail && fields.indexOf("email") < 0) fields.push("email");
          if (fields.length && ((!state.lastId && !prechatDone()) || askEmail)) askPrechat(fields);
          listen();
          state.started = true;
          emit("ready", { away: !!data.away });
        });
      }).catch(function (error) {
        state.ready = null;
        root.setAttribute("data-widget-state", "unavailable");
        status.textContent = TEXT.unavailable;
        emit("error", { code: error.code || "unavailable" });
        throw error;
      });
    }
    return state.ready;
  }

  function showAway(message) {
    away.textContent = message || TEXT.away;
    away.hidden = false;
  }
  function emailGiven() {
    try { return window.localStorage.getItem(storageKey + ":email") === "given"; } catch (e) { return false; }
  }
  function prechatDone() {
    try { return window.localStorage.getItem(storageKey + ":prechat") === "done"; } catch (e) { return false; }
  }
  function askPrechat(fields) {
    fields.forEach(function (name) {
      prechat.append.apply(prechat, prechatField(name, name === "email" ? TEXT.yourEmail : TEXT.yourName, name === "email" ? "email" : "text"));
    });
    prechat.append(prechatStart);
    prechat.hidden = false;
    css(prechat, { display: "flex" });
    form.hidden = true;
    css(form, { display: "none" });
    prechat.querySelector("input").focus();
  }
  prechat.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = {};
    prechat.querySelectorAll("input").forEach(function (field) { body[field.name] = field.value.trim(); });
    request("POST", "/contact/", body).then(function () {
      try {
        window.localStorage.setItem(storageKey + ":prechat", "done");
        if (body.email) window.localStorage.setItem(storageKey + ":email", "given");
      } catch (e) { /* this page view only */ }
      prechat.hidden = true;
      css(prechat, { display: "none" });
      form.hidden = false;
      css(form, { display: "flex" });
      status.textContent = "";
      input.focus();
    }).catch(function (error) { status.textContent = error.message; });
  });

  function newId() { return Date.now().toString(36) + Math.random().toString(36).slice(2, 10); }

  function send(text) {
    text = text.trim();
    if (!text) return;
    status.textContent = "";
    post("/messages/", { id: newId(), text: text }).catch(function (error) {
      status.textContent = TEXT.failed;
      emit("error", { code: error.code || "failed" });
    });
  }

  function sendFile(file) {
    status.textContent = "";
    var body = new FormData();
    body.append("id", newId());
    body.append("file", file, file.name);
    post("/files/", body).catch(function (error) {
      // The helpdesk's reason (a type or size it does not keep) is in English: shown after our own words.
      status.textContent = error.code === "file_refused" || error.code === "too_large"
        ? TEXT.fileRefused + " " + error.message : TEXT.failed;
      emit("error", { code: error.code || "failed" });
    });
  }

  function post(path, body) {
    return start().then(function () {
      return request("POST", path, body).then(function (data) {
        // A new conversation: the open stream follows the visitor's conversations as they were when it opened.
        var isNew = !state.conversations[data.conversation_id];
        if (data.ai_answering) showTyping(true, 60000);
        // The message is sent whatever happens next: a failed reading is retried, and the stream follows a new
        // conversation even then (its opening reads again).
        return refreshSoon().then(function () { if (isNew) listen(); });
      });
    });
  }

  function open() {
    panel.hidden = false;
    css(panel, { display: "flex" });
    bubble.setAttribute("aria-expanded", "true");
    input.focus();
    return start().catch(function () {});
  }
  function close() {
    panel.hidden = true;
    css(panel, { display: "none" });
    bubble.setAttribute("aria-expanded", "false");
    bubble.focus();
  }

  bubble.addEventListener("click", function () { if (panel.hidden) open(); else close(); });
  closer.addEventListener("click", close);
  panel.addEventListener("keydown", function (event) { if (event.key === "Escape") close(); });
  attach.addEventListener("click", function () { picker.click(); });
  picker.addEventListener("change", function () {
    var file = picker.files && picker.files[0];
    picker.value = "";  // the same file can be chosen again
    if (file) sendFile(file);
    input.focus();
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = input.value;
    input.value = "";
    send(text);
  });
  css(panel, { display: "none" });

  window.HelpdeskWidget = {
    open: open,
    close: close,
    /* Contact attributes the account has defined (others are refused with error.code "invalid_attributes"). */
    setCustomAttributes: function (attributes) {
      return start().then(function () { return request("POST", "/attributes/", { attributes: attributes || {} }); });
    },
    /* One of the account's labels on the visitor's open conversation; resolves {added: false} otherwise. */
    setLabel: function (label) {
      return start().then(function () { return request("POST", "/labels/", { label: String(label) }); });
    },
    /* Resolves once the helpdesk checked the identifier's HMAC; rejects with error.code "identifier_hash_invalid"
       (and the visitor stays anonymous) when it does not match. */
    setUser: function (identifier, user) {
      user = user || {};
      return start().then(function () {
        return request("POST", "/identify/", { identifier: String(identifier), identifier_hash: user.identifier_hash || "",
          name: user.name || "", email: user.email || "" });
      }).then(function (data) {
        keepToken(data.visitor_token);
        state.lastId = 0; // the identified thread may hold older messages (another device's)
        return refresh().then(listen).then(function () { return { ok: true }; });
      });
    }
  };
  (document.body ? Promise.resolve() : new Promise(function (r) { document.addEventListener("DOMContentLoaded", r); }))
    .then(function () { document.body.append(root); });
})();
