// The console's only script (CSP: script-src 'self'). Keyboard shortcuts for the queue and the
// candidate page, and adding/removing fragments in the fragment form. No content is ever
// inserted as HTML here: rows come from an inert <template>.
(function () {
  "use strict";

  function typing(event) {
    var t = event.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
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
      window.location.assign(action ? href + "?do=" + action : href);
    }
    document.addEventListener("keydown", function (e) {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "j") { refresh(); select(index + 1); }
      else if (e.key === "k") { refresh(); select(index - 1); }
      else if (e.key === "Enter" && index >= 0) open("");
      else if (e.key === "p") open("promote");
      else if (e.key === "f") open("fragment");
      else if (e.key === "d") open("drop");
      else return;
      e.preventDefault();
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
    else if (wanted === "promote") document.getElementById("promote-text").focus();
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

  function start() {
    if (document.querySelector("[data-keyboard=queue]")) queueKeys();
    if (document.querySelector("[data-keyboard=candidate]")) candidateKeys();
    fragments();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
