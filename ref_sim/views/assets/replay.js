const DATA = JSON.parse(document.getElementById("replay-data").textContent);
const C = JSON.parse(document.getElementById("replay-colours").textContent);
const GLYPH = {inaccuracy: "?!", mistake: "?", blunder: "??"};
// A tournament's whole page mixes pairings: no agent 1 to filter or colour the games by.
const agent1 = DATA.tournament ? null : DATA.agents[0];
let current = -1, ply = 0, shown = [];

function keepVisible(row) {           // scroll the row's own list only, never the page
  const box = row.closest(".scroll"), head = row.closest("table").tHead.offsetHeight;
  if (row.offsetTop - head < box.scrollTop) box.scrollTop = row.offsetTop - head;
  else if (row.offsetTop + row.offsetHeight > box.scrollTop + box.clientHeight) {
    box.scrollTop = row.offsetTop + row.offsetHeight - box.clientHeight;
  }
}
function mover(g, mark) { return mark === "X" ? g.x : g.o; }
function markOf(g, name) { return name === g.x ? "X" : name === g.o ? "O" : ""; }

function loggedX(move) {              // a move's logged score, from X's view
  if (typeof move.score !== "number" || !move.depth) return null;
  return move.mark === "X" ? move.score : -move.score;
}
// Only our engine's scores are on our engine's scale (ref_sim.views.replay.on_our_scale); another
// bot's (the seed engine's line counts) are text, never drawn against "X wins".
function ourScale(g, name) { return (g.logged_scale || {})[name] === "engine"; }
function loggedText(g, move) {
  const x = loggedX(move);
  if (x === null) return "";
  return ourScale(g, move.player) ? scoreText(x) : (x > 0 ? "+" : "") + x;
}
function seconds(value) {
  if (value === null || value === undefined) return "";
  if (value < 0.01) return (value * 1000).toFixed(2) + " ms";
  return value.toFixed(value < 0.1 ? 3 : 2) + " s";
}

// -- the list of games -----------------------------------------------------------------
function outcome(g) {
  if (g.result === "tie") return {text: "draw", cls: "draw"};
  if (g.result !== "win") return {text: g.result || "no result", cls: "draw"};
  return {text: g.winner + " won", cls: agent1 === null ? "" : g.winner === agent1 ? "win" : "loss"};
}
function blunders(g) {
  if (!g.analysis) return 0;
  return g.analysis.moves.filter((v, i) => v && v.judgement === "blunder"
                                        && g.moves[i].player === agent1).length;
}
const FILTERS = [
  ["all", "all games", g => true],
  ["wins", agent1 + " won", g => g.score === 1],
  ["losses", agent1 + " lost", g => g.score === 0],
  ["draws", "draws", g => g.result === "tie"],
  ["time-out", "time-outs", g => g.ending === "time-out"],
  ["bad", "invalid moves, crashes", g => g.ending === "bad-move" || g.ending === "crash"],
  ["aborted", "aborted", g => g.ending === "aborted"],
  ["blunders", "with a blunder by " + agent1, g => blunders(g) > 0],
];
const BY_AGENT1 = ["wins", "losses", "blunders"];
function buildFilter() {
  const select = document.getElementById("filter");
  for (const [key, label, test] of FILTERS) {
    const count = DATA.games.filter(test).length;
    if (key !== "all" && count === 0) continue;
    if (agent1 === null && BY_AGENT1.includes(key)) continue;
    select.appendChild(el("option", {value: key}, label + " (" + count + ")"));
  }
  select.addEventListener("change", () => { buildList(); });
}
function buildList() {
  const key = document.getElementById("filter").value;
  const test = FILTERS.find(f => f[0] === key)[2];
  const body = document.getElementById("games");
  clear(body);
  shown = [];
  DATA.games.forEach((g, i) => {
    if (!test(g)) return;
    shown.push(i);
    const o = outcome(g);
    const row = el("tr", {"data-index": i});
    row.appendChild(el("td", {}, g.game));
    const players = el("td", {class: "players"});
    players.appendChild(el("span", {class: "mark-X"}, "X "));
    players.appendChild(document.createTextNode(g.x));
    players.appendChild(el("br"));
    players.appendChild(el("span", {class: "mark-O"}, "O "));
    players.appendChild(document.createTextNode(g.o));
    row.appendChild(players);
    const res = el("td");
    res.appendChild(el("span", {class: "outcome " + o.cls}, o.text));
    const why = {"time-out": "time-out", "bad-move": g.reason, crash: "crash", count: "boards count",
                 aborted: g.reason}[g.ending];
    if (why) { res.appendChild(el("br")); res.appendChild(el("span", {class: "small"}, why)); }
    const b = blunders(g);
    if (b) {
      res.appendChild(el("br"));
      res.appendChild(el("span", {class: "judgement blunder"},
                         b + " blunder" + (b > 1 ? "s" : "") + " by " + agent1));
    }
    row.title = [g.reason || ""].concat(g.verdict || []).filter(Boolean).join("\n");
    row.appendChild(res);
    row.appendChild(el("td", {}, g.moves.length));
    row.addEventListener("click", () => selectGame(i));
    body.appendChild(row);
  });
  document.getElementById("list-count").textContent = shown.length + " of " + DATA.games.length;
  markCurrentGame();
}
function markCurrentGame() {
  for (const row of document.querySelectorAll("#games tr")) {
    const on = Number(row.dataset.index) === current;
    row.classList.toggle("current", on);
    if (on) keepVisible(row);
  }
}

