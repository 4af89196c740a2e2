// The dashboard's one script: live rows by server-sent events (no inline script runs).
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live-url");
  if (!url || !window.EventSource || !document.querySelector("[data-live]")) return;
  var source = new EventSource(url);
  source.addEventListener("row", function (message) {
    var row = JSON.parse(message.data);
    document.querySelectorAll('[data-live="' + row.kind + '"] tbody').forEach(function (body) {
      var empty = body.querySelector("tr.empty");
      if (empty) empty.remove();
      var labels = Array.prototype.map.call(
        body.parentNode.querySelectorAll("thead th"), function (th) { return th.textContent; });
      var tr = document.createElement("tr");
      tr.className = "fresh";
      row.cells.forEach(function (text, index) {
        var td = document.createElement("td");
        if (labels[index]) td.setAttribute("data-label", labels[index]);
        if (index === 0) {
          var a = document.createElement("a");
          a.href = row.href;
          var code = document.createElement("code");
          code.textContent = text;
          a.appendChild(code);
          td.appendChild(a);
        } else {
          td.textContent = text;
        }
        tr.appendChild(td);
      });
      body.insertBefore(tr, body.firstChild);
    });
  });
})();
