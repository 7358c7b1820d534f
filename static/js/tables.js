// Sortable and filterable server-rendered tables: click a column header to sort (numbers by
// their data-value), type in an <input data-filter-table="<table id>"> to keep matching rows.
(function () {
  "use strict";

  function cellValue(row, index, numeric) {
    const cell = row.cells[index];
    if (!numeric) return cell.textContent.trim().toLowerCase();
    const value = parseFloat(cell.dataset.value);
    return Number.isNaN(value) ? -Infinity : value;
  }

  function makeSortable(table) {
    const headers = table.tHead.rows[0].cells;
    Array.from(headers).forEach(function (header, index) {
      header.tabIndex = 0;
      header.setAttribute("aria-sort", "none");
      header.classList.add("sort-header");
      const sort = function () {
        const ascending = header.getAttribute("aria-sort") !== "ascending";
        const numeric = header.dataset.sort === "number";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).filter(function (row) { return row.cells.length > 1; });
        rows.sort(function (a, b) {
          const x = cellValue(a, index, numeric);
          const y = cellValue(b, index, numeric);
          return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
        Array.from(headers).forEach(function (h) { h.setAttribute("aria-sort", "none"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      };
      header.addEventListener("click", sort);
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
      });
    });
  }

  function makeFilter(input) {
    const table = document.getElementById(input.dataset.filterTable);
    if (!table) return;
    input.addEventListener("input", function () {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.from(table.tBodies[0].rows).forEach(function (row) {
        const text = row.textContent.toLowerCase();
        row.hidden = !words.every(function (word) { return text.includes(word); });
      });
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("input[data-filter-table]").forEach(makeFilter);
})();