// -- one game --------------------------------------------------------------------------
function selectGame(index, at) {
  current = index;
  const g = DATA.games[index];
  const o = outcome(g);
  const title = document.getElementById("game-title");
  title.textContent = "Game " + g.game + ": " + g.x + " (X) vs " + g.o + " (O) \u00b7 " + o.text +
    (g.reason && g.result === "win" ? ": " + g.reason : "");
  title.title = title.textContent;        // one line: the whole of it on hover
  const slider = document.getElementById("slider");
  slider.max = g.moves.length;
  buildMoves(g);
  drawScoreGraph(g);
  drawTimeGraph(g);
  markCurrentGame();
  setPly(at === undefined ? g.moves.length : at);
}
function buildMoves(g) {
  const body = document.getElementById("moves");
  clear(body);
  const start = el("tr", {"data-ply": 0});
  start.appendChild(el("td", {colspan: 6}, "start: the empty board"));
  start.addEventListener("click", () => setPly(0));
  body.appendChild(start);
  g.moves.forEach((m, i) => {
    const row = el("tr", {"data-ply": i + 1, class: m.opening ? "opening" : ""});
    row.appendChild(el("td", {}, i + 1));
    const who = el("td");
    who.appendChild(el("span", {class: "mark-" + m.mark}, m.mark + " "));
    who.appendChild(document.createTextNode(m.player));
    row.appendChild(who);
    row.appendChild(el("td", {}, m.board + " " + m.spot));
    row.appendChild(el("td", {}, m.opening ? "opening" : seconds(m.seconds)));
    const own = !ourScale(g, m.player) && loggedX(m) !== null;
    row.appendChild(el("td", {title: (m.depth ? "depth " + m.depth : "") +
                              (own ? ", on " + m.player + "'s own scale" : ""),
                              class: own ? "own-scale" : ""}, loggedText(g, m)));
    const v = g.analysis && g.analysis.moves[i];
    const j = el("td", {class: "judgement " + (v && v.judgement ? v.judgement : "")},
                 v && v.judgement ? GLYPH[v.judgement] : "");
    if (v && v.judgement) j.title = v.judgement + ": better " + v.best[0] + " " + v.best[1];
    row.appendChild(j);
    row.addEventListener("click", () => setPly(i + 1));
    body.appendChild(row);
  });
  document.getElementById("analysis-note").textContent = analysisNote(g);
  document.getElementById("problem").textContent = g.problem || "";
  showVerdict(g);
}
// Why the game ended as it did (ref_sim.views.replay.verdict: who ran out of time and how
// late, the bad line read, crashes, the runner's hints), always in view beside the moves.
function showVerdict(g) {
  const box = document.getElementById("verdict");
  clear(box);
  for (const text of g.verdict || []) box.appendChild(el("div", {}, text));
  box.hidden = !(g.verdict || []).length;
}

