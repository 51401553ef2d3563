"""tempr's benchmarks: retrieval quality on LoCoMo, latency/throughput, scale and ingest.

Each benchmark prints its tables and writes them into its own section of
``BENCHMARKS.md`` (see ``bench.report``), with PNG plots under ``bench/plots``.
Run them with ``tempr bench quality|latency|scale|ingest|all`` or ``make bench``.
"""
