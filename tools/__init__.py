"""The project's tools: the series (tools.series) and the benchmark (tools.bench)."""
