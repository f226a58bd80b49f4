"""A faithful, headless simulator of the CS 4341 Ultimate Tic-Tac-Toe referee (v7)."""
