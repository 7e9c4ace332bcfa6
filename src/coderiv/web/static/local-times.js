// Shows every <time datetime="...Z"> of the page in the reader's own time zone (the server
// writes UTC, which stays the text when scripts are off), e.g. "7 Dec 2026, 14:03 CET".
document.addEventListener("DOMContentLoaded", function () {
  var format = new Intl.DateTimeFormat(undefined, {
    day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short",
  });
  document.querySelectorAll("time[datetime]").forEach(function (element) {
    var moment = new Date(element.getAttribute("datetime"));
    if (!isNaN(moment.getTime())) {
      element.title = element.getAttribute("datetime");
      element.textContent = format.format(moment);
    }
  });
});
