"""The ``convrag`` command line."""
