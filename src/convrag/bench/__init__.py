"""Benchmarks that check the project's speed and quality targets; results go to docs/benchmarks.md."""
