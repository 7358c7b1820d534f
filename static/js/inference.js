/* The /inference charts: Plotly traces built from the page's JSON (json_script "inference-data").
 *
 * Every string in that JSON may come from an artifact: it goes through escapeHtml before it
 * reaches Plotly text (which renders a subset of HTML), and through textContent elsewhere.
 * Series carry a `kind`; SERIES_KINDS says how each kind is drawn: "official" series, and the
 * "unofficial" overlay of ?unofficialRun= links (✕ markers, dashed frontiers, UNOFFICIAL hover).
 */
(function () {
  "use strict";

  const common = window.ChartsCommon;
  const dataElement = document.getElementById("inference-data");
  const form = document.getElementById("inference-controls");
  if (!common || !dataElement || !form) return;
  const { escapeHtml } = common;
  const page = JSON.parse(dataElement.textContent);

  // One colour per hardware+framework: distinct hues, readable on light and dark backgrounds.
  const PALETTE = [
    "#2f7ed8", "#e8543f", "#1fa67a", "#d99a06", "#9b5de5",
    "#00a3bf", "#e0569b", "#7a9a01", "#f07b16", "#5a6acf",
  ];
  // One marker per precision; "x" is kept for the unofficial overlay, whatever its precision.
  const SYMBOLS = ["circle", "diamond", "square", "triangle-up", "star", "hexagon", "pentagon"];
  const SERIES_KINDS = {
    official: {
      dash: "solid",
      symbol: (series) => SYMBOLS[series.symbol % SYMBOLS.length],
      hoverHeader: () => [],
    },
    unofficial: {
      dash: "dash",
      symbol: () => "x",
      hoverHeader: (series) => [
        `<b>UNOFFICIAL</b> run ${series.run_id} attempt ${series.run_attempt}`,
        `Branch ${escapeHtml(series.branch || "unknown")} · ${escapeHtml(series.head_sha.slice(0, 8))}`,
      ],
    },
  };

  const params = new URLSearchParams(window.location.search);
  const state = {
    hidden: new Set(params.getAll("hide")),
    hideNonOptimal: params.get("optimal") === "1",
    logX: params.get("logx") === "1",
    logY: params.get("logy") === "1",
    labels: params.get("labels") === "1",
  };

  function colourOf(series) {
    return PALETTE[series.colour % PALETTE.length];
  }

  function formatValue(value, metric) {
    return value.toLocaleString("en-US", {
      minimumFractionDigits: metric.decimals,
      maximumFractionDigits: metric.decimals,
    });
  }

  function seriesTitle(series) {
    const parts = [series.hardware, series.framework, series.precision];
    if (series.spec_method !== "none") parts.push(series.spec_method);
    if (series.disagg) parts.push("disagg");
    return parts.map(escapeHtml).join(" · ");
  }

  function isPlotted(point) {
    return point.x !== null && point.y !== null && (point.frontier || !state.hideNonOptimal);
  }

  function hoverText(chart, series, point) {
    return [
      ...SERIES_KINDS[series.kind].hoverHeader(series),
      `<b>${seriesTitle(series)}</b>`,
      `Concurrency ${point.concurrency} · ${escapeHtml(point.topology)}`,
      `${escapeHtml(chart.x.title)}: <b>${formatValue(point.x, chart.x)}</b> ${escapeHtml(chart.x.unit)}`,
      `${escapeHtml(chart.y.title)}: <b>${formatValue(point.y, chart.y)}</b> ${escapeHtml(chart.y.unit)}`,
      point.frontier ? "On the Pareto frontier" : "Not Pareto-optimal",
      `Image: ${escapeHtml(point.image || "unknown")}`,
      `${escapeHtml(point.date)} · run ${point.run_id} attempt ${point.run_attempt}`,
      "<i>Click the point for a link to the run</i>",
    ].join("<br>");
  }

  function seriesTraces(chart, series, seriesIndex, colours) {
    const kind = SERIES_KINDS[series.kind];
    const colour = colourOf(series);
    const hidden = state.hidden.has(series.key);
    const plotted = series.points
      .map((point, pointIndex) => ({ point, pointIndex }))
      .filter(({ point }) => isPlotted(point));
    const frontier = series.points
      .filter((point) => point.frontier && point.x !== null && point.y !== null)
      .sort((a, b) => a.x - b.x);
    const name = escapeHtml(series.label);
    return [
      {
        type: "scatter",
        mode: "lines",
        name,
        legendgroup: series.key,
        showlegend: false,
        visible: !hidden,
        x: frontier.map((point) => point.x),
        y: frontier.map((point) => point.y),
        line: { color: colour, width: 2, dash: kind.dash, shape: "linear" },
        hoverinfo: "skip",
      },
      {
        type: "scatter",
        mode: state.labels ? "markers+text" : "markers",
        name,
        legendgroup: series.key,
        visible: hidden ? "legendonly" : true,
        x: plotted.map(({ point }) => point.x),
        y: plotted.map(({ point }) => point.y),
        customdata: plotted.map(({ pointIndex }) => [seriesIndex, pointIndex]),
        text: plotted.map(({ point }) => escapeHtml(point.topology)),
        textposition: "top center",
        textfont: { size: 10, color: colour },
        hovertext: plotted.map(({ point }) => hoverText(chart, series, point)),
        hoverinfo: "text",
        marker: {
          color: colour,
          symbol: kind.symbol(series),
          size: plotted.map(({ point }) => (point.frontier ? 10 : 8)),
          opacity: plotted.map(({ point }) => (point.frontier ? 1 : 0.4)),
          line: { width: 1, color: colours.bg },
        },
      },
    ];
  }

  function chartTraces(chart, colours) {
    return chart.series.flatMap((series, index) => seriesTraces(chart, series, index, colours));
  }

  function axisTitle(metric) {
    return `${escapeHtml(metric.title)} (${escapeHtml(metric.unit)})`;
  }

  // Where the better points sit, so a reader never has to work out an axis's direction.
  function betterCorner(chart) {
    const right = chart.x.higher_is_better;
    const top = chart.y.higher_is_better;
    return {
      text: `better ${top ? (right ? "↗" : "↖") : right ? "↘" : "↙"}`,
      xref: "paper",
      yref: "paper",
      x: right ? 1 : 0,
      y: top ? 1 : 0,
      xanchor: right ? "right" : "left",
      yanchor: top ? "top" : "bottom",
      showarrow: false,
      font: { size: 11 },
      opacity: 0.6,
    };
  }

  function chartLayout(chart, colours) {
    const axis = (metric, log) => ({
      title: { text: axisTitle(metric), standoff: 8 },
      type: log ? "log" : "linear",
      gridcolor: colours.grid,
      linecolor: colours.line,
      zerolinecolor: colours.line,
      ticks: "outside",
      tickcolor: colours.line,
      automargin: true,
      rangemode: log ? "normal" : "tozero",
    });
    return {
      ...common.baseLayout(colours),
      // The top margin keeps the mode bar clear of the points.
      margin: { l: 12, r: 12, t: 34, b: 12 },
      xaxis: axis(chart.x, state.logX),
      yaxis: axis(chart.y, state.logY),
      annotations: [{ ...betterCorner(chart), font: { size: 11, color: colours.muted } }],
      // Keeps a zoom while series are toggled; a new axis type starts afresh.
      uirevision: `${chart.id}:${state.logX}:${state.logY}`,
    };
  }

  function fileStem(chart) {
    return common.fileStem(["inferencex", page.model, page.scenario, chart.y.metric, "vs", chart.x.metric]);
  }

  // The mode bar's PNG: the chart as shown, with a title and a legend the page draws in HTML.
  function exportPng(chart, graph) {
    const colours = common.theme();
    const layout = {
      ...graph.layout,
      paper_bgcolor: colours.bg,
      plot_bgcolor: colours.bg,
      margin: { l: 16, r: 16, t: 56, b: 16 },
      title: {
        text: `${escapeHtml(page.model)} · ${escapeHtml(page.scenario)}: ${escapeHtml(chart.y.title)} vs ${escapeHtml(chart.x.title)}`,
        x: 0.01,
        font: { size: 16 },
      },
      showlegend: true,
      legend: { orientation: "h", y: -0.12, x: 0, font: { size: 12 } },
    };
    Plotly.toImage({ data: graph.data, layout }, { format: "png", width: 1400, height: 820, scale: 2 })
      .then((url) => common.saveUrl(url, `${fileStem(chart)}.png`));
  }

  function plotlyConfig(chart) {
    return {
      responsive: true,
      displaylogo: false,
      modeBarButtonsToRemove: ["toImage", "lasso2d", "select2d"],
      modeBarButtonsToAdd: [
        { name: "Download PNG", icon: Plotly.Icons.camera, click: (graph) => exportPng(chart, graph) },
      ],
    };
  }

  // ---- CSV of the visible points: legend toggles and "hide non-optimal" apply ----------------

  function visibleRows(chart) {
    const rows = [];
    for (const series of chart.series) {
      if (state.hidden.has(series.key)) continue;
      for (const point of series.points) {
        if (!isPlotted(point)) continue;
        rows.push([
          series.kind, page.model, page.scenario, series.hardware, series.framework,
          series.precision, series.spec_method, series.disagg, point.concurrency,
          point.topology, point.x, point.y, point.frontier, point.image, point.date,
          point.run_id, point.run_attempt, new URL(point.run_url, window.location.href).href,
        ]);
      }
    }
    return rows;
  }

  function downloadCsv(chart) {
    const header = [
      "kind", "model", "scenario", "hardware", "framework", "precision", "spec_method", "disagg",
      "concurrency", "topology", chart.x.csv_column, chart.y.csv_column, "pareto_optimal",
      "image", "date", "run_id", "run_attempt", "run_url",
    ];
    common.downloadCsv(`${fileStem(chart)}.csv`, header, visibleRows(chart));
  }

  // ---- Clicked point: a panel with the run link (hover labels cannot hold a link) -----------

  function showPointDetail(chart, seriesIndex, pointIndex) {
    const series = chart.series[seriesIndex];
    const point = series.points[pointIndex];
    common.showDetail(document.getElementById(`${chart.id}-detail`), {
      title: `${series.label} · concurrency ${point.concurrency} · ${point.topology}`,
      values:
        `${chart.x.title} ${formatValue(point.x, chart.x)} ${chart.x.unit} · ` +
        `${chart.y.title} ${formatValue(point.y, chart.y)} ${chart.y.unit} · ${point.image || "image unknown"}`,
      href: point.run_url,
      linkText: `Run ${point.run_id} (attempt ${point.run_attempt}, ${point.date})`,
    });
  }

  // ---- Legend shared by both charts: keyboard-reachable buttons ------------------------------

  const SVG = "http://www.w3.org/2000/svg";

  function polygon(corners, radius, rotation, innerRadius) {
    const count = innerRadius ? corners * 2 : corners;
    const points = [];
    for (let i = 0; i < count; i += 1) {
      const r = innerRadius && i % 2 ? innerRadius : radius;
      const angle = rotation + (i * 2 * Math.PI) / count;
      points.push(`${(8 + r * Math.sin(angle)).toFixed(2)},${(8 - r * Math.cos(angle)).toFixed(2)}`);
    }
    return `M${points.join("L")}Z`;
  }

  const SYMBOL_PATHS = {
    circle: "M12.5 8A4.5 4.5 0 1 1 3.5 8A4.5 4.5 0 1 1 12.5 8Z",
    diamond: polygon(4, 5.5, 0),
    square: polygon(4, 5.5, Math.PI / 4),
    "triangle-up": polygon(3, 5.5, 0),
    star: polygon(5, 6, 0, 2.6),
    hexagon: polygon(6, 5, 0),
    pentagon: polygon(5, 5.2, 0),
    x: "M3.5 5.2L5.2 3.5L8 6.3L10.8 3.5L12.5 5.2L9.7 8L12.5 10.8L10.8 12.5L8 9.7L5.2 12.5L3.5 10.8L6.3 8Z",
  };

  function swatch(series) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 16 16");
    svg.setAttribute("aria-hidden", "true");
    svg.classList.add("swatch");
    const line = document.createElementNS(SVG, "path");
    line.setAttribute("d", "M0 8H16");
    line.setAttribute("stroke", colourOf(series));
    line.setAttribute("stroke-width", "2");
    if (SERIES_KINDS[series.kind].dash !== "solid") line.setAttribute("stroke-dasharray", "3 2");
    const marker = document.createElementNS(SVG, "path");
    marker.setAttribute("d", SYMBOL_PATHS[SERIES_KINDS[series.kind].symbol(series)]);
    marker.setAttribute("fill", colourOf(series));
    svg.append(line, marker);
    return svg;
  }

  function legendSeries() {
    const byKey = new Map();
    for (const chart of page.charts) {
      for (const series of chart.series) {
        if (!byKey.has(series.key)) byKey.set(series.key, series);
      }
    }
    return [...byKey.values()];
  }

  function buildLegend() {
    const legend = document.getElementById("series-legend");
    if (!legend) return;
    const allSeries = legendSeries();
    // Dates flag official series older than the rest; an overlay's label names its run instead.
    const official = allSeries.filter((series) => series.kind === "official");
    const newest = official.reduce((latest, series) => (series.date > latest ? series.date : latest), "");
    const buttons = allSeries.map((series) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = `legend-item legend-${series.kind}`;
      button.title = "Show or hide on both charts; Shift+click shows only this series";
      const label = document.createElement("span");
      label.textContent = series.label;
      button.append(swatch(series), label);
      if (series.kind === "official" && series.date !== newest) {
        const date = document.createElement("small");
        date.textContent = series.date;
        button.append(date);
      }
      button.addEventListener("click", (event) => {
        if (event.shiftKey) {
          const onlyThis = allSeries.every((other) => other.key === series.key || state.hidden.has(other.key));
          state.hidden = new Set(onlyThis ? [] : allSeries.map((other) => other.key).filter((key) => key !== series.key));
        } else if (state.hidden.has(series.key)) {
          state.hidden.delete(series.key);
        } else {
          state.hidden.add(series.key);
        }
        update();
      });
      return { series, button };
    });
    const showAll = document.createElement("button");
    showAll.type = "button";
    showAll.className = "legend-reset";
    showAll.textContent = "Show all";
    showAll.addEventListener("click", () => {
      state.hidden.clear();
      update();
    });
    legend.replaceChildren(...buttons.map(({ button }) => button), showAll);
    legend.hidden = false;
    legend.syncButtons = () => {
      for (const { series, button } of buttons) {
        button.setAttribute("aria-pressed", String(!state.hidden.has(series.key)));
      }
      showAll.hidden = state.hidden.size === 0;
    };
  }

  // ---- Rendering and URL --------------------------------------------------------------------

  function renderCharts() {
    const colours = common.theme();
    for (const chart of page.charts) {
      const element = document.getElementById(chart.id);
      if (!element) continue;
      Plotly.react(element, chartTraces(chart, colours), chartLayout(chart, colours), plotlyConfig(chart));
    }
  }

  function update() {
    renderCharts();
    common.syncLegend();
    // The display state lives in the URL too.
    const flags = { optimal: state.hideNonOptimal, logx: state.logX, logy: state.logY, labels: state.labels };
    common.syncUrl(state.hidden, flags);
  }

  // ---- Controls -----------------------------------------------------------------------------

  const DISPLAY_FLAGS = { optimal: "hideNonOptimal", logx: "logX", logy: "logY", labels: "labels" };
  let submitTimer = null;

  function submitSoon(delay) {
    clearTimeout(submitTimer);
    submitTimer = setTimeout(() => form.requestSubmit(), delay);
  }

  common.wireControlsForm(form, {
    // state.hidden is replaced by a Shift+click, so it is read at submit time.
    hiddenKeys: () => state.hidden,
    // A group with every box checked means "all": leave it out, so links stay short.
    beforeSubmit: () => {
      form.querySelectorAll("[data-filter-group]").forEach((group) => {
        const boxes = [...group.querySelectorAll("input")];
        if (boxes.every((box) => box.checked)) boxes.forEach((box) => { box.disabled = true; });
      });
    },
  });
  form.addEventListener("change", (event) => {
    const control = event.target;
    if (control.hasAttribute("data-display")) {
      state[DISPLAY_FLAGS[control.name]] = control.checked;
      update();
      return;
    }
    if (control.hasAttribute("data-resets-filters")) {
      // Another model has other precisions, GPUs and frameworks: start from all of them.
      form.querySelectorAll("[data-filter-group] input").forEach((box) => { box.checked = false; });
    }
    // Checkbox clicks come in bursts: wait a moment so one reload takes them all.
    submitSoon(control.type === "checkbox" ? 700 : 0);
  });

  function start() {
    if (!window.Plotly) return;
    buildLegend();
    update();
    common.wireCharts(page.charts, {
      onPoint: (chart, [seriesIndex, pointIndex]) => showPointDetail(chart, seriesIndex, pointIndex),
      onCsv: downloadCsv,
    });
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", renderCharts);
  }

  start();
})();
