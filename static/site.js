/* sitegen front end: charts, the index table (sort, filter, pick) and the comparison page.
   No network: everything a page needs is embedded in it or loaded by a <script> tag, so it
   works from file:// too. */
(function () {
  "use strict";
  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;

  /* Data files are scripts calling sitegen.data(name, value): browsers run <script src> from
     file:// but refuse fetch there. */
  var store = {};
  function data(name, value) { store[name] = value; }

  /* Load the scripts not loaded yet, then call done (once all have loaded or failed). */
  function loadScripts(srcs, done) {
    var pending = srcs.length;
    if (!pending) { done(); return; }
    srcs.forEach(function (src) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = s.onerror = function () { if (--pending === 0) done(); };
      document.head.appendChild(s);
    });
  }

  function readJSON(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }

  /* A chart's fixed-point formats (".4f" in a tooltip, ",.2f") print by the site's rounding
     rule too: d3's round the binary value, as toFixed does. Drawn through vegaFixed, a Vega
     expression function; the spec as embedded and downloaded stays plain Vega-Lite. */
  var FIXED_FORMAT = /^(,?)\.(\d+)f$/;
  function vegaFixed(v, format) {
    var m = FIXED_FORMAT.exec(format);
    if (typeof v !== "number" || !isFinite(v) || !m) return String(v);
    var s = fixed(v, parseInt(m[2], 10));
    return m[1] ? s : s.replace(/,/g, "");
  }
  function ownFormats(node) {
    if (Array.isArray(node)) { node.forEach(ownFormats); return; }
    if (!node || typeof node !== "object") return;
    if (typeof node.format === "string" && FIXED_FORMAT.test(node.format) && !node.formatType) node.formatType = "vegaFixed";
    for (var k in node) if (k !== "data" && k !== "values") ownFormats(node[k]);
  }

  function embed(el, spec) {
    var opts = { actions: false, renderer: "svg", expressionFunctions: { vegaFixed: vegaFixed } };
    if (dark) opts.theme = "dark";
    ownFormats(spec);
    spec.config = Object.assign({}, spec.config, { customFormatTypes: true });
    // vega-embed labels its container "Vega visualization": keep the caption as the chart's
    // text alternative, one image to assistive technology.
    var label = el.getAttribute("aria-label");
    return window.vegaEmbed(el, spec, opts).then(function (res) {
      if (label) { el.setAttribute("role", "img"); el.setAttribute("aria-label", label); el.removeAttribute("aria-roledescription"); }
      el.setAttribute("data-rendered", "1");
      return res;
    });
  }

  /* A chart's "Vega-Lite spec" link: the spec the page embeds, as a file made on the spot
     (the site carries no second copy of any spec). */
  function specLink(name, spec) {
    var a = document.querySelector('a[data-spec="' + name + '"]');
    if (!a || !window.Blob || !window.URL || !URL.createObjectURL) return;
    if (a.href.indexOf("blob:") === 0) URL.revokeObjectURL(a.href);
    a.href = URL.createObjectURL(new Blob([JSON.stringify(spec, null, 2)], { type: "application/json" }));
  }

  /* A legend laid out in columns (a timing stack's many timers) gets as many columns as the
     chart's width holds, each label cut to its column with an ellipsis (the bars' tooltips
     name each part in full): Vega does not wrap a legend, and on a phone the labels of the
     right-hand columns ran past the chart's edge and were cut off there. */
  var LEGEND_COLUMN_PX = 190;
  function fitLegends(spec, width) {
    if (!width) return spec;
    var cols = Math.max(1, Math.floor((width - 20) / LEGEND_COLUMN_PX));
    (spec.layer || [spec]).forEach(function (layer) {
      var c = layer.encoding && layer.encoding.color;
      if (c && c.legend && typeof c.legend.columns === "number" && c.legend.columns > cols) {
        c.legend = Object.assign({}, c.legend, { columns: cols, labelLimit: LEGEND_COLUMN_PX - 30 });
      } else if (c && c.legend && c.legend.columns === undefined && c.scale && Array.isArray(c.scale.domain)) {
        fitKnownLabels(c, layer.encoding.y, (layer.data || spec.data || {}).values || [], width);
      }
    });
    return spec;
  }

  /* A one-row legend whose labels the spec names (its scale's domain: the exception kinds)
     goes in columns where the plot cannot hold the row. A top legend starts at the plot's
     left edge, right of a bar chart's names on y (Vega cuts those at 180 px), so on a phone
     the kinds of the exceptions chart ran past the chart's right edge. */
  function fitKnownLabels(c, y, values, width) {
    var names = y && y.type === "nominal" ? values.map(function (v) { return String(v[y.field]); }) : [];
    var axis = names.length ? Math.min(180, labelsPx(names)) : 40;
    fitLabels(c, c.scale.domain.map(String), width - axis);
  }

  /* The widest of ``names`` as Vega draws its 10 px labels: about 6 px a character. */
  function labelsPx(names) {
    return Math.max.apply(null, names.map(function (n) { return n.length; })) * 6 + 10;
  }

  /* Legend labels ``names`` over ``width`` px: where one row of them is wider, they go in
     columns as wide as the longest (about 6 px a character and 30 for the symbol), so no
     label is cut short, and as many columns as the width holds. */
  function fitLabels(c, names, width) {
    if (!width || !c || !names.length) return;
    var row = names.reduce(function (w, n) { return w + n.length * 6 + 30; }, 0);
    if (row <= width - 20) return;
    var colW = Math.min(labelsPx(names) + 20, width - 20);
    c.legend = Object.assign({}, c.legend || {}, { columns: Math.max(1, Math.floor((width - 20) / colW)), labelLimit: colW - 25 });
  }

  /* The comparison chart's legend names its picks, whose ids differ at their ends
     ("…train_700201", "…train_700202"): fitLabels keeps each name whole. */
  function fitNames(spec, names, width) {
    fitLabels(spec.encoding && spec.encoding.color, names, width);
  }

  function drawCharts() {
    var specs = readJSON("chart-specs") || {};
    document.querySelectorAll(".chart[data-chart]").forEach(function (el) {
      var name = el.getAttribute("data-chart"), spec = specs[name];
      if (!spec) return;
      specLink(name, spec);
      embed(el, fitLegends(spec, el.clientWidth)).catch(function (err) { el.textContent = "Chart failed: " + err; throw err; });
    });
  }


  /* -- numbers ---------------------------------------------------------------------------- */
  /* The site's one rounding rule, as sitegen/present/formatting.py implements it for every
     page (fixed, sci, fmt_num, fmt_score, fmt_pct; docs/design.md, "Numbers"): a number's
     shortest decimal, String(v) (the digits of Python's repr and of JSON), rounded half away
     from zero, a zero printed unsigned. Not toFixed: it rounds the binary value (0.37075 is
     0.370749999… there: "0.3707"). The browser tests run both on the same table of values. */
  var DASH = "–";

  function zeros(n) { return n > 0 ? new Array(n + 1).join("0") : ""; }

  /* |v| as {d, p}: its shortest decimal's digits, without leading or trailing zeros, and the
     power of ten after them: |v| = 0.d × 10^p ("" for zero). */
  function decimalDigits(v) {
    var m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(v)));
    var all = m[1] + (m[2] || ""), d = all.replace(/^0+/, "");
    return { d: d.replace(/0+$/, ""), p: m[1].length + parseInt(m[3] || "0", 10) - (all.length - d.length) };
  }

  /* x's first n digits (none when n <= 0), rounded half away from zero. */
  function roundDigits(x, n) {
    if (x.d.length <= n) return x;
    if (n < 0) return { d: "", p: x.p };
    var head = x.d.slice(0, n), p = x.p;
    if (x.d.charAt(n) >= "5") {
      var i = head.length - 1;
      while (i >= 0 && head.charAt(i) === "9") i--;
      if (i < 0) { head = "1"; p += 1; }  // 0.999 → 1.000: one digit more to the left
      else head = head.slice(0, i) + String.fromCharCode(head.charCodeAt(i) + 1);
    }
    return { d: head.replace(/0+$/, ""), p: p };
  }

  function grouped(whole) { return whole.replace(/\B(?=(\d{3})+$)/g, ","); }

  /* formatting.fixed: a finite number with k decimals, thousands grouped. */
  function fixed(v, k) {
    var x = decimalDigits(v);
    x = roundDigits(x, x.p + k);
    var whole = x.p > 0 ? (x.d + zeros(x.p)).slice(0, x.p) : "0";
    var frac = ((x.p >= 0 ? x.d.slice(x.p) : zeros(-x.p) + x.d) + zeros(k)).slice(0, k);
    return (v < 0 && x.d ? "-" : "") + grouped(whole) + (k > 0 ? "." + frac : "");
  }

  /* formatting.sci: a finite nonzero number as 1.234e-05 (k decimals). */
  function sci(v, k) {
    var x = roundDigits(decimalDigits(v), k + 1), e = x.p - 1, m = (x.d + zeros(k + 1)).slice(0, k + 1);
    var ex = String(Math.abs(e));
    return (v < 0 ? "-" : "") + m.charAt(0) + "." + m.slice(1) + "e" + (e < 0 ? "-" : "+") + (ex.length < 2 ? "0" : "") + ex;
  }

  /* formatting.fmt_num of a float (every number a script prints but counts, below). */
  function num(v, k) {
    if (typeof v !== "number") return DASH;
    if (v !== v) return "nan";
    if (!isFinite(v)) return v > 0 ? "∞" : "−∞";
    if (k === undefined) k = 4;
    var a = Math.abs(v);
    if (a !== 0 && (a < parseFloat("1e-" + k) || a >= 1e9)) return sci(v, Math.max(2, k - 1));
    return fixed(v, k);
  }

  /* formatting.fmt_num of an int: a count, thousands grouped. */
  function count(v) { return typeof v !== "number" ? DASH : (v < 0 ? "-" : "") + grouped(String(Math.abs(v))); }

  /* formatting.fmt_score: a reward or pass@k, four decimals. */
  function score(v) { return num(v, 4); }

  /* formatting.fmt_pct: a fraction as a percentage, k decimals (1 unless given). */
  function pct(v, k) { return typeof v !== "number" || !isFinite(v) ? DASH : fixed(100 * v, k === undefined ? 1 : k) + "%"; }

  /* formatting.dur_unit: the one unit of a column of durations (seconds), from its largest. */
  function durUnit(values) {
    var top = 0;
    values.forEach(function (v) { if (typeof v === "number" && isFinite(v) && v > top) top = v; });
    return top < 120 ? "s" : top < 36000 ? "min" : "h";
  }

  /* formatting.fmt_dur_in: seconds as a bare number in the column's unit; a value too small
     to show in it is "< 0.1" (s) or "< 0.01" (min, h), not a zero. */
  var DUR_UNITS = { s: [1, 1, 0.1], min: [60, 2, 0.01], h: [3600, 2, 0.01] };  // per, decimals, least
  function durIn(v, unit) {
    if (typeof v !== "number" || !isFinite(v)) return DASH;
    var u = DUR_UNITS[unit], x = v / u[0];
    if (0 < x && x < u[2] / 2) return "< " + fixed(u[2], u[1]);
    return fixed(x, u[1]);
  }

  /* -- tasks table (job and run pages) --------------------------------------------------- */
  var CATEGORY = { learned: "Learned", forgotten: "Forgotten", always: "Always solved", never: "Never solved", mixed: "Mixed" };

  /* A row as templates/_tasks.html writes it (a browser test compares the two cell by cell);
     tx: by task, the href of its sampled transcript (the page's task-transcripts data). */
  function taskRow(r, tx) {
    var tr = document.createElement("tr");
    tr.id = "task-" + r.slug;
    tr.setAttribute("data-cat", r.category);
    var cells = [
      [r.name, "l mono"], [CATEGORY[r.category] || r.category, "l"], [count(r.trials)],
      [pct(r.success_rate) + (r.graded ? " " : ""), "", r.graded ? r.successes + "/" + r.graded : null],
      [score(r.reward_mean)], [num(r.turns_mean, 1)],
      [r.first_solved_step === null ? "–" : String(r.first_solved_step)],
      [r.last_solved_step === null ? "–" : String(r.last_solved_step)],
      [pct(r.early_rate, 0)], [pct(r.late_rate, 0)],
      [r.top_exception ? r.top_exception + " ×" + r.top_exception_count : "–", "l mono"]
    ];
    cells.forEach(function (c) {
      var td = document.createElement("td");
      td.textContent = c[0];  // task names and exceptions come from files: text, never HTML
      if (c[1]) td.className = c[1];
      if (c[2]) td.appendChild(el("small", "dim", c[2]));
      tr.appendChild(td);
    });
    var link = tx && Object.prototype.hasOwnProperty.call(tx, r.name) ? tx[r.name] : null;
    var td = el("td", "l", link ? null : "–");
    if (link) {
      var a = el("a", "tx", "view");
      a.href = link;
      td.appendChild(a);
    }
    tr.appendChild(td);
    return tr;
  }

  /* The full table: over HTTP the gzip JSON (decompressed in the browser), from file:// (no
     fetch there) or without DecompressionStream the tasks.js data script. */
  function loadTasks(btn, done) {
    var name = btn.getAttribute("data-name");
    var fromScript = function () {
      loadScripts([btn.getAttribute("data-script")], function () {
        var d = store[name];
        if (!d) { done(null); return; }
        done(d.rows.map(function (row) {
          var o = {};
          d.columns.forEach(function (c, i) { o[c] = row[i]; });
          return o;
        }));
      });
    };
    if (/^https?:$/.test(location.protocol) && window.DecompressionStream && window.fetch) {
      fetch(btn.getAttribute("data-src")).then(function (res) {
        if (!res.ok) throw new Error("HTTP " + res.status);
        return new Response(res.body.pipeThrough(new DecompressionStream("gzip"))).json();
      }).then(function (d) { done(d.tasks); }).catch(fromScript);
    } else {
      fromScript();
    }
  }

  function initTasks() {
    var table = document.getElementById("tasks-table");
    if (!table) return;
    var body = table.tBodies[0];
    var filter = document.getElementById("task-filter");
    var cat = document.getElementById("task-category");
    var count = document.getElementById("task-count");
    var btn = document.getElementById("task-load");
    var tx = readJSON("task-transcripts");
    var apply = function () {
      var q = filter.value.trim().toLowerCase(), c = cat.value, shown = 0, rows = body.rows;
      for (var i = 0; i < rows.length; i++) {
        var tr = rows[i];
        var ok = (!c || tr.getAttribute("data-cat") === c) &&
                 (!q || tr.textContent.toLowerCase().indexOf(q) >= 0);
        tr.hidden = !ok;
        if (ok) shown++;
      }
      count.textContent = shown + " of " + (btn ? btn.getAttribute("data-total") || rows.length : rows.length) + " tasks shown";
      var none = document.getElementById("task-no-match");
      if (none) none.hidden = shown > 0 || !(q || c);
    };
    var loadAll = function (then) {
      if (!btn || btn.disabled) { if (then) then(); return; }
      btn.disabled = true;
      btn.textContent = "Loading…";
      loadTasks(btn, function (rows) {
        if (!rows) { btn.textContent = "Could not load the full table"; return; }
        var frag = document.createDocumentFragment();
        rows.forEach(function (r) { frag.appendChild(taskRow(r, tx)); });
        body.innerHTML = "";
        body.appendChild(frag);
        btn.hidden = true;
        btn = null;
        apply();
        if (then) then();
      });
    };
    filter.addEventListener("input", function () { if (btn) loadAll(); apply(); });
    cat.addEventListener("change", function () { if (btn) loadAll(); apply(); });
    if (btn) btn.addEventListener("click", function () { loadAll(); });
    // A link to a task the page does not hold: load the table, then go to the row.
    var hash = location.hash;
    if (hash.indexOf("#task-") === 0 && !document.getElementById(hash.slice(1)) && btn) {
      loadAll(function () {
        var el = document.getElementById(hash.slice(1));
        if (el) el.scrollIntoView();
      });
    }
    apply();
  }

  /* -- index table ----------------------------------------------------------------------- */
  /* The HTML holds the newest runs; index-rows.js holds every run's rows, drawn here as
     templates/index.html and _rowcells.html draw them (sitegen/present/listing.py makes the
     display strings, so both print the same text). */
  var SPARK = "0123456789abcdefghijklmnopqrstuvwxyzABCDE";

  function sparkPoints(code) {
    // the integer polyline of listing.spark_points
    var n = Math.max(1, code.length - 1), pts = [];
    for (var i = 0; i < code.length; i++) {
      if (code[i] === "-") continue;
      pts.push(Math.floor((200 * i + n) / (2 * n)) + "," + (44 - SPARK.indexOf(code[i])));
    }
    return pts.length >= 2 ? pts.join(" ") : "";
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function link(href, text, cls) {
    var a = el("a", cls, text);
    a.href = href;
    return a;
  }

  /* An id as a link that may break after each dot (as the pages' breakable filter writes it). */
  function idLink(href, id) {
    var a = el("a");
    a.href = href;
    id.split(".").forEach(function (part, i) {
      if (i) { a.appendChild(document.createTextNode(".")); a.appendChild(el("wbr")); }
      a.appendChild(document.createTextNode(part));
    });
    return a;
  }

  function withNote(td, text, note) {
    td.appendChild(document.createTextNode(text === null ? "–" : text));
    if (note) td.appendChild(el("small", "dim", " " + note));
    return td;
  }

  function rowCells(tr, r) {
    var st = el("td");
    st.appendChild(el("span", "status status-" + r.status, r.status));
    tr.appendChild(st);
    tr.appendChild(withNote(el("td"), r.steps, r.first_last));
    [r.reward_mean, r.reward_max, r.reward_last].forEach(function (v) { tr.appendChild(el("td", "", v === null ? "–" : v)); });
    tr.appendChild(withNote(el("td"), r.pass_at_k, r.pass_k ? "@" + r.pass_k : null));
    var t = el("td", "", r.step_time === null ? "–" : r.step_time);
    t.setAttribute("data-v", r.step_time_s === null ? "" : String(r.step_time_s));
    tr.appendChild(t);
    [r.gen_wait, r.success, r.error].forEach(function (v) { tr.appendChild(el("td", "", v === null ? "–" : v)); });
    var f = r.findings, fc = el("td", "findings-cell");
    fc.setAttribute("data-v", String(f[0] * 10000 + f[1] * 100 + f[2]));
    fc.title = r.finding_titles;
    if (f[0] || f[1] || f[2]) {
      var a = link(r.url + "index.html#findings");
      ["error", "warning", "info"].forEach(function (sev, i) { if (f[i]) a.appendChild(el("span", "fsev sev-" + sev, String(f[i]))); });
      fc.appendChild(a);
    } else fc.appendChild(el("span", "dim", "–"));
    tr.appendChild(fc);
    var la = r.last_activity;
    var lt = el("td", "l nowrap", r.last_shown || "–");
    lt.setAttribute("data-v", la || "");
    lt.title = la || "";
    tr.appendChild(lt);
    var sp = el("td", "spark"), pts = sparkPoints(r.spark);
    if (r.spark_title) sp.title = r.spark_title;
    if (pts) {
      var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg"), pl = document.createElementNS(ns, "polyline");
      svg.setAttribute("viewBox", "-1 0 102 48");
      svg.setAttribute("preserveAspectRatio", "none");
      svg.setAttribute("aria-hidden", "true");
      pl.setAttribute("points", pts);
      svg.appendChild(pl);
      sp.appendChild(svg);
    }
    tr.appendChild(sp);
  }

  function pickCell(r) {
    var td = el("td", "sel"), cb = el("input", "pick");
    cb.type = "checkbox";
    cb.setAttribute("data-kind", r.kind);
    cb.setAttribute("data-id", r.id);
    cb.setAttribute("aria-label", "select " + r.kind + " " + r.id);
    td.appendChild(cb);
    return td;
  }

  function groupBody(run, jobs) {
    var g = el("tbody", "group"), rows = [run].concat(jobs);
    var search = rows.map(function (r) { return r.id.toLowerCase() + " " + r.status; });
    if (run.job) search.push(run.job.toLowerCase());
    g.setAttribute("data-search", search.join(" "));
    g.setAttribute("data-statuses", rows.map(function (r) { return r.status; }).join(" "));
    var tr = el("tr", "run-row" + (run.jobs === 1 ? " solo" : ""));
    tr.appendChild(pickCell(run));
    var name = el("td", "l name");
    name.appendChild(idLink(run.url + "index.html", run.id));
    if (run.discarded) {
      var d = el("small", "dim", "(" + run.discarded + " discarded)");
      d.title = "steps discarded by resumes";
      name.appendChild(document.createTextNode(" "));
      name.appendChild(d);
    }
    name.appendChild(document.createTextNode(" "));
    if (run.job) {
      var j = link(run.job_url + "index.html", "job\u00a0↗", "joblink");
      j.title = "the run's only job: " + run.job;
      name.appendChild(j);
    } else name.appendChild(el("small", "dim", run.jobs + " jobs"));
    tr.appendChild(name);
    rowCells(tr, run);
    g.appendChild(tr);
    jobs.forEach(function (r) {
      var jt = el("tr", "job-row");
      jt.appendChild(pickCell(r));
      var n = el("td", "l name");
      n.appendChild(el("span", "tree", "└"));
      n.appendChild(document.createTextNode(" "));
      n.appendChild(idLink(r.url + "index.html", r.id));
      jt.appendChild(n);
      rowCells(jt, r);
      g.appendChild(jt);
    });
    return g;
  }

  /* The index's filter, which the comparison page's picker shares: a group (a run with its
     jobs) stays when its data-search holds the text and, with a status chosen, one of its
     data-statuses is that status (sitegen/present/listing.py: ListingGroup). Returns how many
     stay. */
  function filterGroups(groups, q, s) {
    var shown = 0;
    Array.prototype.forEach.call(groups, function (g) {
      var ok = (!q || g.getAttribute("data-search").indexOf(q) >= 0) &&
               (!s || (" " + g.getAttribute("data-statuses") + " ").indexOf(" " + s + " ") >= 0);
      g.hidden = !ok;
      if (ok) shown++;
    });
    return shown;
  }

  function cellValue(tr, col) {
    var td = tr.children[col];
    if (!td) return "";
    if (td.hasAttribute("data-v")) return td.getAttribute("data-v");
    if (td.classList.contains("name")) return td.querySelector("a").textContent;
    return td.textContent.trim().replace(/,/g, "");
  }

  function initIndex() {
    var table = document.getElementById("runs-table");
    if (!table) return;
    var total = parseInt(table.getAttribute("data-runs"), 10);
    var complete = table.tBodies.length >= total;
    var more = document.getElementById("more-rows");
    var allBtn = document.getElementById("all-rows-btn");
    var btn = document.getElementById("compare-btn");
    var count = document.getElementById("row-count");
    var update = function () {
      var n = table.querySelectorAll("input.pick:checked").length;
      btn.disabled = n === 0;
      btn.textContent = n ? "Compare " + n + " selected" : "Compare selected";
    };
    table.addEventListener("change", function (e) { if (e.target.classList.contains("pick")) update(); });
    // Every run's rows: replace the newest runs' with all of them, picks kept.
    var waiting = null;
    var loadAll = function (then) {
      if (complete) { then(); return; }
      if (waiting) { waiting.push(then); return; }
      waiting = [then];
      if (allBtn) { allBtn.disabled = true; allBtn.textContent = "Loading…"; }
      loadScripts([table.getAttribute("data-rows")], function () {
        var d = store["index-rows"];
        if (d) {
          var picked = {};
          table.querySelectorAll("input.pick:checked").forEach(function (p) { picked[p.getAttribute("data-kind") + ":" + p.getAttribute("data-id")] = 1; });
          var obj = function (row) { var o = {}; d.columns.forEach(function (c, i) { o[c] = row[i]; }); return o; };
          var frag = document.createDocumentFragment();
          d.groups.forEach(function (g) { frag.appendChild(groupBody(obj(g[0]), g[1].map(obj))); });
          Array.prototype.slice.call(table.tBodies).forEach(function (g) { g.remove(); });
          table.appendChild(frag);
          table.querySelectorAll("input.pick").forEach(function (p) {
            if (picked[p.getAttribute("data-kind") + ":" + p.getAttribute("data-id")]) p.checked = true;
          });
          complete = true;
          if (more) more.hidden = true;
        } else if (allBtn) {
          allBtn.textContent = "Could not load every run";
        }
        var calls = waiting;
        waiting = null;
        calls.forEach(function (f) { f(); });
      });
    };
    if (allBtn) {
      allBtn.hidden = false;
      allBtn.addEventListener("click", function () { loadAll(apply); });
    }
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      if (!th.classList.contains("sortable")) return;
      th.tabIndex = 0;
      var sort = function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var text = th.getAttribute("data-type") === "text";
        var groups = Array.prototype.slice.call(table.tBodies);
        groups.forEach(function (g) {
          // Jobs sort within their run; runs sort by their own row.
          var jobs = Array.prototype.slice.call(g.querySelectorAll("tr.job-row"));
          jobs.sort(function (a, b) { return compare(cellValue(a, col), cellValue(b, col), text, asc); });
          jobs.forEach(function (r) { g.appendChild(r); });
        });
        groups.sort(function (a, b) {
          return compare(cellValue(a.rows[0], col), cellValue(b.rows[0], col), text, asc);
        });
        groups.forEach(function (g) { table.appendChild(g); });
      };
      var sortAll = function () { loadAll(function () { sort(); apply(); }); };
      th.addEventListener("click", sortAll);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortAll(); });
    });
    var filter = document.getElementById("filter");
    var status = document.getElementById("status-filter");
    var apply = function () {
      var q = filter.value.trim().toLowerCase();
      var s = status.value;
      var shown = filterGroups(table.tBodies, q, s);
      count.textContent = shown + " of " + (complete ? table.tBodies.length : total) + " runs shown";
      // an empty table says why, with the way back
      if (noMatch) noMatch.hidden = shown > 0 || !(q || s);
    };
    var applyAll = function () { loadAll(apply); };
    var noMatch = document.getElementById("no-match");
    filter.addEventListener("input", applyAll);
    status.addEventListener("change", applyAll);
    var clear = document.getElementById("clear-filter");
    if (clear) clear.addEventListener("click", function () { filter.value = ""; status.value = ""; applyAll(); filter.focus(); });
    // a filter the browser restored (back button) covers every run too
    if (filter.value || status.value) applyAll(); else apply();
    btn.addEventListener("click", function () {
      var runs = [], jobs = [];
      table.querySelectorAll("input.pick:checked").forEach(function (p) {
        (p.getAttribute("data-kind") === "run" ? runs : jobs).push(p.getAttribute("data-id"));
      });
      window.location.href = "compare/index.html?" + selectionQuery(runs, jobs);
    });
    update();
  }

  function compare(a, b, text, asc) {
    var r;
    if (text) r = a.localeCompare(b);
    else {
      var x = a === "" ? NaN : parseFloat(a), y = b === "" ? NaN : parseFloat(b);
      if (isNaN(x) && isNaN(y)) r = 0; else if (isNaN(x)) return 1; else if (isNaN(y)) return -1; else r = x - y;
    }
    return asc ? r : -r;
  }

  function selectionQuery(runs, jobs) {
    var parts = [];
    if (runs.length) parts.push("runs=" + runs.map(encodeURIComponent).join(","));
    if (jobs.length) parts.push("jobs=" + jobs.map(encodeURIComponent).join(","));
    return parts.join("&");
  }

  /* -- comparison page: findings, config diff, task-level comparison ---------------------- */
  var DEFAULT_PICKS = 5;
  var MAX_TASK_ROWS = 500;

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text === null || text === undefined ? "–" : text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  function pickLink(it) {
    var a = document.createElement("a");
    a.href = "../" + it.url + "index.html";
    a.textContent = it.kind + " " + it.id;
    return a;
  }

  function compareFindings(picks) {
    // findings, one row per pick; each one's detail (its tooltip) comes with the pick's
    // curves.js, loaded when picked: compare/items.js stays small with hundreds of runs
    var fb = document.querySelector("#compare-findings tbody");
    if (!fb) return;
    fb.innerHTML = "";
    picks.forEach(function (it) {
      var details = store["findings:" + it.kind + ":" + it.id] || [];
      var tr = document.createElement("tr");
      var name = cell(tr, "", "l"); name.appendChild(pickLink(it));
      var td = cell(tr, "", "l");
      if (!it.findings.length) td.textContent = "none";
      it.findings.forEach(function (f, i) {
        var div = document.createElement("div");
        div.className = "finding";
        var sev = document.createElement("span");
        sev.className = "sev sev-" + f.severity; sev.textContent = f.severity;
        var a = document.createElement("a");
        a.href = "../" + it.url + "index.html#" + f.section; a.textContent = f.title;
        div.appendChild(sev); div.appendChild(a);
        if (details[i]) div.title = details[i];
        td.appendChild(div);
      });
      fb.appendChild(tr);
    });
  }

  function compareInsights(picks) {
    compareFindings(picks);
    // config: only the keys whose values differ among the picks
    var ch = document.querySelector("#compare-config thead"), cb = document.querySelector("#compare-config tbody");
    ch.innerHTML = ""; cb.innerHTML = "";
    var keys = {};
    picks.forEach(function (it) { Object.keys(it.config).forEach(function (k) { keys[k] = 1; }); });
    var rows = Object.keys(keys).sort().filter(function (k) {
      var seen = {};
      picks.forEach(function (it) { seen[k in it.config ? "v" + it.config[k] : "-"] = 1; });
      return Object.keys(seen).length > 1;
    });
    if (picks.length > 1) {
      var hr = document.createElement("tr");
      cell(hr, "key", "l");
      picks.forEach(function (it) { cell(hr, "", "l").appendChild(pickLink(it)); });
      ch.appendChild(hr);
      rows.forEach(function (k) {
        var tr = document.createElement("tr");
        cell(tr, k, "l");
        picks.forEach(function (it) { cell(tr, it.config[k], k in it.config ? "l" : "l missing"); });
        cb.appendChild(tr);
      });
    }
    document.getElementById("config-note").textContent = picks.length < 2 ? "Pick two or more to see their config diff." :
      rows.length ? rows.length + " keys differ." : "The configs of these picks do not differ (or were not logged).";
    // tasks: each pick's solved.js beside its page, loaded when picked
    var withTasks = picks.filter(function (it) { return it.tasks; });
    var want = withTasks.filter(function (it) { return !store["solved:" + it.tasks]; });
    loadScripts(want.map(function (it) { return "../" + it.tasks + "solved.js"; }), function () {
      taskDiff(withTasks);
      verdicts(picks);
    });
  }

  /* Each pick against the first, paired by task (static/stats.js), in the steps chosen. */
  function verdicts(picks) {
    var select = document.getElementById("window-select");
    if (!window.sitegen.stats || !select) return;
    var solved = picks.map(function (it) { return it.tasks ? store["solved:" + it.tasks] : undefined; });
    window.sitegen.stats.renderVerdicts(picks, solved, select.value, { cell: cell, pickLink: pickLink });
  }

  function taskDiff(picks) {
    var head = document.querySelector("#compare-tasks thead"), body = document.querySelector("#compare-tasks tbody");
    var summary = document.getElementById("task-compare-summary");
    head.innerHTML = ""; body.innerHTML = "";
    var data = picks.map(function (it) { return store["solved:" + it.tasks]; });
    var without = picks.filter(function (_, i) { return !data[i]; });
    picks = picks.filter(function (_, i) { return data[i]; });
    data = data.filter(Boolean);
    var left = without.length ? " Without trials, left out: " +
      without.map(function (it) { return it.kind + " " + it.id; }).join(", ") + "." : "";
    if (picks.length < 2) {
      summary.textContent = "Pick two or more runs or jobs with trials to compare them task by task." + left;
      return;
    }
    // (maps without a prototype: a task named "constructor" or "__proto__" is a task)
    var names = Object.create(null), status = data.map(function (d) {
      var m = Object.create(null);
      // (each pick's sampled transcript of a task, when it has one: its site path)
      d.tasks.forEach(function (t, i) { m[t] = [d.successes[i], d.trials[i], d.transcripts ? d.transcripts[i] : null]; names[t] = 1; });
      return m;
    });
    // Only tasks every pick ran are compared: a task one pick never ran is no task it failed.
    var all = Object.keys(names).sort();
    var shared = all.filter(function (t) { return status.every(function (m) { return m[t]; }); });
    var diff = shared.filter(function (t) {
      var solved = status.map(function (m) { return m[t][0] > 0; });
      return solved.indexOf(true) >= 0 && solved.indexOf(false) >= 0;
    });
    var only = picks.map(function (it, i) {
      return diff.filter(function (t) {
        return status[i][t][0] > 0 && status.every(function (m, j) { return j === i || !(m[t][0] > 0); });
      }).length;
    });
    var unshared = all.length - shared.length;
    if (!shared.length) {
      summary.textContent = "The picks with trials ran no task in common (" + all.length +
        (all.length === 1 ? " task" : " tasks") + " in all): nothing to compare task by task." + left;
      return;
    }
    summary.textContent = diff.length + " of " + shared.length + (shared.length === 1 ? " task" : " tasks") +
      " that every pick ran " + (diff.length === 1 ? "is" : "are") + " solved by some picks and not others. " +
      "Solved by this pick alone: " +
      picks.map(function (it, i) { return it.kind + " " + it.id + " " + only[i]; }).join(" · ") + "." +
      (unshared ? " " + unshared + (unshared === 1 ? " task" : " tasks") + " not run by every pick: not compared." : "") + left;
    var hr = document.createElement("tr");
    cell(hr, "task", "l");
    picks.forEach(function (it) { cell(hr, "", "l").appendChild(pickLink(it)); });
    head.appendChild(hr);
    diff.slice(0, MAX_TASK_ROWS).forEach(function (t) {
      var tr = document.createElement("tr");
      cell(tr, t, "l mono");
      status.forEach(function (m) {
        var v = m[t];
        var td = cell(tr, (v[0] > 0 ? "✓ " : "✗ ") + v[0] + "/" + v[1], v[0] > 0 ? "yes" : "no");
        if (v[2]) {
          var a = el("a", "tx", "transcript");
          a.href = "../" + v[2];
          td.appendChild(document.createTextNode(" "));
          td.appendChild(a);
        }
      });
      body.appendChild(tr);
    });
    if (diff.length > MAX_TASK_ROWS) {
      var tr = document.createElement("tr");
      cell(tr, "… and " + (diff.length - MAX_TASK_ROWS) + " more", "l dim");
      body.appendChild(tr);
    }
  }

  /* compare/items.js is column-wise (sitegen/present/listing.py, compare_items): back to one
     object per run and job; a row of four is a copy of an earlier row under another name. */
  function compareItems(d) {
    if (!d) return [];
    var obj = function (names, row) { var o = {}; names.forEach(function (c, i) { o[c] = row[i]; }); return o; };
    var out = [];
    d.rows.forEach(function (row) {
      var src = row.length === 4 ? d.rows[row[3]] : row;
      var it = obj(d.columns, src);
      it.kind = row[0]; it.id = row[1]; it.url = row[2];
      it.cells = src[d.columns.indexOf("cells")];
      it.findings = src[d.columns.indexOf("findings")].map(function (f) { return obj(d.finding_columns, f); });
      var cfg = {}, values = src[d.columns.indexOf("config")];
      d.config_keys.forEach(function (k, i) { if (values[i] !== null) cfg[k] = d.config_values[i][values[i]]; });
      it.config = cfg;
      out.push(it);
    });
    return out;
  }

  /* The overlay's y domain when no pick's curve varies, as sitegen/present/charts.py's
     flat_domain gives the pages' charts (this axis is not zero-based): Vega's own would lay
     a lone constant line on the chart's border. null when some curve varies. */
  function flatDomain(rows) {
    var levels = {}, lo = Infinity, hi = -Infinity;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (r.name in levels && levels[r.name] !== r.value) return null;
      levels[r.name] = r.value;
      lo = Math.min(lo, r.value); hi = Math.max(hi, r.value);
    }
    if (!rows.length) return null;
    var pad = (hi - lo) / 2 || Math.abs(hi) || 1;
    return [lo - pad, hi + pad];
  }

  function comparePage() {
    var items = compareItems(store["compare-items"]);
    var base = readJSON("overlay-spec");
    // The series colours come with the chart spec (sitegen/present/charts.py is their one source).
    var PALETTE = base.encoding.color.scale.range;
    var key = function (it) { return it.kind + ":" + it.id; };
    var byKey = {};
    items.forEach(function (it) { byKey[key(it)] = it; });
    // the table's columns of durations: their cells' place in an item, their header's label
    var cellColumns = (store["compare-items"] || { cell_columns: [] }).cell_columns;
    var durHeads = Array.prototype.map.call(document.querySelectorAll("#compare-table th[data-dur]"), function (th) {
      return { th: th, at: cellColumns.indexOf(th.getAttribute("data-dur")), label: th.textContent };
    });
    var params = new URLSearchParams(window.location.search);
    var metricSelect = document.getElementById("metric-select");
    if (params.get("metric")) metricSelect.value = params.get("metric");
    if (!metricSelect.value) metricSelect.value = "reward";
    metricSelect.addEventListener("change", function () { render(); });
    // "since": each pick's steps counted from its own first step, so one that starts late
    // (a log beginning mid-run) does not squash the others into a corner of the chart
    var xSelect = document.getElementById("x-select");
    if (params.get("x") === "since") xSelect.value = "since";
    var xChosen = params.has("x");
    xSelect.addEventListener("change", function () { xChosen = true; render(); });
    // the steps each verdict compares: each pick's final fifth (the default) or its whole run
    var windowSelect = document.getElementById("window-select");
    if (params.get("steps") === "whole") windowSelect.value = "whole";
    windowSelect.addEventListener("change", function () { render(); });
    var selected = [], missing = [];
    ["runs", "jobs"].forEach(function (p) {
      (params.get(p) || "").split(",").filter(Boolean).forEach(function (id) {
        var k = (p === "runs" ? "run:" : "job:") + id;
        if (!byKey[k]) missing.push((p === "runs" ? "run " : "job ") + id);
        else if (selected.indexOf(k) < 0) selected.push(k);
      });
    });
    // a shared link naming a run this site does not have (a typo, a renamed run) says so
    var missingNote = document.getElementById("missing-note");
    if (missing.length) {
      missingNote.textContent = "Not in this archive, left out: " + missing.join(", ") + ".";
      missingNote.hidden = false;
    }
    // Nothing picked: start with the most recent runs rather than an empty chart (the
    // address stays clean until the reader picks something).
    var defaulted = false;
    if (!selected.length) {
      selected = items.filter(function (it) { return it.kind === "run" && it.last_activity; })
        .sort(function (a, b) { return a.last_activity < b.last_activity ? 1 : a.last_activity > b.last_activity ? -1 : 0; })
        .slice(0, DEFAULT_PICKS).map(key);
      defaulted = selected.length > 0;
    }
    /* The picker: every run, newest first, with its jobs (a run of one job is its job, as
       on the index), filtered as the index is; native checkboxes, the arrow keys moving
       between them. What is picked stays listed above it, each with a button to drop it. */
    var picker = document.getElementById("picker"), pickBoxes = {};
    initPicker();
    function initPicker() {
      var d = store["compare-items"] || { groups: [] }, listed = {}, frag = document.createDocumentFragment();
      var line = function (it, nested) {
        var label = el("label", "pick-line " + it.kind + (nested ? " nested" : ""));
        var cb = el("input", "pick");
        cb.type = "checkbox"; cb.value = key(it);
        cb.setAttribute("data-kind", it.kind); cb.setAttribute("data-id", it.id);
        cb.checked = selected.indexOf(key(it)) >= 0;
        label.appendChild(cb);
        if (nested) { var t = el("span", "tree", "└"); t.setAttribute("aria-hidden", "true"); label.appendChild(t); }
        label.appendChild(el("span", "pick-kind", it.kind));
        label.appendChild(el("span", "pick-name", it.id));
        label.appendChild(el("span", "status status-" + it.status, it.status));
        // steps and reward mean as the table prints them (cells), the last activity as the index does
        var facts = [it.cells[0] + (it.cells[0] === "1" ? " step" : " steps")];
        if (it.cells[1] !== DASH) facts.push("reward " + it.cells[1]);
        if (it.last_activity) facts.push(it.last_activity.slice(0, 16).replace("T", " "));
        label.appendChild(el("small", "dim", facts.join(" · ")));
        pickBoxes[key(it)] = cb;
        listed[key(it)] = 1;
        return label;
      };
      var group = function (rows) {
        var g = el("li", "pick-group");
        g.setAttribute("data-search", rows.map(function (r) { return r.id.toLowerCase() + " " + r.status; }).join(" "));
        g.setAttribute("data-statuses", rows.map(function (r) { return r.status; }).join(" "));
        g.appendChild(line(rows[0], false));
        if (rows.length > 2) rows.slice(1).forEach(function (r) { g.appendChild(line(r, true)); });
        else if (rows.length === 2) listed[key(rows[1])] = 1;
        frag.appendChild(g);
      };
      d.groups.forEach(function (g) { group(g.map(function (i) { return items[i]; })); });
      items.forEach(function (it) { if (!listed[key(it)]) group([it]); });  // (a job of no listed run)
      picker.appendChild(frag);
    }
    var pickFilter = document.getElementById("pick-filter"), pickStatus = document.getElementById("pick-status");
    var pickCount = document.getElementById("pick-count"), pickNone = document.getElementById("pick-no-match");
    var applyPick = function () {
      var q = pickFilter.value.trim().toLowerCase(), shown = filterGroups(picker.children, q, pickStatus.value);
      pickCount.textContent = shown + " of " + picker.children.length + " runs shown";
      pickNone.hidden = shown > 0;
    };
    pickFilter.addEventListener("input", applyPick);
    pickStatus.addEventListener("change", applyPick);
    document.getElementById("pick-clear-filter").addEventListener("click", function () {
      pickFilter.value = ""; pickStatus.value = ""; applyPick(); pickFilter.focus();
    });
    var shownBoxes = function () {
      return Array.prototype.filter.call(picker.querySelectorAll("input.pick"), function (c) { return !c.closest("[hidden]"); });
    };
    pickFilter.addEventListener("keydown", function (e) {
      if (e.key === "ArrowDown" && shownBoxes().length) { shownBoxes()[0].focus(); e.preventDefault(); }
      else if (e.key === "Escape" && pickFilter.value) { pickFilter.value = ""; applyPick(); }
    });
    picker.parentNode.addEventListener("keydown", function (e) {
      var keys = { ArrowDown: 1, ArrowUp: -1, Home: 0, End: 0 };
      if (!(e.key in keys)) return;
      var boxes = shownBoxes(), i = boxes.indexOf(document.activeElement);
      if (!boxes.length) return;
      e.preventDefault();
      var n = e.key === "Home" ? 0 : e.key === "End" ? boxes.length - 1 : i < 0 ? 0 : i + keys[e.key];
      if (n < 0) pickFilter.focus(); else boxes[Math.min(n, boxes.length - 1)].focus();
    });
    picker.addEventListener("change", function (e) {
      var cb = e.target, k = cb.value;
      if (!cb.classList.contains("pick")) return;
      defaulted = false;
      if (cb.checked) { if (selected.indexOf(k) < 0) selected.push(k); }
      else if (selected.indexOf(k) >= 0) selected.splice(selected.indexOf(k), 1);
      render();
    });
    var drop = function (k) {
      defaulted = false;
      selected.splice(selected.indexOf(k), 1);
      if (pickBoxes[k]) pickBoxes[k].checked = false;
      render();
    };
    document.getElementById("clear-btn").addEventListener("click", function () {
      defaulted = false;
      selected = [];
      picker.querySelectorAll("input").forEach(function (c) { c.checked = false; });
      render();
    });
    applyPick();

    /* The picks above the list, each a button that drops it (in the chart's colour). */
    function pickedList() {
      var box = document.getElementById("picked-list"), had = box.contains(document.activeElement);
      var at = had ? Array.prototype.indexOf.call(box.children, document.activeElement) : -1;
      box.innerHTML = "";
      selected.forEach(function (k, i) {
        var it = byKey[k], b = el("button", "chip");
        b.type = "button";
        b.title = "drop " + it.kind + " " + it.id;
        var sw = el("span", "swatch");
        sw.style.background = PALETTE[i % PALETTE.length];
        b.appendChild(sw);
        b.appendChild(document.createTextNode(it.kind + " " + it.id + " "));
        var x = el("span", "", "×");
        x.setAttribute("aria-hidden", "true");
        b.appendChild(x);
        b.setAttribute("aria-label", "Drop " + it.kind + " " + it.id);
        b.addEventListener("click", function () { drop(k); });
        box.appendChild(b);
      });
      // a dropped pick's button is gone: the keyboard stays with the next one (or the search)
      if (had) (box.children[Math.min(at, box.children.length - 1)] || pickFilter).focus();
      document.getElementById("selection-count").textContent = selected.length ? (defaulted ? "Showing:" : selected.length + " picked:") : "Nothing picked.";
    }

    function render() {
      var runs = [], jobs = [];
      selected.forEach(function (k) { (byKey[k].kind === "run" ? runs : jobs).push(byKey[k].id); });
      var q = defaulted ? "" : selectionQuery(runs, jobs);
      var metric = metricSelect.value;
      if (metric !== "reward") q += (q ? "&" : "") + "metric=" + encodeURIComponent(metric);
      if (xSelect.value === "since" && xChosen) q += (q ? "&" : "") + "x=since";
      if (windowSelect.value === "whole") q += (q ? "&" : "") + "steps=whole";
      history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
      pickedList();
      var tbody = document.querySelector("#compare-table tbody");
      tbody.innerHTML = "";
      // each column of durations (seconds) in one unit over the picks, named in its header
      var units = {};
      durHeads.forEach(function (h) {
        units[h.at] = durUnit(selected.map(function (k) { return byKey[k].cells[h.at]; }));
        h.th.textContent = h.label + " (" + units[h.at] + ")";
      });
      selected.forEach(function (k, i) {
        var it = byKey[k];
        var tr = document.createElement("tr");
        var name = document.createElement("td");
        name.className = "l";
        var sw = document.createElement("span");
        sw.className = "swatch"; sw.style.background = PALETTE[i % PALETTE.length];
        var a = document.createElement("a");
        a.href = "../" + it.url + "index.html"; a.textContent = it.kind + " " + it.id;
        name.appendChild(sw); name.appendChild(a);
        tr.appendChild(name);
        // the figures as sitegen/present/listing.py printed them (compare_cells), the
        // durations in their column's unit
        cell(tr, it.status, "l");
        it.cells.forEach(function (c, j) { cell(tr, j in units ? durIn(c, units[j]) : c); });
        tbody.appendChild(tr);
      });
      document.getElementById("empty-note").hidden = selected.length > 0;
      document.getElementById("default-note").hidden = !defaulted;
      compareInsights(selected.map(function (k) { return byKey[k]; }));
      // each picked run's curves live beside its page: load the missing ones, then draw
      // (every load that finishes redraws with the selection as it is then)
      var want = selected.filter(function (k) { return !store["curves:" + k] && !requested[k]; });
      want.forEach(function (k) { requested[k] = true; });
      loadScripts(want.map(function (k) { return "../" + byKey[k].url + "curves.js"; }), function () {
        overlay();
        compareFindings(selected.map(function (k) { return byKey[k]; }));
      });
    }

    var requested = {};
    function overlay() {
      var metric = metricSelect.value;
      if (!xChosen) {
        // Until the reader chooses, picks whose steps do not overlap at all (one starts
        // after another ended: a log that begins mid-run) are lined up from their first
        // steps; as logged, one would squash the others into a corner.
        var spans = selected.map(function (k) {
          var pts = ((store["curves:" + k] || {})[metric] || []).filter(function (p) { return p[1] !== null; });
          return pts.length ? [pts[0][0], pts[pts.length - 1][0]] : null;
        }).filter(Boolean);
        var apart = spans.some(function (a) { return spans.some(function (b) { return a[0] > b[1]; }); });
        xSelect.value = apart ? "since" : "step";
      }
      var since = xSelect.value === "since";
      var rows = [];
      selected.forEach(function (k) {
        var it = byKey[k], curves = store["curves:" + k] || {};
        var points = (curves[metric] || []).filter(function (p) { return p[1] !== null; });
        var first = points.length ? points[0][0] : 0;
        points.forEach(function (p) {
          rows.push({ step: since ? p[0] - first : p[0], value: p[1], name: it.kind + " " + it.id });
        });
      });
      var spec = JSON.parse(JSON.stringify(base));
      spec.data = { values: rows };
      var domain = flatDomain(rows);
      if (domain) spec.encoding.y.scale = Object.assign({}, spec.encoding.y.scale, { domain: { unionWith: domain } });
      spec.encoding.y.title = metric + " (smoothed)";
      if (since) spec.encoding.x.title = "steps after the pick's first step";
      // Colours follow the selection order, matching the table's swatches.
      var names = selected.map(function (k) { return byKey[k].kind + " " + byKey[k].id; });
      spec.encoding.color.scale = { domain: names, range: names.map(function (_, i) { return PALETTE[i % PALETTE.length]; }) };
      var el = document.getElementById("overlay-chart");
      fitNames(spec, names, el.clientWidth);
      specLink("overlay", spec);
      el.removeAttribute("data-rendered");
      if (rows.length) embed(el, spec); else el.innerHTML = "";
    }
    render();
  }

  window.sitegen = {
    data: data, drawCharts: drawCharts, initTasks: initTasks, comparePage: comparePage, initIndex: initIndex,
    // (the tests hold them to formatting.py's)
    format: { num: num, score: score, pct: pct, count: count, vegaFixed: vegaFixed, durUnit: durUnit, durIn: durIn }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initIndex);
  else initIndex();
})();