// The line above a game's moves: its analysis's settings, or why it has none (no --analyse, or
// --select left this game out). tests/test_replay.py runs this function in node.
function analysisNote(g) {
  if (g.analysis) {
    const s = g.analysis.settings;
    return "Engine analysis: " + (s.seconds ? s.seconds + " s" : "") +
      (s.depth ? " depth " + s.depth : "") + (s.nodes ? " " + s.nodes + " nodes" : "") +
      " per position. ?! inaccuracy, ? mistake, ?? blunder (expected result lost \u2265 " +
      DATA.thresholds.inaccuracy + ", " + DATA.thresholds.mistake + ", " +
      DATA.thresholds.blunder + ").";
  }
  if (DATA.analysis_selection) {
    return "Game " + g.game + " was not selected for analysis (--select " + DATA.analysis_selection +
      "): python -m ref_sim.replay RUN --analyse --select all analyses every game, --select " + g.game +
      " this one alone (positions already searched come from the run's cache).";
  }
  return "No engine analysis in this page: python -m ref_sim.replay RUN --analyse.";
}

function setPly(k) {
  const g = DATA.games[current];
  ply = Math.max(0, Math.min(g.moves.length, k));
  document.getElementById("slider").value = ply;
  drawBoard(g, ply);
  describe(g, ply);
  for (const row of document.querySelectorAll("#moves tr")) {
    const on = Number(row.dataset.ply) === ply;
    row.classList.toggle("current", on);
    if (on) keepVisible(row);
  }
  for (const id of ["score-graph", "time-graph"]) {
    const cursor = document.querySelector("#" + id + " .cursor");
    if (cursor) { const x = cursor.dataset.x0 * 1 + ply * cursor.dataset.dx;
                  cursor.setAttribute("x1", x); cursor.setAttribute("x2", x); }
  }
  const link = document.getElementById("board-link");
  link.href = DATA.board_page + "#rules=" + g.rules + "&moves=" +
    g.moves.slice(0, ply).map(m => String(m.board) + m.spot).join("");
  link.hidden = !DATA.board_page;
  document.body.dataset.game = g.game;
  document.body.dataset.ply = ply;
}
function describe(g, k) {
  const state = g.states[k];
  const parts = [];
  if (k === 0) parts.push("The empty board");
  else {
    const m = g.moves[k - 1];
    parts.push("Move " + k + " of " + g.moves.length + ": " + m.player + " (" + m.mark + ") " +
               m.board + " " + m.spot + (m.opening ? " (the referee's opening)" : ""));
  }
  if (state[2] === "=") parts.push("the game is a draw");
  else if (state[2]) parts.push(mover(g, state[2]) + " (" + state[2] + ") wins");
  else if (k === g.moves.length && g.result) {
    parts.push(g.result === "win" ? g.winner + " wins: " + g.reason : g.result);
  } else {
    const next = k % 2 === 0 ? "X" : "O";
    const where = state[1].length === 1 ? "board " + state[1] : "any open board";
    parts.push(mover(g, next) + " (" + next + ") to play in " + where);
  }
  const text = document.getElementById("position-text");
  text.textContent = text.title = parts.join(" \u00b7 ");

  const details = document.getElementById("details");
  clear(details);
  if (k === 0) return;
  const m = g.moves[k - 1];
  const line = (text, cls) => details.appendChild(el("div", cls ? {class: cls} : {}, text));
  if (m.seconds !== null && m.seconds !== undefined) {
    line("Time: " + seconds(m.seconds) + (m.limit ? " of " + seconds(m.limit) : "") +
         (m.limit && m.seconds > m.limit ? " (over the limit)" : ""));
  }
  if (m.depth !== undefined) {
    line(m.player + " logged: depth " + m.depth + ", score " + loggedText(g, m) +
         " (X's view" + (ourScale(g, m.player) ? "" : ", its own scale") + "), " +
         (m.nodes || 0).toLocaleString("en") + " nodes" +
         (m.nps ? ", " + m.nps.toLocaleString("en") + " nodes/s" : "") +
         (m.agent_seconds !== undefined ? ", " + seconds(m.agent_seconds) + " by its clock" : ""));
  }
  const a = g.analysis;
  const v = a && a.moves[k - 1];
  if (v) {
    const better = v.best[0] + " " + v.best[1];
    const played = m.board + " " + m.spot;
    if (v.judgement) {
      line(v.judgement[0].toUpperCase() + v.judgement.slice(1) + " " + GLYPH[v.judgement] +
           ": lost " + v.loss.toFixed(2) + " of " + m.mark + "'s expected result; the engine " +
           "prefers " + better + " (shown in green)", "judgement " + v.judgement);
    } else if (better === played) {
      line("The engine's choice too.");
    } else if (v.loss !== null) {
      line("Fine: lost " + v.loss.toFixed(2) + " of the expected result (engine: " + better + ")");
    }
    const e = a.evals[k];
    if (e !== null && !g.states[k][2]) line("Engine: " + scoreText(a.scores[k]) + " (X's view), X's expected result " +
                         Math.round(e * 100) + " %" + (a.depths[k] ? ", depth " + a.depths[k] : ""));
  }
}

