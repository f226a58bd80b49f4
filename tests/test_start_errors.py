"""A bot that cannot start shows the line that says why, not the last line of
its output (Node ends a trace with its version banner)."""

from __future__ import annotations

from ref_sim.series.process import launch
NODE = """$ node otter.js Node1 /tmp/g
/tmp/otter.js:1
const x = ;
          ^

SyntaxError: Unexpected token ';'
    at internalCompileFunction (node:internal/vm:76:18)
    at wrapSafe (node:internal/modules/cjs/loader:1283:20)

Node.js v18.19.1
"""
PYTHON = """$ python3 walrus.py
Traceback (most recent call last):
  File "walrus.py", line 1, in <module>
    import numpy
ModuleNotFoundError: No module named 'numpy'
"""
JAVA = """$ java -cp bots Otter
Error: Could not find or load main class Otter
Caused by: java.lang.ClassNotFoundException: Otter
"""


def test_the_error_line_is_found_where_the_trace_does_not_end_with_it(tmp_path):
    for text, wanted in [(NODE, "SyntaxError: Unexpected token ';'"),
                         (PYTHON, "ModuleNotFoundError: No module named 'numpy'"),
                         (JAVA, "Caused by: java.lang.ClassNotFoundException: Otter"),
                         ("$ ./bot\nstarting\nbye\n", "bye"), ("$ ./bot\n", "")]:
        log = tmp_path / "bot.log"
        log.write_text(text)
        assert launch.last_output_line(log) == wanted
