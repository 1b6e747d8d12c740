"""The code behind each figure of the docs; ``docs/make_figures.py`` runs it."""