// -- the board -------------------------------------------------------------------------
function drawBoard(g, k) {
  const root = document.getElementById("board");
  clear(root);
  const [local, toPlay] = g.states[k];
  const cells = {};
  g.moves.slice(0, k).forEach((m, i) => { cells[m.board * 9 + m.spot] = [m, i]; });
  const last = k > 0 ? g.moves[k - 1] : null;
  svg(root, "rect", {x: 0, y: 0, width: SIDE, height: SIDE, fill: "#fff"});
  for (let b = 0; b < 9; b++) {
    const [x, y] = cellXY(b, 0);
    if (toPlay.includes(String(b))) {
      svg(root, "rect", {x: x, y: y, width: 3 * CELL, height: 3 * CELL, fill: C.toPlay,
                         "fill-opacity": 0.55, class: "to-play", "data-board": b});
    }
  }
  for (let b = 0; b < 9; b++) for (let s = 0; s < 9; s++) {
    const [x, y] = cellXY(b, s);
    const here = cells[b * 9 + s];
    let fill = "transparent";
    if (here && here[0].opening) fill = C.opening;
    if (last && last.board === b && last.spot === s) fill = C.lastMove;
    const rect = svg(root, "rect", {x: x + 1, y: y + 1, width: CELL - 2, height: CELL - 2,
                                    fill: fill, class: "cell", "data-board": b, "data-spot": s,
                                    "data-mark": here ? here[0].mark : ""});
    svg(rect, "title", {}, "board " + b + ", spot " + s +
        (here ? ": move " + (here[1] + 1) + (here[0].opening ? " (opening)" : "") : ""));
  }
  drawLines(root);
  const inset = 0.24 * CELL;
  for (const [index, [m, i]] of Object.entries(cells)) {
    const [x, y] = cellXY(m.board, m.spot);
    const won = local[m.board] === "X" || local[m.board] === "O";
    const isLast = m === last;
    drawMark(root, m.mark, x + inset, y + inset, CELL - 2 * inset, 4,
             isLast ? 1 : won ? 0.35 : 1, "mark");
    if (m.opening) {
      svg(root, "text", {x: x + CELL - 4, y: y + 12, "text-anchor": "end", "font-size": 10,
                         fill: C.faint, class: "opening-number"}, i + 1);
    }
  }
  for (let b = 0; b < 9; b++) drawBoardResult(root, b, local[b]);
  if (toPlay.length === 1) drawForced(root, Number(toPlay));
  drawSpotNumbers(root);
  // The engine's verdict on the last move: its colour around the move, the better cell in green.
  const v = g.analysis && k > 0 ? g.analysis.moves[k - 1] : null;
  if (v && v.judgement) {
    const [x, y] = cellXY(last.board, last.spot);
    const [bx, by] = cellXY(v.best[0], v.best[1]);
    const ring = CELL / 2 - 5;
    svg(root, "circle", {cx: bx + CELL / 2, cy: by + CELL / 2, r: ring, fill: C.best,
                         "fill-opacity": 0.25, stroke: C.best, "stroke-width": 3, class: "best"});
    const d = arrowPath([x + CELL / 2, y + CELL / 2], [bx + CELL / 2, by + CELL / 2], ring);
    svg(root, "path", {d: d, fill: "none", stroke: "#fff", "stroke-width": 9,
                       "stroke-opacity": 0.85, "stroke-linecap": "round", class: "best-halo"});
    svg(root, "path", {d: d, fill: "none", stroke: C.best, "stroke-width": 5,
                       "stroke-linecap": "round", "marker-end": "url(#arrow-head)",
                       class: "best-arrow"});
    svg(root, "rect", {x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, fill: "none",
                       stroke: C[v.judgement], "stroke-width": 4, class: "judged"});
    svg(root, "circle", {cx: x + CELL - 4, cy: y + 4, r: 10, fill: C[v.judgement],
                         stroke: "#fff", "stroke-width": 1.5});
    svg(root, "text", {x: x + CELL - 4, y: y + 8.5, "text-anchor": "middle", "font-size": 12,
                       "font-weight": 700, fill: "#fff", class: "judgement-badge"},
        GLYPH[v.judgement]);
  }
  if (document.getElementById("show-best").checked && g.analysis && !g.states[k][2]) {
    const next = g.analysis.moves[k];
    if (next) {
      const [bx, by] = cellXY(next.best[0], next.best[1]);
      svg(root, "circle", {cx: bx + CELL / 2, cy: by + CELL / 2, r: CELL / 2 - 8, fill: "none",
                           stroke: C.suggestion, "stroke-width": 3.5, "stroke-dasharray": "5 3",
                           class: "suggestion"});
    }
  }
  const defs = svg(root, "defs");
  const marker = svg(defs, "marker", {id: "arrow-head", viewBox: "0 0 10 10", refX: 5, refY: 5,
                                      markerWidth: 3, markerHeight: 3, orient: "auto-start-reverse"});
  svg(marker, "path", {d: "M0 0L10 5L0 10z", fill: C.best});
}

