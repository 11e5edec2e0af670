// The console's only script (CSP: script-src 'self'). Keyboard shortcuts for the queue and the
// candidate page, and adding/removing fragments in the fragment form. No content is ever
// inserted as HTML here: rows come from an inert <template>.
(function () {
  "use strict";

  function typing(event) {
    var t = event.target;
    if (!t) return false;
    if (t.tagName === "INPUT") return !/^(checkbox|radio|button|submit)$/.test(t.type);
    return t.isContentEditable || /^(TEXTAREA|SELECT)$/.test(t.tagName);
  }

  function queueKeys() {
    var rows = [];
    var index = -1;
    function refresh() {
      rows = Array.prototype.slice.call(document.querySelectorAll("tr.candidate-row"));
      index = rows.findIndex(function (r) { return r.classList.contains("selected"); });
    }
    function select(i) {
      refresh();
      if (!rows.length) return;
      index = Math.max(0, Math.min(rows.length - 1, i));
      rows.forEach(function (r, n) { r.classList.toggle("selected", n === index); });
      rows[index].scrollIntoView({ block: "nearest" });
    }
    function open(action) {
      refresh();
      if (index < 0) select(0);
      if (index < 0) return;
      var href = rows[index].getAttribute("data-href");
      var sep = href.indexOf("?") < 0 ? "?" : "&";
      window.location.assign(action ? href + sep + "do=" + action : href);
    }
    function pick() {
      refresh();
      if (index < 0) select(0);
      if (index < 0) return;
      var box = rows[index].querySelector("input.pick");
      box.checked = !box.checked;
      lastBox = box;
      counted();
      select(index + 1);
    }
    function bulk(action) {
      var button = document.querySelector("#bulk-top button[value=" + action + "]");
      if (button) button.click();
    }
    document.addEventListener("keydown", function (e) {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "j") { refresh(); select(index + 1); }
      else if (e.key === "k") { refresh(); select(index - 1); }
      else if (e.key === "x") pick();
      else if (e.key === "P") bulk("promote");
      else if (e.key === "D") bulk("drop");
      else if (e.key === "X") bulk("dismiss");
      else if (e.key === "Enter" && index >= 0) open("");
      else if (e.key === "p") open("promote");
      else if (e.key === "f") open("fragment");
      else if (e.key === "d") open("drop");
      else return;
      e.preventDefault();
    });
  }

  // Bulk selection: select-all, shift-click ranges, a live count, and a clear message instead
  // of a submit when nothing is selected.
  var lastBox = null;
  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll("#bulk-form input.pick"));
  }
  function counted() {
    var n = boxes().filter(function (b) { return b.checked; }).length;
    document.querySelectorAll(".selected-count").forEach(function (el) {
      el.textContent = n ? n + " selected" : "";
    });
    var all = document.getElementById("select-all");
    if (all) all.checked = n > 0 && n === boxes().length;
    return n;
  }
  function selection() {
    document.addEventListener("click", function (e) {
      var t = e.target;
      if (t.id === "select-all") {
        boxes().forEach(function (b) { b.checked = t.checked; });
        counted();
      } else if (t.classList && t.classList.contains("pick")) {
        var list = boxes();
        if (e.shiftKey && lastBox && lastBox !== t) {
          var a = list.indexOf(lastBox), b = list.indexOf(t);
          list.slice(Math.min(a, b), Math.max(a, b) + 1).forEach(function (x) { x.checked = t.checked; });
        }
        lastBox = t;
        counted();
      }
    });
    document.addEventListener("submit", function (e) {
      var form = e.target;
      if (form.id !== "bulk-form") return;
      if (!counted()) {
        e.preventDefault();
        var note = document.getElementById("bulk-note");
        if (note) note.textContent = "Nothing selected: tick the candidates first (x selects the highlighted row).";
      }
    });
  }

  function candidateKeys() {
    function go(action) {
      if (action === "promote") document.getElementById("promote-button").click();
      else if (action === "fragment") {
        var first = document.querySelector("#fragments textarea");
        (first || document.getElementById("add-fragment")).focus();
      } else if (action === "drop") document.getElementById("drop-reason").focus();
    }
    document.addEventListener("keydown", function (e) {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "p" || e.key === "f" || e.key === "d") {
        go({ p: "promote", f: "fragment", d: "drop" }[e.key]);
      } else if (e.key === "j" || e.key === "k") {
        document.getElementById("back-to-queue").click();
      } else return;
      e.preventDefault();
    });
    var wanted = new URLSearchParams(window.location.search).get("do");
    if (wanted === "fragment" || wanted === "drop") go(wanted);
    else if (wanted === "promote") {
      // The button, not the text: p (or Enter) again promotes as shown; a click edits the text.
      var button = document.getElementById("promote-button");
      button.focus();
      button.scrollIntoView({ block: "center" });
    }
  }

  function fragments() {
    var box = document.getElementById("fragments");
    var tpl = document.getElementById("fragment-template");
    var add = document.getElementById("add-fragment");
    if (!box || !tpl || !add) return;
    add.addEventListener("click", function () {
      box.appendChild(tpl.content.cloneNode(true));
      var areas = box.querySelectorAll("textarea");
      areas[areas.length - 1].focus();
    });
    box.addEventListener("click", function (e) {
      var button = e.target.closest(".remove-fragment");
      if (button) button.closest(".fragment").remove();
    });
  }

  // A principal's name shows its prn_… id beside it on click (or Enter), selected so it can be
  // copied, and copied to the clipboard where the browser allows it (a secure context).
  function principalIds() {
    function reveal(name) {
      var id = name.nextElementSibling;
      if (!id || !id.classList.contains("who-id")) return;
      id.hidden = false;
      var range = document.createRange();
      range.selectNodeContents(id);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(name.getAttribute("data-id")).then(function () {
          name.classList.add("copied");
        }, function () {});
      }
    }
    document.addEventListener("click", function (e) {
      var name = e.target.closest && e.target.closest(".who-name");
      if (name) reveal(name);
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && e.target.classList && e.target.classList.contains("who-name")) {
        e.preventDefault();
        reveal(e.target);
      }
    });
  }

  function start() {
    principalIds();
    if (document.querySelector("[data-keyboard=queue]")) { queueKeys(); selection(); }
    if (document.querySelector("[data-keyboard=candidate]:not([disabled])")) candidateKeys();
    fragments();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
