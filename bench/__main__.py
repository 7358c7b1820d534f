"""Run every benchmark: `python -m bench` (or `make bench`)."""

from bench import curves, ingest

for benchmark in (ingest, curves):
    benchmark.main()