// The arrow from the move played (centre a) to the better one (centre b, ringed with radius
// ring): straight when they are far apart; when the cells touch, a straight one would be a
// stub hidden under the ring, so it bows out towards the board's middle, a cell and more long.
function arrowPath(a, b, ring) {
  const [dx, dy] = [b[0] - a[0], b[1] - a[1]], far = Math.hypot(dx, dy);
  let bend = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  if (far < 2.5 * CELL) {
    let [nx, ny] = [-dy / far, dx / far];
    if (nx * (SIDE / 2 - bend[0]) + ny * (SIDE / 2 - bend[1]) < 0) [nx, ny] = [-nx, -ny];
    bend = [bend[0] + nx * 1.2 * CELL, bend[1] + ny * 1.2 * CELL];
  }
  const toward = (from, to, by) => {
    const length = Math.hypot(to[0] - from[0], to[1] - from[1]);
    return [from[0] + (to[0] - from[0]) * by / length, from[1] + (to[1] - from[1]) * by / length];
  };
  const start = toward(a, bend, 0.3 * CELL), end = toward(b, bend, ring + 6);
  return "M" + start.join(" ") + "Q" + bend.join(" ") + " " + end.join(" ");
}

// -- graphs under the board --------------------------------------------------------------
function chart(id, height, g) {
  const root = document.getElementById(id);
  clear(root);
  const W = 640, left = 40, right = 10, top = 8, bottom = 18;
  root.setAttribute("viewBox", "0 0 " + W + " " + height);
  const n = Math.max(1, g.moves.length);
  const dx = (W - left - right) / n;
  const frame = {root, W, H: height, left, right, top, bottom, dx,
                 x: p => left + p * dx, plotH: height - top - bottom};
  svg(root, "rect", {x: 0, y: 0, width: W, height: height, fill: "#fff"});
  const opening = g.moves.filter(m => m.opening).length;
  if (opening) {
    svg(root, "rect", {x: left, y: top, width: opening * dx, height: frame.plotH, fill: C.opening});
  }
  root.onclick = event => {
    const box = root.getBoundingClientRect();
    const x = (event.clientX - box.left) * W / box.width;
    setPly(Math.round((x - left) / dx));
  };
  return frame;
}
function cursor(f) {
  svg(f.root, "line", {x1: f.left, y1: f.top, x2: f.left, y2: f.top + f.plotH, stroke: C.ink,
                       "stroke-width": 1.5, "stroke-dasharray": "3 2", class: "cursor",
                       "data-x0": f.left, "data-dx": f.dx});
}
function axisTicks(f, g) {
  const n = g.moves.length, step = n > 60 ? 10 : 5;
  for (let p = 0; p <= n; p += step) {
    svg(f.root, "text", {x: f.x(p), y: f.H - 4, "text-anchor": "middle", "font-size": 10,
                         fill: C.faint}, p);
  }
}
function drawScoreGraph(g) {
  const f = chart("score-graph", 125, g);
  const y = e => f.top + (1 - e) * f.plotH;
  const a = g.analysis;
  svg(f.root, "line", {x1: f.left, y1: y(0.5), x2: f.W - f.right, y2: y(0.5), stroke: C.grid,
                       "stroke-dasharray": "4 3"});
  for (const [e, label] of [[1, "X wins"], [0.5, "even"], [0, "O wins"]]) {
    svg(f.root, "text", {x: f.left - 4, y: y(e) + 4, "text-anchor": "end", "font-size": 10,
                         fill: C.faint}, label);
  }
  let points = 0;
  if (a) {                                 // the engine's view: an area from the middle line
    let d = "", area = "", run = [];
    const flush = () => {
      if (run.length > 1) {
        d += "M" + run.map(p => p.join(" ")).join("L");
        area += "M" + run[0][0] + " " + y(0.5) + "L" + run.map(p => p.join(" ")).join("L") +
                "L" + run[run.length - 1][0] + " " + y(0.5) + "z";
      }
      run = [];
    };
    a.evals.forEach((e, p) => { if (e === null) flush(); else { run.push([f.x(p), y(e)]); points++; } });
    flush();
    svg(f.root, "path", {d: area, fill: "#9aa3ad", "fill-opacity": 0.35, class: "engine-area"});
    svg(f.root, "path", {d: d, fill: "none", stroke: C.ink, "stroke-width": 1.5, class: "engine-line"});
    a.moves.forEach((v, i) => {
      if (!v || !v.judgement || a.evals[i + 1] === null) return;
      const dot = svg(f.root, "circle", {cx: f.x(i + 1), cy: y(a.evals[i + 1]), r: 4.5,
                                         fill: C[v.judgement], class: "judgement-dot"});
      svg(dot, "title", {}, "move " + (i + 1) + ": " + v.judgement);
    });
  }
  for (const mark of ["X", "O"]) {          // what each agent logged, where it did
    if (!ourScale(g, mover(g, mark))) continue;
    const pts = [];
    g.moves.forEach((m, i) => {
      const s = m.mark === mark ? loggedX(m) : null;
      if (s !== null) pts.push([f.x(i + 1), y(expected(s)), i, s]);
    });
    if (!pts.length) continue;
    points += pts.length;
    svg(f.root, "path", {d: "M" + pts.map(p => p[0] + " " + p[1]).join("L"), fill: "none",
                         stroke: mark === "X" ? C.x : C.o, "stroke-width": 1.5,
                         "stroke-opacity": 0.8, class: "logged-line"});
    for (const [px, py, i, s] of pts) {
      const dot = svg(f.root, "circle", {cx: px, cy: py, r: 2.5, fill: mark === "X" ? C.x : C.o,
                                         class: "logged-dot"});
      svg(dot, "title", {}, "move " + (i + 1) + ": " + mover(g, mark) + " logged " + scoreText(s));
    }
  }
  if (!points) {
    svg(f.root, "text", {x: f.W / 2, y: y(0.5) - 8, "text-anchor": "middle", "font-size": 12,
                         fill: C.faint}, "no scores on our engine's scale: no --analyse, and " +
                         "neither player is our engine");
  }
  f.root.dataset.points = points;
  axisTicks(f, g);
  cursor(f);
  const legend = document.getElementById("score-legend");
  clear(legend);
  const key = (colour, text) => {
    const span = el("span");
    span.appendChild(el("span", {class: "swatch", style: "background:" + colour}));
    span.appendChild(document.createTextNode(text));
    legend.appendChild(span);
  };
  const others = [];
  for (const mark of ["X", "O"]) {
    const logged = g.moves.filter(m => m.mark === mark).map(loggedX).filter(x => x !== null);
    if (!logged.length) continue;
    if (ourScale(g, mover(g, mark))) key(mark === "X" ? C.x : C.o, mover(g, mark) + " (" + mark + ") logged");
    else others.push(mover(g, mark) + " (" + mark + ") logged " + loggedText(g, {
      player: mover(g, mark), mark: "X", depth: 1, score: Math.min(...logged)}) + " to " +
      loggedText(g, {player: mover(g, mark), mark: "X", depth: 1, score: Math.max(...logged)}));
  }
  if (a) key("#9aa3ad", "engine analysis");
  legend.appendChild(el("span", {}, "height: X's expected result on our engine's scale " +
                                     "(score / " + DATA.score_per_logit + " as logits)"));
  if (others.length) {
    legend.appendChild(el("div", {class: "own-scale", id: "own-scales"}, others.join("; ") +
      " (X's view) on a scale of its own: in the moves table only."));
  }
}
function drawTimeGraph(g) {
  // Each move's time as a share of its own limit (CodinGame's first turns are ten times
  // longer), in seconds where the file gives no limit.
  const f = chart("time-graph", 80, g);
  const timed = g.moves.map((m, i) => [m, i]).filter(([m]) => typeof m.seconds === "number");
  const shared = timed.length > 0 && timed.every(([m]) => m.limit);
  const value = m => shared ? m.seconds / m.limit : m.seconds;
  const top = Math.max(shared ? 1 : 1e-3, ...timed.map(([m]) => value(m))) * 1.15;
  const y = v => f.top + (1 - v / top) * f.plotH;
  const label = (v, text) => svg(f.root, "text", {x: f.left - 4, y: y(v) + 3, "text-anchor": "end",
                                                  "font-size": 10, fill: C.faint}, text);
  label(0, "0");
  if (shared) {
    label(1, "limit");
    svg(f.root, "line", {x1: f.left, y1: y(1), x2: f.W - f.right, y2: y(1), stroke: C.blunder,
                         "stroke-width": 1.2, "stroke-dasharray": "5 3", class: "limit"});
  } else {
    label(top / 1.15, seconds(top / 1.15));
  }
  const w = Math.max(1, f.dx * 0.7);
  for (const [m, i] of timed) {
    const over = m.limit && m.seconds > m.limit;
    const bar = svg(f.root, "rect", {x: f.x(i + 1) - w / 2, y: y(value(m)), width: w,
                                     height: Math.max(0.5, y(0) - y(value(m))),
                                     fill: m.mark === "X" ? C.x : C.o, "fill-opacity": 0.75,
                                     stroke: over ? C.blunder : "none", "stroke-width": 2,
                                     class: "time-bar"});
    svg(bar, "title", {}, "move " + (i + 1) + ": " + m.player + " " + seconds(m.seconds) +
        (m.limit ? " of " + seconds(m.limit) : ""));
  }
  axisTicks(f, g);
  cursor(f);
  const limits = [...new Set(timed.map(([m]) => m.limit).filter(Boolean))].sort((a, b) => b - a);
  document.getElementById("time-legend").textContent = "Bars: each move's time (the referee's " +
    "measure)" + (shared ? " against its limit (" + limits.map(seconds).join(" or ") + ")" : "") +
    (g.moves.some(m => m.opening) ? "; grey: opening" : "") + ".";
}

