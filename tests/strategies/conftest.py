"""Shared by the strategy tests: see tests/helpers.py for the data builders."""
