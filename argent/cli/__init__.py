"""The ``argent`` command line."""
