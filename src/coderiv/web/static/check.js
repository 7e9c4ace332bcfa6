// coderiv pages: drag and drop on the check page, progress of verification on a results page.
// Served from /static (the Content-Security-Policy allows no inline script).
(function () {
  "use strict";

  var zone = document.getElementById("drop-zone");
  var input = document.getElementById("file");
  var nameOut = document.getElementById("file-name");
  if (zone && input) {
    var show = function () {
      nameOut.textContent = input.files.length ? input.files[0].name : "";
    };
    input.addEventListener("change", show);
    ["dragenter", "dragover"].forEach(function (type) {
      zone.addEventListener(type, function (event) { event.preventDefault(); zone.classList.add("over"); });
    });
    ["dragleave", "drop"].forEach(function (type) {
      zone.addEventListener(type, function (event) { event.preventDefault(); zone.classList.remove("over"); });
    });
    zone.addEventListener("drop", function (event) {
      if (event.dataTransfer && event.dataTransfer.files.length) {
        input.files = event.dataTransfer.files;
        show();
      }
    });
    var form = document.getElementById("check-form");
    form.addEventListener("submit", function () {
      var button = document.getElementById("check-button");
      button.disabled = true;
      button.textContent = "Checking…";
    });
  }

  var status = document.getElementById("status");
  if (status && status.dataset.state === "verifying") {
    var bar = document.getElementById("progress");
    var text = document.getElementById("progress-text");
    var stage = document.getElementById("progress-stage");
    var poll = function () {
      fetch("/api/checks/" + encodeURIComponent(status.dataset.job), { credentials: "same-origin" })
        .then(function (response) { return response.json(); })
        .then(function (job) {
          if (job.state === "verifying") {
            stage.textContent = job.stage;
            if (job.total) {
              bar.max = job.total;
              bar.value = job.done;
              text.textContent = job.done + " of " + job.total;
            } else {
              text.textContent = job.elapsed.toFixed(0) + " s";
            }
            window.setTimeout(poll, 400);
          } else {
            window.location.reload();
          }
        })
        .catch(function () { window.setTimeout(poll, 2000); });
    };
    window.setTimeout(poll, 200);
  }
})();
