"use strict";
const SVG = "http://www.w3.org/2000/svg";
const CELL = 50, EDGE = 22, SIDE = 2 * EDGE + 9 * CELL;

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function svg(parent, tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined && text !== null) node.textContent = String(text);
  parent.appendChild(node);
  return node;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
// Scores: from X's view everywhere on the page.
function expected(score) {            // X's expected result for a score from X's view
  if (score > DATA.proven_score) return 1;
  if (score < -DATA.proven_score) return 0;
  return 1 / (1 + Math.exp(-score / DATA.score_per_logit));
}
function scoreText(score) {           // "+73", or "#+5": a forced result 5 plies ahead
  if (score === null || score === undefined) return "";
  if (Math.abs(score) > DATA.proven_score) {
    return (score > 0 ? "#+" : "#-") + (DATA.win_score - Math.abs(score));
  }
  return (score > 0 ? "+" : "") + score;
}
function cellXY(b, s) {
  return [EDGE + (3 * (b % 3) + s % 3) * CELL, EDGE + (3 * Math.floor(b / 3) + Math.floor(s / 3)) * CELL];
}
function drawMark(parent, mark, x, y, size, width, opacity, cls) {
  const attrs = {stroke: mark === "X" ? C.x : C.o, "stroke-width": width, fill: "none",
                 opacity: opacity, class: cls, "stroke-linecap": "round"};
  if (mark === "X") {
    attrs.d = "M" + x + " " + y + "L" + (x + size) + " " + (y + size) +
              "M" + (x + size) + " " + y + "L" + x + " " + (y + size);
    svg(parent, "path", attrs);
  } else {
    Object.assign(attrs, {cx: x + size / 2, cy: y + size / 2, r: size / 2});
    svg(parent, "circle", attrs);
  }
}
function drawLines(root) {            // the cells' thin lines, the boards' thick ones
  for (let i = 1; i < 9; i++) {
    if (i % 3 === 0) continue;
    const p = EDGE + i * CELL;
    svg(root, "line", {x1: p, y1: EDGE, x2: p, y2: EDGE + 9 * CELL, stroke: C.grid, "stroke-width": 1.2});
    svg(root, "line", {x1: EDGE, y1: p, x2: EDGE + 9 * CELL, y2: p, stroke: C.grid, "stroke-width": 1.2});
  }
  for (let i = 0; i <= 9; i += 3) {
    const p = EDGE + i * CELL;
    svg(root, "line", {x1: p, y1: EDGE - 1.5, x2: p, y2: EDGE + 9 * CELL + 1.5, stroke: C.ink, "stroke-width": 3});
    svg(root, "line", {x1: EDGE - 1.5, y1: p, x2: EDGE + 9 * CELL + 1.5, y2: p, stroke: C.ink, "stroke-width": 3});
  }
}
function drawBoardResult(root, b, r) { // a board won ("X", "O") or drawn ("=")
  const [x, y] = cellXY(b, 0);
  if (r === "X" || r === "O") {
    const inner = 0.14 * 3 * CELL;
    drawMark(root, r, x + inner, y + inner, 3 * CELL - 2 * inner, 15, 0.6, "won");
  } else if (r === "=") {
    svg(root, "rect", {x: x + 1.5, y: y + 1.5, width: 3 * CELL - 3, height: 3 * CELL - 3,
                       fill: C.drawn, "fill-opacity": 0.55, class: "drawn"});
    svg(root, "text", {x: x + 1.5 * CELL, y: y + 1.5 * CELL + 7, "text-anchor": "middle",
                       "font-size": 22, "font-weight": 700, fill: "#fff"}, "drawn");
  }
  svg(root, "text", {x: x + 3, y: y + 11, "font-size": 10, fill: C.faint}, b);
}
function drawForced(root, b) {         // the one board the next move must go to
  const [x, y] = cellXY(b, 0);
  svg(root, "rect", {x: x + 2.5, y: y + 2.5, width: 3 * CELL - 5, height: 3 * CELL - 5,
                     fill: "none", stroke: C.forced, "stroke-width": 4, class: "forced"});
}
function drawSpotNumbers(root) {
  for (let i = 0; i < 9; i++) {
    svg(root, "text", {x: EDGE + (i + 0.5) * CELL, y: EDGE - 7, "text-anchor": "middle",
                       "font-size": 11, fill: C.faint}, i % 3);
    svg(root, "text", {x: EDGE - 6, y: EDGE + (i + 0.5) * CELL + 4, "text-anchor": "end",
                       "font-size": 11, fill: C.faint}, 3 * (i % 3));
  }
}
