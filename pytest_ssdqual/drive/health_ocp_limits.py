"""Built-in limits on the OCP datacenter log and SMART thermal metrics, each with its source.

Only where a source says the change is an error or a condition to report; every other OCP
metric is reported (``not_judged``) until a threshold profile limits it (``health:`` in the
profile, ``max_delta`` for the change):

==================================  ========  ===============================================
metric                              severity  why (source)
==================================  ========  ===============================================
ocp_e2e_detected_errors_delta <= 0  fail      an end-to-end (data path protection) error the
                                              controller detected during the run: data
                                              integrity (OCP Datacenter NVMe SSD Spec 2.0,
                                              C0h "End to End Detected Errors"; NVMe Base
                                              2.0 counts the same events in Media and Data
                                              Integrity Errors, already failed by
                                              ``media_errors_delta``)
ocp_uncorrectable_read_errors_...   fail      a read the drive could not correct (C0h
  _delta <= 0                                 "Uncorrectable Read Error Count": the OCP
                                              twin of NVMe's media errors)
ocp_incomplete_shutdowns_delta <=0  warn      a shutdown that did not complete (C0h
                                              "Incomplete Shutdowns"); warn, not fail: a
                                              power-loss test makes them on purpose -- a
                                              profile without power cuts may set it to fail
ocp_thermal_throttling_events_...   warn      the drive throttled during the run (C0h
  _delta <= 0                                 "Thermal Throttling Event Count"): figures
                                              measured while throttled are not the drive's
ocp_throttling_status <= 0          warn      throttling now (C0h "Current Throttling
                                              Status": 0 = unthrottled)
critical_comp_time_minutes_...      fail      minutes above the critical composite
  _delta <= 0                                 temperature CCTEMP during the run (NVMe Base
                                              2.0, log 02h bytes 196-199: the controller may
                                              be damaged above CCTEMP)
warning_temp_time_minutes_delta     warn      minutes above WCTEMP during the run (log 02h
  <= 0                                        bytes 192-195)
thm_temp1/2_trans_count_delta <= 0  warn      host-controlled thermal management moved the
                                              drive to a lower power state during the run
                                              (log 02h bytes 216-223)
==================================  ========  ===============================================
"""

from __future__ import annotations

from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.thresholds.verdict import FAIL, WARN, Limit, Provenance

__all__ = ["OCP_BUILTIN_LIMITS"]

_SOURCE = Provenance(
    file="pytest_ssdqual/drive/health_ocp_limits.py",
    profile="built-in health limits (OCP logs, SMART thermal fields)",
    source="OCP Datacenter NVMe SSD Specification 2.0 log C0h; NVMe Base Specification 2.0 "
           "SMART / Health log 02h thermal fields",
)


def _max(metric: str, severity: str) -> Limit:
    return Limit(HEALTH_WORKLOAD_ID, metric, None, 0, None, _SOURCE, severity)


#: Built-in limits on the OCP / thermal metrics (see the module table).
OCP_BUILTIN_LIMITS: tuple[Limit, ...] = (
    _max("ocp_e2e_detected_errors_delta", FAIL),
    _max("ocp_uncorrectable_read_errors_delta", FAIL),
    _max("ocp_incomplete_shutdowns_delta", WARN),
    _max("ocp_thermal_throttling_events_delta", WARN),
    _max("ocp_throttling_status", WARN),
    _max("critical_comp_time_minutes_delta", FAIL),
    _max("warning_temp_time_minutes_delta", WARN),
    _max("thm_temp1_trans_count_delta", WARN),
    _max("thm_temp2_trans_count_delta", WARN),
)
