// graphmem Memory Viewer: one page over the same /v1 routes agents use.
// The API key lives in sessionStorage (this tab only) and travels as a header, never in a URL.
// Every read passes record_access: false, so looking changes nothing. Text from the store is
// always set with textContent (never parsed as HTML).
"use strict";
(() => {
  const KEY = "graphmem.key", NS = "graphmem.namespace";
  // the walk depth of a search when none is chosen: the list and the memory page's "why it
  // ranked" must ask with the same options, or the z-score fusion over a different candidate
  // pool gives the same memory another score (issue 44)
  const DEFAULT_DEPTH = "1";
  const TIERS = ["fast", "medium", "slow", "glacial"];
  const TIER_COLOUR = {fast: "#c44e52", medium: "#dd8452", slow: "#4c72b0", glacial: "#8172b3"};
  const EDGE_COLOUR = {CAUSES: "#c44e52", REFERENCES: "#4c72b0", SIMILAR_TO: "#9aa3b2",
    CONTRADICTS: "#b3261e", SUMMARIZES: "#55a868", FOLLOWS: "#6b6b6b"};
  const KIND_COLOUR = {promotion: "#55a868", demotion: "#dd8452", eviction: "#c44e52",
    expiry: "#8172b3", restore: "#4c72b0"};
  const TERM_WORDS = {
    semantic: "its meaning is close to the query (embedding similarity)",
    keyword: "it shares words with the query (BM25)",
    context_semantic: "the conversation around it is close in meaning",
    context_keyword: "the conversation around it shares words with the query",
    relevance: "all search signals fused (z-scores over the candidates)",
    follows: "a share of the score of its neighbours in the same session",
    walk: "it was reached over typed edges from a direct match",
    graph: "it is central in the walked subgraph (personalised PageRank)",
    importance: "its importance after decay",
    recency: "how recent it is",
    popularity: "how often it has been used",
    tier: "the weight of its tier",
    source: "the query names its source (speaker or agent)",
    archived: "archived by a consolidation: reached through its summary, ranked a little lower",
    summary: "a summary: it ranks after the memories it stands for",
    invalid: "no longer valid (superseded, or its validity ended): ranked lower",
    time: "the query names a time, and it happened or mentions a time in it (or near it)",
  };
  const state = {who: null, ns: null, cy: null};
  window.graphmemViewer = state;  // the browser tests read the graph from here

  // -- small helpers ------------------------------------------------------------------------
  const $ = (sel, root = document) => root.querySelector(sel);
  function h(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  const fmtDate = (iso) => iso ? new Date(iso).toLocaleString() : "—";
  // a mentioned time [start, end): a day, or its first and last day (UTC, as stored)
  const fmtSpan = (s) => {
    const day = (t) => new Date(t).toISOString().slice(0, 10);
    const last = new Date(new Date(s.end).getTime() - 1);
    return day(s.start) === day(last) ? day(s.start) : `${day(s.start)} to ${day(last)}`;
  };
  const fmtNum = (x, d = 3) => (typeof x === "number" ? x.toFixed(d) : "—");
  const short = (text, n = 80) => (text.length > n ? text.slice(0, n - 1) + "…" : text);
  const tierBadge = (t) => h("span", {class: `badge tier-${t}`, text: t});
  // search: the query and the options it was asked with ({q, depth}), carried to the memory page
  const memLink = (id, label, search) =>
    h("a", {href: `#/memory/${encodeURIComponent(id)}${search && search.q ? "?" + new URLSearchParams(
      {q: search.q, depth: search.depth || DEFAULT_DEPTH}) : ""}`}, label);
  const can = (role) => state.who && ["reader", "writer", "admin"].indexOf(state.who.role) >=
    ["reader", "writer", "admin"].indexOf(role);

  class ApiError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  async function api(method, path, body) {
    const headers = {Accept: "application/json"};
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = `Bearer ${key}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(path, {method, headers, cache: "no-store", credentials: "omit",
      body: body === undefined ? undefined : JSON.stringify(body)});
    const text = await res.text();
    let data = text;
    try { data = text ? JSON.parse(text) : null; } catch (e) { /* HTML or Markdown */ }
    if (!res.ok) {
      const err = (data && data.error) || {};
      throw new ApiError(res.status, err.code, err.message || res.statusText);
    }
    return data;
  }
  const nsq = (extra = {}) => new URLSearchParams({namespace: state.ns, ...extra}).toString();
  const entries = (ids) => ids.length ? api("POST", "/v1/entries",
    {namespace: state.ns, ids: ids.slice(0, 100), record_access: false}) : Promise.resolve([]);

  // a page drawn again by a live event may finish after the reader moved on: it then draws nothing
  const onView = (view, id) => { const {parts} = params(); return parts[0] === view && (id === undefined || parts[1] === id); };
  function show(...nodes) {
    const view = $("#view");
    view.replaceChildren(...nodes);
    $("#main").focus({preventScroll: true});
  }
  function failure(err) {
    if (err instanceof ApiError && err.status === 401) return signOut("Your key was not accepted (unknown or revoked): sign in again.");
    if (err instanceof ApiError && err.status === 404) return notFound();
    show(h("section", {class: "card"}, h("h2", {text: "Something went wrong"}),
      h("p", {class: "error", role: "alert", text: err.message || String(err)})));
  }
  function notFound() {
    document.title = "Not found · graphmem";
    show(h("section", {class: "card notfound", "data-testid": "not-found"},
      h("h2", {text: "Not found"}),
      h("p", {text: `There is no such memory or run in namespace “${state.ns}”.`}),
      h("p", {}, h("a", {href: "#/search", text: "Back to search"}))));
  }

  // -- sign-in ------------------------------------------------------------------------------
  async function signIn(key) {
    if (key !== null) sessionStorage.setItem(KEY, key);
    const who = await api("GET", "/v1/whoami");
    state.who = who;
    const select = $("#ns");
    const names = who.namespaces.length ? who.namespaces : ["default"];
    select.replaceChildren(...names.map((n) => h("option", {value: n, text: n})));
    const saved = sessionStorage.getItem(NS);
    state.ns = names.includes(saved) ? saved : names[0];
    select.value = state.ns;
    $("#role").textContent = who.role;
    $("#signin").hidden = true;
    $("#nav").hidden = false;
    $("#who").hidden = false;
    route();
    liveStart();
  }
  function signOut(message, focus = true) {
    liveStop();
    sessionStorage.removeItem(KEY);
    state.who = null;
    $("#nav").hidden = true;
    $("#who").hidden = true;
    $("#view").replaceChildren();
    $("#signin").hidden = false;
    $("#signin-error").textContent = message || "";
    $("#key").value = "";
    if (focus) $("#key").focus();
  }

  // -- views --------------------------------------------------------------------------------
  function params() {
    const [path, query] = location.hash.replace(/^#/, "").split("?");
    return {parts: path.split("/").filter(Boolean).map(decodeURIComponent),
      query: new URLSearchParams(query || "")};
  }
  async function route() {
    if (!state.who) return;
    const {parts, query} = params();
    const view = parts[0] || "search";
    for (const a of document.querySelectorAll("#nav a[data-view]")) {
      if (a.dataset.view === (view === "memory" || view === "graph" ? "search" : view)) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    if (state.cy) { state.cy.destroy(); state.cy = null; }
    try {
      if (view === "memory" && parts[1]) await memoryView(parts[1], {q: query.get("q"), depth: query.get("depth") || DEFAULT_DEPTH});
      else if (view === "graph" && parts[1]) await graphView(parts[1]);
      else if (view === "tiers") await tiersView();
      else if (view === "runs" && parts[1]) await runView(parts[1]);
      else if (view === "runs") await runsView();
      else await searchView(query.get("q") || "", query);
    } catch (err) { failure(err); }
  }

  // after the namespace changed: a page about one run, memory or graph belongs to the old
  // namespace, so leave it for the list of the new one (the runs; a search with the same query)
  function switched() {
    const {parts, query} = params();
    const [view, id] = parts;
    if (view === "runs" && id) location.hash = "#/runs";
    else if ((view === "memory" || view === "graph") && id)
      location.hash = query.get("q") ? `#/search?${new URLSearchParams({q: query.get("q"), depth: query.get("depth") || DEFAULT_DEPTH})}` : "#/search";
    else route();
  }

  async function searchView(q, query) {
    document.title = "Search · graphmem";
    const limit = query.get("limit") || "10", depth = query.get("depth") || DEFAULT_DEPTH;
    const input = h("input", {type: "search", id: "q", name: "q", value: q, "aria-label": "Query",
      placeholder: "What are you looking for?"});
    const lim = h("select", {id: "limit", "aria-label": "Results"},
      ...["10", "20", "50"].map((n) => h("option", {value: n, text: `${n} results`, selected: n === limit})));
    const dep = h("select", {id: "depth", "aria-label": "Walk depth"},
      ...[["0", "no walk"], ["1", "walk 1 hop"], ["2", "walk 2 hops"]].map(([v, t]) => h("option", {value: v, text: t, selected: v === depth})));
    const form = h("form", {class: "row", role: "search", onsubmit: (e) => {
      e.preventDefault();
      location.hash = `#/search?${new URLSearchParams({q: input.value, limit: lim.value, depth: dep.value})}`;
    }}, input, lim, dep, h("button", {type: "submit", text: "Search"}));
    const results = h("div", {id: "results"});
    show(h("section", {class: "card"}, h("h2", {text: "Search memories"}),
      h("p", {class: "muted", text: "Step 1: the compact index (previews, tier, score, token cost). Open one to see the memories around it in time and its full record, with why it ranked."}),
      form), results);
    if (!q) { $("#view").append(liveCard()); input.focus(); return; }
    const rows = await api("POST", "/v1/search/index", {namespace: state.ns, query: q,
      limit: Number(limit), depth: Number(depth)});
    if (!rows.length) { results.replaceChildren(h("p", {class: "card", text: "No memories match."})); return; }
    const tokens = rows.reduce((s, r) => s + r.token_estimate, 0);
    results.replaceChildren(h("section", {class: "card"},
      h("h3", {text: `${rows.length} results · about ${tokens} tokens in full`}),
      h("div", {class: "scroll"}, h("table", {"data-testid": "index"},
        h("thead", {}, h("tr", {}, h("th", {text: "#"}), h("th", {text: "Preview"}), h("th", {text: "Tier"}),
          h("th", {text: "Score"}), h("th", {class: "hide-narrow", text: "Tokens"}), h("th", {class: "hide-narrow", text: "When"}))),
        h("tbody", {}, rows.map((r, i) => h("tr", {},
          h("td", {class: "num", text: i + 1}),
          h("td", {}, memLink(r.id, r.preview, {q, depth}), r.disputed ? [" ", h("span", {class: "badge disputed", text: "disputed"})] : null),
          h("td", {}, tierBadge(r.tier)), h("td", {class: "num", text: fmtNum(r.score)}),
          h("td", {class: "num hide-narrow", text: r.token_estimate}),
          h("td", {class: "hide-narrow", text: fmtDate(r.created_at)}))))))));
  }

  function fields(m) {
    const rows = [["id", m.id], ["tier", m.tier], ["status", m.status], ["kind", m.kind],
      ["importance", `${fmtNum(m.importance)} now (base ${fmtNum(m.base_importance)})`],
      ["created", fmtDate(m.created_at)], ["stored", fmtDate(m.stored_at)],
      ["last accessed", fmtDate(m.last_accessed_at)], ["accesses", m.access_count],
      ["feedback", `${m.success_count} successes, ${m.failure_count} failures, surprise ${fmtNum(m.surprise_score)}`],
      ["source", m.source || "—"], ["topic", m.topic || "—"], ["session", m.session_id || "—"],
      ["pinned", m.pinned ? "yes (never demoted or evicted)" : "no"],
      ["mentions", (m.mentioned || []).length ? m.mentioned.map((s) => fmtSpan(s)).join("; ") : "—"],
      ["expires", m.expires_at ? fmtDate(m.expires_at) : "never (no TTL)"]];
    for (const [k, v] of Object.entries(m.metadata || {})) rows.push([`metadata.${k}`, JSON.stringify(v)]);
    return h("dl", {class: "fields"}, rows.map(([k, v]) => [h("dt", {text: k}), h("dd", {text: String(v)})]));
  }

  function explainPath(path, byId) {
    if (!path || !path.steps || !path.steps.length) return "Found directly by the query: it is a seed.";
    const name = (id) => `“${short((byId[id] && byId[id].content) || id, 50)}”`;
    const hops = path.steps.map((s, i) => {
      const to = path.nodes[i + 1];
      return s.outgoing ? `it ${s.type} ${name(to)}` : `${name(to)} ${s.type} it`;
    });
    return `Reached by walking the graph from the direct match ${name(path.nodes[0])}: ${hops.join(", then ")}.`;
  }

  async function whyBlock(id, search) {
    const q = search.q;
    const box = h("section", {class: "card", "data-testid": "why"}, h("h3", {text: `Why it ranked for “${q}”`}));
    // the search list's options (its depth), so the score is the one the list showed; a longer
    // list only to find the rank of a memory opened from elsewhere (the limit changes no score)
    const results = await api("POST", "/v1/search", {namespace: state.ns, query: q, limit: 50,
      depth: Number(search.depth || DEFAULT_DEPTH), explain: true, record_access: false});
    const idx = results.findIndex((r) => r.memory.id === id);
    if (idx < 0) { box.append(h("p", {class: "muted", text: "It is not among the 50 best results for this query now."})); return box; }
    const r = results[idx];
    const nodes = (r.path && r.path.nodes) || [];
    const byId = Object.fromEntries((await entries(nodes)).map((m) => [m.id, m]));
    box.append(h("p", {}, `Rank ${idx + 1} of ${results.length}, score `,
      h("span", {"data-testid": "why-score", text: fmtNum(r.score)}), ". ",
      r.disputed ? h("strong", {class: "error", text: `Disputed by ${r.disputed_by.length} memory(ies) (CONTRADICTS). `}) : null),
      h("p", {"data-testid": "path", text: explainPath(r.path, byId)}));
    const terms = Object.entries(r.terms || {}).filter(([, v]) => Math.abs(v) > 1e-9)
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
    const reasons = r.reasons || {};
    box.append(h("ul", {class: "why"}, terms.map(([k, v]) =>
      h("li", {"data-term": k}, h("strong", {text: `${k} ${fmtNum(v)}`}), ` — ${TERM_WORDS[k] || k}`,
        reasons[k] ? `: ${reasons[k]}` : ""))));
    return box;
  }

  async function memoryView(id, search) {
    const [m] = await entries([id]);
    if (!m) return notFound();
    document.title = `${short(m.content, 40)} · graphmem`;
    const actions = h("div", {class: "row"},
      h("a", {href: `#/graph/${encodeURIComponent(id)}`, text: "Neighbourhood graph"}));
    if (can("writer")) {
      const verb = m.pinned ? "unpin" : "pin";
      actions.append(h("button", {type: "button", class: "secondary", "data-testid": "pin", text: m.pinned ? "Unpin" : "Pin",
        onclick: async () => {
          try { await api("POST", `/v1/memories/${encodeURIComponent(id)}/${verb}?${nsq()}`); await route(); } catch (e) { failure(e); }
        }}));
    }
    const head = h("section", {class: "card", "data-testid": "entry"},
      h("div", {class: "row"}, tierBadge(m.tier), h("span", {class: "badge", text: m.status}),
        m.kind === "summary" ? h("span", {class: "badge", text: "summary"}) : null,
        m.pinned ? h("span", {class: "badge", text: "pinned"}) : null),
      h("p", {class: "content", text: m.content}), actions, h("h3", {text: "Record"}), fields(m));
    const timeline = await api("GET", `/v1/search/timeline?${new URLSearchParams({namespace: state.ns, anchor_id: id, before: 4, after: 4})}`);
    const tl = h("section", {class: "card", "data-testid": "timeline"},
      h("h3", {text: m.session_id ? `Around it in session ${m.session_id}` : "Around it in time"}),
      h("div", {class: "scroll"}, h("table", {}, h("tbody", {}, timeline.map((t) => h("tr", {class: t.id === id ? "hl" : null},
        h("td", {class: "hide-narrow", text: fmtDate(t.created_at)}),
        h("td", {}, t.id === id ? h("strong", {text: short(t.content, 140)}) : memLink(t.id, short(t.content, 140), search)),
        h("td", {}, tierBadge(t.tier))))))));
    show(head, search.q ? await whyBlock(id, search) : null, tl);
  }

  async function graphView(id) {
    const [center] = await entries([id]);
    if (!center) return notFound();
    document.title = "Graph · graphmem";
    const edges = await api("GET", `/v1/memories/${encodeURIComponent(id)}/relations?${nsq({depth: 2, max_nodes: 60})}`);
    const ids = [id, ...new Set(edges.flatMap((e) => [e.source_id, e.target_id]).filter((x) => x !== id))];
    const nodes = await entries(ids);
    const known = new Set(nodes.map((n) => n.id));
    const disputed = new Set(edges.filter((e) => e.type === "CONTRADICTS").flatMap((e) => [e.source_id, e.target_id]));
    const box = h("div", {class: "graph", id: "graph", role: "img", "aria-label": "Neighbourhood graph; the list below holds the same nodes"});
    const legend = h("div", {class: "legend"}, Object.entries(EDGE_COLOUR).map(([t, c]) =>
      h("span", {}, h("i", {style: `background:${c}`}), t)),
      h("span", {text: "· red border: disputed · square: summary · faded: archived"}));
    const list = h("ul", {"data-testid": "graph-nodes"}, nodes.map((n) => h("li", {},
      memLink(n.id, short(n.content, 90)), " ", tierBadge(n.tier),
      n.kind === "summary" ? [" ", h("span", {class: "badge", text: "summary"})] : null,
      n.status !== "active" ? [" ", h("span", {class: "badge", text: n.status})] : null,
      disputed.has(n.id) ? [" ", h("span", {class: "badge disputed", text: "disputed"})] : null)));
    const edgeList = h("ul", {}, edges.filter((e) => known.has(e.source_id) && known.has(e.target_id)).map((e) => {
      const s = nodes.find((n) => n.id === e.source_id), t = nodes.find((n) => n.id === e.target_id);
      return h("li", {text: `“${short(s.content, 40)}” ${e.type} “${short(t.content, 40)}”${e.score != null ? ` (${fmtNum(e.score, 2)})` : ""}`});
    }));
    show(h("section", {class: "card"}, h("h2", {}, "Neighbourhood of ", memLink(id, `“${short(center.content, 60)}”`)),
      h("p", {class: "muted", text: "Typed edges to two hops. Click a node to open it."}), legend, box),
    h("section", {class: "card"}, h("h3", {text: `${nodes.length} memories`}), list,
      h("h3", {text: `${edgeList.childElementCount} edges`}), edgeList));
    if (typeof window.cytoscape !== "function") { box.textContent = "The graph library did not load."; return; }
    state.cy = window.cytoscape({container: box, wheelSensitivity: 0.3, minZoom: 0.2, maxZoom: 1.4,
      elements: [
        ...nodes.map((n) => ({data: {id: n.id, label: short(n.content, 36), tier: n.tier, kind: n.kind,
          status: n.status, disputed: disputed.has(n.id) ? 1 : 0, center: n.id === id ? 1 : 0}})),
        ...edges.filter((e) => known.has(e.source_id) && known.has(e.target_id)).map((e) => ({data: {
          id: `${e.source_id}|${e.type}|${e.target_id}`, source: e.source_id, target: e.target_id, type: e.type}})),
      ],
      style: [
        {selector: "node", style: {"background-color": (n) => TIER_COLOUR[n.data("tier")] || "#999",
          label: "data(label)", "font-size": 10, "text-wrap": "wrap", "text-max-width": 120,
          "text-valign": "bottom", "text-margin-y": 4, color: "#1d2330", width: 22, height: 22}},
        {selector: "node[kind = 'summary']", style: {shape: "round-rectangle", width: 30, height: 30}},
        {selector: "node[status != 'active']", style: {opacity: 0.45, "border-style": "dashed", "border-width": 2, "border-color": "#555"}},
        {selector: "node[disputed = 1]", style: {"border-width": 4, "border-color": "#b3261e", "border-style": "solid"}},
        {selector: "node[center = 1]", style: {width: 34, height: 34, "font-weight": "bold"}},
        {selector: "edge", style: {width: 2, "curve-style": "bezier", "target-arrow-shape": "triangle",
          "line-color": (e) => EDGE_COLOUR[e.data("type")], "target-arrow-color": (e) => EDGE_COLOUR[e.data("type")]}},
        {selector: "edge[type = 'CONTRADICTS']", style: {"line-style": "dashed", width: 3}},
        {selector: "edge[type = 'SIMILAR_TO']", style: {"line-style": "dotted"}},
      ],
      layout: {name: "breadthfirst", roots: [id], circle: true, spacingFactor: 1.1, padding: 30, animate: false}});
    state.cy.on("tap", "node", (evt) => { location.hash = `#/memory/${encodeURIComponent(evt.target.id())}`; });
  }

  function barChart(title, labels, series, {height = 160} = {}) {
    // series: [{name, colour, values}] drawn as grouped bars, in SVG (no library)
    const W = 460, H = height, pad = 28, groups = labels.length, per = series.length;
    const max = Math.max(1, ...series.flatMap((s) => s.values));
    const gw = (W - pad * 2) / Math.max(1, groups), bw = Math.max(2, (gw - 6) / Math.max(1, per));
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H + 34}`); svg.setAttribute("class", "chart");
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", title);
    const add = (tag, attrs, text) => {
      const n = document.createElementNS("http://www.w3.org/2000/svg", tag);
      for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
      if (text !== undefined) n.textContent = text;
      svg.append(n); return n;
    };
    add("line", {x1: pad, y1: H, x2: W - pad, y2: H, stroke: "#999"});
    add("text", {x: 2, y: 12}, String(max));
    labels.forEach((label, g) => {
      series.forEach((s, i) => {
        const v = s.values[g] || 0, bh = (v / max) * (H - 20);
        const r = add("rect", {x: pad + g * gw + 3 + i * bw, y: H - bh, width: bw - 1, height: bh, fill: s.colour});
        const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
        t.textContent = `${s.name} · ${label}: ${v}`; r.append(t);
      });
      add("text", {x: pad + g * gw + gw / 2, y: H + 14, "text-anchor": "middle"}, label);
    });
    series.forEach((s, i) => {
      add("rect", {x: pad + i * 90, y: H + 22, width: 10, height: 10, fill: s.colour});
      add("text", {x: pad + i * 90 + 14, y: H + 31}, s.name);
    });
    return h("figure", {}, h("figcaption", {}, h("strong", {text: title})), svg);
  }

  async function tiersView() {
    document.title = "Tiers · graphmem";
    const [stats, transitions] = await Promise.all([
      api("GET", `/v1/stats?${nsq()}`), api("GET", `/v1/transitions?${nsq({limit: 2000})}`)]);
    if (!onView("tiers")) return;
    const tiles = h("div", {class: "grid4", "data-testid": "tier-tiles"}, TIERS.map((t) => {
      const by = stats.tier_statuses[t];
      return h("div", {class: "tile"}, tierBadge(t), h("div", {class: "n", text: by.active}),
        h("div", {class: "muted", text: `active · ${by.archived} archived · ${by.expired} expired`}));
    }));
    const bins = stats.importance_histogram.upper_edges.map((e, i, a) => `${i ? a[i - 1] : 0}–${e}`);
    const imp = barChart("Importance now, per tier (active memories)", bins,
      TIERS.map((t) => ({name: t, colour: TIER_COLOUR[t], values: stats.importance_histogram.tiers[t]})));
    const ageLabels = Object.keys(stats.age_histogram.fast);
    const age = barChart("Age since stored, per tier", ageLabels,
      TIERS.map((t) => ({name: t, colour: TIER_COLOUR[t], values: ageLabels.map((l) => stats.age_histogram[t][l])})));
    const days = [...new Set(transitions.map((t) => t.at.slice(0, 10)))].sort().slice(-14);
    const kinds = Object.keys(KIND_COLOUR);
    const over = !days.length ? h("p", {class: "muted", text: "No transitions recorded yet."}) : barChart("Transitions per day (latest 14 days with any)", days.map((d) => d.slice(5)),
      kinds.map((k) => ({name: k, colour: KIND_COLOUR[k],
        values: days.map((d) => transitions.filter((t) => t.kind === k && t.at.startsWith(d)).length)})));
    const totals = ["promotions", "demotions", "evictions", "expiries", "restores"].map((k) =>
      h("div", {class: "tile"}, h("div", {class: "muted", text: k}), h("div", {class: "n", text: stats[k].total}),
        h("div", {class: "muted", text: `${stats[k].last_hour} in the last hour`})));
    const recent = transitions.slice(0, 50);
    show(h("section", {class: "card"}, h("h2", {text: `Tier health · ${state.ns}`}),
      h("p", {class: "muted", text: `${stats.memories} memories (${stats.statuses.active} active, ${stats.statuses.archived} archived, ${stats.statuses.expired} expired); ${stats.kinds.summary} summaries; average surprise ${fmtNum(stats.average_surprise)}.`}),
      tiles),
    h("section", {class: "card grid2"}, imp, age),
    h("section", {class: "card"}, h("h3", {text: "Moves between tiers"}), h("div", {class: "grid4"}, totals), over),
    h("section", {class: "card"}, h("h3", {text: recent.length ? `The ${recent.length} latest transitions` : "No transitions yet"}),
      h("div", {class: "scroll"}, h("table", {"data-testid": "transitions"},
        h("thead", {}, h("tr", {}, ["When", "Memory", "Change", "Reason"].map((c) => h("th", {text: c})))),
        h("tbody", {}, recent.map((t) => h("tr", {},
          h("td", {text: fmtDate(t.at)}), h("td", {}, memLink(t.memory_id, t.memory_id.slice(0, 8))),
          h("td", {}, h("span", {class: "badge", style: `background:${KIND_COLOUR[t.kind]};color:#fff`, text: t.kind}), " ",
            t.from_tier === t.to_tier ? `${t.from_status} → ${t.to_status}` : `${t.from_tier} → ${t.to_tier}`),
          h("td", {text: t.reason}))))))));
  }

  const STATUS_WORDS = {pending_approval: "waits for approval", applied: "applied", dry_run: "dry run",
    rolled_back: "rolled back", running: "running"};
  const statusBadge = (s) => h("span", {class: `badge${s === "pending_approval" ? " pending" : ""}`, text: STATUS_WORDS[s] || s});

  function startButtons() {
    // an admin starts a run of the namespace shown; the new run opens when it has finished
    const ns = state.ns;
    const status = h("span", {class: "muted", role: "status", "data-testid": "start-status"});
    const start = async (dry) => {
      if (!dry && !window.confirm(`Consolidate namespace “${ns}” now: old memories are clustered and summarised, and the members a summary stands for are archived (the run waits for approval if its retrieval check loses too much).\n\nContinue?`)) return;
      for (const b of buttons) b.disabled = true;
      status.textContent = dry ? "Dry run in progress…" : "Consolidation in progress…";
      try {
        const run = await api("POST", "/v1/consolidation/runs", {namespace: ns, dry_run: dry});
        if (state.ns === ns) location.hash = `#/runs/${encodeURIComponent(run.id)}`;  // still there
      } catch (e) { failure(e); }
    };
    const buttons = [
      h("button", {type: "button", class: "secondary", "data-testid": "start-dry-run", text: "Dry run",
        title: "Compute the report only: nothing is written", onclick: () => start(true)}),
      h("button", {type: "button", "data-testid": "start-run", text: "Run consolidation",
        onclick: () => start(false)})];
    return h("div", {class: "row actions"}, buttons, status);
  }

  async function runsView() {
    document.title = "Consolidation · graphmem";
    const runs = (await api("GET", "/v1/consolidation/runs")).filter((r) => r.namespace === state.ns || r.namespace === null);
    if (!onView("runs", undefined) || params().parts[1]) return;
    const pending = runs.filter((r) => r.status === "pending_approval").length;
    show(h("section", {class: "card"}, h("h2", {text: "Consolidation runs"}),
      can("admin") ? startButtons() : null,
      pending ? h("p", {class: "badge pending", role: "status", text: `${pending} run(s) wait for approval`}) : null,
      runs.length ? h("div", {class: "scroll"}, h("table", {"data-testid": "runs"},
        h("thead", {}, h("tr", {}, ["Run", "Status", "Namespace", "Started", "Summaries", "Archived"].map((c) => h("th", {text: c})))),
        h("tbody", {}, runs.map((r) => h("tr", {class: r.status === "pending_approval" ? "pending-run" : null},
          h("td", {}, h("a", {href: `#/runs/${encodeURIComponent(r.id)}`, text: r.id})),
          h("td", {}, statusBadge(r.status)), h("td", {text: r.namespace || "all"}),
          h("td", {text: fmtDate(r.created_at)}), h("td", {class: "num", text: r.summaries ?? "—"}),
          h("td", {class: "num", text: r.archived ?? "—"}))))))
        : h("p", {class: "muted", text: "No consolidation has run in this namespace yet."})));
  }

  async function runView(runId) {
    let run;
    try { run = await api("GET", `/v1/consolidation/runs/${encodeURIComponent(runId)}`); } catch (e) {
      if (e instanceof ApiError && e.status === 404) return notFound();
      throw e;
    }
    document.title = `${runId} · graphmem`;
    const html = await api("GET", `/v1/consolidation/runs/${encodeURIComponent(runId)}?format=html`);
    if (!onView("runs", runId)) return;
    const act = async (verb) => {
      const what = verb === "approve" ? "Apply this run: its summaries replace the archived members in default retrieval." :
        "Roll this run back: its summaries are removed and every member it archived becomes active again.";
      if (!window.confirm(`${what}\n\nContinue?`)) return;
      try { await api("POST", `/v1/consolidation/runs/${encodeURIComponent(runId)}/${verb}`); await route(); } catch (e) { failure(e); }
    };
    const buttons = h("div", {class: "row"});
    if (can("admin") && run.status === "pending_approval")
      buttons.append(h("button", {type: "button", "data-testid": "approve", text: "Approve and apply", onclick: () => act("approve")}));
    if (can("admin") && run.status === "applied")
      buttons.append(h("button", {type: "button", class: "danger", "data-testid": "rollback", text: "Roll back", onclick: () => act("rollback")}));
    const frame = h("iframe", {class: "report", title: "Consolidation report", sandbox: ""});
    frame.srcdoc = typeof html === "string" ? html : JSON.stringify(html);
    show(h("section", {class: "card"}, h("h2", {}, `${runId} `, statusBadge(run.status)),
      run.status === "pending_approval" ? h("p", {text: "The retrieval check lost more than the configured bound: an admin decides."}) : null,
      buttons, h("p", {}, h("a", {href: "#/runs", text: "All runs"}))), frame);
  }

  // -- live events (GET /v1/events, issue 48) ------------------------------------------------
  // EventSource cannot send the key's header: the stream is read with fetch. What arrives is
  // kept (the latest 50 of the namespace) and shown in the live list of the search page; the
  // tiers and runs pages are drawn again when something they show changed.
  const LIVE_MAX = 50;
  const LIVE_WORDS = {stored: "stored", reinforced: "reinforced", updated: "updated",
    deleted: "deleted", related: "related", unrelated: "unrelated", pinned: "pinned",
    unpinned: "unpinned", promoted: "promoted", demoted: "demoted", archived: "archived",
    expired: "expired", restored: "restored", superseded: "superseded",
    consolidation: "consolidation", missed: "some changes were missed", overflow: "too fast to show all"};
  const TIER_EVENTS = new Set(["promoted", "demoted", "archived", "expired", "restored", "stored", "deleted"]);
  const live = {ctrl: null, ns: null, last: {}, events: [], redraw: null};
  state.live = live;  // the browser tests read what arrived from here

  function liveRow(e) {
    const what = e.preview || (e.type === "consolidation" ? `run ${e.run_id}: ${STATUS_WORDS[e.status] || e.status}` :
      e.relation ? `${e.relation} ${(e.target_id || "").slice(0, 8)}` : e.reason || "");
    return h("li", {"data-type": e.type, "data-id": e.memory_id || ""},
      h("span", {class: "badge", text: LIVE_WORDS[e.type] || e.type}), " ",
      e.memory_id && e.type !== "deleted" ? memLink(e.memory_id, short(what || e.memory_id, 90)) : short(what, 90),
      h("span", {class: "muted", text: ` · ${fmtDate(e.at)}`}));
  }
  function liveCard() {
    return h("section", {class: "card"}, h("h3", {text: "Latest changes (live)"}),
      h("p", {class: "muted", text: "What agents write, and what maintenance and consolidation change, as it happens."}),
      h("ul", {id: "live-list", class: "live", "data-testid": "live-list"}, live.events.map(liveRow)));
  }
  function liveEvent(e) {
    if (e.namespace !== state.ns) return;
    live.events.unshift(e);
    live.events.length = Math.min(live.events.length, LIVE_MAX);
    const list = document.getElementById("live-list");
    if (list) {
      list.prepend(liveRow(e));
      while (list.children.length > LIVE_MAX) list.lastChild.remove();
    }
    const view = params().parts[0];
    if ((view === "tiers" && TIER_EVENTS.has(e.type)) || (view === "runs" && e.type === "consolidation")) {
      clearTimeout(live.redraw);  // one redraw for a burst
      live.redraw = setTimeout(() => { if (params().parts[0] === view) route(); }, 500);
    }
  }
  async function liveStart() {
    liveStop();
    const ns = state.ns, ctrl = new AbortController();
    if (live.ns !== ns) live.events = [];
    live.ctrl = ctrl; live.ns = ns;
    while (live.ctrl === ctrl) {
      try {
        const headers = {Accept: "text/event-stream"};
        const key = sessionStorage.getItem(KEY);
        if (key) headers.Authorization = `Bearer ${key}`;
        if (live.last[ns]) headers["Last-Event-ID"] = live.last[ns];
        const res = await fetch(`/v1/events?${new URLSearchParams({namespace: ns})}`,
          {headers, cache: "no-store", credentials: "omit", signal: ctrl.signal});
        if (!res.ok) return;  // no longer allowed (a revoked key): the next request says so
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
            if (!data) continue;  // a heartbeat or the retry hint
            const e = JSON.parse(data);
            live.last[ns] = e.id;
            liveEvent(e);
          }
        }
      } catch (err) {
        if (ctrl.signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 2000));  // dropped: resume after the last id
    }
  }
  function liveStop() {
    if (live.ctrl) live.ctrl.abort();
    live.ctrl = null;
  }

  // -- start --------------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", () => {
    $("#signin-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const key = $("#key").value.trim();
      if (!key) { $("#signin-error").textContent = "Enter an API key."; return; }
      try { await signIn(key); } catch (err) {
        signOut(err instanceof ApiError && err.status === 401 ? "That key is unknown or revoked." : `Sign-in failed: ${err.message}`);
      }
    });
    $("#signout").addEventListener("click", () => signOut("Signed out."));
    $("#ns").addEventListener("change", (e) => { state.ns = e.target.value; sessionStorage.setItem(NS, state.ns); switched(); liveStart(); });
    window.addEventListener("hashchange", route);
    // a key from earlier in this tab, or a server without keys (development, loopback only)
    signIn(null).catch(() => signOut("", false));
  });
})();
