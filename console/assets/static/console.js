// nspl console. Every instant and duration arrives from the node as a
// decimal string of nanoseconds and is computed with BigInt; no nanosecond
// count passes through a JavaScript number.
"use strict";

(function () {
  const base = "/console/";
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const csrf = body.dataset.csrf || "";
  // toLogin sends the browser to the login form, which returns it to this
  // page once logged in (the node checks that it is a console page).
  function toLogin() {
    location.href = base + "login?next=" + encodeURIComponent(location.pathname + location.search);
  }

  // ---- login page: a token in the URL fragment (#token=…) is filled in and
  // sent, so a printed login link works without showing the token to the
  // server's logs.
  const loginForm = $("login");
  if (loginForm) {
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (m) {
      history.replaceState(null, "", location.pathname + location.search);
      $("token").value = decodeURIComponent(m[1]);
      loginForm.submit();
    }
    return;
  }

  // ---- time: the node's UTC minus this browser's, learnt from each hello
  // and heartbeat, so the projection uses the node's idea of now.
  let offset = 0n;
  function browserNow() {
    // Microseconds from the browser's high-resolution clock.
    const us = Math.round((performance.timeOrigin + performance.now()) * 1000);
    return BigInt(us) * 1000n;
  }
  function learnUTC(s) {
    if (typeof s === "string" && s !== "") offset = BigInt(s) - browserNow();
  }
  function nodeNow() { return browserNow() + offset; }

  const NS = 1000000000n;
  // formatNS renders signed Unix nanoseconds as RFC 3339 UTC with nine
  // fractional digits.
  function formatNS(ns) {
    let secs = ns / NS, frac = ns % NS;
    if (frac < 0n) { frac += NS; secs -= 1n; }
    const d = new Date(Number(secs) * 1000);
    if (isNaN(d.getTime())) return ns.toString() + " ns";
    return d.toISOString().slice(0, 19) + "." + frac.toString().padStart(9, "0") + "Z";
  }

  // project returns the logical now of an observed clock, or null when it
  // is not readable: floor(elapsed × num / den) past the paced origin, never
  // before it, exactly as the node projects.
  function project(c) { return projectAt(c, nodeNow()); }
  function projectAt(c, now) {
    if (!c) return null;
    if (c.state === "unpaced") return now;
    if (c.state !== "paced" || !c.rate_num) return null;
    const elapsed = now - BigInt(c.wall_started_at_ns);
    const start = BigInt(c.logical_start_ns);
    if (elapsed <= 0n) return start;
    return start + (elapsed * BigInt(c.rate_num)) / BigInt(c.rate_den);
  }

  // The page's arithmetic, for tests and tools: projectAt(clock, nowBigInt)
  // and formatNS(nsBigInt).
  window.nsplConsole = Object.freeze({ projectAt, formatNS });

  // ---- connection state: ONLINE while every stream is open.
  const streams = new Set();
  function setConn() {
    const badge = $("conn");
    if (!badge) return;
    let state = "online";
    for (const s of streams) {
      if (s.state === "offline") { state = "offline"; break; }
      if (s.state === "connecting") state = "connecting";
    }
    badge.className = "badge " + state;
    badge.textContent = state.toUpperCase();
  }

  // Stream is one event stream that reconnects with backoff (250 ms
  // doubling to 5 s) until closed. handlers maps event names to functions;
  // a stream that the node answers 401 for sends the browser to log in.
  class Stream {
    constructor(url, handlers, opts) {
      this.url = url;
      this.handlers = handlers;
      this.opts = opts || {};
      this.backoff = 250;
      this.state = "connecting";
      this.closed = false;
      this.timer = null;
      streams.add(this);
      this.open();
    }
    open() {
      if (this.closed) return;
      this.state = "connecting";
      setConn();
      const es = new EventSource(this.url);
      this.es = es;
      es.addEventListener("hello", (ev) => {
        this.state = "online";
        this.backoff = 250;
        setConn();
        const h = JSON.parse(ev.data);
        learnUTC(h.utc_ns);
        if (this.handlers.hello) this.handlers.hello(h);
      });
      es.addEventListener("utc", (ev) => learnUTC(JSON.parse(ev.data).utc_ns));
      es.addEventListener("logout", toLogin);
      for (const [name, fn] of Object.entries(this.handlers)) {
        if (name === "hello" || name === "lost") continue;
        es.addEventListener(name, (ev) => fn(JSON.parse(ev.data), this));
      }
      es.onerror = () => {
        es.close();
        if (this.closed) return;
        const wasOnline = this.state === "online";
        this.state = "offline";
        setConn();
        if (this.handlers.lost) this.handlers.lost(wasOnline);
        this.checkLogin();
        this.retry();
      };
    }
    retry() {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.open(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, 5000);
    }
    // An EventSource hides the status of a failed connection: ask once
    // whether the login still holds, and go to the login page if not.
    checkLogin() {
      fetch(base + "api/whoami", { credentials: "same-origin" })
        .then((r) => { if (r.status === 401) toLogin(); })
        .catch(() => {});
    }
    // restart drops the connection and opens a new one at once.
    restart() {
      if (this.es) this.es.close();
      clearTimeout(this.timer);
      this.backoff = 250;
      this.open();
    }
    close() {
      this.closed = true;
      clearTimeout(this.timer);
      if (this.es) this.es.close();
      streams.delete(this);
      setConn();
    }
  }

  // ---- tables
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // cellNode renders one cell of a view table as the node laid it out:
  // its text (empty for null), the whole value as its title when the text
  // shortens it, its class and a badge.
  function cellNode(c) {
    const td = el("td", c.class || "", c.text || "");
    if (c.title) td.title = c.title;
    if (c.badge) { td.appendChild(document.createTextNode(" ")); td.appendChild(el("span", "badge role", c.badge)); }
    return td;
  }
  // renderView renders a view table (columns with labels, rows of
  // cells); linkFirst makes the first cell a link selecting the domain.
  function renderView(t, linkFirst) {
    const table = el("table", "grid-table view" + (linkFirst ? " selectable" : ""));
    const tr = el("tr");
    for (const c of t.columns) { const th = el("th", "", c.label); th.dataset.col = c.name; tr.appendChild(th); }
    table.appendChild(el("thead")).appendChild(tr);
    const tb = table.appendChild(el("tbody"));
    for (const row of t.rows) {
      const r = el("tr");
      row.forEach((c, i) => {
        if (i === 0 && linkFirst && c.text) {
          const td = el("td");
          const a = el("a", "", c.text);
          a.href = base + "?domain=" + encodeURIComponent(c.text);
          a.dataset.domain = c.text;
          if (c.text === selected) r.className = "selected";
          td.appendChild(a);
          r.appendChild(td);
        } else r.appendChild(cellNode(c));
      });
      tb.appendChild(r);
    }
    return table;
  }
  // renderTable renders a statement's result set in the statement box, as
  // the shell prints it: a null is NULL there.
  function cell(v) {
    const td = el("td");
    if (v === null || v === undefined) td.appendChild(el("span", "null", "NULL"));
    else { td.textContent = v; td.title = v; }
    return td;
  }
  function renderTable(t) {
    const table = el("table", "grid-table");
    const tr = el("tr");
    for (const c of t.columns) tr.appendChild(el("th", "", c));
    table.appendChild(el("thead")).appendChild(tr);
    const tb = table.appendChild(el("tbody"));
    for (const row of t.rows) {
      const r = el("tr");
      row.forEach((v) => r.appendChild(cell(v)));
      tb.appendChild(r);
    }
    return table;
  }
  // renderFields renders a one-row result as name/value pairs; in the
  // domain's description (describe) a null is an empty value.
  function renderFields(t, describe) {
    const dl = el("dl", "fields");
    if (!t.rows.length) return dl;
    t.columns.forEach((c, i) => {
      const f = el("div", "field");
      f.appendChild(el("dt", "", c));
      const v = t.rows[0][i];
      const dd = el("dd");
      if (v !== null && v !== undefined) dd.textContent = v;
      else if (!describe) dd.appendChild(el("span", "null", "NULL"));
      f.appendChild(dd);
      dl.appendChild(f);
    });
    return dl;
  }
  function replace(id, node) {
    const e = $(id);
    if (!e) return;
    e.replaceChildren(node);
  }
  // show replaces the children of the element id with build()'s node only
  // when what it shows changed: key is its content as a string, what the
  // element shows now is remembered by id. A view arrives every time the
  // node's views change, the cluster status too, and an element replaced
  // under the pointer loses a click in progress (its press and release
  // land on different elements), its focus and its text selection; forget
  // clears the memory of an element emptied otherwise.
  const shown = new Map();
  function show(id, key, build) {
    if (shown.get(id) === key) return;
    shown.set(id, key);
    replace(id, build());
  }
  function forget(id) { shown.delete(id); }

  // quoteName writes a domain name as an NSPL backtick name.
  function quoteName(n) { return "`" + n.replaceAll("`", "``") + "`"; }

  let selected = body.dataset.domain || "";

  // The domain filter (?like=PATTERN on the watch): a LIKE pattern of the
  // names the domain list and the cluster status show.
  function watchURL(params) {
    const filter = $("domain-filter");
    const like = filter ? filter.value.trim() : "";
    if (like) params.push("like=" + encodeURIComponent(like));
    return base + "api/watch" + (params.length ? "?" + params.join("&") : "");
  }

  // ---- live charts: the serving node's metrics (api/metrics) read once a
  // second, the last two minutes drawn as inline SVG. Counters become
  // rates between two readings; a chart without data says so.
  const chartWindow = 120;
  const svgNS = "http://www.w3.org/2000/svg";
  const palette = ["#2f6fde", "#1f8a4c", "#b7791f", "#c0392b", "#7b4fd0", "#2f8fa3", "#d0508a", "#6b7385"];
  function svg(tag, attrs) {
    const e = document.createElementNS(svgNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  // drawChart draws series ([{name, points: [[t, v|null]…]}]) into the
  // figure id, with the latest value of each under it in unit.
  function drawChart(id, series, unit, digits) {
    const fig = $(id);
    if (!fig) return;
    const W = 360, H = 110, pad = 4;
    const plot = svg("svg", { viewBox: "0 0 " + W + " " + H, width: "100%", height: H, role: "img", "aria-label": fig.querySelector("figcaption").textContent });
    let max = 0, tmin = Infinity, tmax = -Infinity, any = false;
    for (const s of series) for (const [t, v] of s.points) {
      tmin = Math.min(tmin, t); tmax = Math.max(tmax, t);
      if (v !== null) { max = Math.max(max, v); any = true; }
    }
    fig.dataset.max = String(max);
    if (max <= 0) max = 1;
    const ceil = niceCeil(max);
    for (let i = 0; i <= 2; i++) {
      const y = pad + (H - 2 * pad) * i / 2;
      plot.appendChild(svg("line", { x1: 0, x2: W, y1: y, y2: y, class: "gridline" }));
    }
    const label = svg("text", { x: W - 2, y: 12, "text-anchor": "end", class: "axis" });
    label.textContent = fmt(ceil, unit, digits);
    plot.appendChild(label);
    const span = Math.max(tmax - tmin, 1);
    series.forEach((s, n) => {
      let d = "", pen = false;
      s.points.forEach(([t, v], i) => {
        if (v === null) { pen = false; return; }
        const x = ((t - tmin) / span) * W, y = H - pad - (v / ceil) * (H - 2 * pad);
        d += (pen ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
        pen = true;
        // A reading between two gaps is a dot: a path of one point draws nothing.
        const prev = i > 0 ? s.points[i - 1][1] : null, next = i + 1 < s.points.length ? s.points[i + 1][1] : null;
        if (prev === null && next === null) plot.appendChild(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 2.5, fill: palette[n % palette.length] }));
      });
      if (d) plot.appendChild(svg("path", { d, class: "series", stroke: palette[n % palette.length], "data-series": s.name, "data-points": String(s.points.filter((p) => p[1] !== null).length) }));
    });
    fig.querySelector(".plot").replaceChildren(plot);
    const value = fig.querySelector(".value");
    value.replaceChildren();
    if (!any) { value.textContent = "no data yet"; fig.dataset.points = "0"; return; }
    fig.dataset.points = String(Math.max(...series.map((s) => s.points.filter((p) => p[1] !== null).length)));
    series.forEach((s, n) => {
      const last = [...s.points].reverse().find((p) => p[1] !== null);
      if (!last) return;
      const item = el("span", "legend");
      const sw = el("i", "swatch");
      sw.style.background = palette[n % palette.length];
      item.appendChild(sw);
      item.appendChild(document.createTextNode((s.name ? s.name + " " : "") + fmt(last[1], unit, digits)));
      value.appendChild(item);
    });
  }
  function niceCeil(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
    return 10 * p;
  }
  function fmt(v, unit, digits) { return v.toFixed(digits) + (unit ? " " + unit : ""); }

  function startCharts() {
    if (!$("charts")) return;
    const samples = [];
    const poll = () => {
      fetch(base + "api/metrics", { credentials: "same-origin" }).then(async (r) => {
        if (r.status === 401) { toLogin(); return; }
        if (!r.ok) { $("charts-msg").textContent = (await r.text()).trim(); return; }
        const s = await r.json();
        $("charts-msg").textContent = s.more ? "the " + s.tick_lag.length + " domains with the largest tick lag; " + s.more + " more not drawn" : "";
        samples.push({ t: Number(BigInt(s.utc_ns) / 1000000n) / 1000, s });
        while (samples.length > chartWindow) samples.shift();
        render();
      }).catch(() => { $("charts-msg").textContent = "the node did not answer; the charts pause until it does"; });
    };
    const render = () => {
      const rate = [], commit = [];
      for (let i = 1; i < samples.length; i++) {
        const a = samples[i - 1], b = samples[i], dt = b.t - a.t;
        const ok = dt > 0 && a.s.statements_total !== null && b.s.statements_total !== null;
        rate.push([b.t, ok ? Math.max(0, b.s.statements_total - a.s.statements_total) / dt : null]);
        let lat = null;
        if (a.s.commit && b.s.commit && b.s.commit.count > a.s.commit.count) {
          lat = 1000 * (b.s.commit.sum_seconds - a.s.commit.sum_seconds) / (b.s.commit.count - a.s.commit.count);
        }
        commit.push([b.t, lat]);
      }
      drawChart("chart-statements", [{ name: "", points: rate }], "/s", 1);
      drawChart("chart-commit", [{ name: "", points: commit }], "ms", 2);
      const domains = new Map();
      for (const { t, s } of samples) for (const d of s.tick_lag) {
        if (!domains.has(d.domain)) domains.set(d.domain, []);
        domains.get(d.domain).push([t, 1000 * d.seconds]);
      }
      drawChart("chart-ticklag", [...domains].slice(0, palette.length).map(([name, points]) => ({ name, points })), "ms", 1);
    };
    poll();
    setInterval(poll, 1000);
  }

  // ---- the cluster page: a summary, the nodes and the domains, and the
  // live charts of the serving node's metrics.
  if (body.dataset.page === "cluster") {
    let clusterWatch = null;
    const summary = (c) => {
      const box = document.createDocumentFragment();
      const tile = (k, v, id, cls) => {
        const t = el("div", "tile");
        t.appendChild(el("span", "k", k));
        const e = el("span", "v" + (cls ? " " + cls : ""), v);
        e.id = id;
        t.appendChild(e);
        box.appendChild(t);
      };
      tile("Leader", c.leader || "none", "sum-leader", c.leader ? "" : "bad");
      tile("Nodes available", c.available >= 0 ? c.available + " of " + c.nodes : String(c.nodes), "sum-available",
        c.available >= 0 && c.available < c.nodes ? "bad" : "");
      tile("Domains with an authority", String(c.domains), "sum-domains");
      return box;
    };
    const openClusterWatch = () => {
      if (clusterWatch) clusterWatch.close();
      clusterWatch = new Stream(watchURL([]), {
        views(v) {
          $("cluster-rev").textContent = "revision " + v.revision;
          show("cluster-error", "error " + (v.cluster_error || ""), () => v.cluster_error ? el("p", "error", v.cluster_error) : document.createTextNode(""));
          const c = v.cluster;
          if (!c) return;
          show("cluster-summary", JSON.stringify([c.leader, c.nodes, c.available, c.domains]), () => summary(c));
          show("cluster-nodes", JSON.stringify(c.node_table), () => renderView(c.node_table, false));
          show("cluster-domains", JSON.stringify(c.domain_table), () => c.domain_table.rows.length
            ? renderView(c.domain_table, false) : el("p", "empty", "No paced domain is running or has an authority."));
          show("cluster-other", JSON.stringify(c.other || null), () => {
            const f = document.createDocumentFragment();
            if (c.other) { f.appendChild(el("h3", "", "Other")); f.appendChild(renderView(c.other, false)); }
            return f;
          });
        },
      });
    };
    if ($("domain-filter")) $("domain-filter").addEventListener("change", openClusterWatch);
    openClusterWatch();
    startCharts();
    return;
  }

  // ---- the domains page: list, selected domain, clock panel, statements.
  let watch = null;
  function openWatch() {
    if (watch) watch.close();
    watch = new Stream(watchURL(selected ? ["domain=" + encodeURIComponent(selected)] : []), {
      views(v) {
        if (v.list_error) show("domains", "error " + v.list_error, () => el("p", "error", v.list_error));
        else if (v.domains && v.domains.rows && v.domains.rows.length) show("domains", JSON.stringify(v.domains), () => renderView(v.domains, true));
        else show("domains", "empty", () => el("p", "empty", "No domains yet. Create one below or in the statement box."));
        const count = v.domains && v.domains.rows ? String(v.domains.rows.length) + (v.more ? " (+" + v.more + ")" : "") : "";
        if ($("domain-count").textContent !== count) $("domain-count").textContent = count;
        if (v.domain && v.domain === selected) {
          if (v.gone) {
            domainStatus = "gone";
            show("describe", "gone " + v.describe_error, () => {
              const p = el("p", "notice", v.describe_error + " ");
              const a = el("a", "", "Back to the domains");
              a.href = base;
              a.dataset.domain = "";
              p.appendChild(a);
              return p;
            });
          } else if (v.describe_error) show("describe", "error " + v.describe_error, () => el("p", "error", v.describe_error));
          else if (v.describe) {
            const i = v.describe.columns.indexOf("status");
            domainStatus = i >= 0 && v.describe.rows.length ? v.describe.rows[0][i] : "";
            show("describe", JSON.stringify(v.describe), () => renderFields(v.describe, true));
          }
          setButtons();
        }
      },
    });
  }

  // The clock panel: one attachment of the selected domain in a session of
  // its own.
  const clock = { stream: null, c: null, tick: null, state: "detached", manual: false };
  function setClockState(state, msg) {
    clock.state = state;
    const badge = $("clock-state");
    if (!badge) return;
    badge.textContent = state.toUpperCase();
    badge.className = "badge state " + state;
    $("clock").dataset.state = state;
    $("clock-msg").textContent = msg || "";
    $("clock-toggle").textContent = state === "detached" ? "Attach" : "Detach";
    $("clock-toggle").disabled = state === "ended" || state === "refused";
    setButtons();
    renderClock();
  }
  // The lifecycle buttons follow the domain's state: the attached clock's
  // when it is live (paced or unpaced: running; stopped), else the
  // description's status. A running domain's primary button is STOP, a
  // stopped one's START; the button that would be refused is disabled, as
  // is DROP of a running domain, and every button while one runs.
  let domainStatus = body.dataset.status || "";
  let acting = false;
  function setButtons() {
    let status = domainStatus;
    if (clock.state === "paced" || clock.state === "unpaced") status = "running";
    else if (clock.state === "stopped") status = "stopped";
    else if (clock.state === "ended") status = "gone";
    const start = $("btn-start"), stop = $("btn-stop"), drop = $("btn-drop");
    const running = status === "running", stopped = status === "stopped", gone = status === "gone";
    start.classList.toggle("secondary", !stopped);
    stop.classList.toggle("secondary", !running);
    start.disabled = acting || running || gone;
    stop.disabled = acting || stopped || gone;
    drop.disabled = acting || running || gone;
    start.title = running ? "the domain is running; stop it to start a new generation" : "START the domain";
    stop.title = stopped ? "the domain is stopped" : "STOP the domain";
    drop.title = running ? "stop the domain before dropping it" : "DROP the domain; asks once more";
    $("detail").dataset.status = status;
  }
  function renderClock() {
    const c = clock.c;
    $("clock-gen").textContent = c ? "generation " + c.generation : "";
    $("clock-params").textContent = c && c.state === "paced" ? c.rate + " · " + c.period + " · " + c.skew : c && c.state === "unpaced" ? "UTC" : "—";
    const t = clock.tick;
    $("clock-tick").textContent = t ? "#" + t.tick : "—";
    $("clock-boundary").textContent = t ? t.boundary : "—";
    tickNow();
  }
  function tickNow() {
    const now = $("clock-now");
    if (!now) return;
    const live = clock.state === "paced" || clock.state === "unpaced";
    const v = live ? project(clock.c) : null;
    now.textContent = v === null ? "—" : formatNS(v);
    $("clock-now-ns").textContent = v === null ? "" : v.toString() + " ns";
  }
  setInterval(tickNow, 250);

  function attachClock() {
    detachClock(false);
    if (!selected) return;
    clock.c = null;
    clock.tick = null;
    setClockState("attaching");
    const domain = selected;
    clock.stream = new Stream(base + "api/clock?domain=" + encodeURIComponent(domain), {
      hello() { if (clock.state !== "attaching") setClockState("attaching"); },
      attached(a) {
        clock.c = a.clock;
        clock.tick = null;
        setClockState(a.clock.state, a.message);
      },
      refused(r, s) {
        s.close();
        setClockState("refused", r.message);
      },
      frame(f, s) {
        if (f.kind === "state") {
          if (!clock.c || clock.c.generation !== f.clock.generation) clock.tick = null;
          clock.c = f.clock;
          setClockState(f.clock.state);
        } else if (f.kind === "tick") {
          clock.tick = f;
          renderClock();
        } else if (f.kind === "error") {
          $("clock-msg").textContent = f.failure;
        } else if (f.kind === "end") {
          if (f.reason === "DomainRemoved") {
            s.close();
            setClockState("ended", "the domain was dropped");
          } else {
            setClockState("interrupted", "the node is shutting down; attaching again");
            s.restart();
          }
        }
      },
      lost(wasOnline) {
        if (clock.state !== "ended" && clock.state !== "refused") setClockState("interrupted", "connection to the node lost; attaching again");
      },
    });
  }
  function detachClock(show) {
    if (clock.stream) clock.stream.close();
    clock.stream = null;
    if (show) setClockState("detached");
  }

  // The statement box: a session of its own whose stream brings every
  // outcome and frame in order.
  const log = $("log");
  const maxLog = 400;
  let repl = null, replKey = "", waiting = [];
  function logLine(cls, text) {
    const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    const line = el("div", "line " + cls, text);
    log.appendChild(line);
    while (log.childElementCount > maxLog) log.firstElementChild.remove();
    if (stick) log.scrollTop = log.scrollHeight;
    return line;
  }
  function showOutcome(o) {
    if (o.statement) logLine("stmt", o.statement);
    if (o.error) {
      const e = o.error;
      const box = logLine("err", "");
      if (e.source) {
        box.appendChild(el("pre", "src", e.source + "\n" + e.caret));
      }
      box.appendChild(el("div", "", e.line + ":" + e.column + ": error: " + e.message));
      return;
    }
    if (o.table) log.appendChild(o.table.rows.length === 1 && o.table.columns.length > 6 ? renderFields(o.table, false) : renderTable(o.table));
    for (const w of o.warnings || []) logLine("warn", "warning: " + w);
    if (o.message) logLine("msg", o.message);
    log.scrollTop = log.scrollHeight;
  }
  let lastTick = null;
  function showFrame(f) {
    const text = f.text; // the shell's line of the frame
    if (f.kind === "tick" && lastTick && lastTick.domain === f.domain && lastTick.line === log.lastElementChild) {
      lastTick.line.textContent = text; // a newer tick replaces the last line
      return;
    }
    const line = logLine("frame " + f.kind, text);
    lastTick = f.kind === "tick" ? { domain: f.domain, line } : null;
  }
  function openRepl() {
    repl = new Stream(base + "api/repl", {
      hello(h) {
        replKey = h.key;
        const w = waiting;
        waiting = [];
        for (const fn of w) fn();
      },
      outcome(o) { lastTick = null; showOutcome(o); },
      frame(f) { showFrame(f); },
      state(s) {
        $("prompt").textContent = s.prompt; // the shell's prompt, written by the node
      },
      lost() { replKey = ""; },
    });
  }
  // run sends text to the statement box's session, waiting for the
  // session if it is being opened again.
  function run(text, retried) {
    if (!replKey) {
      waiting.push(() => run(text, retried));
      return;
    }
    fetch(base + "api/exec", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ key: replKey, text }),
    }).then(async (r) => {
      if (r.status === 409 && !retried) {
        replKey = "";
        repl.restart();
        run(text, true);
        return;
      }
      if (r.status === 401) { toLogin(); return; }
      if (!r.ok) logLine("err", (await r.text()).trim());
    }).catch(() => logLine("err", "the node did not answer; the statement may not have run"));
  }

  const form = $("repl-form"), text = $("repl-text");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = text.value;
    if (!t.trim()) return;
    run(t);
    text.value = "";
  });
  text.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });

  $("create-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const name = quoteName(String(f.get("name")).trim());
    const stmt = f.get("pace") === "PACED"
      ? "CREATE PACED DOMAIN " + name + " WITH PERIOD " + f.get("period") + " SKEW " + f.get("skew") + ";"
      : "CREATE DOMAIN " + name + ";";
    run(stmt);
  });

  // act runs a button's action on the selected domain in a session of its
  // own (api/domain) and shows the node's reply, or its refusal in the
  // console's words, beside the buttons: the operator typed no statement,
  // so none is shown with a caret.
  function act(action) {
    const domain = selected, msg = $("action-msg");
    acting = true;
    setButtons();
    msg.className = "action-msg";
    msg.textContent = "";
    fetch(base + "api/domain", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ domain, action }),
    }).then(async (r) => {
      if (r.status === 401) { toLogin(); return; }
      let a = {};
      try { a = await r.json(); } catch (e) { a = { error: "the node answered " + r.status + " without a reply the console reads" }; }
      if (domain !== selected) return;
      msg.className = "action-msg " + (a.error ? "error" : "ok");
      msg.textContent = a.error || a.message || "";
    }).catch(() => {
      msg.className = "action-msg error";
      msg.textContent = "The node did not answer; the domain may or may not have changed. Its state shows above once the node answers.";
    }).finally(() => { acting = false; setButtons(); });
  }

  function bindActions() {
    $("btn-start").onclick = () => act("start");
    $("btn-stop").onclick = () => act("stop");
    // DROP asks once more: the first click arms it, the second drops; the
    // pointer or focus leaving the button disarms it.
    const drop = $("btn-drop");
    const disarm = () => { drop.textContent = "DROP"; drop.classList.remove("armed"); };
    drop.onmouseleave = disarm;
    drop.onblur = disarm;
    drop.onclick = () => {
      if (!drop.classList.contains("armed")) {
        drop.textContent = "Confirm DROP";
        drop.classList.add("armed");
        return;
      }
      disarm();
      act("drop");
    };
    $("clock-toggle").onclick = () => {
      if (clock.state === "detached") attachClock();
      else detachClock(true);
    };
  }

  function select(name, push) {
    selected = name;
    body.dataset.domain = name;
    $("detail-empty").hidden = !!name;
    $("detail-body").hidden = !name;
    $("detail-name").textContent = name;
    $("describe").replaceChildren();
    forget("describe");
    domainStatus = "";
    $("action-msg").textContent = "";
    // The list stays as it is: only the selected row's mark moves.
    for (const a of $("domains").querySelectorAll("a[data-domain]")) a.closest("tr").classList.toggle("selected", a.dataset.domain === name);
    if (push) history.pushState({ domain: name }, "", base + (name ? "?domain=" + encodeURIComponent(name) : ""));
    document.title = (name || "Domains") + " · nspl console";
    openWatch();
    if (name) attachClock(); else detachClock(false);
  }
  if ($("domain-filter")) $("domain-filter").addEventListener("change", () => openWatch());
  $("domains").addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-domain]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    select(a.dataset.domain, true);
  });
  $("describe").addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-domain]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    select(a.dataset.domain, true);
  });
    window.addEventListener("popstate", () => select(new URLSearchParams(location.search).get("domain") || "", false));

  bindActions();
  openRepl();
  select(selected, false);
})();
