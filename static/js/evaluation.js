/* The /evaluation charts: Plotly traces built from the page's JSON (json_script "evaluation-data").
 *
 * Every string in that JSON may come from an artifact: it goes through escapeHtml before it
 * reaches Plotly text (which renders a subset of HTML), and through textContent elsewhere.
 * Rows come in groups (the official rows, each unofficial run's); GROUP_KINDS says how each
 * kind is drawn. Colour is the verdict: green passes the threshold, red fails it.
 */
(function () {
  "use strict";

  const common = window.ChartsCommon;
  const dataElement = document.getElementById("evaluation-data");
  const form = document.getElementById("evaluation-controls");
  if (!common || !dataElement || !form) return;
  const { escapeHtml } = common;
  const page = JSON.parse(dataElement.textContent);

  const GROUP_KINDS = {
    official: { symbol: "circle", size: 11 },
    // Crosses beside the official dot of the same config, so neither hides the other.
    unofficial: { symbol: "x", size: 13 },
  };
  const UNOFFICIAL_OFFSET = 0.22;
  const DECIMALS = 4;

  const state = { hidden: new Set(new URLSearchParams(window.location.search).getAll("hide")) };

  function formatScore(value) {
    return value === null ? "—" : value.toFixed(DECIMALS);
  }

  function scoreWithError(value, error) {
    if (value === null) return "—";
    return error === null ? formatScore(value) : `${formatScore(value)} ± ${formatScore(error)}`;
  }

  function verdict(chart, row) {
    return row.passed ? `PASS (≥ ${chart.threshold_text})` : `FAIL (needs strict and flexible ≥ ${chart.threshold_text})`;
  }

  function runText(row) {
    const reused = row.measured_run_id !== row.run_id ? ` (measured in run ${row.measured_run_id})` : "";
    return `${row.date} · run ${row.run_id} attempt ${row.run_attempt}${reused}`;
  }

  function hoverText(chart, group, row) {
    const shots = row.n_shot === null ? "n-shot unknown" : `${row.n_shot}-shot`;
    return [
      `<b>${escapeHtml(row.label)}</b>`,
      escapeHtml(group.label),
      `Strict: <b>${scoreWithError(row.em_strict, row.em_strict_se)}</b>`,
      `Flexible: ${scoreWithError(row.em_flexible, row.em_flexible_se)}`,
      `<b>${verdict(chart, row)}</b>`,
      `n<sub>eff</sub> ${row.n_eff === null ? "unknown" : row.n_eff} · ${shots}`,
      `Image: ${escapeHtml(row.image || "unknown")}`,
      runText(row),
      "<i>Click the point for a link to the run</i>",
    ].join("<br>");
  }

  /** x of a row: its config's position, shifted right for the nth unofficial run when the
   * official rows have that config too. */
  function xOf(row, group, unofficialIndex, officialPositions) {
    if (group.kind === "official") return row.x;
    const slot = officialPositions.has(row.x) ? unofficialIndex + 1 : unofficialIndex;
    return row.x + slot * UNOFFICIAL_OFFSET;
  }

  function groupTraces(chart, group, groupIndex, context) {
    const kind = GROUP_KINDS[group.kind];
    const hidden = state.hidden.has(group.key);
    const unofficialIndex = chart.groups.slice(0, groupIndex).filter((other) => other.kind === "unofficial").length;
    return [true, false].map((passed) => {
      const plotted = group.rows
        .map((row, rowIndex) => ({ row, rowIndex }))
        .filter(({ row }) => row.passed === passed && row.em_strict !== null);
      const colour = passed ? context.colours.good : context.colours.bad;
      return {
        type: "scatter",
        mode: "markers",
        name: `${escapeHtml(group.label)} ${passed ? "pass" : "fail"}`,
        visible: !hidden,
        x: plotted.map(({ row }) => xOf(row, group, unofficialIndex, context.officialPositions)),
        y: plotted.map(({ row }) => row.em_strict),
        error_y: {
          type: "data",
          array: plotted.map(({ row }) => row.em_strict_se ?? 0),
          visible: true,
          color: colour,
          thickness: 1.5,
          width: 5,
        },
        customdata: plotted.map(({ rowIndex }) => [groupIndex, rowIndex]),
        hovertext: plotted.map(({ row }) => hoverText(chart, group, row)),
        hoverinfo: "text",
        marker: {
          color: colour,
          symbol: kind.symbol,
          size: kind.size,
          line: { width: 1, color: context.colours.bg },
        },
      };
    });
  }

  function visibleGroups(chart) {
    return chart.groups.filter((group) => !state.hidden.has(group.key));
  }

  /** The y range: every plotted bar and the threshold, with some air. */
  function yRange(chart) {
    const values = [chart.threshold];
    for (const group of visibleGroups(chart)) {
      for (const row of group.rows) {
        if (row.em_strict === null) continue;
        const error = row.em_strict_se ?? 0;
        values.push(row.em_strict - error, row.em_strict + error);
      }
    }
    const low = Math.min(...values);
    const high = Math.max(...values);
    const pad = Math.max(0.01, (high - low) * 0.15);
    return [low - pad, high + pad];
  }

  /** Tick text in lines, so labels stay level: GPU / engine / precision, then the variant and
   * topology, then the scenario and concurrency (the label's last part). */
  function tickText(label) {
    const parts = label.split(" / ");
    return [parts.slice(0, 3), parts.slice(3, -1), parts.slice(-1)]
      .filter((line) => line.length)
      .map((line) => escapeHtml(line.join(" / ")))
      .join("<br>");
  }

  function chartLayout(chart, colours) {
    return {
      ...common.baseLayout(colours),
      margin: { l: 12, r: 12, t: 34, b: 12 },
      xaxis: {
        tickmode: "array",
        tickvals: chart.categories.map((_, index) => index),
        ticktext: chart.categories.map(tickText),
        range: [-0.6, chart.categories.length - 0.4],
        gridcolor: colours.grid,
        linecolor: colours.line,
        tickcolor: colours.line,
        ticks: "outside",
        automargin: true,
        zeroline: false,
      },
      yaxis: {
        title: { text: "Exact match, strict (fraction)", standoff: 8 },
        range: yRange(chart),
        tickformat: ".2f",
        gridcolor: colours.grid,
        linecolor: colours.line,
        tickcolor: colours.line,
        ticks: "outside",
        automargin: true,
        zeroline: false,
      },
      shapes: [
        {
          type: "line",
          xref: "paper",
          x0: 0,
          x1: 1,
          yref: "y",
          y0: chart.threshold,
          y1: chart.threshold,
          line: { color: colours.warn, width: 1.5, dash: "dash" },
        },
      ],
      annotations: [
        {
          text: escapeHtml(chart.threshold_label),
          xref: "paper",
          x: 1,
          xanchor: "right",
          yref: "y",
          y: chart.threshold,
          yanchor: "top",
          showarrow: false,
          font: { size: 12, color: colours.warn },
          bgcolor: colours.bg,
        },
      ],
      // Keeps a zoom while groups are toggled.
      uirevision: chart.id,
    };
  }

  function chartTraces(chart, colours) {
    const official = chart.groups.find((group) => group.kind === "official");
    const officialPositions = new Set(
      official && !state.hidden.has(official.key) ? official.rows.map((row) => row.x) : [],
    );
    const context = { colours, officialPositions };
    return chart.groups.flatMap((group, index) => groupTraces(chart, group, index, context));
  }

  function plotlyConfig() {
    return {
      responsive: true,
      displaylogo: false,
      modeBarButtonsToRemove: ["lasso2d", "select2d"],
      toImageButtonOptions: { filename: "inferencex_evaluation", scale: 2 },
    };
  }

  // ---- CSV of the visible rows --------------------------------------------------------------

  const CSV_HEADER = [
    "kind", "model", "task", "hardware", "framework", "precision", "spec_method", "disagg",
    "topology", "scenario", "concurrency", "n_shot", "em_strict_fraction",
    "em_strict_se_fraction", "em_flexible_fraction", "em_flexible_se_fraction", "n_eff_samples",
    "threshold_fraction", "result", "image", "date", "run_id", "run_attempt", "measured_run_id",
    "run_url",
  ];

  function csvRows(chart) {
    return visibleGroups(chart).flatMap((group) => group.rows.map((row) => [
      group.kind, chart.model, chart.task, row.hardware, row.framework, row.precision,
      row.spec_method, row.disagg, row.topology, row.scenario, row.concurrency, row.n_shot,
      row.em_strict, row.em_strict_se, row.em_flexible, row.em_flexible_se, row.n_eff,
      chart.threshold, row.passed ? "PASS" : "FAIL", row.image, row.date, row.run_id,
      row.run_attempt, row.measured_run_id, new URL(row.run_url, window.location.href).href,
    ]));
  }

  function downloadCsv(chart) {
    const stem = common.fileStem(["inferencex", "eval", chart.model, chart.task]);
    common.downloadCsv(`${stem}.csv`, CSV_HEADER, csvRows(chart));
  }

  // ---- Clicked point: a panel with the run link (hover labels cannot hold a link) -----------

  function showRowDetail(chart, groupIndex, rowIndex) {
    const group = chart.groups[groupIndex];
    const row = group.rows[rowIndex];
    common.showDetail(document.getElementById(`${chart.id}-detail`), {
      title: `${group.label} · ${row.label}`,
      values:
        `strict ${scoreWithError(row.em_strict, row.em_strict_se)} · ` +
        `flexible ${scoreWithError(row.em_flexible, row.em_flexible_se)} · ${verdict(chart, row)} · ` +
        `${row.image || "image unknown"}`,
      href: row.run_url,
      linkText: `Run ${row.run_id} (attempt ${row.run_attempt}, ${row.date})`,
    });
  }

  // ---- Legend shared by every chart: keyboard-reachable buttons, then the colour key --------

  const SVG = "http://www.w3.org/2000/svg";
  const SWATCH_PATHS = {
    circle: "M12.5 8A4.5 4.5 0 1 1 3.5 8A4.5 4.5 0 1 1 12.5 8Z",
    x: "M3.5 3.5L12.5 12.5M12.5 3.5L3.5 12.5",
    dash: "M0 8H4M6 8H10M12 8H16",
  };

  function swatch(shape, colour) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 16 16");
    svg.setAttribute("aria-hidden", "true");
    svg.classList.add("swatch");
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", SWATCH_PATHS[shape]);
    if (shape === "circle") {
      path.setAttribute("fill", colour);
    } else {
      path.setAttribute("fill", "none");
      path.setAttribute("stroke", colour);
      path.setAttribute("stroke-width", shape === "x" ? "2.5" : "2");
    }
    svg.append(path);
    return svg;
  }

  function legendGroups() {
    const byKey = new Map();
    for (const chart of page.charts) {
      for (const group of chart.groups) {
        if (group.rows.length && !byKey.has(group.key)) byKey.set(group.key, group);
      }
    }
    return [...byKey.values()];
  }

  function keyItem(shape, colour, text) {
    const item = document.createElement("span");
    item.className = "legend-key";
    const label = document.createElement("span");
    label.textContent = text;
    item.append(swatch(shape, colour), label);
    return item;
  }

  function buildLegend() {
    const legend = document.getElementById("series-legend");
    if (!legend) return;
    const colours = common.theme();
    const buttons = legendGroups().map((group) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = `legend-item legend-${group.kind}`;
      button.title = "Show or hide these rows on every chart";
      const label = document.createElement("span");
      label.textContent = group.label;
      button.append(swatch(GROUP_KINDS[group.kind].symbol, colours.fg), label);
      button.addEventListener("click", () => {
        if (state.hidden.has(group.key)) state.hidden.delete(group.key);
        else state.hidden.add(group.key);
        update();
      });
      return { group, button };
    });
    legend.replaceChildren(
      ...buttons.map(({ button }) => button),
      keyItem("circle", colours.good, "pass"),
      keyItem("circle", colours.bad, "fail"),
      keyItem("dash", colours.warn, "threshold"),
    );
    legend.hidden = false;
    legend.syncButtons = () => {
      for (const { group, button } of buttons) {
        button.setAttribute("aria-pressed", String(!state.hidden.has(group.key)));
      }
    };
  }

  // ---- Rendering and URL --------------------------------------------------------------------

  function renderCharts() {
    const colours = common.theme();
    for (const chart of page.charts) {
      const element = document.getElementById(chart.id);
      if (element) Plotly.react(element, chartTraces(chart, colours), chartLayout(chart, colours), plotlyConfig());
    }
  }

  function update() {
    renderCharts();
    common.syncLegend();
    // The legend toggles live in the URL too.
    common.syncUrl(state.hidden);
  }

  // ---- Controls: every change reloads with the new URL ---------------------------------------

  common.wireControlsForm(form, { hiddenKeys: () => state.hidden });
  form.addEventListener("change", (event) => {
    if (event.target.hasAttribute("data-resets-history")) {
      // Another model has other official runs.
      const run = form.querySelector("select[name=run]");
      if (run) run.value = "";
    }
    form.requestSubmit();
  });

  function start() {
    if (!window.Plotly) return;
    buildLegend();
    update();
    common.wireCharts(page.charts, {
      onPoint: (chart, [groupIndex, rowIndex]) => showRowDetail(chart, groupIndex, rowIndex),
      onCsv: downloadCsv,
    });
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
      buildLegend();
      update();
    });
  }

  start();
})();
