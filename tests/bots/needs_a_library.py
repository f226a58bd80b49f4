"""A team's Python bot run by an interpreter that lacks a library it imports (the instructor's
python3 had no numpy): it exits at once with ModuleNotFoundError, before its first move."""

import uttt_course_library  # noqa: F401  (installed nowhere, on purpose)
