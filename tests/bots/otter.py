"""A mimic of a real course bot with its name hard-coded: it answers only to ``Otter.go``,
takes no arguments, busy-waits, writes its move without a newline, reads
``first_four_moves`` before its ``.go`` and stays alive a second after ``end_game``
(student_bot.py says how).  A runner must give it as ``name=Otter:python3 otter.py``."""

import sys

from student_bot import main

if __name__ == "__main__":
    sys.exit(main(["Otter", "--spin", "--no-newline", "--eager-opening", "--linger", "1"]))