// -- keys, hash, start -------------------------------------------------------------------
function step(delta) { setPly(ply + delta); }
function nextGame(delta) {
  if (!shown.length) return;
  const at = shown.indexOf(current);
  const to = shown[Math.max(0, Math.min(shown.length - 1, at < 0 ? 0 : at + delta))];
  if (to !== current) selectGame(to);
}
document.addEventListener("keydown", event => {
  const tag = event.target && event.target.tagName;
  if (tag === "INPUT" && event.target.type === "range") return;   // the slider steps itself
  if (tag === "SELECT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
  const actions = {ArrowLeft: () => step(-1), ArrowRight: () => step(1),
                   Home: () => setPly(0), End: () => setPly(Infinity),
                   ArrowUp: () => nextGame(-1), ArrowDown: () => nextGame(1)};
  if (actions[event.key]) { event.preventDefault(); actions[event.key](); }
});
function pageTitle() {       // tests/test_replay.py runs this in node
  const n = DATA.games.length, games = n + " game" + (n === 1 ? "" : "s");
  const dr = DATA.games.filter(g => g.result === "tie").length;
  if (DATA.tournament) {
    const t = DATA.tournament, kind = t.kind === "gauntlet" ? "Gauntlet" : "Tournament";
    return [kind + " of " + t.bots + " bots", kind + " of " + t.bots + " bots: " + games + ", " +
            dr + " drawn"];
  }
  const title = DATA.agents[0] + " vs " + DATA.agents[1];
  const w = DATA.games.filter(g => g.score === 1).length, l = DATA.games.filter(g => g.score === 0).length;
  return [title, title + ": " + games + ", " + DATA.agents[0] + " " + w + " won, " + l +
          " lost, " + dr + " drawn"];
}
function start() {
  const [title, heading] = pageTitle();
  document.title = title + " \u00b7 replay";
  document.getElementById("title").textContent = heading;
  document.getElementById("source").textContent = DATA.source +
    (DATA.unreadable_lines ? " (" + DATA.unreadable_lines + " unreadable lines left out)" : "");
  document.getElementById("board").setAttribute("viewBox", "0 0 " + SIDE + " " + SIDE);
  const top = () => document.documentElement.style.setProperty(
    "--top", document.querySelector("main").getBoundingClientRect().top + window.scrollY + "px");
  top();
  window.addEventListener("resize", top);
  buildFilter();
  buildList();
  document.getElementById("first").onclick = () => setPly(0);
  document.getElementById("back").onclick = () => step(-1);
  document.getElementById("forward").onclick = () => step(1);
  document.getElementById("last").onclick = () => setPly(Infinity);
  document.getElementById("slider").addEventListener("input", e => setPly(Number(e.target.value)));
  document.getElementById("show-best").addEventListener("change", () => setPly(ply));
  const hash = new URLSearchParams(location.hash.slice(1));
  const wanted = DATA.games.findIndex(g => String(g.game) === hash.get("game"));
  const at = hash.has("ply") ? Number(hash.get("ply")) : undefined;
  selectGame(wanted >= 0 ? wanted : 0, at);
  document.body.dataset.ready = "1";
}
start();
