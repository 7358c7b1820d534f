/* Helpers shared by the chart pages: escaping for Plotly text, the theme's colours, the common
 * Plotly layout, CSV files with a formula-injection guard, and downloads.
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

  window.ChartsCommon = Object.freeze({
    escapeHtml, theme, baseLayout, csvCell, saveUrl, downloadCsv, fileStem,
  });
})();
