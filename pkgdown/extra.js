// The site is built to work offline, without pkgdown.js and the scripts it
// loads from CDNs (see pkgdown/templates/head.html): this fills an
// article's "On this page" list from its second-level headings.
document.addEventListener("DOMContentLoaded", function () {
  var toc = document.getElementById("toc");
  var headings = document.querySelectorAll("main h2[id]");
  if (!toc || headings.length === 0) {
    return;
  }
  var list = document.createElement("ul");
  list.className = "nav nav-pills flex-column";
  headings.forEach(function (heading) {
    var link = document.createElement("a");
    link.className = "nav-link";
    link.href = "#" + heading.id;
    link.textContent = heading.firstChild.textContent.trim();
    var item = document.createElement("li");
    item.className = "nav-item";
    item.appendChild(link);
    list.appendChild(item);
  });
  toc.appendChild(list);
});
