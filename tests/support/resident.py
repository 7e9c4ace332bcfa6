"""What of a file this process holds in memory: the resident kB of its mappings (Linux's
/proc/self/smaps), the measure behind "a query reads no page of a store it does not use"."""

from __future__ import annotations

from pathlib import Path

HAS_SMAPS = Path("/proc/self/smaps").exists()


def resident_kb(path: str | Path) -> int:
    """Resident kB of this process's mappings of ``path`` (0 when it is not mapped)."""
    total, inside, name = 0, False, str(path)
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            if "-" in line.split(" ", 1)[0]:  # a mapping's header line
                inside = line.rstrip().endswith(name)
            elif inside and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


def mapped(path: str | Path) -> bool:
    """Whether this process maps ``path`` (/proc/self/maps)."""
    name = str(path)
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(name) for line in maps)
