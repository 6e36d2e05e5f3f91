// agenthub view: runs, episodes, a turn-by-turn replay with tokens, per-task scores and learning curves.
// Vanilla JS, no framework, no network beyond this page's own API; charts are inline SVG drawn here.
// The same code serves `agenthub view` (data fetched from /api) and `agenthub report` (data embedded
// in the page as JSON): both sit behind one "source" with the same methods and answers.
"use strict";

(function () {
  const PAGE_SIZE = 50;
  const TASK_PAGE_SIZE = 100;
  const MAX_CHART_DOTS = 400; // beyond this a curve is drawn as a line only
  const OUTCOME_ORDER = ["success", "failure", "truncated", "agent_error", "env_error", "timeout"];
  const EXCLUDED = new Set(["env_error", "timeout"]);

  // ---------------------------------------------------------------- small helpers

  function el(tag, attrs, ...children) {
    const node = document.createElementNS(
      tag === "svg" || (attrs && attrs._svg) ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1999/xhtml",
      tag,
    );
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "_svg" || value === undefined || value === null || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true && !key.startsWith("aria-") ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const svg = (tag, attrs, ...children) => el(tag, { ...attrs, _svg: true }, ...children);
  const count = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"));
  const num = (x, digits = 3) =>
    x === null || x === undefined ? "—" : Number.isInteger(x) ? String(x) : Number(x).toFixed(digits).replace(/0+$/, "").replace(/\.$/, "");
  const pct = (x) => (x === null || x === undefined ? "—" : `${(100 * x).toFixed(1)}%`);
  const seconds = (s) => (s === null || s === undefined ? "—" : s < 10 ? `${s.toFixed(2)} s` : `${s.toFixed(1)} s`);
  const actionText = (action) => (typeof action === "string" ? action : JSON.stringify(action));
  const badge = (outcome) => el("span", { class: `badge outcome-${outcome}` }, outcome);
  const show = (...nodes) => main.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));

  // ---------------------------------------------------------------- data sources

  function httpSource() {
    async function get(path, params) {
      const url = new URL(path, document.baseURI);
      for (const [key, value] of Object.entries(params || {})) {
        if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
      }
      const response = await fetch(url);
      const body = await response.json().catch(() => null);
      if (!response.ok) throw new Error(body && body.error ? body.error.message : `HTTP ${response.status} from ${url}`);
      return body;
    }
    const base = (run) => `api/runs/${encodeURIComponent(run)}`;
    return {
      embedded: false,
      runs: () => get("api/runs").then((body) => body.runs),
      run: (run) => get(base(run)),
      episodes: (run, query) => get(`${base(run)}/episodes`, query),
      episode: (run, index) => get(`${base(run)}/episodes/${index}`),
      tasks: (run, query) => get(`${base(run)}/tasks`, query),
      metrics: (run) => get(`${base(run)}/metrics`),
      facets: (run) => get(`${base(run)}/facets`),
    };
  }

  // The report: the same answers computed from the embedded data (filters as the API applies them).
  function embeddedSource(data) {
    const rowsOf = {};
    for (const [run, d] of Object.entries(data.data)) {
      rowsOf[run] = d.rows.map((row) => {
        const record = Object.fromEntries(d.columns.map((name, i) => [name, row[i]]));
        record.index = record.id;
        record.has_tokens = Boolean(record.has_tokens);
        return record;
      });
    }
    const of = (run) => {
      if (!data.data[run]) throw new Error(`no run ${JSON.stringify(run)} in this report; it holds: ${Object.keys(data.data).join(", ")}`);
      return data.data[run];
    };
    const sorters = {
      index: (a, b) => a.index - b.index,
      reward: (a, b) => a.reward - b.reward || a.index - b.index,
      turns: (a, b) => a.turns - b.turns || a.index - b.index,
      duration: (a, b) => (a.duration_s ?? -1) - (b.duration_s ?? -1) || a.index - b.index,
    };
    function sortWith(rows, sort, table) {
      const name = (sort || "").replace(/^-/, "");
      const compare = table[name];
      if (!compare) throw new Error(`unknown sort ${JSON.stringify(sort)}; use one of: ${Object.keys(table).join(", ")} (prefix - for descending)`);
      const sorted = [...rows].sort(compare);
      return sort.startsWith("-") ? sorted.reverse() : sorted;
    }
    const page = (rows, query, size) => {
      const offset = Number(query.offset || 0);
      const limit = Number(query.limit || size);
      return { total: rows.length, offset, limit, slice: rows.slice(offset, offset + limit) };
    };
    return {
      embedded: true,
      // Which full episodes this report holds, and a note when it does not hold them all.
      holds: (run, index) => String(index) in of(run).episodes,
      capNote: (run) => {
        const d = of(run);
        const total = rowsOf[run].length;
        return d.embedded < total
          ? `This report holds ${count(d.embedded)} of ${count(total)} episodes in full (one of each task and outcome first, then in run order); the others show their summary only. Make it with episodes=${total} to hold them all, or open the run with \`agenthub view\`.`
          : null;
      },
      runs: async () => data.runs,
      run: async (run) => of(run).run,
      facets: async (run) => of(run).facets,
      metrics: async (run) => of(run).metrics,
      episodes: async (run, query) => {
        of(run);
        const envs = query.env ? query.env.split(",") : null;
        const outcomes = query.outcome ? query.outcome.split(",") : null;
        const min = query.min_reward === undefined || query.min_reward === "" ? null : Number(query.min_reward);
        const max = query.max_reward === undefined || query.max_reward === "" ? null : Number(query.max_reward);
        if (min !== null && max !== null && min > max) {
          throw new Error(`min_reward (${min}) is greater than max_reward (${max}); no episode can match, swap them or leave one out`);
        }
        let rows = rowsOf[run].filter(
          (r) =>
            (!envs || envs.includes(r.env)) &&
            (!query.task || r.task === query.task) &&
            (!outcomes || outcomes.includes(r.outcome)) &&
            (min === null || r.reward >= min) &&
            (max === null || r.reward <= max),
        );
        rows = sortWith(rows, query.sort || "index", sorters);
        const { total, offset, limit, slice } = page(rows, query, PAGE_SIZE);
        return { total, offset, limit, episodes: slice, index: of(run).run.index };
      },
      episode: async (run, index) => {
        const d = of(run);
        const found = d.episodes[String(index)];
        if (found) return found;
        if (index < 0 || index >= rowsOf[run].length) {
          throw new Error(`run ${JSON.stringify(run)} has no episode ${index}; its episodes are numbered 0 to ${rowsOf[run].length - 1}`);
        }
        const error = new Error(
          `Episode ${index} is not embedded in this report: it embeds ${d.embedded} of ${rowsOf[run].length} episodes ` +
            `(make it with episodes=${rowsOf[run].length} to embed them all, or open the run with \`agenthub view\`).`,
        );
        error.notEmbedded = true;
        throw error;
      },
      tasks: async (run, query) => {
        const d = of(run);
        const key = (query.sort || "order").replace(/^-/, "");
        let rows = d.tasks.rows;
        if (key !== "order") {
          const present = rows.filter((r) => r[key] !== null && r[key] !== undefined);
          const missing = rows.filter((r) => r[key] === null || r[key] === undefined);
          present.sort((a, b) => a[key] - b[key]);
          if (query.sort.startsWith("-")) present.reverse();
          rows = [...present, ...missing];
        }
        const { total, offset, limit, slice } = page(rows, query, TASK_PAGE_SIZE);
        return { total, offset, limit, ks: d.tasks.ks, tasks: slice, index: d.run.index };
      },
    };
  }

  const embedded = document.getElementById("agenthub-data");
  const DATA = embedded ? JSON.parse(embedded.textContent) : null;
  const source = DATA ? embeddedSource(DATA) : httpSource();

  // ---------------------------------------------------------------- routing: #/RUN/VIEW[/N]?query

  function parseRoute() {
    const hash = location.hash.replace(/^#\/?/, "");
    const [path, search] = hash.split("?");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    return { run: parts[0] || null, view: parts[1] || "episodes", arg: parts[2], query: Object.fromEntries(new URLSearchParams(search || "")) };
  }
  function href(run, view, arg, query) {
    const params = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== null && v !== ""));
    const tail = params.toString() ? `?${params}` : "";
    return `#/${encodeURIComponent(run)}/${view}${arg !== undefined ? `/${arg}` : ""}${tail}`;
  }
  const go = (run, view, arg, query) => {
    location.hash = href(run, view, arg, query);
  };

  // ---------------------------------------------------------------- page state

  const main = document.getElementById("main");
  const statusLine = document.getElementById("status");
  let runs = [];
  let lastList = {}; // the episode list's query, for "back to the list"
  let pollTimer = null;
  let renderId = 0;

  function showError(error) {
    show(el("div", { class: "error", role: "alert" }, error.message || String(error)));
  }

  async function loadRuns() {
    runs = await source.runs();
    const select = document.getElementById("run-select");
    select.replaceChildren(...runs.map((r) => el("option", { value: r.id }, r.id)));
    document.getElementById("run-picker").hidden = runs.length < 2;
    select.onchange = () => go(select.value, "episodes");
  }

  function setStatus(run) {
    const s = run.index || {};
    const parts = [];
    if (s.indexing) parts.push(`indexing… ${count(s.episodes)} episodes so far (${pct(s.bytes_total ? s.bytes_indexed / s.bytes_total : 1)} of the file)`);
    if (s.damaged_lines) parts.push(`${count(s.damaged_lines)} damaged lines skipped`);
    if (DATA) parts.push(`report generated ${new Date(DATA.generated_at * 1000).toLocaleString()}`);
    statusLine.textContent = parts.join(" · ");
    statusLine.classList.toggle("busy", Boolean(s.indexing));
  }

  function schedulePoll(run, refresh) {
    clearTimeout(pollTimer);
    if (source.embedded) return;
    const indexing = Boolean(run.index && run.index.indexing);
    if (indexing || run.status === "running") pollTimer = setTimeout(refresh, indexing ? 1000 : 3000);
  }

  async function route() {
    const id = ++renderId;
    clearTimeout(pollTimer);
    const r = parseRoute();
    try {
      if (!runs.length) await loadRuns();
      if (!runs.length) throw new Error("no runs to show");
      const runId = r.run || runs[0].id;
      document.getElementById("run-select").value = runId;
      for (const tab of document.querySelectorAll("#tabs a")) {
        tab.href = href(runId, tab.dataset.view, undefined, tab.dataset.view === "episodes" ? lastList : {});
        tab.classList.toggle("active", tab.dataset.view === (r.view === "episode" ? "episodes" : r.view));
      }
      const run = await source.run(runId);
      if (id !== renderId) return;
      setStatus(run);
      if (r.view === "episode") await renderEpisode(run, runId, Number(r.arg));
      else if (r.view === "tasks") await renderTasks(run, runId, r.query);
      else if (r.view === "curves") await renderCurves(run, runId);
      else await renderEpisodes(run, runId, r.query);
    } catch (error) {
      if (id === renderId) showError(error);
    }
  }

  // ---------------------------------------------------------------- run summary

  function runHeader(run) {
    const o = run.overall || {};
    const config = Object.entries(run.config || {}).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => el("span", { class: "kv" }, el("b", null, k), " ", typeof v === "object" ? JSON.stringify(v) : String(v)));
    return el(
      "section",
      { class: "run-header" },
      el("h2", null, run.id, run.status ? el("span", { class: `run-status status-${run.status}` }, run.status) : null),
      el("div", { class: "config" }, config),
      el(
        "div",
        { class: "stats", id: "run-stats" },
        el("div", { class: "stat" }, el("b", { id: "stat-episodes" }, count(o.episodes)), o.opponent_episodes ? " episodes of the agent" : " episodes"),
        el("div", { class: "stat" }, el("b", { id: "stat-success" }, pct(o.success_rate)), o.seats ? " success (the agent's seats)" : " success"),
        el("div", { class: "stat" }, el("b", null, num(o.mean_reward)), " mean reward"),
        el("div", { class: "stat" }, el("b", null, count(o.tasks)), " tasks"),
        el("div", { class: "outcomes" }, OUTCOME_ORDER.filter((k) => (o.outcomes || {})[k]).map((k) => el("span", { class: "chip" }, badge(k), " ", count(o.outcomes[k])))),
      ),
      seatsLine(o, (run.config || {}).opponent),
    );
  }

  // Multi-player runs: who was scored, and win/draw/loss per seat (the opponent's apart, never scored).
  function seatsLine(o, opponent) {
    if (!o.seats) return null;
    const wdl = (whose, seats) => Object.entries(seats).map(([seat, r]) => el("span", { class: "chip", "data-seat": `${whose}-${seat}` }, `seat ${seat} (${whose}): ${count(r.win)} W · ${count(r.draw)} D · ${count(r.loss)} L`));
    const scope = o.self_play
      ? "self-play: every seat is the agent's, so every seat is scored"
      : `against opponent ${opponent ?? "?"}: only the agent's seats are scored; the opponent's ${count(o.opponent_episodes)} episodes are listed, not scored`;
    return el("div", { class: "stats", id: "run-seats" }, el("div", { class: "stat" }, scope), wdl("agent", o.seats.agent || {}), wdl("opponent", o.seats.opponent || {}));
  }

  // ---------------------------------------------------------------- episodes list

  async function renderEpisodes(run, runId, query) {
    lastList = query;
    const facets = await source.facets(runId);
    const set = (changes) => go(runId, "episodes", undefined, { ...query, ...changes, offset: undefined });
    const envSelect = el(
      "select",
      { id: "filter-env", "aria-label": "env", onchange: (e) => set({ env: e.target.value }) },
      el("option", { value: "" }, "all envs"),
      facets.envs.map((f) => el("option", { value: f.value, selected: f.value === query.env }, `${f.value} (${count(f.count)})`)),
    );
    const outcomeSelect = el(
      "select",
      { id: "filter-outcome", "aria-label": "outcome", onchange: (e) => set({ outcome: e.target.value }) },
      el("option", { value: "" }, "all outcomes"),
      facets.outcomes.map((f) => el("option", { value: f.value, selected: f.value === query.outcome }, `${f.value} (${count(f.count)})`)),
    );
    const taskList = el("datalist", { id: "task-values" }, facets.tasks.map((f) => el("option", { value: f.value })));
    const taskInput = el("input", { id: "filter-task", "aria-label": "task", list: "task-values", placeholder: "task id", value: query.task || "", onchange: (e) => set({ task: e.target.value.trim() }) });
    const reward = (name, label) =>
      el("input", { id: `filter-${name}`, name, "aria-label": label, type: "number", step: "any", placeholder: label, value: query[name] || "", onchange: (e) => set({ [name]: e.target.value }) });
    // Selects apply at once; typed values on change (leaving the field) or Enter (the Apply button).
    const apply = (e) => {
      e.preventDefault();
      set({ task: taskInput.value.trim(), min_reward: e.target.elements.min_reward.value, max_reward: e.target.elements.max_reward.value });
    };
    const form = el(
      "form",
      { class: "filters", id: "filters", onsubmit: apply },
      el("label", null, "env ", envSelect),
      el("label", null, "task ", taskInput, taskList),
      el("label", null, "outcome ", outcomeSelect),
      el("label", null, "reward ", reward("min_reward", "min"), " to ", reward("max_reward", "max")),
      el("button", { type: "submit", id: "filter-apply" }, "Apply"),
      el("button", { type: "button", id: "filter-clear", onclick: () => go(runId, "episodes") }, "Clear filters"),
    );
    const results = el("div", { id: "episode-results" });
    const capNote = source.capNote ? source.capNote(runId) : null;
    show(runHeader(run), capNote ? el("p", { class: "note", id: "embed-note" }, capNote) : null, form, results);
    const refresh = async () => {
      const fresh = await source.run(runId);
      setStatus(fresh);
      document.getElementById("stat-episodes").textContent = count((fresh.overall || {}).episodes);
      await fillEpisodes(results, runId, query);
      schedulePoll(fresh, refresh);
    };
    await fillEpisodes(results, runId, query);
    schedulePoll(run, refresh);
  }

  async function fillEpisodes(results, runId, query) {
    const offset = Number(query.offset || 0);
    const page = await source.episodes(runId, { ...query, offset, limit: PAGE_SIZE });
    const sort = query.sort || "index";
    const header = (label, key) => {
      if (!key) return el("th", { class: ["turns", "tokens"].includes(label) ? "center" : null }, label);
      const active = sort.replace(/^-/, "") === key;
      const next = active && !sort.startsWith("-") ? `-${key}` : key;
      const arrow = active ? (sort.startsWith("-") ? " ▼" : " ▲") : "";
      return el("th", { class: key === "index" ? null : "num" }, el("a", { href: href(runId, "episodes", undefined, { ...query, sort: next, offset: undefined }) }, label + arrow));
    };
    const rows = page.episodes.map((e) =>
      el(
        "tr",
        { class: `episode-row${source.holds && !source.holds(runId, e.index) ? " not-embedded" : ""}`, title: source.holds && !source.holds(runId, e.index) ? "summary only: not held in full by this report" : null, "data-index": e.index, "data-outcome": e.outcome, "data-task": e.task ?? "", onclick: () => go(runId, "episode", e.index) },
        el("td", { class: "num" }, el("a", { href: href(runId, "episode", e.index) }, e.index)),
        el("td", null, e.env),
        el("td", { class: "task" }, e.task ?? "—"),
        el("td", { class: "muted" }, e.key ?? ""),
        el("td", null, badge(e.outcome)),
        el("td", { class: "num" }, num(e.reward)),
        el("td", { class: "num" }, e.turns),
        el("td", { class: "num" }, seconds(e.duration_s)),
        el("td", { class: "center" }, e.has_tokens ? el("span", { class: "has-tokens", title: "token trace stored" }, "●") : ""),
        el("td", { class: "error-cell", title: e.error || "" }, e.error || ""),
      ),
    );
    const table = el(
      "table",
      { class: "episodes" },
      el("thead", null, el("tr", null, header("#", "index"), header("env"), header("task"), header("key"), header("outcome"), header("reward", "reward"), header("turns", "turns"), header("duration", "duration"), header("tokens"), header("error"))),
      el("tbody", null, rows),
    );
    const filtered = ["env", "task", "outcome", "min_reward", "max_reward"].some((k) => query[k]);
    const empty = page.total === 0 ? el("p", { class: "empty" }, filtered ? "No episodes match these filters." : "This run has no episodes yet.") : null;
    results.replaceChildren(pager(page, "episodes", (offset) => go(runId, "episodes", undefined, { ...query, offset })), empty || table);
  }

  function pager(page, noun, goto) {
    const first = page.total ? page.offset + 1 : 0;
    const last = Math.min(page.offset + page.limit, page.total);
    return el(
      "div",
      { class: "pager" },
      el("span", { id: `${noun}-count`, class: "count" }, `${count(first)}–${count(last)} of ${count(page.total)} ${page.total === 1 ? noun.replace(/s$/, "") : noun}`),
      el("button", { type: "button", class: "prev", disabled: page.offset === 0, onclick: () => goto(Math.max(0, page.offset - page.limit)) }, "‹ Prev"),
      el("button", { type: "button", class: "next", disabled: last >= page.total, onclick: () => goto(page.offset + page.limit) }, "Next ›"),
    );
  }

  // ---------------------------------------------------------------- one episode

  async function renderEpisode(run, runId, index) {
    const back = el("a", { class: "back", href: href(runId, "episodes", undefined, lastList) }, "← episodes");
    let e;
    try {
      e = await source.episode(runId, index);
    } catch (error) {
      show(back, el("div", { class: error.notEmbedded ? "note" : "error", role: "alert" }, error.message));
      return;
    }
    const total = (run.overall || {}).episodes || 0;
    const nav = el(
      "div",
      { class: "episode-nav" },
      back,
      el("a", { class: "prev", href: index > 0 ? href(runId, "episode", index - 1) : null, "aria-disabled": index === 0 }, "‹ previous"),
      el("a", { class: "next", href: index + 1 < total ? href(runId, "episode", index + 1) : null, "aria-disabled": index + 1 >= total }, "next ›"),
    );
    const task = e.task || {};
    e.turns = e.turns || [];
    const facts = [
      ["env", task.env],
      ["task", task.task_id ?? "—"],
      ["split", task.split],
      ["key", e.key],
      ["reward", num(e.reward)],
      ["turns", e.turns.length],
      ["duration", seconds(e.duration_s)],
      ["attempts", e.attempts],
    ].filter(([, v]) => v !== undefined && v !== null);
    const head = el(
      "section",
      { class: "episode-head" },
      el("h2", null, `Episode ${index} `, badge(e.outcome)),
      el("dl", { class: "facts" }, facts.map(([k, v]) => el("div", null, el("dt", null, k), el("dd", null, String(v))))),
      e.error ? el("div", { class: "error", id: "episode-error" }, e.error) : null,
    );
    const steps = [el("li", { class: "step start" }, el("div", { class: "who" }, "Environment · start"), el("pre", { class: "observation" }, e.first_observation))];
    e.turns.forEach((turn, i) => steps.push(turnCard(turn, i)));
    const replay = el("section", { class: "replay" }, el("h3", null, "Replay"), el("ol", { id: "replay" }, steps));
    const provenance = Object.keys(e.provenance || {}).length
      ? el("details", { class: "provenance" }, el("summary", null, "provenance"), el("pre", null, JSON.stringify(e.provenance, null, 2)))
      : null;
    show(nav, head, replay, e.tokens ? tokenView(e) : null, provenance);
  }

  function turnCard(turn, i) {
    const flags = [turn.terminated ? "terminated" : null, turn.truncated ? "truncated" : null].filter(Boolean);
    const sampled = turn.token_ids && turn.token_ids.length
      ? el("div", { class: "sampled muted" }, `sampled ${turn.token_ids.length} tokens` + (turn.logprobs && turn.logprobs.length ? ` · mean logprob ${num(turn.logprobs.reduce((a, b) => a + b, 0) / turn.logprobs.length)}` : ""))
      : null;
    const info = turn.info && Object.keys(turn.info).length ? el("details", null, el("summary", null, "info"), el("pre", null, JSON.stringify(turn.info, null, 2))) : null;
    return el(
      "li",
      { class: "step turn", "data-turn": i + 1 },
      el("div", { class: "turn-head" }, el("span", { class: "turn-no" }, `Turn ${i + 1}`), el("span", { class: `reward ${turn.reward > 0 ? "positive" : turn.reward < 0 ? "negative" : ""}` }, `reward ${num(turn.reward)}`), flags.map((f) => el("span", { class: "flag" }, f))),
      el("div", { class: "who" }, "Agent · action"),
      el("pre", { class: "action" }, actionText(turn.action)),
      turn.text !== null && turn.text !== undefined && turn.text !== actionText(turn.action) ? el("details", { class: "reply" }, el("summary", null, "full reply"), el("pre", null, turn.text)) : null,
      sampled,
      el("div", { class: "who" }, "Environment · observation"),
      el("pre", { class: "observation" }, turn.observation),
      info,
    );
  }

  // ---------------------------------------------------------------- tokens

  function tokenView(e) {
    const t = e.tokens;
    const text = e.token_text;
    const inspector = el("div", { class: "inspector", id: "token-inspector" }, "Hover a token to see its id, mask and logprob.");
    const piece = (s) => s.replace(/\n/g, "↵\n").replace(/\t/g, "→\t");
    const span = (id, i, part) => {
      const trained = part === "response" && t.response_mask[i] === 1;
      const kind = part === "prompt" ? "prompt" : trained ? "trained" : "env";
      const logprob = part === "response" && trained ? t.logprobs[i] : null;
      const label = text ? piece(text[part][i]) : `[${id}]`;
      const detail = `${part} token ${i} · id ${id} · ${kind === "trained" ? "trained (mask 1)" : kind === "env" ? "env/template (mask 0)" : "prompt"}${logprob !== null ? ` · logprob ${logprob.toFixed(4)}` : ""}`;
      return el("span", { class: `tok ${kind}`, title: detail, "data-logprob": logprob ?? undefined, "data-detail": detail }, label);
    };
    const prompt = t.prompt_ids.map((id, i) => span(id, i, "prompt"));
    const response = t.response_ids.map((id, i) => span(id, i, "response"));
    const trained = t.response_mask.reduce((a, b) => a + b, 0);
    const lp = t.logprobs.filter((_, i) => t.response_mask[i] === 1);
    const stats = `${count(t.prompt_ids.length)} prompt tokens · ${count(t.response_ids.length)} response tokens: ${count(trained)} trained (mask 1), ${count(t.response_ids.length - trained)} env/template (mask 0)` + (lp.length ? ` · mean logprob of trained tokens ${num(lp.reduce((a, b) => a + b, 0) / lp.length)}` : "");
    const body = el("div", { class: "tokens", onmouseover: (ev) => { if (ev.target.dataset && ev.target.dataset.detail) inspector.textContent = ev.target.dataset.detail; } },
      el("details", { class: "prompt-tokens" }, el("summary", null, `prompt (${count(t.prompt_ids.length)} tokens)`), el("div", { class: "tokline" }, prompt)),
      el("div", { class: "tokline", id: "response-tokens" }, response),
    );
    return el(
      "section",
      { class: "token-view", id: "token-view" },
      el("h3", null, "Tokens"),
      el("p", { class: "legend" }, el("span", { class: "tok trained" }, "trained"), " model-sampled, mask 1 · ", el("span", { class: "tok env" }, "env"), " environment and template, mask 0 · ", el("span", { class: "tok prompt" }, "prompt"), text ? ` · text from ${e.tokenizer}` : " · no tokenizer found: showing ids (give tokenizer=PATH to see text)"),
      el("p", { class: "muted", id: "token-stats" }, stats),
      inspector,
      body,
    );
  }

  // ---------------------------------------------------------------- tasks

  async function renderTasks(run, runId, query) {
    const offset = Number(query.offset || 0);
    const page = await source.tasks(runId, { ...query, offset, limit: TASK_PAGE_SIZE });
    const sort = query.sort || "order";
    const header = (label, key, numeric) => {
      if (!key) return el("th", { class: numeric ? "num" : null }, label);
      const active = sort.replace(/^-/, "") === key;
      const next = active && sort.startsWith("-") ? key : `-${key}`;
      return el("th", { class: "num" }, el("a", { href: href(runId, "tasks", undefined, { sort: next }) }, label + (active ? (sort.startsWith("-") ? " ▼" : " ▲") : "")));
    };
    const passColumns = page.ks.map((k) => `pass@${k}`);
    const rows = page.tasks.map((t) =>
      el(
        "tr",
        { class: "task-row", "data-task": t.task ?? "" },
        el("td", null, t.env),
        el("td", { class: "task" }, el("a", { href: href(runId, "episodes", undefined, { env: t.env, task: t.task }) }, t.task ?? "—")),
        el("td", { class: "num" }, count(t.episodes)),
        el("td", { class: "num" }, count(t.successes)),
        el("td", { class: "rate" }, el("span", { class: "bar", style: `width:${Math.round(100 * (t.success_rate || 0))}%` }), el("span", { class: "value" }, pct(t.success_rate))),
        el("td", { class: "num" }, num(t.mean_reward)),
        el("td", { class: "num muted" }, t.excluded ? count(t.excluded) : ""),
        passColumns.map((c) => el("td", { class: "num" }, t[c] === null || t[c] === undefined ? "—" : num(t[c]))),
      ),
    );
    const table = el(
      "table",
      { class: "tasks", id: "task-table" },
      el("thead", null, el("tr", null, header("env"), header("task"), header("episodes", "episodes"), header("successes", null, true), header("success rate", "success_rate"), header("mean reward", "mean_reward"), el("th", { class: "num", title: "env_error and timeout samples, left out of the scores" }, "excluded"), passColumns.map((c) => el("th", { class: "num", title: "unbiased pass@k (Chen et al., 2021)" }, c)))),
      el("tbody", null, rows),
    );
    const note = el("p", { class: "muted" }, "Scores as `agenthub eval` computes them: env_error and timeout samples are left out; agent_error counts as a failure.", page.ks.length ? " pass@k is the unbiased estimate from each task's samples." : "");
    show(runHeader(run), note, pager(page, "tasks", (o) => go(runId, "tasks", undefined, { ...query, offset: o })), page.total ? table : el("p", { class: "empty" }, "No episodes yet."));
    schedulePoll(run, route);
  }

  // ---------------------------------------------------------------- learning curves

  async function renderCurves(run, runId) {
    const metrics = await source.metrics(runId);
    // A value logged once (an eval summary) is a number, not a curve: those go in a table.
    const curves = metrics.series.filter((s) => s.points.length > 1);
    const once = metrics.series.filter((s) => s.points.length === 1);
    const charts = curves.length ? el("div", { class: "charts", id: "charts" }, curves.map((s) => chart(s, metrics.x))) : null;
    const values = once.length
      ? el(
          "section",
          { class: "single-values" },
          el("h3", null, curves.length ? "Logged once" : "Metrics"),
          el("table", { class: "values", id: "metric-values" }, el("tbody", null, once.map((s) => el("tr", null, el("th", null, s.name), el("td", { class: "num" }, num(s.points[0][1], 4)))))),
        )
      : null;
    const empty = metrics.series.length
      ? null
      : el("p", { class: "empty" }, "No metrics recorded: this run's metrics.jsonl is missing or holds no numbers. Training runs log one record per step; `agenthub eval` logs its summary.");
    const note = el("p", { class: "muted" }, `${count(metrics.records)} metric records · x axis: ${metrics.x}` + (curves.length ? "" : " · no metric has more than one value, so there is no curve to draw") + (metrics.skipped_lines ? ` · ${metrics.skipped_lines} unreadable lines skipped` : ""));
    show(runHeader(run), note, charts, values, empty);
  }

  function ticks(lo, hi) {
    if (lo === hi) return [lo];
    const step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 4)));
    const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => (hi - lo) / s <= 5) || step * 10;
    const out = [];
    for (let v = Math.ceil(lo / nice) * nice; v <= hi + nice * 1e-9; v += nice) out.push(Number(v.toPrecision(12)));
    return out;
  }

  function chart(series, xName) {
    const W = 360, H = 200, L = 48, R = 12, T = 12, B = 30;
    const xs = series.points.map((p) => p[0]);
    const ys = series.points.map((p) => p[1]);
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
    if (y0 === y1) [y0, y1] = [y0 - (Math.abs(y0) || 1) * 0.5, y1 + (Math.abs(y1) || 1) * 0.5];
    else [y0, y1] = [y0 - (y1 - y0) * 0.05, y1 + (y1 - y0) * 0.05]; // keep end points off the frame
    const px = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const py = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    const grid = ticks(y0, y1).map((v) => [svg("line", { x1: L, x2: W - R, y1: py(v), y2: py(v), class: "grid" }), svg("text", { x: L - 6, y: py(v) + 4, class: "tick", "text-anchor": "end" }, num(v))]);
    const xt = ticks(x0, x1).map((v) => svg("text", { x: px(v), y: H - B + 16, class: "tick", "text-anchor": "middle" }, num(v, 1)));
    const line = svg("polyline", { class: "curve", points: series.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ") });
    const dots = series.points.length <= MAX_CHART_DOTS
      ? series.points.map(([x, y]) => svg("circle", { class: "point", cx: px(x).toFixed(1), cy: py(y).toFixed(1), r: 2.5 }, svg("title", null, `${xName} ${num(x)}: ${series.name} ${num(y, 4)}`)))
      : [];
    const last = series.points[series.points.length - 1];
    return el(
      "figure",
      { class: "chart", "data-series": series.name },
      el("figcaption", null, el("b", null, series.name), el("span", { class: "muted" }, ` last ${num(last[1], 4)} at ${xName} ${num(last[0])}${series.thinned ? " · thinned" : ""}`)),
      svg(
        "svg",
        { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${series.name} by ${xName}` },
        grid,
        svg("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }),
        svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }),
        xt,
        svg("text", { x: W - R, y: H - 2, class: "tick", "text-anchor": "end" }, xName),
        line,
        dots,
      ),
    );
  }

  // ---------------------------------------------------------------- start

  // Tabs follow the run in the address, even when clicked before the page has loaded it.
  for (const tab of document.querySelectorAll("#tabs a")) {
    tab.addEventListener("click", (event) => {
      const current = parseRoute().run || (runs[0] && runs[0].id);
      if (!current) return;
      event.preventDefault();
      go(current, tab.dataset.view, undefined, tab.dataset.view === "episodes" ? lastList : {});
    });
  }
  window.addEventListener("hashchange", route);
  route();
})();
