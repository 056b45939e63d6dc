"""fxmlir's benchmarks: `python -m benchmarks --device cpu|cuda` runs the
suite (eager, Inductor and fxmlir side by side) and writes
docs/benchmarks.md; `python -m benchmarks.roundtrip` and
`python -m benchmarks.placement` are single measurements."""
