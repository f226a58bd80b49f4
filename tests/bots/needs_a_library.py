"""A team's Python bot run by an interpreter that lacks a library it imports (the instructor's
python3 had no numpy): it exits at once with ModuleNotFoundError, before its first move."""

if __name__ == "__main__":      # run as a bot; imported, as --doctest-modules does, it is only a module
    import uttt_course_library  # noqa: F401  (installed nowhere, on purpose)
