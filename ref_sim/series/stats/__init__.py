"""The series' statistics, pure functions over results: :mod:`.match_stats` (Elo, LOS, the
pentanomial, SPRT) and :mod:`.ratings` (a tournament's maximum-likelihood ratings).  They import
nothing of the series but each other.
"""
