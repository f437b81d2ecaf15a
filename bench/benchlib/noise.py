"""How busy the machine was while we measured: load average, steal time and the CPU other processes used.

A shared 2-core machine is the normal case here; these figures are what the report gives as the reason when the
calibration gate (stock vs patched gzip-6, identical code paths) does not show 1.00 within its band."""

import os
import statistics

from benchlib.common import clk_tck


def cpu_times():
    """Aggregate jiffies from /proc/stat: (busy, steal, total)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user/nice
    user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    busy = user + nice + system + irq + softirq
    return busy, steal, busy + idle + iowait + steal


class NoiseLog:
    """Collects, per measured window, the load average and the machine's CPU use outside our own two JVMs."""

    def __init__(self):
        self.windows = []

    def start(self):
        return {"cpu": cpu_times(), "load": os.getloadavg()[0]}

    def stop(self, mark, own_cpu_s, wall_s):
        """own_cpu_s: CPU seconds of the producer and broker JVMs in the window."""
        busy0, steal0, total0 = mark["cpu"]
        busy1, steal1, total1 = cpu_times()
        dt = max(total1 - total0, 1)
        w = {"load": max(mark["load"], os.getloadavg()[0]),
             "steal_pct": 100.0 * (steal1 - steal0) / dt,
             # machine CPU busy minus our JVMs', in cores (2.0 = both cores used by others)
             "others_cores": max(0.0, ((busy1 - busy0) / clk_tck() - own_cpu_s) / wall_s) if wall_s > 0 else None}
        self.windows.append(w)
        return w

    def summary(self):
        if not self.windows:
            return None
        loads = [w["load"] for w in self.windows]
        others = [w["others_cores"] for w in self.windows if w["others_cores"] is not None]
        return {"windows": len(self.windows),
                "load_median": statistics.median(loads), "load_max": max(loads),
                "steal_pct_median": statistics.median(w["steal_pct"] for w in self.windows),
                "steal_pct_max": max(w["steal_pct"] for w in self.windows),
                "others_cores_median": statistics.median(others) if others else None,
                "others_cores_max": max(others) if others else None}

    def describe(self, cores):
        s = self.summary()
        if not s:
            return "no measured windows"
        txt = (f"load average (1 min) median {s['load_median']:.2f}, max {s['load_max']:.2f} on {cores} cores; "
               f"steal time median {s['steal_pct_median']:.1f}%, max {s['steal_pct_max']:.1f}% of CPU time")
        if s["others_cores_median"] is not None:
            txt += (f"; other processes than the producer and broker used median {s['others_cores_median']:.2f}, "
                    f"max {s['others_cores_max']:.2f} cores while we measured")
        return txt

