"""Memory a measured run touches must already be the guest's own.

On a VM whose balloon driver reports free memory to the hypervisor (free page reporting, /sys/module/page_reporting),
the first touch of a page the guest has handed back costs a fault in the hypervisor, and that time is charged to
whichever process touches it. On this machine kind `truncate -s 20G f && time cat f > /dev/null` spends 26.7 s of
system time the first time (19 GB of page cache) and 2.9 s the second. Kafka allocates as it writes (log segments
in the page cache or on tmpfs, the producer's and broker's heaps), so a run measured while free memory lasted was
slow and one measured once memory was full was fast: unthrottled `none` ran at about 310,000 or 600,000-790,000
records/s depending only on when it ran (docs/benchmarks.md, "Memory is settled"), and a stock/patched pair could
straddle the switch.

MemorySettler keeps free memory small: before each measured run it reads fresh pages of a sparse file (no disk
blocks: holes read as zeros, into the page cache) until at most KEEP_FREE is free. The run then gets its memory by
reclaiming those clean pages, which the guest already owns: the steady state of any long-running broker, whose page
cache is full. The file is removed at the end; its cached pages go with it."""

import os
import time

# the kernel keeps about 1.1-1.4 GB free while a file streams into a full page cache (MemFree in /proc/meminfo while
# the settler read, 2026-11-24): reading on until less is free would only evict the pages just read
KEEP_FREE = 1536 * 1024 ** 2
CHUNK = 16 * 1024 ** 2
SPARSE_SIZE = 1 << 40           # 1 TiB of holes: room for every run's fresh pages without reading a page twice


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def page_reporting():
    """Whether this kernel reports free pages to a hypervisor (the reason the settler exists), as a phrase."""
    base = "/sys/module/page_reporting/parameters"
    if not os.path.isdir(base):
        return "no free page reporting on this kernel"
    try:
        with open(os.path.join(base, "page_reporting_order")) as f:
            order = f.read().strip()
        return f"free page reporting on (blocks of order {order} handed back to the hypervisor)"
    except OSError:
        return "free page reporting on"


class MemorySettler:
    def __init__(self, path):
        self.path = path
        self.fd = None
        self.offset = 0
        self.bytes = 0
        self.seconds = 0.0
        self.calls = 0

    def settle(self):
        """Fill free memory above KEEP_FREE with page cache; returns the bytes read."""
        excess = meminfo("MemFree") - KEEP_FREE
        if excess < 4 * CHUNK:
            return 0
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o600)
            os.truncate(self.path, SPARSE_SIZE)
        t0 = time.time()
        done = 0
        while done < excess and meminfo("MemFree") > KEEP_FREE:
            n = len(os.pread(self.fd, CHUNK, self.offset))
            if n == 0:
                self.offset = 0
                continue
            self.offset += n
            done += n
        self.bytes += done
        self.seconds += time.time() - t0
        self.calls += 1
        return done

    def describe(self):
        return (f"{page_reporting()}; before the runs the bench read {self.bytes / 1e9:.1f} GB of fresh page cache in "
                f"{self.calls} steps ({self.seconds:.0f} s, not measured) so that runs reclaim memory instead of "
                f"faulting it in (bench/benchlib/memory.py)")

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

