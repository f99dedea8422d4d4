"""The app of the docs' common mistakes (``snowid_mistakes.py``): the models whose checks
the page shows, as ``shop`` (the app of the Quick start)."""
