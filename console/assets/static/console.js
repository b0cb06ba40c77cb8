// nspl console. Every instant and duration arrives from the node as a
// decimal string of nanoseconds and is computed with BigInt; no nanosecond
// count passes through a JavaScript number.
"use strict";

(function () {
  const base = "/console/";
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const csrf = body.dataset.csrf || "";

  // ---- login page: a token in the URL fragment (#token=…) is filled in and
  // sent, so a printed login link works without showing the token to the
  // server's logs.
  const loginForm = $("login");
  if (loginForm) {
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (m) {
      history.replaceState(null, "", location.pathname);
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
      es.addEventListener("logout", () => { location.href = base + "login"; });
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
        .then((r) => { if (r.status === 401) location.href = base + "login"; })
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
  function cell(v) {
    const td = el("td");
    if (v === null || v === undefined) td.appendChild(el("span", "null", "NULL"));
    else { td.textContent = v; td.title = v; }
    return td;
  }
  function renderTable(t, linkFirst) {
    const table = el("table", "grid-table" + (linkFirst ? " selectable" : ""));
    const tr = el("tr");
    for (const c of t.columns) tr.appendChild(el("th", "", c));
    table.appendChild(el("thead")).appendChild(tr);
    const tb = table.appendChild(el("tbody"));
    for (const row of t.rows) {
      const r = el("tr");
      row.forEach((v, i) => {
        if (i === 0 && linkFirst && v !== null) {
          const td = el("td");
          const a = el("a", "", v);
          a.href = base + "?domain=" + encodeURIComponent(v);
          a.dataset.domain = v;
          if (v === selected) r.className = "selected";
          td.appendChild(a);
          r.appendChild(td);
        } else r.appendChild(cell(v));
      });
      tb.appendChild(r);
    }
    return table;
  }
  function renderFields(t) {
    const table = el("table", "fields");
    if (!t.rows.length) return table;
    t.columns.forEach((c, i) => {
      const tr = el("tr");
      tr.appendChild(el("th", "", c));
      tr.appendChild(cell(t.rows[0][i]));
      table.appendChild(tr);
    });
    return table;
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

  // ---- the cluster page
  if (body.dataset.page === "cluster") {
    let clusterWatch = null;
    const openClusterWatch = () => {
      if (clusterWatch) clusterWatch.close();
      clusterWatch = new Stream(watchURL([]), {
        views(v) {
          $("cluster-rev").textContent = "revision " + v.revision;
          if (v.cluster_error) show("cluster", "error " + v.cluster_error, () => el("p", "error", v.cluster_error));
          else if (v.cluster) show("cluster", JSON.stringify(v.cluster), () => renderTable(v.cluster, false));
        },
      });
    };
    if ($("domain-filter")) $("domain-filter").addEventListener("change", openClusterWatch);
    openClusterWatch();
    return;
  }

  // ---- the domains page: list, selected domain, clock panel, statements.
  let watch = null;
  function openWatch() {
    if (watch) watch.close();
    watch = new Stream(watchURL(selected ? ["domain=" + encodeURIComponent(selected)] : []), {
      views(v) {
        if (v.list_error) show("domains", "error " + v.list_error, () => el("p", "error", v.list_error));
        else if (v.domains && v.domains.rows && v.domains.rows.length) show("domains", JSON.stringify(v.domains), () => renderTable(v.domains, true));
        else show("domains", "empty", () => el("p", "empty", "No domains yet. Create one below or in the statement box."));
        const count = v.domains && v.domains.rows ? String(v.domains.rows.length) + (v.more ? " (+" + v.more + ")" : "") : "";
        if ($("domain-count").textContent !== count) $("domain-count").textContent = count;
        if (v.domain && v.domain === selected) {
          if (v.describe_error) show("describe", "error " + v.describe_error, () => el("p", "error", v.describe_error));
          else if (v.describe) show("describe", JSON.stringify(v.describe), () => renderFields(v.describe));
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
    for (const id of ["btn-start", "btn-stop", "btn-drop"]) $(id).disabled = state === "ended";
    renderClock();
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
    if (o.table) log.appendChild(o.table.rows.length === 1 && o.table.columns.length > 6 ? renderFields(o.table) : renderTable(o.table, false));
    for (const w of o.warnings || []) logLine("warn", "warning: " + w);
    if (o.message) logLine("msg", o.message);
    log.scrollTop = log.scrollHeight;
  }
  let lastTick = null;
  function showFrame(f) {
    const text = "[clock " + f.domain + "] " + f.text;
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
        $("prompt").textContent = s.in_transaction ? "nspl(" + s.transaction_domain + ")*>" : s.active ? "nspl(" + s.active + ")>" : "nspl>";
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
      if (r.status === 401) { location.href = base + "login"; return; }
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

  function bindActions() {
    $("btn-start").onclick = () => run("USE " + quoteName(selected) + "; START;");
    $("btn-stop").onclick = () => run("USE " + quoteName(selected) + "; STOP;");
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
      run("DROP DOMAIN " + quoteName(selected) + ";");
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
  window.addEventListener("popstate", () => select(new URLSearchParams(location.search).get("domain") || "", false));

  bindActions();
  openRepl();
  select(selected, false);
})();
