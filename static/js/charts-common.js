/* Helpers shared by the chart pages: escaping for Plotly text, the theme's colours, the common
 * Plotly layout, CSV files with a formula-injection guard, downloads, the point-detail panel,
 * a chart's click and CSV hooks, the controls form, and the legend's and URL's state.
 *
 * Load it before the page's own script; it defines window.ChartsCommon and nothing else.
 */
(function () {
  "use strict";

  // Plotly decodes &amp; &lt; &gt; and numeric entities, but not &quot;.
  const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };

  /** Text safe inside Plotly's HTML-subset strings (labels, hover text, titles). */
  function escapeHtml(value) {
    return String(value).replace(/[&<>"']/g, (character) => ENTITIES[character]);
  }

  /** The page's colours from the CSS variables of site.css (light or dark, as shown). */
  function theme() {
    const style = getComputedStyle(document.documentElement);
    const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    return {
      fg: read("--fg", "#1b1f24"),
      bg: read("--bg", "#ffffff"),
      muted: read("--muted", "#59636e"),
      line: read("--line", "#d1d9e0"),
      grid: read("--chart-grid", "#eaeef2"),
      good: read("--good", "#1a7f37"),
      bad: read("--bad", "#cf222e"),
      warn: read("--warn", "#9a6700"),
    };
  }

  /** Layout settings every chart shares: transparent paper, the page font, themed hover labels. */
  function baseLayout(colours) {
    return {
      autosize: true,
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      font: { family: "system-ui, -apple-system, 'Segoe UI', sans-serif", size: 12, color: colours.fg },
      hovermode: "closest",
      hoverlabel: { bgcolor: colours.bg, bordercolor: colours.line, font: { color: colours.fg }, align: "left" },
      showlegend: false,
      modebar: { bgcolor: "rgba(0,0,0,0)", color: colours.muted, activecolor: colours.fg },
    };
  }

  /** One CSV cell; a leading = + - @ would make a spreadsheet run the cell as a formula. */
  function csvCell(value) {
    if (value === null || value === undefined) return "";
    if (typeof value !== "string") return String(value);
    const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }

  function saveUrl(url, filename) {
    const link = document.createElement("a");
    link.href = url;
    link.download = filename;
    document.body.append(link);
    link.click();
    link.remove();
  }

  function downloadCsv(filename, header, rows) {
    const lines = [header, ...rows].map((row) => row.map(csvCell).join(","));
    const blob = new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv;charset=utf-8" });
    const url = URL.createObjectURL(blob);
    saveUrl(url, filename);
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  /** A file name from parts that may hold any character. */
  function fileStem(parts) {
    return parts.join("_").replace(/[^A-Za-z0-9._-]+/g, "-");
  }

  /** Fills a chart's detail panel (hover labels cannot hold a link): a title, a line of values,
   * the run's link and a Close button. Every text goes through textContent. */
  function showDetail(panel, { title, values, href, linkText }) {
    const heading = document.createElement("strong");
    heading.textContent = title;
    const text = document.createElement("span");
    text.textContent = values;
    const link = document.createElement("a");
    link.href = href;
    link.textContent = linkText;
    const close = document.createElement("button");
    close.type = "button";
    close.className = "button small";
    close.textContent = "Close";
    close.addEventListener("click", () => { panel.hidden = true; });
    panel.replaceChildren(heading, text, link, close);
    panel.hidden = false;
  }

  /** The drawn charts' hooks: a click on a point calls onPoint(chart, the point's customdata),
   * and each chart's Download CSV button (hidden until the script runs) calls onCsv(chart). */
  function wireCharts(charts, { onPoint, onCsv }) {
    for (const chart of charts) {
      const element = document.getElementById(chart.id);
      if (!element) continue;
      element.on("plotly_click", (event) => onPoint(chart, event.points[0].customdata));
      const csvButton = document.querySelector(`[data-csv-for="${chart.id}"]`);
      csvButton.hidden = false;
      csvButton.addEventListener("click", () => onCsv(chart));
    }
  }

  /** The controls form of a chart page, which reloads with the new URL. Its Apply button is
   * hidden (the page submits on change). On submit, beforeSubmit runs first, then empty fields
   * are left out (the defaults: links stay short) and hiddenKeys() ride along as `hide`, so the
   * legend's toggles survive. Coming back through history restores the form as it was left. */
  function wireControlsForm(form, { hiddenKeys, beforeSubmit = () => {} }) {
    form.querySelector("[data-apply]").hidden = true;
    form.addEventListener("submit", () => {
      beforeSubmit();
      form.querySelectorAll("select, input[type=text]").forEach((field) => {
        if (!field.value) field.disabled = true;
      });
      for (const key of hiddenKeys()) {
        const input = document.createElement("input");
        input.type = "hidden";
        input.name = "hide";
        input.value = key;
        input.dataset.added = "";
        form.append(input);
      }
      document.body.classList.add("is-loading");
    });
    window.addEventListener("pageshow", () => {
      form.querySelectorAll(":disabled").forEach((field) => { field.disabled = false; });
      form.querySelectorAll("input[data-added]").forEach((input) => input.remove());
      document.body.classList.remove("is-loading");
    });
  }

  /** Presses the legend's buttons of the shown series (buildLegend leaves legend.syncButtons). */
  function syncLegend() {
    const legend = document.getElementById("series-legend");
    if (legend && legend.syncButtons) legend.syncButtons();
  }

  /** Keeps the page's view in the URL, so a copied link shows the same view: `hide` once per
   * hidden key, and each of flags as 1 when on, left out when off. */
  function syncUrl(hidden, flags = {}) {
    const url = new URL(window.location.href);
    for (const [name, on] of Object.entries(flags)) {
      if (on) url.searchParams.set(name, "1");
      else url.searchParams.delete(name);
    }
    url.searchParams.delete("hide");
    for (const key of hidden) url.searchParams.append("hide", key);
    window.history.replaceState(null, "", url);
  }

  window.ChartsCommon = Object.freeze({
    escapeHtml, theme, baseLayout, csvCell, saveUrl, downloadCsv, fileStem,
    showDetail, wireCharts, wireControlsForm, syncLegend, syncUrl,
  });
})();
