"""Join measured.csv (check.sh, on the GPU) with deviceless.csv and
cpu.csv (step_time.py on CPUs): per configuration, the measured step over
each modeled one, and each compile's memory beside the peak JAX saw.

    python3 bench/gpu/compare.py MEASURED.csv DEVICELESS.csv CPU.csv
"""

import csv
import sys


def rows(path):
    try:
        with open(path, encoding="utf-8") as f:
            return {r["config"]: r for r in csv.DictReader(f)}
    except FileNotFoundError:
        return {}


def main(measured_path, *others):
    measured = rows(measured_path)
    compiles = [("on the GPU", measured)] + [
        (path.rsplit("/", 1)[-1].removesuffix(".csv"), rows(path))
        for path in others]
    print("config, measured s, peak GB; then per compile: modeled s "
          "(measured / modeled), XLA GB")
    for name, m in measured.items():
        t = float(m["measured_s"])
        parts = [f"{name}, {t:.4f} s, {float(m['peak_gb']):.2f} GB"]
        for label, table in compiles:
            r = table.get(name)
            if r is None:
                continue
            modeled = float(r["modeled_s"])
            parts.append(f"{label}: {modeled:.4f} s ({t / modeled:.3f}), "
                         f"{float(r['need_gb']):.2f} GB")
        print("; ".join(parts))


if __name__ == "__main__":
    main(*sys.argv[1:])
