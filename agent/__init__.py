"""Ultimate Tic-Tac-Toe competition agent."""
