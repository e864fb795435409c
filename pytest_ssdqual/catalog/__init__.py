"""The catalog: every test the plugin knows, as plain data.

Workloads and run profiles (``workloads``), sweeps (``sweeps``), data states (``data_states``),
data tests (``data_tests``) and health checks (``health``). It imports nothing else of the
package, so every other part (fio job rendering, methodology, thresholds) may import it.
"""
