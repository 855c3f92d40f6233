"""The drag-to-pick seat canvas that T05 and its calibration variant share."""

from __future__ import annotations

from pairbench.studies.attribution_reliability.site._kit import esc


def canvas_seats(action: str, *, colour: str = "#8f1d2c", button: str = "Continue") -> str:
    """A seat plan drawn on a canvas: a plain click picks nothing, a drag picks every free
    seat the pointer crosses. The picked seats go to ``action`` as ``?s=F7,F8``."""
    return (
        "<canvas id='cv' width='440' height='330' style='border:1px solid #ccc;"
        "cursor:crosshair'></canvas><p>Your seats: <strong id='sel'>none</strong></p>"
        f"<form action='{action}'><input type='hidden' name='s' id='s'>"
        f"<button id='c' disabled>{esc(button)}</button></form>"
        "<script>var cv = document.getElementById('cv'), g = cv.getContext('2d');"
        "var rows = 'ABCDEFGH', n = 12, size = 34, y0 = 40, x0 = 26;"
        "var taken = {D5: 1, D6: 1, E9: 1, F3: 1}, picked = [], down = null;"
        "function draw() { g.clearRect(0, 0, cv.width, cv.height);"
        "  g.fillStyle = '#bbb'; g.fillRect(x0, 8, n * size - 6, 10);"
        "  g.font = '12px sans-serif';"
        "  for (var r = 0; r < rows.length; r++) { g.fillStyle = '#333';"
        "    g.fillText(rows[r], 6, y0 + r * size + 18);"
        "    for (var c = 0; c < n; c++) { var id = rows[r] + (c + 1);"
        "      g.fillStyle = taken[id] ? '#777' : (picked.indexOf(id) >= 0 ? "
        f"'{colour}' : '#e3d7c8');"
        "      g.fillRect(x0 + c * size, y0 + r * size, size - 6, size - 6); } } }"
        "function at(e) { var b = cv.getBoundingClientRect();"
        "  var c = Math.floor((e.clientX - b.left - x0) / size);"
        "  var r = Math.floor((e.clientY - b.top - y0) / size);"
        "  if (c < 0 || r < 0 || c >= n || r >= rows.length) { return null; }"
        "  return rows[r] + (c + 1); }"
        "function add(id) { if (id && !taken[id] && down.list.indexOf(id) < 0) {"
        "  down.list.push(id); } }"
        "cv.addEventListener('mousedown', function (e) {"
        "  down = {x: e.clientX, y: e.clientY, moved: false, list: []}; add(at(e)); });"
        "cv.addEventListener('mousemove', function (e) { if (!down) { return; }"
        "  if (Math.abs(e.clientX - down.x) + Math.abs(e.clientY - down.y) > 6) {"
        "    down.moved = true; }"
        "  if (down.moved) { add(at(e)); picked = down.list.slice(); draw(); } });"
        "window.addEventListener('mouseup', function () { if (!down) { return; }"
        "  if (down.moved && down.list.length) { picked = down.list.slice();"
        "    document.getElementById('sel').textContent = picked.join(', ');"
        "    document.getElementById('s').value = picked.join(',');"
        "    document.getElementById('c').disabled = false; }"
        "  down = null; draw(); });"
        "draw();</script>"
    )
