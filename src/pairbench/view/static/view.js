// pairbench view: the page's only script, loaded from /static (the CSP allows no inline
// script). It reads nothing but data-* attributes the server set from plain names.
(function () {
  "use strict";

  // A run in progress: poll its status and reload when it has moved on, so the page
  // follows the run without reloading while nothing changes.
  function poll(body) {
    var url = body.getAttribute("data-poll");
    var version = body.getAttribute("data-version");
    if (!url || url.charAt(0) !== "/") {
      return;
    }
    function later() {
      window.setTimeout(tick, 2000);
    }
    function tick() {
      window.fetch(url, { cache: "no-store", credentials: "same-origin" })
        .then(function (response) {
          return response.ok ? response.json() : null;
        })
        .then(function (status) {
          if (status && status.version !== version) {
            window.location.reload();
          } else if (!status || status.live) {
            later();
          }
        })
        .catch(later);
    }
    later();
  }

  // The trial browser's filters apply as soon as one is chosen.
  function autosubmit() {
    var forms = document.querySelectorAll("form[data-autosubmit]");
    Array.prototype.forEach.call(forms, function (form) {
      Array.prototype.forEach.call(form.querySelectorAll("select"), function (select) {
        select.addEventListener("change", function () {
          form.submit();
        });
      });
    });
  }

  // A transcript's "show more": fetch the next part (server-escaped list items, at most
  // a part's events and bytes) and put it where the link was. Without script the link
  // opens that part as a page of its own.
  function more(event) {
    var anchor = event.target.closest ? event.target.closest("a[data-more]") : null;
    if (!anchor) {
      return;
    }
    var href = anchor.getAttribute("href");
    if (!href || href.charAt(0) !== "/") {
      return;
    }
    event.preventDefault();
    var item = anchor.parentNode;
    anchor.textContent = "loading…";
    window.fetch(href + "&part=1", { cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        var list = document.createElement("template");
        list.innerHTML = html;
        item.parentNode.replaceChild(list.content, item);
      })
      .catch(function () {
        window.location.href = href;
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    poll(document.body);
    autosubmit();
    document.addEventListener("click", more);
  });
})();
